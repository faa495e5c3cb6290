"""numpy.lib.stride_tricks.sliding_window_view (convolutions and moving windows written
with it): each element's cotangent is the sum over the windows that read it. Against
central finite differences, float64 and float32, every form of ``axis``; a hand-derived
moving sum; forward mode and the second derivative."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, rng

from pullback import grad, jvp
from pullback.testing import check_grads, check_rrule

window = np.lib.stride_tricks.sliding_window_view


def conv2d(x, w):
    return np.sum(np.einsum("ijkl,kl->ij", window(x, w.shape), w) ** 2)


def windows_along_an_axis(x):
    return np.sum(np.sin(window(x, 2, axis=1)) * np.array([1.0, -2.0]))


def max_pool_overlapping(x):
    return np.sum(window(x, (2, 3), (0, 1)).max(axis=(-1, -2)) ** 2)


def moving_average(x):
    return np.sum(window(x, 3).mean(axis=-1) ** 2)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_against_finite_differences(dtype):
    g = rng(21)
    x = np.asarray(g.normal(size=(5, 5)), dtype)
    w = np.asarray(g.normal(size=(2, 2)), dtype)
    check_grads(conv2d, x, w, wrt=(0, 1))
    check_grads(windows_along_an_axis, np.asarray(g.normal(size=(3, 4)), dtype))
    check_grads(max_pool_overlapping, np.asarray(g.normal(size=(4, 5)), dtype))
    check_grads(moving_average, np.asarray(g.normal(size=7), dtype))
    gx = grad(conv2d)(x, w)
    assert gx.dtype == dtype and gx.shape == x.shape


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_the_rule(dtype):
    g = rng(22)
    check_rrule(window, np.asarray(g.normal(size=6), dtype), 3)
    check_rrule(window, np.asarray(g.normal(size=(3, 4)), dtype), (2, 2))
    check_rrule(window, np.asarray(g.normal(size=(3, 4)), dtype), 2, axis=0)
    check_rrule(window, np.asarray(g.normal(size=(3, 4)), dtype), 2, 1)


def test_a_moving_sum_by_hand():
    # sum of the windows of length 3 of x (n = 5): x0 and x4 in one window, x1 and x3
    # in two, x2 in three
    x = np.array([0.3, -1.2, 0.8, 2.0, -0.5])
    assert np.allclose(grad(lambda x: np.sum(window(x, 3)))(x), [1, 2, 3, 2, 1])


def test_forward_mode_and_second_order():
    g = rng(23)
    x = g.normal(size=7)
    v = g.normal(size=7)
    _, t = jvp(moving_average, (x,), (v,))
    assert np.isclose(t, grad(moving_average)(x) @ v)
    check_grads(conv2d, g.normal(size=(4, 4)), g.normal(size=(2, 2)), wrt=(0, 1), order=2)
