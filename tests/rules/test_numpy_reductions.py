"""Reductions and scans against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rule_inputs import FLOATS, make, make_complex

from pullback import ZERO, jvp
from pullback.registry import default_registry
from pullback.testing import check_grads, check_rrule, distinct_arrays

AXES = [None, 0, 1, -1, (0, 2)]


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize(
    "fn",
    [
        np.sum,
        np.mean,
        np.prod,
        np.var,
        np.std,
        np.nansum,
        np.nanmean,
        np.nanprod,
        np.nanvar,
        np.nanstd,
    ],
    ids=lambda f: f.__name__,
)
def test_smooth_reductions(fn, axis, keepdims, dtype):
    x = make("positive", (2, 3, 4), dtype)
    check_rrule(fn, x, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize(
    "fn",
    [np.max, np.min, np.amax, np.amin, np.ptp, np.nanmax, np.nanmin, np.median],
    ids=lambda f: f.__name__,
)
def test_order_reductions(fn, axis, keepdims, dtype):
    x = make("distinct", (2, 3, 4), dtype)
    check_rrule(fn, x, axis=axis, keepdims=keepdims)


def test_positional_axis_gets_no_tangent():
    x = make("real", (3, 4))
    check_rrule(np.sum, x, 1)
    check_rrule(np.mean, x, 0, None, None, True)
    check_rrule(np.var, x, 1, None, None, 1)
    check_rrule(np.max, x, 1)


@pytest.mark.parametrize("ddof", [0, 1, 2])
@pytest.mark.parametrize("fn", [np.var, np.std, np.nanvar, np.nanstd], ids=lambda f: f.__name__)
def test_ddof(fn, ddof):
    check_rrule(fn, make("real", (3, 5)), axis=1, ddof=ddof)


def test_var_correction_keyword():
    check_rrule(np.var, make("real", (6,)), correction=1)


def test_prod_with_zeros():
    x = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 1.5], [1.0, 2.0, 0.5]])
    check_rrule(np.prod, x, axis=1)
    check_rrule(np.prod, x)
    check_rrule(np.prod, x, axis=0, initial=2.0)


def test_sum_with_where_and_initial():
    x = make("real", (3, 4))
    mask = np.array([True, False, True, True])
    check_rrule(np.sum, x, axis=1, where=mask)
    check_rrule(np.sum, x, initial=1.5)
    where = np.array([[1, 0, 1, 1], [1, 1, 0, 1], [0, 1, 1, 1]], dtype=bool)
    check_rrule(np.mean, x, axis=0, where=where)


def test_max_ties_split_equally():
    rule = default_registry().lookup(np.max)
    _, back = rule.rrule(np.array([1.0, 3.0, 3.0, 2.0]))
    np.testing.assert_allclose(back(1.0)[0], [0.0, 0.5, 0.5, 0.0])


def test_nan_versions_ignore_nans():
    x = make("positive", (3, 4))
    x = np.where(np.arange(12).reshape(3, 4) % 5 == 1, np.nan, x)
    for fn in (np.nansum, np.nanmean, np.nanprod, np.nanmax, np.nanmin, np.nanvar, np.nanstd):
        _, back = default_registry().lookup(fn).rrule(x, axis=1)
        (g,) = back(np.ones(3))
        assert np.all(g[np.isnan(x)] == 0), fn.__name__
        assert np.all(np.isfinite(g)), fn.__name__
    check_rrule(np.nansum, x, axis=1)
    check_rrule(np.nanmean, x, axis=0)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("weights", [None, "full", "1d"])
@pytest.mark.parametrize("axis", [None, 1])
def test_average(weights, axis, dtype):
    a = make("real", (3, 4), dtype)
    if weights is None:
        check_rrule(np.average, a, axis)
        return
    if weights == "1d":
        if axis is None:
            return
        w = make("positive", (4,), dtype, seed=1)
    else:
        w = make("positive", (3, 4), dtype, seed=1)
    check_rrule(np.average, a, axis, w)
    check_rrule(np.average, a, axis, w, True)
    check_rrule(np.average, a, axis, w, keepdims=True)
    check_rrule(np.average, a, axis=axis, weights=w)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)], ids=str)
def test_quantiles(axis, method, dtype):
    x = make("distinct", (3, 5), dtype)
    check_rrule(np.quantile, x, 0.3, axis=axis, method=method)
    check_rrule(np.quantile, x, np.array([0.1, 0.62, 0.77]), axis=axis, method=method)
    check_rrule(np.percentile, x, [20.0, 65.0], axis=axis, method=method, keepdims=True)
    check_rrule(np.percentile, x, 42.0, axis)


def test_median_even_length():
    check_rrule(np.median, make("distinct", (4, 6)), axis=1)
    check_rrule(np.median, make("distinct", (4, 6)), 0, None, False, True)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("axis", [None, 0, 1, -1], ids=str)
@pytest.mark.parametrize("fn", [np.cumsum, np.cumprod, np.nancumsum], ids=lambda f: f.__name__)
def test_scans(fn, axis, dtype):
    check_rrule(fn, make("positive", (3, 4), dtype), axis=axis)
    if axis in (None, 0, -1):
        check_rrule(fn, make("real", (5,), dtype, seed=3), axis)


def test_cumprod_with_zeros():
    x = np.array([[1.5, 0.0, 2.0, 0.7], [0.0, 1.2, 0.0, 3.0]])
    check_rrule(np.cumprod, x, axis=1)
    check_rrule(np.cumprod, x)


@pytest.mark.skipif(not hasattr(np, "cumulative_sum"), reason="numpy < 2.1")
@pytest.mark.parametrize("include_initial", [False, True])
def test_cumulative(include_initial):
    x = make("positive", (3, 4))
    check_rrule(np.cumulative_sum, x, axis=1, include_initial=include_initial)
    check_rrule(np.cumulative_prod, x, axis=0, include_initial=include_initial)
    check_rrule(np.cumulative_sum, x[0], include_initial=include_initial)


def test_complex_reductions():
    z = make_complex((3, 4)) + 0.3
    for fn in (np.sum, np.mean, np.prod, np.var, np.std, np.cumsum, np.cumprod):
        check_rrule(fn, z, axis=1)
    check_rrule(np.average, z, 1, make("positive", (4,)))


def test_python_list_input():
    check_rrule(np.sum, [1.0, 2.5, -0.5])
    check_rrule(np.mean, [np.array([1.0, 2.0]), np.array([0.5, 3.0])], axis=0)


@given(distinct_arrays(np.float64, (3, 4)), st.sampled_from([None, 0, 1]))
def test_order_statistics_hypothesis(x, axis):
    check_rrule(np.median, x, axis=axis)
    check_rrule(np.max, x, axis=axis)
    check_rrule(np.quantile, x, 0.4, axis=axis)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_std_over_a_length_one_axis_through_generated_code(dtype):
    # The generated adjoint calls the transformable pullback: it must give the rule's 0,
    # not 0/0.
    import pullback

    def f(x):
        return np.sum(np.std(x, axis=1) + np.var(x, axis=1))

    x = make("real", (3, 1), dtype)
    g = pullback.grad(f)(x)
    assert g.dtype == dtype
    np.testing.assert_array_equal(g, np.zeros((3, 1), dtype))


def _average_by_keyword(a, w):
    return np.sum(np.average(a, axis=1, weights=w) ** 2) + np.average(a[0], weights=w * w)


def _average_by_keyword_returned(a, w):
    avg, total = np.average(a, 1, weights=w, returned=True)
    return np.sum(np.sin(avg) * total)


def _average_of_lists(a, w):
    xs, ws = [], []
    for k in range(4):
        xs.append(a[k] ** 2)
        ws.append(np.exp(w[k]))
    return np.average(xs, weights=ws) * xs[0]


@pytest.mark.parametrize("f", [_average_by_keyword, _average_by_keyword_returned,
                               _average_of_lists], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_average_weights_by_keyword_get_their_gradient(f, dtype):
    # weights= by keyword was refused (PB502) where the weights vary
    a = make("real", (3, 4) if f is not _average_of_lists else (4,), dtype)
    w = make("positive", (4,), dtype, seed=1)
    assert check_grads(f, a, w, wrt=(0, 1)) == "reverse"
    if dtype == np.float64:
        # (returned=True has no second derivative, by keyword or position)
        second = "finite differences of the gradient" if "returned" in f.__name__ else (
            "reverse over reverse")
        assert check_grads(f, a, w, wrt=1, order=2) == second
        v = np.array([1.0, -0.5, 2.0, 0.3])  # (not all weights scaled alike: no change)
        _, tangent = jvp(f, (a, w), (ZERO, v))
        h = 1e-6
        want = (f(a, w + h * v) - f(a, w - h * v)) / (2 * h)
        np.testing.assert_allclose(tangent, want, rtol=1e-6)
