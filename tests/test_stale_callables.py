"""A gradient function made once follows what its callable calls *now* (principle 1: a cache
may never change an answer). ``grad(obj)`` of a callable object, a partial or a method keeps
being called after the class gains a new ``__call__`` or the partial new keywords; each
answer must be the derivative of what Python runs at that call, checked against finite
differences, in float64 and float32."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from fd import assert_tree_close, numerical_grad

import pullback

DTYPES = [np.float64, np.float32]


def _tol(dtype):
    return (2e-3, 2e-3) if dtype == np.float32 else (1e-6, 1e-7)


def _agrees(gradient_fn, f, x):
    """The same gradient function, called now, agrees with finite differences of ``f``."""
    rtol, atol = _tol(x.dtype)
    got = gradient_fn(x)
    assert got.dtype == x.dtype
    assert_tree_close(got, numerical_grad(f, (x,), 0), rtol, atol)


class Scaled:
    def __init__(self):
        self.k = 2.0

    def __call__(self, x):
        return np.sum(self.k * x**2)


class Child(Scaled):
    pass


def _cubic_call(self, x):
    return np.sum(self.k * x**3)


def _sine_call(self, x):
    return np.sum(np.sin(x) * self.k)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_class_given_a_new_call_is_differentiated_anew(dtype):
    class Model(Scaled):
        pass

    model = Model()
    x = np.array([0.3, -1.2, 2.3], dtype=dtype)
    g = pullback.grad(model)
    _agrees(g, model, x)
    Model.__call__ = _cubic_call
    _agrees(g, model, x)
    np.testing.assert_allclose(g(x), 3 * 2.0 * x**2, rtol=_tol(dtype)[0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_subclass_that_gains_its_own_call_is_followed(dtype):
    class Sub(Child):
        pass

    obj = Sub()
    x = np.array([0.5, 1.5], dtype=dtype)
    g = pullback.value_and_grad(obj)
    value, grad = g(x)
    np.testing.assert_allclose(grad, 2 * 2.0 * x, rtol=_tol(dtype)[0])
    Sub.__call__ = _sine_call
    value, grad = g(x)
    assert value == pytest.approx(float(obj(x)), rel=1e-6)
    rtol, atol = _tol(dtype)
    assert_tree_close(grad, numerical_grad(obj, (x,), 0), rtol, atol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_partial_whose_keywords_change_is_followed(dtype):
    def power_sum(x, scale=1.0, p=2.0):
        return np.sum(scale * x**p)

    part = functools.partial(power_sum, scale=2.0)
    x = np.array([0.3, 1.2, 2.3], dtype=dtype)
    g = pullback.grad(part)
    _agrees(g, part, x)
    part.keywords["p"] = 3.0
    _agrees(g, part, x)
    np.testing.assert_allclose(g(x), 2.0 * 3 * x**2, rtol=_tol(dtype)[0])


def test_the_hessian_of_a_callable_object_follows_its_class():
    class Model(Scaled):
        pass

    model = Model()
    x = np.array([0.3, -1.2, 2.3])
    h = pullback.hessian(model)
    np.testing.assert_allclose(h(x), np.diag(np.full(3, 4.0)), atol=1e-12)
    Model.__call__ = _cubic_call
    np.testing.assert_allclose(h(x), np.diag(12.0 * x), rtol=1e-12)


def test_grad_of_a_callable_object_differentiated_again_follows_its_class():
    class Model(Scaled):
        pass

    model = Model()
    x = np.array([0.3, -1.2, 2.3])
    g = pullback.grad(model)
    jac = pullback.jacobian(g)
    np.testing.assert_allclose(jac(x), np.diag(np.full(3, 4.0)), atol=1e-12)
    Model.__call__ = _cubic_call
    np.testing.assert_allclose(jac(x), np.diag(12.0 * x), rtol=1e-12)


def test_a_class_whose_call_stops_being_python_is_refused():
    class Model(Scaled):
        pass

    model = Model()
    x = np.array([0.3, -1.2])
    g = pullback.grad(model)
    g(x)
    Model.__call__ = np.sum  # no longer a Python function: nothing to transform
    with pytest.raises(pullback.PullbackError):
        g(x)
