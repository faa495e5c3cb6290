"""Degenerate inputs for the assembling, indexing, misc, linalg, fft, math, builtins and
ndarray-method rules (see degenerate_numpy.py for the conventions)."""

from __future__ import annotations

import copy
import math
import operator
import typing

import numpy as np
from degenerate import A, S, add, case, skip

import pullback.rules.numpy_accumulate as na
import pullback.ufunc_methods as um
from pullback.rules.numpy_misc_gradient import gradient_adjoint

# -- assembling arrays ----------------------------------------------------------------
for _fn in (np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.copy):
    add(
        _fn,
        case("(0,)", A((0,))),
        case("0-d", A(())),
        case("numpy scalar", S()),
        case("python float", 1.5),
        case("list of 0-d", [A(()), A((), seed=1)]),
    )
for _fn in (np.concatenate,):
    add(
        _fn,
        case("(0,),(3,)", [A((0,)), A((3,), seed=1)]),
        case("(0,3),(2,3)", [A((0, 3)), A((2, 3), seed=1)]),
        case("(1,),(1,)", (A((1,)), A((1,), seed=1))),
        case("axis None 0-size", [A((0, 2)), A((1,), seed=1)], axis=None),
    )
add(
    np.stack,
    case("(0,),(0,)", [A((0,)), A((0,), seed=1)]),
    case("0-d", [A(()), A((), seed=1)]),
    case("one (1,)", [A((1,))], axis=-1),
)
if hasattr(np, "unstack"):  # NumPy >= 2.1
    add(np.unstack, case("(1,3)", A((1, 3))), case("(2,0)", A((2, 0))))
_STACKS = ("hstack", "vstack", "row_stack", "dstack", "column_stack")
for _fn in [getattr(np, name) for name in _STACKS if hasattr(np, name)]:  # row_stack: < 2.5
    add(
        _fn,
        case("0-d", [A(()), A((), seed=1)]),
        case("(0,),(0,)", [A((0,)), A((0,), seed=1)]),
        case("one (3,)", [A((3,))]),
        case("(1,),(1,)", (A((1,)), A((1,), seed=1))),
    )
add(
    np.column_stack,
    case("(2,),(2,1)", [A((2,)), A((2, 1), seed=1)]),
    case("a 1-D array", A((3,))),
    case("a (1,2) array", A((1, 2))),
)
add(np.vstack, case("a 2-D array", A((2, 3))))
add(np.concatenate, case("a 2-D array", A((2, 3))), case("a (1,0) array", A((1, 0))))
add(np.stack, case("a 2-D array", A((2, 1))))
add(
    np.append,
    case("(0,), python", A((0,)), 1.5),
    case("(0,),(0,)", A((0,)), A((0,), seed=1)),
    case("0-d,(1,)", A(()), A((1,), seed=1)),
    case("(0,2),(1,2) axis 0", A((0, 2)), A((1, 2)), 0),
)
add(
    np.select,
    case("one (0,)", [np.zeros(0, bool)], [A((0,))]),
    case("(1,) default", [np.array([False])], [A((1,))], A(())),
    case("0-d", [np.array(True), np.array(False)], [A(()), A((), seed=1)]),
)
for _fn in (np.choose, np.ndarray.choose):
    add(
        _fn,
        case("(0,)", np.zeros(0, int), [A((0,)), A((0,), seed=1)]),
        case("0-d picks (2,)", np.array(1), [A((2,)), A((2,), seed=1)]),
        case("(1,) one choice", np.array([0]), [A((1,))]),
        case("0-d", np.array(0), [A(()), A((), seed=1)]),
    )
add(
    np.block,
    case("0-d", [A(()), A((), seed=1)]),
    case("(0,),(2,)", [A((0,)), A((2,), seed=1)]),
    case("[[(1,1)]]", [[A((1, 1))]]),
)
add(
    np.split,
    case("(0,) 1", A((0,)), 1),
    case("(3,) at [0,3]", A((3,)), [0, 3]),
    case("(1,2) axis 1", A((1, 2)), 2, axis=1),
)
add(np.array_split, case("(3,) in 5", A((3,)), 5), case("(0,) 2", A((0,)), 2))
add(np.hsplit, case("(0,)", A((0,)), 1), case("(1,2)", A((1, 2)), 2))
add(np.vsplit, case("(2,0)", A((2, 0)), 2), case("(1,2)", A((1, 2)), 1))
add(np.dsplit, case("(1,1,2)", A((1, 1, 2)), 2), case("(0,1,2)", A((0, 1, 2)), 1))

# -- indexing -------------------------------------------------------------------------
add(
    operator.getitem,
    case("(3,)[0:0]", A((3,)), slice(0, 0)),
    case("(1,)[0]", A((1,)), 0),
    case("0-d[...]", A(()), Ellipsis),
    case("0-d[()]", A(()), ()),
    case("(0,3)[:, 1]", A((0, 3)), (slice(None), 1)),
    case("(2,)[empty ints]", A((2,)), np.zeros(0, int)),
    case("(2,)[all False]", A((2,)), np.zeros(2, bool)),
    case("(2,)[None]", A((2,)), None),
)
add(
    np.take,
    case("(0,)[empty]", A((0,)), np.zeros(0, int)),
    case("(3,)[empty]", A((3,)), []),
    case("(1,)[0]", A((1,)), 0),
    case("0-d", A(()), 0),
)
add(
    np.take_along_axis,
    case("(2,0)", A((2, 0)), np.zeros((2, 0), int), 1),
    case("(1,1)", A((1, 1)), np.zeros((1, 3), int), 1),
    case("(3,) empty", A((3,)), np.zeros(0, int), 0),
)
add(
    np.compress,
    case("all False", [False, False], A((2,))),
    case("(0,)", [], A((0,))),
    case("(1,3) axis 1", [True], A((1, 3)), 1),
)
add(
    np.ndarray.compress,
    case("all False", A((2,)), [False, False]),
    case("(0,)", A((0,)), []),
    case("(1,3) axis 1", A((1, 3)), [True], 1),
)
add(
    np.extract,
    case("all False", np.zeros(3, bool), A((3,))),
    case("(0,)", np.zeros(0, bool), A((0,))),
)
add(
    np.diag,
    case("(0,)", A((0,))),
    case("(1,)", A((1,))),
    case("(0,0)", A((0, 0))),
    case("(1,1) k=1", A((1, 1)), 1),
    case("(2,) k=-3", A((2,)), -3),
)
add(np.diagflat, case("(0,)", A((0,))), case("0-d", A(())), case("(1,) k=1", A((1,)), 1))
for _fn in (np.diagonal, np.linalg.diagonal):
    add(
        _fn,
        case("(0,0)", A((0, 0))),
        case("(1,1)", A((1, 1))),
        case("(2,3) offset 5", A((2, 3)), offset=5),
    )
for _fn in (np.triu, np.tril):
    add(
        _fn,
        case("(0,0)", A((0, 0))),
        case("(1,1)", A((1, 1))),
        case("(0,)", A((0,))),
        case("(1,)", A((1,))),
    )
add(
    np.sort,
    case("(0,)", A((0,))),
    case("(1,)", A((1,))),
    case("(2,1)", A((2, 1)), 1),
    case("0-d flat", A(()), None),
)
add(
    np.partition,
    case("(1,)", A((1,)), 0),
    case("(0,3) axis 0", A((0, 3), "distinct"), 0, axis=1),
    case("(2,1)", A((2, 1)), 0),
)

# -- miscellaneous --------------------------------------------------------------------
add(
    np.full,
    case("(0,)", (0,), S()),
    case("() of 0-d", (), A(())),
    case("(0,3) of (3,)", (0, 3), A((3,))),
    case("(1,) of (1,)", 1, A((1,))),
)
add(
    np.full_like,
    case("(0,)", A((0,)), 0.5),
    case("0-d", A(()), A((), seed=1)),
    case("(1,) of (0,)?", A((0, 1)), A((1,), seed=1)),
)
add(
    np.linspace,
    case("num 0", A(()), A((), seed=1), 0),
    case("num 1", A(()), A((), seed=1), 1),
    case("num 1 no endpoint", 0.5, A(()), 1, False),
    case("(0,) starts", A((0,)), 1.0, 3),
    case("num 1 retstep", A(()), A((), seed=1), 2, retstep=True),
)
add(
    np.meshgrid,
    case("(0,),(2,)", A((0,)), A((2,), seed=1)),
    case("(1,)", A((1,))),
    case("0-d", A(()), A((2,), seed=1)),
)
add(
    np.bincount,
    case("empty", np.zeros(0, int), A((0,))),
    case("empty minlength", np.zeros(0, int), A((0,)), 3),
    case("one", np.array([2]), A((1,))),
)
add(
    np.diff,
    case("(1,)", A((1,))),
    case("(0,)", A((0,))),
    case("n=0", A((3,)), 0),
    case("(2,1) axis 1", A((2, 1)), axis=1),
    case("(1,) prepend", A((1,)), prepend=A((), seed=1)),
)
add(
    np.gradient,
    case("(2,)", A((2,))),
    case("(2,1) axis 0", A((2, 1)), axis=0),
    case("(2,) spacing", A((2,)), A((), "positive", seed=1)),
)
# the primitives behind np.gradient's transformable pullback (numpy_misc_gradient.py)
add(
    gradient_adjoint,
    case("(2,)", A((2,)), A((), "positive", seed=1), 0, 1),
    case("(2,1) axis 0", A((2, 1)), 0.5, 0, 1),
)
add(
    np.interp,
    case("x (0,)", A((0,)), np.array([0.0, 1.0]), A((2,), seed=1)),
    case("one point", A((3,)), np.array([0.5]), A((1,), seed=1)),
    case("0-d", A(()), np.array([-1.0, 1.0]), A((2,), seed=1)),
)
add(
    np.polyval,
    case("p (1,)", A((1,)), A((3,), seed=1)),
    case("x (0,)", A((3,)), A((0,), seed=1)),
    case("0-d x", A((2,)), A((), seed=1)),
    case("p empty", A((0,)), A((2,), seed=1)),
)
add(
    np.ediff1d,
    case("(1,)", A((1,))),
    case("(0,)", A((0,))),
    case("(1,) both ends", A((1,)), A((2,), seed=1), A((), seed=2)),
    case("(0,) to_begin", A((0,)), None, A((1,), seed=1)),
)
add(
    np.unwrap,
    case("(1,)", A((1,))),
    case("(0,)", A((0,))),
    case("(2,1) axis 1", A((2, 1)), axis=1),
)
# ufunc.accumulate of maximum, minimum, logaddexp, subtract and divide (numpy_accumulate)
for _fn in (
    um.maximum_accumulate,
    um.minimum_accumulate,
    um.logaddexp_accumulate,
    um.subtract_accumulate,
):
    add(
        _fn,
        case("(0,)", A((0,))),
        case("(1,)", A((1,))),
        case("(2,1) axis 1", A((2, 1)), 1),
        case("(0,3)", A((0, 3))),
    )
# np.add.reduceat (numpy_accumulate): one segment, a length-1 axis, a repeated index
add(
    um.add_reduceat,
    case("(1,)", A((1,)), [0]),
    case("(2,1) axis 1", A((2, 1)), [0], 1),
    case("(3,) repeated index", A((3,)), [0, 0, 2]),
)
add(
    na.spread_segments,  # (its transpose: one cotangent per segment)
    case("(1,) n=1", A((1,)), [0], 0, 1),
    case("(2,) n=3", A((2,)), [0, 2], 0, 3),
    case("(2,1) axis 1 n=1", A((2, 1)), [0], 1, 1),
)
for _fn in (um.logaddexp_reduce, um.logaddexp2_reduce):  # (NumPy refuses a zero-size one)
    add(_fn, case("(1,)", A((1,))), case("(2,1) axis 1", A((2, 1)), 1))
add(
    um.divide_accumulate,
    case("(0,)", A((0,))),
    case("(1,)", A((1,), "positive")),
    case("(2,1) axis 1", A((2, 1), "positive"), 1),
)
# np.trapz is NumPy < 2.4's old name of trapezoid (same rule).
for _fn in (np.trapezoid, getattr(np, "trapz", None)):
    if _fn is None:
        continue
    add(
        _fn,
        case("(1,)", A((1,))),
        case("(0,)", A((0,))),
        case("(2,1) axis 1", A((2, 1)), axis=1),
        case("(2,) x", A((2,)), A((2,), "distinct", seed=1)),
    )
for _fn in (np.convolve, np.correlate):
    add(
        _fn,
        case("(1,),(1,)", A((1,)), A((1,), seed=1)),
        case("(3,),(1,) same", A((3,)), A((1,), seed=1), "same"),
        case("(1,),(3,) full", A((1,)), A((3,), seed=1), "full"),
    )
add(
    np.cov,
    case("(2,2)", A((2, 2))),
    case("(1,2)", A((1, 2))),
    case("(2,) ddof 0", A((2,)), ddof=0),
    case("(3,1) bias", A((3, 1)), bias=True),
)
add(
    np.corrcoef,
    case("(2,2)", A((2, 2), "distinct")),
    case("(1,3)", A((1, 3))),
    case("(3,)", A((3,))),
)

# -- linalg ---------------------------------------------------------------------------
la = np.linalg
_M1 = A((1, 1), (0.5, 1.5))
add(la.inv, case("(0,0)", A((0, 0))), case("(1,1)", _M1), case("(0,1,1)", A((0, 1, 1))))
add(
    la.solve,
    case("(0,0),(0,)", A((0, 0)), A((0,))),
    case("(1,1),(1,)", _M1, A((1,), seed=1)),
    case("(1,1),(1,0)", _M1, A((1, 0), seed=1)),
    case("(2,0,0),(2,0,1)", A((2, 0, 0)), A((2, 0, 1))),
)
add(la.det, case("(0,0)", A((0, 0))), case("(1,1)", _M1), case("(0,2,2)", A((0, 2, 2))))
add(
    la.slogdet,
    case("(1,1)", _M1),
    case("(0,0)", A((0, 0))),
    case("(1,1) negative", A((1, 1), (-1.5, -0.5))),
)
add(la.pinv, case("(1,1)", _M1), case("(1,3)", A((1, 3))), case("(0,3)", A((0, 3))))
add(
    la.matrix_power,
    case("(1,1)^3", _M1, 3),
    case("(1,1)^0", _M1, 0),
    case("(1,1)^-2", _M1, -2),
    case("(0,0)^2", A((0, 0)), 2),
)
add(la.tensorsolve, case("(1,1)", _M1, A((1,), seed=1)))
add(la.cholesky, case("(1,1)", _M1), case("(0,0)", A((0, 0))), case("(1,1) upper", _M1, upper=True))
add(la.eigh, case("(1,1)", _M1), case("(0,0)", A((0, 0))))
add(la.eigvalsh, case("(1,1)", _M1), case("(0,0)", A((0, 0))))
add(la.eig, case("(1,1)", _M1))
add(la.eigvals, case("(1,1)", _M1))
add(
    la.svd,
    case("(1,1)", _M1),
    case("(1,3)", A((1, 3)), False),
    case("(3,1)", A((3, 1)), full_matrices=False),
)
add(la.svdvals, case("(1,1)", _M1), case("(1,3)", A((1, 3))))
add(la.qr, case("(1,1)", _M1), case("(3,1)", A((3, 1))), case("(1,3) r", A((1, 3)), "r"))
add(
    la.lstsq,
    case("(1,1),(1,)", _M1, A((1,), seed=1)),
    case("(3,1),(3,)", A((3, 1)), A((3,), seed=1)),
)
add(
    la.norm,
    case("(1,)", A((1,))),
    case("0 vector", np.zeros(3)),
    case("(0,)", A((0,))),
    case("(1,1) fro", _M1),
    case("(2,1) axis 1", A((2, 1)), axis=1),
    case("(1,1) nuc", _M1, "nuc"),
    case("(1,) ord 1", A((1,)), 1),
    case("(1,) inf", A((1,)), np.inf, check={"constants": (1,)}),
)
add(
    la.vector_norm,
    case("(1,)", A((1,))),
    case("(0,)", A((0,))),
    case("0-d", A(())),
    case("(2,1) axis 1", A((2, 1)), axis=1),
)
add(
    la.matrix_norm,
    case("(1,1)", _M1),
    case("(1,1) nuc", _M1, ord="nuc"),
    case("(1,3) 1", A((1, 3)), ord=1),
)

# -- fft ------------------------------------------------------------------------------
F = np.fft
for _fn in (F.fft, F.ifft, F.rfft, F.ihfft):
    add(
        _fn,
        case("(1,)", A((1,))),
        case("(3,) n=1", A((3,)), 1),
        case("(0,3) axis 1", A((0, 3)), axis=1),
    )
for _fn in (F.fft2, F.ifft2, F.fftn, F.ifftn, F.rfft2, F.rfftn):
    add(_fn, case("(1,1)", A((1, 1))), case("(0,2,2)", A((0, 2, 2)), axes=(1, 2)))
for _fn in (F.irfft, F.hfft):
    add(
        _fn,
        case("(1,) n=1", A((1,)), 1),
        case("(2,) n=1", A((2,)), 1),
        case("(0,2) axis 1", A((0, 2)), axis=1),
    )
for _fn in (F.irfft2, F.irfftn):
    add(_fn, case("(1,1) s=(1,1)", A((1, 1)), (1, 1)), case("(0,2,2)", A((0, 2, 2)), axes=(1, 2)))
for _fn in (F.fftshift, F.ifftshift):
    add(_fn, case("(0,)", A((0,))), case("(1,)", A((1,))), case("(0,2) axes 1", A((0, 2)), 1))

# -- math -----------------------------------------------------------------------------
_MATH_DOMAINS = {
    "sin": "real",
    "cos": "real",
    "tan": (-1.2, 1.2),
    "asin": "unit",
    "acos": "unit",
    "atan": "real",
    "sinh": "real",
    "cosh": "real",
    "tanh": "real",
    "asinh": "real",
    "acosh": "above1",
    "atanh": "unit",
    "exp": "real",
    "exp2": "real",
    "expm1": "real",
    "log": "positive",
    "log1p": "positive",
    "log2": "positive",
    "log10": "positive",
    "sqrt": "positive",
    "cbrt": "nonzero",
    "fabs": "nonzero",
    "erf": "real",
    "erfc": "real",
    "gamma": "positive",
    "lgamma": "positive",
    "degrees": "real",
    "radians": "real",
}
for _mname, _domain in _MATH_DOMAINS.items():
    _fn = getattr(math, _mname, None)
    if _fn is not None:
        # (math.sin of a (1,) array works, but NumPy deprecates it: not audited)
        add(_fn, case("numpy scalar", S(_domain)), case("0-d", A((), _domain)))
for _fn, _da, _db in (
    (math.atan2, "nonzero", "nonzero"),
    (math.pow, "positive", "real"),
    (math.copysign, "nonzero", "nonzero"),
    (math.fmod, (0.1, 0.9), (1.1, 2.0)),
    (math.remainder, (0.1, 0.4), (1.1, 2.0)),
):
    add(_fn, case("numpy scalars", S(_da), S(_db, seed=1)), case("0-d, python", A((), _da), 1.5))
add(math.ldexp, case("numpy scalar", S(), 2), case("0-d", A(()), 0))
add(math.hypot, case("one", S()), case("0-d", A(()), A((), seed=1)))
add(math.dist, case("length 1", [S()], [S(seed=1)]), case("(1,) arrays", A((1,)), A((1,), seed=1)))
add(math.fsum, case("one", [S()]), case("(1,) array", A((1,))), case("(0,)", A((0,))))
add(
    math.prod,
    case("one", [S()]),
    case("(1,) array", A((1,))),
    case("empty, float start", [], start=S()),
)
add(math.modf, case("numpy scalar", S("positive")), case("0-d", A((), "positive")))
add(math.frexp, case("numpy scalar", S("positive")), case("0-d", A((), "positive")))
if hasattr(math, "sumprod"):
    add(
        math.sumprod, case("one", [S()], [S(seed=1)]), case("(1,) arrays", A((1,)), A((1,), seed=1))
    )

# -- builtins -------------------------------------------------------------------------
add(abs, case("numpy scalar", S("nonzero")), case("0-d", A((), "nonzero")), case("(0,)", A((0,))))
add(
    pow,
    case("numpy scalars", S("positive"), S(seed=1)),
    case("(0,), 2", A((0,)), 2.0),
    case("0-d", A((), "positive"), 1.5),
)
add(float, case("0-d", A(())), case("numpy scalar", S()), case("python float", 1.5))
add(
    sum,
    case("one", [S()]),
    case("(1,)", A((1,))),
    case("(1,3) rows", A((1, 3))),
    case("(0,) start", A((0,)), S()),
    case("(2,3) rows", A((2, 3))),
    case("empty list, start", [], S()),
)
for _fn in (max, min):
    add(
        _fn,
        case("one", [S()]),
        case("(1,)", A((1,))),
        case("(3,) array", A((3,), "distinct")),
        case("(3,1) rows", A((3, 1), "distinct")),
        case("list of 0-d", [A(()), A((), seed=1)]),
        case("list of numpy scalars", [S(seed=2), S(seed=3), 0.25]),
        case("two arrays (1,)", A((1,)), A((1,), seed=1)),
        case("(1,3) one row", A((1, 3))),
    )
add(
    sorted,
    case("one", [S()]),
    case("(1,)", A((1,))),
    case("(0,)", A((0,))),
    case("(3,1) rows", A((3, 1), "distinct")),
    case("list of numpy scalars", [S(seed=2), S(seed=3), 0.25]),
)
for _fn in (list, tuple):
    add(
        _fn,
        case("(0,)", A((0,))),
        case("(1,)", A((1,))),
        case("(0,3)", A((0, 3))),
        case("(1,3)", A((1, 3))),
    )

# -- ndarray methods ------------------------------------------------------------------
add(np.ndarray.item, case("(1,)", A((1,))), case("0-d", A(())), case("(1,1) index", A((1, 1)), 0))
add(np.generic.item, case("0.0", np.float64(0.0)), case("float32", np.float32(0.0)))
add(copy.copy, case("(0,)", A((0,))), case("0-d", A(())))
add(copy.deepcopy, case("(0,)", A((0,))), case("0-d", A(())))
add(typing.cast, case("(0,)", float, A((0,))), case("0-d", float, A(())))
add(dict.get, case("0-d default", {}, "a", A(())), case("(0,) default", {}, "a", A((0,))))
for _fn in (dict, dict.copy):
    skip(
        _fn,
        "returns a dict, which check_rrule cannot pair with a cotangent; empty and one-entry "
        "dicts of 0-d and empty arrays: test_builtins_rules.py::test_dict_of_degenerate_entries",
    )
add(np.ndarray.tolist, case("(0,)", A((0,))), case("0-d", A(())), case("(1,0)", A((1, 0))))

# -- index tricks ---------------------------------------------------------------------
add(
    np.r_.__getitem__,
    case("(0,)", (A((0,)), A((0,), seed=1))),
    case("(0,) and a scalar", (A((0,)), S())),
    case("0-d items", (A(()), A((), seed=1))),
    case("one (1,)", A((1,))),
    case("(0,3) rows", ("0,2", A((0, 3)), A((1, 3), seed=1))),
)
add(
    np.c_.__getitem__,
    case("(0,)", (A((0,)), A((0,), seed=1))),
    case("(1,)", (A((1,)), A((1,), seed=1))),
    case("0-d", (A(()), A((), seed=1))),
)

# -- casts, user-function callers, operator -------------------------------------------
for _fn in (np.float64, np.float32, np.complex128, np.complex64):
    add(
        _fn,
        case("(0,)", A((0,))),
        case("(1,)", A((1,))),
        case("0-d", A(())),
        case("numpy scalar", S()),
        case("python float", 1.5),
    )
skip(np.float16, "float16 rounding is coarser than finite differences: test_numpy_casts.py")
add(np.real_if_close, case("(0,)", A((0,))), case("(1,)", A((1,))), case("0-d", A(())))
add(
    np.insert,
    case("(0,) at 0", A((0,)), 0, A((1,), seed=1)),
    case("nothing inserted", A((2,)), [], A((0,), seed=1)),
    case("0-d values", A((1,)), 1, A((), seed=1)),
    case("(0,3) axis 0", A((0, 3)), 0, A((3,), seed=1), axis=0),
    case("(2,0) axis 1", A((2, 0)), 0, A((), seed=1), axis=1),
)
add(
    np.piecewise,
    case("(0,)", A((0,)), [np.zeros(0, bool)], [np.sin]),
    case("(1,)", A((1,)), [np.array([True])], [np.sin, np.cos]),
    case("0-d", A(()), [True], [np.exp]),
    case("python float", 0.5, [False], [np.exp, 2.0]),
)
add(
    np.apply_along_axis,
    case("(1,3) axis 0", np.sum, 0, A((1, 3))),
    case("(2,1) axis 1", np.sin, 1, A((2, 1))),
    case("(3,0) axis 1", np.sum, 1, A((3, 0))),
)
skip(
    np.vectorize.__call__,
    "np.vectorize objects compare by identity, which check_rrule's argument check cannot "
    "follow; zero-size and 0-d inputs are tested in test_numpy_functional.py",
)
skip(
    operator.itemgetter.__call__,
    "itemgetter objects compare by identity; tested through a wrapper in test_operator_rules.py",
)
for _fn in (operator.add, operator.sub, operator.mul, operator.truediv, operator.mod):
    _d = (0.1, 0.9) if _fn is operator.mod else "positive"
    add(
        _fn,
        case("(0,),(0,)", A((0,), _d), A((0,), (1.1, 2.0))),
        case("(1,),0-d", A((1,), _d), A((), (1.1, 2.0))),
        case("numpy scalars", S(_d), S((1.1, 2.0))),
    )
add(operator.pow, case("(0,)", A((0,), "positive"), 2.0), case("0-d", A((), "positive"), A(())))
for _fn in (operator.neg, operator.pos, operator.abs):
    add(_fn, case("(0,)", A((0,))), case("0-d", A((), "nonzero")), case("scalar", S("nonzero")))
add(
    operator.matmul,
    case("(2,0)@(0,3)", A((2, 0)), A((0, 3))),
    case("(1,)@(1,)", A((1,)), A((1,), seed=1)),
)
