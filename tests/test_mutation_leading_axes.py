"""A value with leading axes of length 1 stored into fewer axes (``g[1, 1:-1] = row2d``
with ``row2d.shape == (1, 3)``): NumPy drops those axes, and the value's cotangent must get
them back (it used to be summed over them: a silent wrong gradient)."""

import numpy as np
import pytest

from pullback import grad, hessian
from pullback.tangents import unbroadcast
from pullback.testing import check_grads


def from_block(x):
    g = x.reshape(4, 5) * 1.0
    g[1, 1:-1] = g[:1, 1:-1] * 2.0
    return np.sum(g * g)


def from_reshape(x):
    g = x.reshape(4, 5) * 1.0
    g[2, 1:-1] = x[:3].reshape(1, 3) * x[3]
    return np.sum(g * g)


def in_loop(x):
    g = x.reshape(4, 5) * 1.0
    for i in range(1, 3):
        g[i, 1:-1] = g[i - 1, 1:-1] + g[i, :-2] * g[:1, 1:-1]
    return np.sum(g * g)


def _fd_grad(f, x, h=1e-6):
    x = x.astype(np.float64)
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", [from_block, from_reshape, in_loop])
def test_matches_finite_differences(f, dtype):
    x = np.random.default_rng(3).uniform(0.3, 0.9, 20).astype(dtype)
    got = grad(f)(x)
    assert got.dtype == dtype
    tol = 1e-6 if dtype == np.float64 else 2e-3
    np.testing.assert_allclose(got, _fd_grad(f, x), rtol=tol, atol=tol)
    check_grads(f, x)


def test_second_order():
    check_grads(in_loop, np.random.default_rng(4).uniform(0.3, 0.9, 20), order=2)


def test_unbroadcast_restores_leading_axes():
    got = unbroadcast(np.arange(3.0), np.zeros((1, 3)))
    np.testing.assert_array_equal(got, [[0.0, 1.0, 2.0]])
    got = unbroadcast(np.arange(3.0, dtype=np.float32), np.zeros((1, 1, 3), np.float32))
    assert got.shape == (1, 1, 3) and got.dtype == np.float32


# dismalpy's Kalman filter (found by probe3): `y_tt1[t] = H.dot(beta[t]) + A.dot(z[t])`, a
# (1, 1) value stored into a (1,) row. The adjoint of the unbroadcast that gives the value's
# cotangent its leading axis back sums that axis away again (the Hessian raised
# 'input operand has more dimensions than allowed by the axis remapping').
def rows_from_columns(w):
    y = np.zeros((3, 1))
    for t in range(3):
        y[t] = w.reshape(1, 1) * (t + 1.0) + w[0] ** 2
    return np.sum(y**3)


def test_second_order_through_a_value_with_a_leading_axis():
    w = np.array([0.7])
    check_grads(rows_from_columns, w, order=2)
    want = sum(6 * (v * w[0] + w[0] ** 2) * (v + 2 * w[0]) ** 2 + 6 * (v * w[0] + w[0] ** 2) ** 2
               for v in (1.0, 2.0, 3.0))
    np.testing.assert_allclose(hessian(rows_from_columns)(w), [[want]], rtol=1e-10)
