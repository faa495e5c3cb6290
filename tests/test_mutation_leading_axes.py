"""A value with leading axes of length 1 stored into fewer axes (``g[1, 1:-1] = row2d``
with ``row2d.shape == (1, 3)``): NumPy drops those axes, and the value's cotangent must get
them back (it used to be summed over them: a silent wrong gradient)."""

import numpy as np
import pytest

from pullback import grad
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
