"""``b.sum()``, ``b.mean()``, ``b.dot(w)`` where ``b`` is a parameter or a helper's result
that may be an object of the user's class with its own ``sum``/``mean``/``dot``: in a module
holding such a class, the call is dispatched on the value when the code runs (the user's
method for their object, NumPy's rule for an array) instead of being read as ``np.sum(b)``
(which called ``b.sum(axis=None, ...)``: a TypeError). First and second order, forward
mode, against finite differences; arrays in the same module keep NumPy's meaning."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from fd import check_grad, check_hvp, check_jvp

import pullback as pb


@dataclass
class Box:
    v: np.ndarray

    def sum(self):
        return np.sum(self.v**2)

    def mean(self):
        return np.mean(self.v) * 3.0

    def dot(self, w):
        return np.dot(self.v, w) * 2.0


class Plain:
    def __init__(self, v, scale):
        self.v = v
        self.scale = scale

    def sum(self):
        return self.scale * np.sum(np.sin(self.v))


def make_box(x):
    return Box(x * 2.0)


def methods_of_a_parameter(b, w):
    return b.sum() + b.mean() + b.dot(w)


def of_a_box(x, w):
    return methods_of_a_parameter(Box(x), w)


def methods_of_a_helpers_result(x, w):
    b = make_box(x)
    return b.sum() + b.dot(w) + b.mean() ** 2


def plain_sum(p):
    return p.sum() * 2.0


def of_a_plain(x):
    return plain_sum(Plain(x, 1.5))


def scaled(x):
    return x * 3.0


def array_methods(x, w):
    # the same names on arrays, in a module with Box: NumPy's meaning (a parameter, a
    # helper's result)
    y = scaled(x)
    return x.sum() ** 2 + x.mean() + x.dot(w) + np.sin(x).sum(axis=0) + y.max() * y.sum()


X = np.array([0.4, -1.1, 0.7])
W = np.array([0.5, -1.0, 2.0])


def test_exact_values():
    g = pb.grad(methods_of_a_parameter)(Box(X), W)
    np.testing.assert_allclose(g.v, 2 * X + 1.0 + 2 * W, rtol=1e-12)
    g = pb.grad(methods_of_a_helpers_result)(X, W)
    m = np.mean(2 * X) * 3.0
    np.testing.assert_allclose(g, 8 * X + 4 * W + 2 * m * 2.0, rtol=1e-12)
    np.testing.assert_allclose(pb.grad(of_a_plain)(X), 3.0 * np.cos(X), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize(
    "f", [of_a_box, methods_of_a_helpers_result, array_methods], ids=lambda f: f.__name__
)
def test_against_finite_differences(f, dtype):
    check_grad(f, X.astype(dtype), W.astype(dtype))


def test_plain_class():
    check_grad(of_a_plain, X)
    check_hvp(of_a_plain, X, W)
    check_jvp(of_a_plain, (X,), (W,))


@pytest.mark.parametrize(
    "f", [of_a_box, methods_of_a_helpers_result, array_methods], ids=lambda f: f.__name__
)
def test_second_order_and_forward(f):
    v = np.array([0.3, 0.2, -0.6])
    check_hvp(lambda x: f(x, W), X, v)
    check_jvp(f, (X, W), (v, W))
