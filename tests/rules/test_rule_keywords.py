"""Options of NumPy functions that change the value or the derivative: each is either
differentiated exactly (against central differences, first and second order) or refused
with an UnsupportedCallError naming the keyword. A rule reads its options with
``_util.bind``, which refuses any keyword the rule does not declare."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make

from pullback import grad
from pullback.errors import UnsupportedCallError
from pullback.registry import default_registry
from pullback.rules._util import bind
from pullback.testing import check_grads, check_rrule

MASK = np.array([[True, False, True, True], [False, True, True, False], [True, True, False, True]])


def _with_nans(dtype):
    x = make("positive", (3, 4), dtype)
    x[0, 2] = np.nan
    x[2, 0] = np.nan
    return x


# -- nansum / nanmean / nanprod with where= and initial= ------------------------------------
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1], ids=str)
@pytest.mark.parametrize("fn", [np.nansum, np.nanmean, np.nanprod], ids=lambda f: f.__name__)
def test_nan_reductions_where(fn, axis, keepdims, dtype):
    check_rrule(fn, _with_nans(dtype), axis=axis, keepdims=keepdims, where=MASK)


@pytest.mark.parametrize("fn", [np.nansum, np.nanprod], ids=lambda f: f.__name__)
def test_nan_reductions_initial_and_where(fn):
    x = _with_nans(np.float64)
    check_rrule(fn, x, axis=1, initial=1.5, where=MASK)
    check_rrule(fn, x, initial=0.5)


@pytest.mark.parametrize("fn", [np.nansum, np.nanmean, np.nanprod], ids=lambda f: f.__name__)
def test_nan_reductions_where_second_order(fn):
    check_rrule(fn, _with_nans(np.float64), axis=0, where=MASK, second_order=True)


@pytest.mark.parametrize("fn", [np.prod, np.nanprod], ids=lambda f: f.__name__)
def test_products_initial_where_second_order(fn):
    x = _with_nans(np.float64) if fn is np.nanprod else make("positive", (3, 4))
    check_rrule(fn, x, axis=1, initial=2.0, second_order=True)
    check_rrule(fn, x, axis=0, where=MASK, second_order=True)
    check_rrule(fn, x, None, None, None, False, 0.5, MASK, second_order=True)


@pytest.mark.parametrize("fn", [np.nansum, np.nanprod], ids=lambda f: f.__name__)
def test_nan_reductions_initial_where_positional(fn):
    # (a, axis, dtype, out, keepdims, initial, where): a float initial gets its cotangent.
    check_rrule(fn, _with_nans(np.float64), 1, None, None, False, 1.5, MASK)


def _nansum_cubes(x):
    return np.nansum(x**3, where=MASK)


def _nanmean_cubes(x):
    return np.nanmean(x**3, axis=1, where=MASK)


def _nanprod_masked(x):
    return np.nanprod(x, axis=0, where=MASK, initial=2.0)


def test_nansum_where_in_user_code_exact():
    x = make("positive", (3, 4))
    g = grad(_nansum_cubes)(x)
    expected = np.where(MASK, 3.0 * x**2, 0.0)
    np.testing.assert_allclose(g, expected, rtol=1e-12)


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("f", [_nansum_cubes, _nanmean_cubes, _nanprod_masked])
def test_nan_reductions_where_in_user_code(f, order):
    check_grads(f, make("positive", (3, 4)), order=order)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("axis", [None, 0, 1], ids=str)
@pytest.mark.parametrize("fn", [np.var, np.std, np.nanvar, np.nanstd], ids=lambda f: f.__name__)
def test_moments_where(fn, axis, dtype):
    check_rrule(
        fn,
        _with_nans(dtype) if "nan" in fn.__name__ else make("real", (3, 4), dtype),
        axis=axis,
        where=MASK,
    )
    check_rrule(fn, make("real", (3, 4), dtype), axis=axis, ddof=1, where=MASK)


@pytest.mark.parametrize("fn", [np.var, np.std, np.nanvar, np.nanstd], ids=lambda f: f.__name__)
def test_moments_given_mean(fn):
    # mean= is a constant: the derivative of sum |x - m|^2 / (n - ddof) with m fixed.
    x = make("real", (3, 4))
    m = np.full((3, 1), 0.25)
    check_rrule(fn, x, axis=1, keepdims=True, mean=m)
    check_rrule(fn, x, axis=1, mean=m, where=MASK, ddof=1)


def _var_where(x):
    return np.var(x**2, axis=0, where=MASK) + np.std(x, where=MASK)


@pytest.mark.parametrize("order", [1, 2])
def test_moments_where_in_user_code(order):
    check_grads(_var_where, make("positive", (3, 4)), order=order)


# -- the table: each (function, keyword) is differentiated or refused ------------------------
X = make("distinct", (3, 4))

DIFFERENTIATED = [
    (np.sum, (X,), {"axis": 1, "where": MASK}),
    (np.sum, (X,), {"initial": 2.0}),
    (np.sum, (X, 1, None, None, False, 0.0, MASK[0]), {}),
    (np.prod, (X, 0, None, None, True, 2.0), {}),
    (np.prod, (X,), {"axis": 1, "where": MASK}),
    (np.prod, (X, None, None, None, False, 0.5, MASK), {}),
    (np.mean, (X,), {"axis": 0, "where": MASK}),
    (np.prod, (X,), {"axis": 1, "initial": 2.0}),
    (np.max, (X,), {"axis": 1, "initial": -100.0}),
    (np.min, (X,), {"initial": 100.0}),
    (np.nanmax, (X,), {"axis": 0, "initial": -100.0}),
    (np.var, (X,), {"axis": 1, "correction": 1}),
    (np.std, (X,), {"ddof": 1}),
    (np.average, (X,), {"axis": 1, "keepdims": True}),
    (np.nansum, (X,), {"axis": 1, "where": MASK, "initial": 1.0}),
    (np.nanmean, (X,), {"where": MASK}),
    (np.nanprod, (X,), {"axis": 0, "where": MASK, "initial": 3.0}),
    (np.clip, (X, -0.5, 0.5), {"dtype": np.float64}),
    (np.clip, (X,), {"min": -0.5, "max": 0.5}),
    (np.linspace, (0.5, 2.0), {"num": 5, "endpoint": False}),
    (np.stack, ([X, X],), {"axis": 1, "dtype": np.float64}),
    (np.concatenate, ([X, X],), {"axis": 1, "casting": "same_kind"}),
    (np.reshape, (X, (4, 3)), {"copy": True}),
    (np.sort, (X,), {"axis": 0, "stable": True}),
    (np.matmul, (X, X.T), {"dtype": np.float64}),
    (np.sum, (X,), {"axis": 0, "dtype": np.float64}),
    (np.cumsum, (X,), {"axis": 1, "dtype": np.float64}),
    (np.pad, (X, 1), {"mode": "constant", "constant_values": 2.0}),
    (np.pad, (X, 1), {"mode": "reflect", "reflect_type": "odd"}),
]


@pytest.mark.parametrize(
    "fn,args,kwargs",
    DIFFERENTIATED,
    ids=[f"{f.__name__}-{'-'.join(k)}" for f, _, k in DIFFERENTIATED],
)
def test_keyword_is_differentiated(fn, args, kwargs):
    check_rrule(fn, *args, **kwargs)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("axis", [None, 0, 1], ids=str)
@pytest.mark.parametrize(
    "fn", [np.max, np.min, np.amax, np.nanmax, np.nanmin], ids=lambda f: f.__name__
)
def test_extremes_where_and_initial(fn, axis, dtype):
    x = _with_nans(dtype) if "nan" in fn.__name__ else make("distinct", (3, 4), dtype)
    big = -100.0 if "max" in fn.__name__ else 100.0
    check_rrule(fn, x, axis=axis, where=MASK, initial=big)
    # an initial that wins some reductions, given positionally: it gets their cotangent
    mid = np.float64(np.nanmedian(x)).astype(dtype)
    check_rrule(fn, x, axis, None, False, mid, MASK)


@pytest.mark.parametrize("fn", [np.max, np.min, np.nanmax, np.nanmin], ids=lambda f: f.__name__)
def test_extremes_where_and_initial_second_order(fn):
    x = _with_nans(np.float64) if "nan" in fn.__name__ else make("distinct", (3, 4))
    big = -100.0 if "max" in fn.__name__ else 100.0
    check_rrule(fn, x, axis=1, where=MASK, initial=big, second_order=True)
    check_rrule(fn, x, axis=0, initial=float(np.nanmedian(x)), second_order=True)


def _max_cubes(x):
    return np.sum(np.max(x**3, axis=1, where=MASK, initial=-5.0))


def _min_cubes_initial(x):
    return np.sum(np.min(x**3, axis=0, initial=0.5))


def _nanmax_cubes(x):
    return np.sum(np.nanmax(x**3, axis=1, where=MASK, initial=-5.0))


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("f", [_max_cubes, _min_cubes_initial, _nanmax_cubes])
def test_extremes_where_in_user_code(f, order):
    check_grads(f, make("positive", (3, 4)), order=order)
    check_grads(f, np.random.default_rng(1).uniform(0.2, 1.5, (3, 4)), order=order)


OUT = np.empty((3,))
OUT4 = np.empty((3, 4))
REFUSED = [
    (np.clip, (X, -0.5, 0.5), {"where": MASK, "out": np.zeros((3, 4))}, "where"),
    (np.take, (np.ravel(X), [0, 2, 5]), {"out": OUT}, "out"),
    (np.compress, ([True, False, True], X), {"axis": 0, "out": np.empty((2, 4))}, "out"),
    (np.trace, (X,), {"out": np.empty(())}, "out"),
    (np.stack, ([X, X],), {"out": np.empty((2, 3, 4))}, "out"),
    (np.concatenate, ([X, X],), {"out": np.empty((6, 4))}, "out"),
    (np.sum, (X,), {"dtype": np.int64}, "dtype=int64"),
    (np.mean, (X, 0, np.int32), {}, "dtype=int32"),
    (np.cumsum, (X,), {"dtype": bool}, "dtype=bool"),
    (np.nansum, (X,), {"axis": 1, "dtype": np.int64}, "dtype=int64"),
    (np.var, (X,), {"dtype": np.int64}, "dtype=int64"),
    (np.trace, (X,), {"dtype": np.int64}, "dtype=int64"),
    (np.matmul, (X[:, :3], X[:, 1:]), {"axes": [(1, 0), (1, 0), (1, 0)]}, "axes"),
]


@pytest.mark.parametrize(
    "fn,args,kwargs,word",
    REFUSED,
    ids=[f"{f.__name__}-{w}" for f, _, _, w in REFUSED],
)
def test_keyword_is_refused(fn, args, kwargs, word):
    rule = default_registry().lookup(fn)
    with pytest.raises(UnsupportedCallError, match=word):
        rule.rrule(*args, **kwargs)


def test_bind_refuses_an_undeclared_keyword():
    with pytest.raises(UnsupportedCallError, match=r"np\.f\(\.\.\., where=\) has no rule"):
        bind((), {"where": MASK}, ("axis",), (None,), name="np.f")
    assert bind((), {"dtype": None}, ("axis",), (None,), known=("dtype",)) == {"axis": None}
    with pytest.raises(UnsupportedCallError, match="positional"):
        bind((0, 1), {}, ("axis",), (None,))
