"""np.nanmedian, np.nanquantile and np.nanpercentile (rules/numpy_order_stats.py, skip_nan)
against finite differences: slices with different numbers of NaNs, a slice of NaNs only,
every method, several quantiles, keepdims, float64 and float32, the cotangent of ``q``,
second derivatives and forward mode."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from fd import check_grad
from rule_inputs import FLOATS, make

import pullback
from pullback.testing import check_rrule, check_rrule_second_order


def with_nans(shape, dtype=np.float64, pattern=(1, 5, 12)):
    """Distinct values with NaNs at the flat positions ``pattern`` (no quantile of the
    tests falls on an order statistic, where the slope in ``q`` jumps)."""
    x = make("distinct", shape, dtype).copy()
    x.flat[[p for p in pattern if p < x.size]] = np.nan
    return x


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN slice
        return fn(*args, **kwargs)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)], ids=str)
def test_nanquantiles(axis, method, dtype):
    x = with_nans((3, 5), dtype)
    check_rrule(np.nanquantile, x, 0.3, axis=axis, method=method)
    check_rrule(np.nanquantile, x, np.array([0.1, 0.62, 0.77]), axis=axis, method=method)
    check_rrule(np.nanpercentile, x, [20.0, 65.0], axis=axis, method=method, keepdims=True)
    check_rrule(np.nanpercentile, x, 42.0, axis)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("axis", [None, 0, 1, -1], ids=str)
def test_nanmedian(axis, dtype):
    check_rrule(np.nanmedian, with_nans((4, 6), dtype), axis=axis)
    check_rrule(np.nanmedian, with_nans((4, 6), dtype), axis, None, False, True)


def test_by_hand():
    x = np.array([[1.0, np.nan, 3.0], [4.0, 2.0, np.nan], [np.nan, 5.0, np.nan]])
    g = pullback.grad(lambda x: np.sum(np.nanmedian(x, axis=1) * [1.0, 2.0, 3.0]))(x)
    np.testing.assert_array_equal(g, [[0.5, 0.0, 0.5], [1.0, 1.0, 0.0], [0.0, 3.0, 0.0]])
    # q = 0.25 over [1, 2, 4, 7]: pos 0.75 between 1 and 2; d/dq = 3 * (2 - 1)
    v = np.array([7.0, np.nan, 1.0, 4.0, 2.0])
    dx, dq = pullback.grad(lambda v, q: np.nanquantile(v, q), wrt=(0, 1))(v, 0.25)
    np.testing.assert_allclose(dx, [0.0, 0.0, 0.25, 0.0, 0.75])
    assert dq == pytest.approx(3.0)


def test_a_slice_of_nans_only_sends_no_cotangent():
    x = np.array([[np.nan, np.nan], [1.0, 3.0]])
    g = quiet(pullback.grad(lambda x: np.nansum(np.nanmedian(x, axis=1))), x)
    np.testing.assert_array_equal(g, [[0.0, 0.0], [0.5, 0.5]])


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_the_cotangent_of_q(dtype):
    x = with_nans((4, 5), np.float64)
    w = np.arange(1.0, 5.0)
    check_grad(lambda q: np.sum(np.nanquantile(x, q, axis=1) * w), dtype(0.37))
    check_grad(lambda q: np.sum(np.nanpercentile(x, q, axis=1) * w), dtype(61.0))


def test_second_order():
    x = with_nans((3, 5))
    check_rrule_second_order(np.nanquantile, x, 0.3, axis=1)
    check_rrule_second_order(np.nanquantile, x, np.array([0.2, 0.7]))
    check_rrule_second_order(np.nanpercentile, x, 40.0, axis=0, method="lower")
    check_rrule_second_order(np.nanmedian, x, axis=1)
    c = np.array([0.5, 1.0, -0.3, 2.0])
    row = np.array([1.0, np.nan, 3.0, 0.5])

    def f(v):
        return np.nanquantile(row + v[0] * c, v[1]) * v[0] + np.nanmedian(row + v[0] ** 2)

    v0 = np.array([1.3, 0.41])
    h = pullback.hessian(f)(v0)
    grad_f = pullback.grad(f)
    eps = 1e-6
    want = np.stack([(grad_f(v0 + e) - grad_f(v0 - e)) / (2 * eps) for e in np.eye(2) * eps])
    np.testing.assert_allclose(h, want, rtol=1e-6, atol=1e-8)


def test_forward_mode():
    x = with_nans((3, 5))
    t = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    y, dy = pullback.jvp(lambda x: np.nanquantile(x, 0.3, axis=1), (x,), (t,))
    eps = 1e-6
    want = (np.nanquantile(x + eps * t, 0.3, axis=1) - np.nanquantile(x - eps * t, 0.3, axis=1)) / (
        2 * eps
    )
    np.testing.assert_allclose(dy, want, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(y, np.nanquantile(x, 0.3, axis=1))


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)], ids=str)
def test_one_machinery_for_full_and_nan_counts(axis, method):
    """Without NaNs every slice's count is its length, so the nan forms' tables are the
    plain forms' (one machinery, numpy_order_stats.py), and both match NumPy's value as
    ``sum W x``."""
    from pullback.rules.numpy_order_stats import order_bounds, order_weights

    x = make("distinct", (3, 5), np.float64)
    q = np.array([0.0, 0.3, 0.62, 1.0])
    full = order_weights(x, q, axis, method, 1.0, False)
    counted = order_weights(x, q, axis, method, 1.0, True)
    np.testing.assert_array_equal(full, counted)
    axes = tuple(range(x.ndim)) if axis is None else np.atleast_1d(axis)
    value = np.sum(full * x, axis=tuple(1 + int(k) for k in axes))
    np.testing.assert_allclose(value, np.quantile(x, q, axis=axis, method=method), rtol=1e-12)
    plain, nan = order_bounds(x, q, axis, 1.0, False), order_bounds(x, q, axis, 1.0, True)
    for a, b in zip(plain, nan, strict=True):
        np.testing.assert_array_equal(a, b)
