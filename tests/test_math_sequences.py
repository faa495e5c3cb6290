"""``math`` functions of a sequence (``math.prod``, ``math.dist``, ``math.fsum``,
``math.sumprod``) called on a NumPy array inside differentiated code: the array's
cotangent is an array, so that cotangents of the same array from two calls add up
element by element (a list there was concatenated: a crash, or worse)."""

import math

import numpy as np
import pytest

from pullback import grad, hessian
from pullback.testing import check_grads


def two_calls(w):
    return math.prod(w) + math.dist(w, [0.0, 0.0, 0.0]) + math.fsum(w * w)


def with_numpy(w):
    return math.prod(w) * np.sum(w) + math.dist(w, 2.0 * w)


@pytest.mark.parametrize("fn", [two_calls, with_numpy])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cotangents_of_one_array_add_up(fn, dtype):
    w = np.array([0.3, -0.7, 1.2], dtype=dtype)
    g = grad(fn)(w)
    assert isinstance(g, np.ndarray) and g.shape == w.shape and g.dtype == dtype
    check_grads(fn, w)
    check_grads(fn, w, order=2)


def test_by_hand():
    w = np.array([0.3, -0.7, 1.2])
    r = np.linalg.norm(w)
    others = np.array([w[1] * w[2], w[0] * w[2], w[0] * w[1]])
    np.testing.assert_allclose(grad(two_calls)(w), others + w / r + 2 * w, rtol=1e-12)
    # the Hessian of prod: off-diagonal the third factor; of the norm: (I - u u^T) / r
    u = w / r
    want = np.array([[0, w[2], w[1]], [w[2], 0, w[0]], [w[1], w[0], 0]])
    want = want + (np.eye(3) - np.outer(u, u)) / r + 2 * np.eye(3)
    np.testing.assert_allclose(hessian(two_calls)(w), want, rtol=1e-10)


if hasattr(math, "sumprod"):  # Python 3.12+

    def test_sumprod_of_arrays():
        w = np.array([0.3, -0.7, 1.2])
        f = lambda v: math.sumprod(v, v) + math.prod(v)  # noqa: E731
        np.testing.assert_allclose(grad(f)(w), 2 * w + np.array([-0.84, 0.36, -0.21]))
