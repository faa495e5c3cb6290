"""``y = ys[k]`` of an array the function writes, with every use of ``y`` (and of what is
computed from it) before the next write into ``ys``: the Runge-Kutta step
``ys[k + 1] = y + h / 6 * (k1 + ...)``. The read is copied (transform/mutation.py,
read_dead_before_write), which is exact since nothing reads the view after the write;
reads whose view is used after a write stay refused as they run."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_jvp

import pullback
from pullback.errors import UnsupportedCallError
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


def rk4_pendulum(y0, theta):
    def f(t, y):
        return np.array([y[1], -theta[0] * np.sin(y[0]) - theta[1] * y[1]])

    h = 0.05
    n = 20
    ys = np.empty((n + 1, 2))
    ys[0] = y0
    t = 0.0
    for k in range(n):
        y = ys[k]  # a view of a row of ys, read before ys[k + 1] is written
        k1 = f(t, y)
        k2 = f(t + h / 2, y + h / 2 * k1)
        k3 = f(t + h / 2, y + h / 2 * k2)
        k4 = f(t + h, y + h * k3)
        ys[k + 1] = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += h
    return ys[:, 0].sum()


def euler_rows(y0, a):
    ys = np.zeros((4, 2))
    ys[0] = y0
    for k in range(3):
        y = ys[k]
        ys[k + 1] = y + 0.1 * a * y
    return np.sum(ys**2)


def view_used_after_the_write(x):
    ys = np.zeros((2, 2))
    ys[0] = x
    y = ys[0]
    ys[0] = 2.0 * y  # NumPy's y shows this write
    return np.sum(y * x)


def view_kept_by_another_name(x):
    ys = np.zeros((2, 2))
    ys[0] = x
    y = ys[0]
    z = y
    ys[0] = 3.0 * y
    return np.sum(z * x)


def view_kept_in_a_list(x):
    ys = np.zeros((2, 2))
    kept = []
    ys[0] = x
    y = ys[0]
    kept.append(y)
    ys[0] = 3.0 * y
    return np.sum(kept[0] * x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_runge_kutta_rows_are_differentiated(dtype):
    y0 = np.array([0.4, -0.2], dtype=dtype)
    theta = np.array([1.3, 0.2], dtype=dtype)
    check_grad(rk4_pendulum, y0, theta, wrt=(0, 1))
    check_grad(euler_rows, y0, dtype(0.7), wrt=(0, 1))


def test_hand_derived_euler_rows():
    # ys[k] = (1 + 0.1 a)^k y0, so f = sum_k c^(2k) |y0|^2 with c = 1 + 0.1 a
    y0, a = np.array([0.4, -0.2]), 0.7
    c = 1 + 0.1 * a
    s = sum(c ** (2 * k) for k in range(4))
    ds = sum(2 * k * c ** (2 * k - 1) * 0.1 for k in range(4))
    dy0, da = pullback.grad(euler_rows, wrt=(0, 1))(y0, a)
    np.testing.assert_allclose(dy0, 2 * s * y0, rtol=1e-12)
    np.testing.assert_allclose(da, ds * y0 @ y0, rtol=1e-12)


def test_forward_and_second_order():
    y0, theta = np.array([0.4, -0.2]), np.array([1.3, 0.2])
    check_jvp(rk4_pendulum, (y0, theta), (np.array([1.0, -0.5]), np.array([0.3, 0.2])))
    check_grads(euler_rows, y0, 0.7, wrt=(0, 1), order=2)


@pytest.mark.parametrize(
    "fn", [view_used_after_the_write, view_kept_by_another_name, view_kept_in_a_list]
)
def test_a_view_read_after_a_write_stays_refused(fn):
    with pytest.raises(UnsupportedCallError, match="a view of an array the function writes"):
        pullback.grad(fn)(np.array([0.5, -1.0]))
