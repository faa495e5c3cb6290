"""Keyword calls of an object of a user's class with ``__call__`` that holds a differentiated
value: the object's part of the gradient, at first and second order.

``G(x)(t=x) + G(2.0)(x, s=x)`` is ``3 x**2``. On 46936db the keyword call dropped the
object's part: a gradient of 7.5 at 1.5 (9 is right) and a Hessian of 4 (6 is right)."""

from __future__ import annotations

import numpy as np
import pytest
from fd import numerical_grad

from pullback import grad, hessian, hvp


class Scaled:
    def __init__(self, w):
        self.w = w

    def __call__(self, t, s=1.0):
        return self.w * t * s


def keyword_calls(x):
    return np.sum(Scaled(x)(t=x) + Scaled(2.0)(x, s=x))


def keyword_calls_of_arrays(v):
    layer = Scaled(v[:2])
    return np.sum(layer(t=np.sin(v[1:]), s=v[0]) ** 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_keyword_call_gives_the_object_its_part(dtype):
    x = dtype(1.5)
    assert grad(keyword_calls)(x) == pytest.approx(6 * 1.5, rel=1e-6)
    assert hessian(keyword_calls)(x) == pytest.approx(6.0, rel=1e-6)
    assert grad(grad(keyword_calls))(x) == pytest.approx(6.0, rel=1e-6)


def test_arrays_against_differences_to_second_order():
    v = np.array([0.7, -0.4, 1.2])
    np.testing.assert_allclose(
        grad(keyword_calls_of_arrays)(v), numerical_grad(keyword_calls_of_arrays, [v], 0), rtol=1e-6
    )
    u = np.array([0.3, 1.0, -0.5])
    want = numerical_grad(lambda w: grad(keyword_calls_of_arrays)(w) @ u, [v], 0)
    np.testing.assert_allclose(hvp(keyword_calls_of_arrays)(v, u), want, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(hessian(keyword_calls_of_arrays)(v) @ u, want, rtol=1e-5, atol=1e-8)
