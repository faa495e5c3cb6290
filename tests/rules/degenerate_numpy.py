"""Degenerate inputs for the elementwise, reduction, product and shape rules.

Each ``add(fn, case(label, *args, **kwargs), ...)`` records cases in
``degenerate.CASES`` under the rule's name; :class:`~degenerate.A`/:class:`~degenerate.S`
are placeholders made in the dtype under test. Cases are the degenerate sizes the
function accepts: length-0 and length-1 axes, zero-size arrays, 0-d arrays, NumPy and
Python scalars (only calls NumPy itself accepts; see test_degenerate.py).
"""

from __future__ import annotations

import numpy as np
from degenerate import A, S, add, case
from test_numpy_ufuncs import BINARY, UNARY


# -- elementwise ----------------------------------------------------------------------
def _unary_cases(domain, avoid=()):
    d = {"domain": domain, "avoid": avoid}
    return [
        case("(0,)", A((0,), **d)),
        case("(1,)", A((1,), **d)),
        case("(0,3)", A((0, 3), **d)),
        case("(1,1)", A((1, 1), **d)),
        case("0-d", A((), **d)),
        case("numpy scalar", S(**d)),
        case("python float", float(A((), **d).build(np.float64))),
    ]


for _fn, _domain, _avoid in UNARY:
    add(_fn, *_unary_cases(_domain, _avoid))
add(np.absolute, *_unary_cases("real", (0.0,)))
add(np.fabs, *_unary_cases("real", (0.0,)))
add(np.imag, *_unary_cases("real"))
add(np.angle, *_unary_cases("positive"))
add(np.frexp, *_unary_cases("distinct"))
add(np.modf, *_unary_cases("distinct"))
add(
    np.ldexp,
    case("(0,)", A((0,)), np.zeros(0, int)),
    case("(1,)", A((1,)), np.array([2])),
    case("(0,3) with (3,)", A((0, 3)), np.array([1, -1, 0])),
    case("0-d", A(()), 3),
    case("numpy scalar", S(), np.int64(-2)),
    case("python float", 1.5, 2),
)

_PAIRS = [((0,), (0,)), ((0, 3), (3,)), ((1,), (0,)), ((), (0,)), ((1,), (3,)), ((1, 1), (1,))]


def _binary_cases(da, db):
    out = [case(f"{sa}{sb}", A(sa, da), A(sb, db, seed=1)) for sa, sb in _PAIRS]
    out.append(case("numpy scalars", S(da), S(db, seed=1)))
    out.append(case("python float, (0,)", float(A((), da).build(np.float64)), A((0,), db)))
    out.append(case("(1,), python float", A((1,), da), float(A((), db, seed=1).build(np.float64))))
    return out


for _fn, _da, _db, _ in BINARY:
    add(_fn, *_binary_cases("distinct" if _ else _da, "distinct" if _ else _db))

add(
    np.clip,
    case("(0,)", A((0,)), -0.5, 0.5),
    case("(1,)", A((1,), "distinct"), -0.1, 0.1),
    case("0-d, array bounds (0,)", A(()), A((0,), seed=1), None),
    case("numpy scalar", S("distinct"), -0.1, None),
)
add(
    np.where,
    case("(0,)", np.zeros(0, bool), A((0,)), A((0,), seed=1)),
    case("(1,) with 0-d", np.array([True]), A((1,)), A(())),
    case("0-d", np.array(False), A(()), 1.5),
    case("broadcast to (0,3)", np.zeros((0, 1), bool), A((3,)), A((0, 3))),
)

# -- reductions and scans -------------------------------------------------------------
_SMOOTH = (np.sum, np.mean, np.prod, np.nansum, np.nanmean, np.nanprod)
_MOMENTS = (np.var, np.std, np.nanvar, np.nanstd)
_ORDER = (np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin, np.ptp, np.median, np.nanmedian)


def _reduction_cases(domain, empty_whole=True):
    out = [
        case("(1,)", A((1,), domain)),
        case("(2,1) axis=1", A((2, 1), domain), axis=1),
        case("(1,3) axis=0 keepdims", A((1, 3), domain), axis=0, keepdims=True),
        case("0-d", A((), domain)),
        case("(0,3) axis=1", A((0, 3), domain), axis=1),
        case("(3,0) axis=0", A((3, 0), domain), axis=0),
    ]
    if empty_whole:
        out += [case("(0,)", A((0,), domain)), case("(0,3) axis=0", A((0, 3), domain), axis=0)]
    return out


for _fn in _SMOOTH + _MOMENTS:
    add(_fn, *_reduction_cases("positive"))
for _fn in _ORDER:
    # max/min of an empty axis raise; median of one gives NaN (with a warning)
    add(_fn, *_reduction_cases("distinct", empty_whole=_fn in (np.median, np.nanmedian)))
add(np.sum, case("python float", 1.5), case("(0,3) axis=0 initial", A((0, 3)), axis=0, initial=0.5))
add(
    np.average,
    case("(1,)", A((1,))),
    case("(2,1) axis=1 weights", A((2, 1)), 1, A((2, 1), "positive")),
)
add(np.average, case("0-d", A(())))  # (averaging an empty axis raises ZeroDivisionError)
for _fn in (np.quantile, np.percentile, np.nanquantile, np.nanpercentile):
    _q = 0.3 if _fn in (np.quantile, np.nanquantile) else 30.0
    add(
        _fn,
        case("(1,)", A((1,), "distinct"), _q),
        case("(2,1) axis=1", A((2, 1), "distinct"), _q, axis=1),
        case("(0,3) axis=1", A((0, 3), "distinct"), _q, axis=1),
        case("q of size 0", A((3,), "distinct"), np.zeros(0)),
        case("0-d", A((), "distinct"), _q),
    )
_NEW_CUMULATIVE = [getattr(np, n) for n in ("cumulative_sum", "cumulative_prod") if hasattr(np, n)]
for _fn in (np.cumsum, np.cumprod, np.nancumsum, *_NEW_CUMULATIVE):  # cumulative_*: NumPy 2.1
    _cum = _fn in _NEW_CUMULATIVE
    add(
        _fn,
        case("(0,)", A((0,), "positive"), axis=0),
        case("(1,)", A((1,), "positive"), axis=0),
        case("(0,3) axis=1", A((0, 3), "positive"), axis=1),
        case("(2,1) axis=1", A((2, 1), "positive"), axis=1),
        case("(1,3) axis=0", A((1, 3), "positive"), axis=0),
    )
    if not _cum:
        add(_fn, case("0-d", A((), "positive")), case("(0,3) flat", A((0, 3), "positive")))

# -- products -------------------------------------------------------------------------
_MATMUL_SHAPES = [
    ((0, 3), (3, 2)),
    ((2, 0), (0, 3)),
    ((1, 1), (1, 1)),
    ((3,), (3, 0)),
    ((1,), (1,)),
    ((0,), (0,)),
    ((2, 0, 3), (3, 1)),
]
for _fn in (np.matmul, np.linalg.matmul):
    add(_fn, *[case(f"{sa}@{sb}", A(sa), A(sb, seed=1)) for sa, sb in _MATMUL_SHAPES])
add(np.dot, *[case(f"{sa}.{sb}", A(sa), A(sb, seed=1)) for sa, sb in _MATMUL_SHAPES[:6]])
add(np.dot, case("0-d.(0,)", A(()), A((0,))), case("scalar.(1,1)", S(), A((1, 1))))
for _fn in (np.vdot, np.inner):
    add(_fn, case("(0,)", A((0,)), A((0,), seed=1)), case("(1,)", A((1,)), A((1,), seed=1)))
add(np.inner, case("(2,0),(3,0)", A((2, 0)), A((3, 0), seed=1)), case("0-d", A(()), A((2,))))
for _fn in (np.outer, np.linalg.outer):
    add(
        _fn,
        case("(0,),(3,)", A((0,)), A((3,), seed=1)),
        case("(1,),(1,)", A((1,)), A((1,), seed=1)),
    )
add(np.outer, case("0-d", A(()), A((2,))))
for _fn in (np.tensordot, np.linalg.tensordot):
    add(
        _fn,
        case("contract 0", A((2, 0)), A((0, 3), seed=1), axes=1),
        case("(1,1)", A((1, 1)), A((1, 1), seed=1), axes=2),
        case("axes=0", A((0,)), A((2,), seed=1), axes=0),
    )
add(
    np.einsum,
    case("ij,jk->ik j=0", "ij,jk->ik", A((2, 0)), A((0, 3), seed=1)),
    case("i-> i=0", "i->", A((0,))),
    case("i,i i=1", "i,i", A((1,)), A((1,), seed=1)),
    case("ij->j i=0", "ij->j", A((0, 3))),
    case("ii i=1", "ii", A((1, 1))),
    case(",->", ",", A(()), A((), seed=1)),
    case("...,...", "...,...->...", A((0, 2)), A((2,), seed=1)),
    case("interleaved j=0", A((2, 0)), [0, 1], A((0, 3), seed=1), [1, 2], [0, 2]),
    case("interleaved, implicit output", A((1,)), [0], A((1, 2), seed=1), [0, 1]),
    case(
        "interleaved ellipsis",
        A((1, 2)),
        [Ellipsis, 0],
        A((0, 2), seed=1),
        [Ellipsis, 0],
        [Ellipsis],
    ),
)
add(np.kron, case("(0,),(2,)", A((0,)), A((2,))), case("(1,1),(2,2)", A((1, 1)), A((2, 2), seed=1)))
add(np.kron, case("0-d", A(()), A((2,), seed=1)))
for _fn in (np.cross, np.linalg.cross):
    add(
        _fn,
        case("(0,3),(3,)", A((0, 3)), A((3,), seed=1)),
        case("(1,3)", A((1, 3)), A((1, 3), seed=1)),
    )
if np.lib.NumpyVersion(np.__version__) < "2.5.0":  # NumPy 2.5 refuses 2-vectors itself
    add(
        np.cross,
        case("2-vectors (deprecated by NumPy)", A((2,)), A((2,), seed=1), check={"raises": True}),
    )
add(np.trace, case("(0,0)", A((0, 0))), case("(1,1)", A((1, 1))), case("(2,3,0)", A((2, 3, 0))))
add(np.linalg.trace, case("(0,0)", A((0, 0))), case("(1,1)", A((1, 1))))
add(
    np.linalg.multi_dot,
    case("(1,1),(1,1)", [A((1, 1)), A((1, 1), seed=1)]),
    case("(2,0),(0,3)", [A((2, 0)), A((0, 3), seed=1)]),
    case("(0,),(0,2),(2,)", [A((0,)), A((0, 2), seed=1), A((2,), seed=2)]),
)
for _fn in (np.vecdot, np.linalg.vecdot):
    add(
        _fn,
        case("(0,3),(3,)", A((0, 3)), A((3,), seed=1)),
        case("(2,0)", A((2, 0)), A((2, 0), seed=1)),
    )
    add(_fn, case("(1,)", A((1,)), A((1,), seed=1)))

# -- shape ----------------------------------------------------------------------------
add(
    np.reshape,
    case("(0,)->(0,3)", A((0,)), (0, 3)),
    case("0-d->(1,1)", A(()), (1, 1)),
    case("(1,)->()", A((1,)), ()),
    case("(0,3)->-1", A((0, 3)), -1),
)
add(np.ravel, case("(0,3)", A((0, 3))), case("0-d", A(())), case("(1,1)", A((1, 1)), "F"))
add(np.squeeze, case("(1,1)", A((1, 1))), case("(0,1)", A((0, 1)), 1), case("0-d", A(())))
add(np.expand_dims, case("0-d", A(()), 0), case("(0,)", A((0,)), (0, 2)))
for _fn in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    add(
        _fn,
        case("0-d", A(())),
        case("(0,)", A((0,))),
        case("python float", 1.5),
        case("two", A(()), A((1,), seed=1)),
    )
add(
    np.transpose,
    case("(0,3)", A((0, 3))),
    case("0-d", A(())),
    case("(1,0,2)", A((1, 0, 2)), (2, 0, 1)),
)
add(np.swapaxes, case("(0,3)", A((0, 3)), 0, 1), case("(1,1)", A((1, 1)), 0, -1))
add(np.moveaxis, case("(0,1,2)", A((0, 1, 2)), 0, -1), case("(1,)", A((1,)), 0, 0))
add(np.rollaxis, case("(0,1,2)", A((0, 1, 2)), 2), case("(1,)", A((1,)), 0))
for _fn in (np.matrix_transpose, np.linalg.matrix_transpose):
    add(_fn, case("(0,2,3)", A((0, 2, 3))), case("(1,1)", A((1, 1))), case("(2,0)", A((2, 0))))
add(
    np.broadcast_to,
    case("(1,)->(0,)", A((1,)), (0,)),
    case("0-d->(0,3)", A(()), (0, 3)),
    case("(1,)->(1,1)", A((1,)), (1, 1)),
    case("python float", 1.5, (2,)),
)
add(
    np.broadcast_arrays,
    case("(1,),(0,)", A((1,)), A((0,), seed=1)),
    case("0-d,(1,)", A(()), A((1,), seed=1)),
    case("one", A((0, 2))),
)
add(
    np.repeat,
    case("(0,)", A((0,)), 3),
    case("(2,) zero", A((2,)), 0),
    case("0-d", A(()), 2),
    case("(1,3) axis 0", A((1, 3)), 2, axis=0),
)
add(np.tile, case("(0,)", A((0,)), 2), case("(2,) zero", A((2,)), 0), case("0-d", A(()), (2, 1)))
add(
    np.roll,
    case("(0,)", A((0,)), 1),
    case("(1,)", A((1,)), 3),
    case("0-d", A(()), 1),
    case("(2,1) axis", A((2, 1)), 1, axis=1),
)
for _fn in (np.flip, np.flipud):
    add(_fn, case("(0,)", A((0,))), case("(1,)", A((1,))))
add(np.flip, case("0-d", A(())))
add(np.fliplr, case("(0,2)", A((0, 2))), case("(1,1)", A((1, 1))))
add(np.rot90, case("(0,2)", A((0, 2))), case("(1,1)", A((1, 1))), case("(1,3) k=3", A((1, 3)), 3))
add(
    np.pad,
    case("(0,)", A((0,)), 1),
    case("(1,)", A((1,)), 2, mode="edge"),
    case("(1,) reflect", A((1,)), 2, mode="reflect"),
    case("0-d", A(()), 0),
)
for _fn in (np.astype,):
    add(_fn, case("(0,)", A((0,)), np.float32), case("0-d", A(()), np.float64))
add(np.ndarray.astype, case("(0,)", A((0,)), np.float32), case("(1,)", A((1,)), np.float32))
add(np.ndarray.view, case("(0,)", A((0,))), case("0-d", A(())), case("(1,0)", A((1, 0))))
add(
    np.lib.stride_tricks.sliding_window_view,
    case("(1,) window 1", A((1,)), 1),
    case("(3,) window 3", A((3,)), 3),
    case("(2,0) window 0 on axis 1", A((2, 0)), 0, axis=1),
)
