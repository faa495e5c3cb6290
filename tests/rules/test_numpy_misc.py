"""full, linspace, meshgrid, bincount, diff, gradient, interp, convolve, correlate,
polyval, trapezoid, cov and corrcoef against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad
from rule_inputs import FLOATS, make, make_complex

from pullback.registry import default_registry
from pullback.tangents import ZERO
from pullback.testing import check_rrule, check_rrule_second_order

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)


@D
def test_full(dtype):
    check_rrule(np.full, (2, 3), dtype(1.5))
    check_rrule(np.full, (2, 3), make("real", (3,), dtype))
    check_rrule(np.full, 4, 2.5, dtype)
    check_rrule(np.full_like, make("real", (2, 3), dtype), make("real", (2, 1), dtype, seed=1))
    check_rrule(np.full_like, make("real", (2, 3), dtype), 0.5)


@D
def test_linspace(dtype):
    check_rrule(np.linspace, 0.5, 2.0, 7)
    check_rrule(np.linspace, dtype(-1.0), dtype(3.0), 5, dtype=dtype)
    check_rrule(np.linspace, 0.5, 2.0, 6, False)
    check_rrule(np.linspace, 0.5, 2.0, 1)
    check_rrule(np.linspace, 0.5, 2.0, 4, retstep=True)
    check_rrule(np.linspace, make("real", (3,), dtype), make("real", (2, 1), dtype, seed=1), 4)
    check_rrule(np.linspace, make("real", (3,), dtype), 2.0, 4, axis=-1)


def test_meshgrid():
    x, y, z = make("real", (3,)), make("real", (2,), seed=1), make("real", (4,), seed=2)
    check_rrule(np.meshgrid, x, y)
    check_rrule(np.meshgrid, x, y, indexing="ij")
    check_rrule(np.meshgrid, x, y, z)
    check_rrule(np.meshgrid, x, y, z, sparse=True, indexing="ij")
    check_rrule(np.meshgrid, x)


def test_bincount():
    ids = np.array([0, 3, 3, 1, 0])
    check_rrule(np.bincount, ids, make("real", (5,)))
    check_rrule(np.bincount, ids, make("real", (5,)), 6)


@D
def test_diff(dtype):
    x = make("real", (4, 5), dtype)
    check_rrule(np.diff, x)
    check_rrule(np.diff, x, 2)
    check_rrule(np.diff, x, 1, 0)
    check_rrule(np.diff, x, n=3, axis=1)
    check_rrule(np.diff, x, 1, -1, make("real", (4, 1), dtype, seed=1), 2.0)
    check_rrule(np.diff, x, 2, 0, 1.5)
    check_rrule(np.diff, x, prepend=0.0, append=make("real", (4, 2), dtype))


@D
@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient(edge_order, dtype):
    f = make("real", (5, 7), dtype)
    check_rrule(np.gradient, f, edge_order=edge_order)
    check_rrule(np.gradient, f, 0.5, edge_order=edge_order)
    check_rrule(np.gradient, f, 0.5, 2.0, edge_order=edge_order)
    check_rrule(np.gradient, f, axis=1, edge_order=edge_order)
    check_rrule(np.gradient, f[0], edge_order=edge_order)
    coords = np.cumsum(make((0.5, 1.5), (7,), seed=3))
    check_rrule(np.gradient, f, 1.5, coords, edge_order=edge_order)
    check_rrule(np.gradient, f[0], coords, edge_order=edge_order)


def test_gradient_short_axis():
    check_rrule(np.gradient, make("real", (3,)))
    check_rrule(np.gradient, make("real", (3, 2)), edge_order=1)


@D
def test_interp(dtype):
    xp = np.array([0.0, 0.5, 1.3, 2.0, 3.1])
    fp = make("real", (5,), dtype, seed=1)
    x = np.array([-0.5, 0.2, 0.7, 1.9, 2.5, 3.6, 1.0]).astype(dtype)
    check_rrule(np.interp, x, xp.astype(dtype), fp)
    check_rrule(np.interp, x, xp, fp, -1.0, 2.0)
    check_rrule(np.interp, 0.7, xp, fp)
    check_rrule(np.interp, x, xp, fp, left=-1.0)


def test_interp_complex_values():
    check_rrule(np.interp, np.array([0.2, 1.7]), np.array([0.0, 1.0, 2.0]), make_complex((3,)))


@D
def test_polyval(dtype):
    p = make("real", (4,), dtype)
    check_rrule(np.polyval, p, make("real", (2, 3), dtype, seed=1))
    check_rrule(np.polyval, p, 0.7)
    check_rrule(np.polyval, [1.5, -0.5], make("real", (3,), dtype))
    check_rrule(np.polyval, p[:1], make("real", (3,), dtype))


@D
def test_polyval_of_coefficient_rows(dtype):
    # a 2-d (or 3-d) p: row k multiplies x ** (n - 1 - k), broadcasting against x
    check_rrule(np.polyval, make("real", (3, 2), dtype), make("real", (4, 2), dtype, seed=1))
    check_rrule(np.polyval, make("real", (3, 1), dtype), make("real", (3,), dtype, seed=2))
    check_rrule(np.polyval, make("real", (2, 2, 3), dtype), 0.6)
    check_rrule(np.polyval, make("real", (3, 2, 1), dtype), make("real", (3,), dtype, seed=3))


@D
def test_polyval_second_order_at_zero(dtype):
    # x ** 0 at x = 0: the mixed and the x-x second derivatives are finite there
    p = make("real", (4,), dtype)
    check_rrule_second_order(np.polyval, p, np.array([0.0, 0.5, -1.2], dtype))


@D
def test_trapezoid(dtype):
    y = make("real", (3, 5), dtype)
    check_rrule(np.trapezoid, y)
    check_rrule(np.trapezoid, y, None, 0.3)
    check_rrule(np.trapezoid, y, dx=0.3, axis=0)
    x = np.cumsum(make((0.2, 1.0), (5,), dtype, seed=2))
    check_rrule(np.trapezoid, y, x)
    check_rrule(np.trapezoid, y, np.cumsum(make((0.2, 1.0), (3, 5), dtype, seed=2), axis=1))
    check_rrule(np.trapezoid, y.T, x, axis=0)


@D
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n,m", [(6, 3), (3, 6), (4, 4), (5, 2), (2, 7), (1, 3)], ids=str)
def test_convolve_correlate(n, m, mode, dtype):
    a = make("real", (n,), dtype)
    v = make("real", (m,), dtype, seed=1)
    check_rrule(np.convolve, a, v, mode)
    check_rrule(np.correlate, a, v, mode)


def test_convolve_correlate_complex():
    a = make_complex((5,))
    v = make_complex((3,), seed=1)
    for mode in ("full", "same", "valid"):
        check_rrule(np.convolve, a, v, mode)
        check_rrule(np.correlate, a, v, mode=mode)
        check_rrule(np.correlate, v, a, mode)


@D
def test_cov_corrcoef(dtype):
    m = make("real", (3, 6), dtype)
    y = make("real", (2, 6), dtype, seed=1)
    check_rrule(np.cov, m)
    check_rrule(np.cov, m, y)
    check_rrule(np.cov, m.T, None, False)
    check_rrule(np.cov, m.T, y.T, rowvar=False)
    check_rrule(np.cov, m, bias=True)
    check_rrule(np.cov, m, None, True, False, 2)
    check_rrule(np.cov, m[0])
    check_rrule(np.corrcoef, m)
    check_rrule(np.corrcoef, m, y)
    check_rrule(np.corrcoef, m.T, rowvar=False)


@D
def test_cov_with_weights(dtype):
    """fweights (integers, no cotangent) and aweights (differentiated, here by position
    where check_rrule compares it with finite differences): NumPy's weighted means and
    its ``fact``, for each ddof."""
    m = make("real", (3, 6), dtype)
    y = make("real", (2, 6), dtype, seed=1)
    a = (np.abs(make("real", (6,), dtype, seed=2)) + 0.5).astype(dtype)
    f = np.array([1, 2, 1, 3, 1, 2])
    check_rrule(np.cov, m, None, True, False, None, None, a)
    check_rrule(np.cov, m, None, True, False, None, f)
    check_rrule(np.cov, m, None, True, False, None, f, a)
    check_rrule(np.cov, m, y, True, False, 2, f, a)
    check_rrule(np.cov, m.T, None, False, True, None, None, a)
    check_rrule(np.cov, m[0], None, True, False, 0, f, a)


def _weighted_cov(x, w, f):
    data = np.stack([x, x**2, np.sin(x)])
    return np.sum(np.cov(data, fweights=f, aweights=w) ** 2)


@D
def test_cov_aweights_by_keyword_get_their_gradient(dtype):
    """``np.cov(X, aweights=w)`` with ``w`` differentiated was PB502 (a keyword of a
    rule) and with constant weights 'cov(fweights=/aweights=) has no rule'."""
    x = np.array([0.3, -0.7, 1.1, 0.4], dtype)
    w = np.array([1.0, 2.0, 0.5, 1.5], dtype)
    f = np.array([1, 2, 3, 1])
    check_grad(_weighted_cov, x, w, f, wrt=(0, 1))
    check_grad(lambda x: np.sum(np.cov(x, np.cos(x), aweights=np.exp(x), ddof=0)), x)
    check_grad(lambda x: np.sum(np.cov(np.stack([x, x**3]), fweights=f)), x)


def test_cov_complex():
    check_rrule(np.cov, make_complex((2, 5)))


def test_full_int_output_has_no_gradient():
    _, back = default_registry().lookup(np.full).rrule((2,), 1.5, int)
    assert back(np.ones(2))[1] is ZERO


def interp_ends_by_keyword(x, fp):
    xp = np.array([0.0, 0.5, 1.0])
    return np.sum(np.interp(x, xp, fp, left=2 * fp[0], right=0.3 * fp[1]) * np.arange(1, 5))


def test_interp_left_and_right_by_keyword_are_differentiated():
    from pullback import grad, jvp
    from pullback.testing import check_grads

    for dtype in (np.float64, np.float32):
        x = np.asarray([-0.3, 0.2, 0.7, 1.4], dtype)
        fp = np.asarray([0.5, 0.9, 0.2], dtype)
        check_grads(interp_ends_by_keyword, x, fp, wrt=(0, 1))
    x, fp = np.array([-0.3, 0.2, 0.7, 1.4]), np.array([0.5, 0.9, 0.2])
    # hand-derived: weights 1..4; x0 below (left = 2 fp0), x1 = 0.2 (t = 0.4 in [0, 0.5]),
    # x2 = 0.7 (t = 0.4 in [0.5, 1]), x3 above (right = 0.3 fp1)
    want_fp = np.array([2 * 1 + 2 * 0.6, 2 * 0.4 + 3 * 0.6 + 0.3 * 4, 3 * 0.4])
    want_x = np.array([0.0, 2 * (0.9 - 0.5) / 0.5, 3 * (0.2 - 0.9) / 0.5, 0.0])
    dx, dfp = grad(interp_ends_by_keyword, wrt=(0, 1))(x, fp)
    np.testing.assert_allclose(dfp, want_fp, rtol=1e-12)
    np.testing.assert_allclose(dx, want_x, rtol=1e-12)
    v = np.array([0.2, -0.4, 1.0])
    np.testing.assert_allclose(
        jvp(lambda f: interp_ends_by_keyword(x, f), (fp,), (v,))[1], want_fp @ v, rtol=1e-12
    )
