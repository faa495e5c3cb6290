"""Calls through an object found at run time, as Python makes them: a callable stored on
the instance (``self.act_fn(z)``: a function, a lambda, a ``functools.partial``, a
callable object, a bound method of another object) is called without ``self``; a static
method called through ``self`` gets no ``self``; a class method gets the class. Against
finite differences, float64 and float32."""

from __future__ import annotations

import collections
from functools import partial

import numpy as np
import pytest

from pullback import grad
from pullback.testing import check_grads


class Sigmoid:
    def __call__(self, z):
        return 1.0 / (1.0 + np.exp(-z))


class Scaler:
    def __init__(self, k):
        self.k = k

    def apply(self, z):
        return self.k * z


class Layer:
    def __init__(self, act):
        self.act_fn = act
        self.reduce = partial(np.sum, axis=0)
        self.squash = lambda t: np.tanh(t) * 2.0
        self.scale = Scaler(1.5).apply

    @staticmethod
    def square(z):
        return z * z

    @classmethod
    def offset(cls, z):
        return z + cls.SHIFT

    SHIFT = 0.25

    def forward(self, x):
        h = self.act_fn(x) + self.squash(x)
        return np.sum(self.reduce(self.scale(h)) ** 2)

    def loss(self, x):
        return np.sum(self.square(x) + self.offset(x) ** 3)

    def by_type(self, x):
        return type(self).loss(self, x) + Layer.square(x[0])


@pytest.mark.parametrize("act", [np.tanh, Sigmoid(), partial(np.power, 2.0)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_callables_stored_on_the_instance(act, dtype):
    layer = Layer(act)
    x = np.array([[0.3, -0.7], [1.1, 0.2]], dtype=dtype)
    check_grads(layer.forward, x)
    assert grad(layer.forward)(x).dtype == dtype


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_static_and_class_methods_called_through_self(dtype):
    layer = Layer(np.tanh)
    x = np.array([0.3, -0.7, 1.1], dtype=dtype)
    expected = 2 * x + 3 * (x + 0.25) ** 2
    assert np.allclose(grad(layer.loss)(x), expected, rtol=1e-5)
    check_grads(layer.loss, x)


def test_a_method_called_through_its_class_with_the_instance():
    layer = Layer(np.tanh)
    x = np.array([0.3, -0.7, 1.1])
    expected = 2 * x + 3 * (x + 0.25) ** 2
    expected[0] += 2 * x[0]
    assert np.allclose(grad(layer.by_type)(x), expected)


def loss_through_a_global_layer(x):
    return LAYER.forward(x) + LAYER.loss(x)


LAYER = Layer(Sigmoid())


def test_methods_of_a_global_object_inside_a_differentiated_function():
    check_grads(loss_through_a_global_layer, np.array([[0.3, -0.7], [1.1, 0.2]]))


class Cubic:
    def __init__(self, a):
        self.a = a
        self.nfev = 0

    def fun(self, x):
        self.nfev += 1
        return np.sum(self.a * x**3) + Cubic.helper(self, x)

    def helper(self, x):
        return np.sum(np.sin(x) * x)

    def dynamic(self, x):
        return np.sum(self.a * x**3) + self.helper(x)

    def __call__(self, x):
        return 2.0 * self.fun(x)


def _cubic_hessian(a, x):
    return np.diag(6 * a * x + 2 * np.cos(x) - x * np.sin(x))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hessian_of_a_bound_method_and_a_callable_object(dtype):
    from pullback import hessian

    model = Cubic(2.0)
    x = np.array([0.3, -0.5, 0.8], dtype=dtype)
    rtol = 1e-4 if dtype == np.float32 else 1e-9
    assert np.allclose(hessian(model.fun)(x), _cubic_hessian(2.0, x), rtol=rtol, atol=rtol)
    assert np.allclose(hessian(model)(x), 2 * _cubic_hessian(2.0, x), rtol=rtol, atol=rtol)
    check_grads(model.fun, x, order=2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hessian_through_a_method_resolved_at_run_time(dtype):
    from pullback import hessian

    x = np.array([0.3, -0.5, 0.8], dtype=dtype)
    rtol = 1e-4 if dtype == np.float32 else 1e-9
    model = Cubic(2.0)
    assert np.allclose(hessian(model.dynamic)(x), _cubic_hessian(2.0, x), rtol=rtol, atol=rtol)
    check_grads(model.dynamic, x, order=2)


def test_hessian_through_a_callable_stored_on_the_object_is_refused_with_the_rewrite():
    from pullback import hessian
    from pullback.errors import HigherOrderError

    layer = Layer(np.tanh)
    # (self.reduce is partial(np.sum, axis=0): the rewrite is the lambda making that call)
    with pytest.raises(HigherOrderError, match=r"`lambda z: np\.sum\(z, axis=0\)` or a def"):
        hessian(layer.forward)(np.array([[0.3, -0.7], [1.1, 0.2]]))


def _square(t):
    return t * t


def _apply(f, x):
    return np.sum(f(x) * np.sin(x))


def _cube(t):
    return t * t * t


def through_a_function_value(x):
    return _apply(_square, x) + _apply(_cube, x)


def through_a_rule_passed_as_a_value(x):
    return _apply(np.tanh, x)


def test_first_and_second_order_through_functions_passed_as_values():
    from pullback import hessian

    x = np.array([0.3, -0.5, 0.8])
    check_grads(through_a_function_value, x)
    check_grads(through_a_function_value, x, order=2)
    s, c = np.sin(x), np.cos(x)
    d2 = (2 * s + 4 * x * c - x * x * s) + (6 * x * s + 6 * x * x * c - x**3 * s)
    assert np.allclose(hessian(through_a_function_value)(x), np.diag(d2))


def test_second_order_through_a_rule_passed_as_a_value():
    # np.tanh held in a parameter: its vjp function is written from the rule's inline
    # derivative (scalar_vjps._scalar_rule_vjp), so the gradient is differentiated again.
    from pullback import hessian

    x = np.array([0.3, -0.5, 0.8])
    check_grads(through_a_rule_passed_as_a_value, x)
    assert check_grads(through_a_rule_passed_as_a_value, x, order=2) == "reverse over reverse"
    t, s, c = np.tanh(x), np.sin(x), np.cos(x)
    d1 = 1 - t * t
    d2 = -2 * t * d1 * s + 2 * d1 * c - t * s
    assert np.allclose(hessian(through_a_rule_passed_as_a_value)(x), np.diag(d2))


class Quadratic:
    def value(self, x):
        return np.sum(x**2)


class Bumpy(Quadratic):
    def value(self, x):
        return super().value(x) + np.sum(np.sin(3.0 * x))

    @classmethod
    def scaled(cls, x):
        return 2.0 * x


class Bumpier(Bumpy):
    def value(self, x):
        return 0.5 * super().value(x) + np.sum(super().scaled(x))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_zero_argument_super_in_methods(dtype):
    # the generated code is no method of the class: super() gets the method's own
    # __class__ cell and first parameter, as Python gives them
    x = np.array([0.3, -0.7, 1.1], dtype=dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    want = 2 * x + 3.0 * np.cos(3.0 * x)
    np.testing.assert_allclose(grad(Bumpy().value)(x), want, rtol=tol)
    np.testing.assert_allclose(grad(Bumpier().value)(x), 0.5 * want + 2.0, rtol=tol)
    np.testing.assert_allclose(grad(lambda v: Bumpier().value(v))(x), 0.5 * want + 2.0, rtol=tol)
    assert check_grads(Bumpier().value, x.astype(np.float64), order=2) == "reverse over reverse"


Pair = collections.namedtuple("Pair", "w b")


def uses_a_library_method(x):
    p = Pair(x[:2], x[2])
    q = p._asdict()
    return np.sum(q["w"] ** 2) * q["b"]


def test_a_named_tuples_asdict_found_at_run_time_is_differentiated():
    # Pair._asdict is Python in the standard library, never transformed: a named tuple's
    # is the call of records_named.record_asdict, whose rule gives the fields their
    # cotangents (it was refused as library code)
    check_grads(uses_a_library_method, np.array([1.0, 2.0, 3.0]), order=2)


def uses_a_library_method_of_a_class(x, d):
    w = d.get("w", x[0])
    return w * x[1]


def test_a_library_method_found_at_run_time_is_refused_at_the_users_line():
    # UserDict.get is Python in the standard library: never transformed (its
    # diagnostics would point into collections/__init__.py), refused where it is called
    from pullback.errors import MissingRuleError

    with pytest.raises(MissingRuleError) as info:
        grad(uses_a_library_method_of_a_class)(np.array([1.0, 2.0, 3.0]), collections.UserDict())
    message = str(info.value)
    line = uses_a_library_method_of_a_class.__code__.co_firstlineno + 1
    assert message.startswith(f"{__file__}:{line}:")
    assert "it is library code (collections" in message


def replaces_a_field_by_keyword(x):
    p = Pair(x[:2], x[2])
    q = p._replace(b=2.0 * p.b)
    return np.sum(q.w**2) * q.b


def test_a_differentiated_keyword_of_a_call_found_at_run_time_is_differentiated():
    # before, 2.0 * p.b was not even seen as reaching q (a zero gradient for x[2], found
    # by probe_fin), then refused (PB502): p._replace(b=v) is a star-call, the call of
    # records_named.record_replace, which gives the new value its cotangent
    assert check_grads(replaces_a_field_by_keyword, np.array([1.0, 2.0, 3.0]), order=2) == (
        "reverse over reverse"
    )
