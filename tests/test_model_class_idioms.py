"""Model code written as classes, in the idioms the s29 probes found wrong or refused
(tests/probe/test_probe_styles_s29_models.py): each against central differences, in
reverse mode, forward mode (jvp against the gradient) and to second order (hvp).

* ``self.layer(x)``, a record held by a record and called through its ``__call__``: the
  held record's fields got no cotangent (a silent zero gradient, jvp and hvp too);
* ``self.layers = list(layers)`` of records: jvp was zero (a record in a rule's list
  output had no tangent), and hvp failed in ``list``'s pullback;
* a class built on ``abc.ABC`` (metaclass ``ABCMeta``): refused as a metaclass class;
* ``super().predict(x)`` in a method of a record (and ``super().helper(x)`` of a static or
  class method): refused as a call of ``super`` with a differentiated argument;
* ``cls(w)`` in a ``@classmethod``, in forward mode: refused as a class without a rule;
* ``th, om = theta0, 0.0; th += ...`` on a number: refused (PB105) as a possible array;
* a third derivative through a method of a record: silently wrong (the receiver's part
  lost), and ``jvp(grad(f))`` of such code crashed (a tuple grown from constants).
"""

from __future__ import annotations

import abc
import dataclasses
import math

import numpy as np
import pytest
from fd import check_grad, check_hvp

import pullback

W = np.array([[0.3, -0.2], [0.5, 0.1]])
X = np.array([[1.0, 2.0], [-0.5, 0.3]])
V = np.array([[1.0, -0.5], [0.25, 2.0]])


class Dense:
    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        return np.tanh(x @ self.W)


class Holder:
    def __init__(self, layer, scale):
        self.layer = layer
        self.scale = scale

    def run(self, x):
        return self.scale * self.layer(x)


class Chain:
    def __init__(self, layers):
        self.layers = list(layers)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


@dataclasses.dataclass
class DDense:
    W: np.ndarray

    def __call__(self, x):
        return np.sin(x @ self.W)


@dataclasses.dataclass
class DHolder:
    layer: DDense
    scale: float


def held_layer(W, X):
    return np.sum(Holder(Dense(W), 1.5).run(X) ** 2)


def held_layer_outside(W, X):
    h = Holder(Dense(W), 0.5)
    return np.sum(h.layer(X) ** 3)


def held_dataclass_layer(W, X):
    h = DHolder(DDense(W), 2.0)
    return np.sum(h.layer(X) ** 2) * h.scale


def listed_layers(W, X):
    return np.sum(Chain([Dense(W), Dense(W.T)])(X) ** 2)


def listed_records(W, X):
    layers = list([Dense(W)])
    return np.sum(layers[0](X) ** 2)


class Kernel(abc.ABC):
    def __init__(self, length):
        self.length = length

    @abc.abstractmethod
    def __call__(self, r):
        raise NotImplementedError


class RBF(Kernel):
    def __call__(self, r):
        return np.exp(-0.5 * (r / self.length) ** 2)


class Laplace(Kernel, metaclass=abc.ABCMeta):
    def __init__(self, length, amp):
        super().__init__(length)
        self.amp = amp

    def __call__(self, r):
        return self.amp * np.exp(-np.abs(r) / self.length)


def abc_kernels(length):
    r = np.array([0.1, 0.5, 1.2])
    return np.sum(RBF(length)(r)) + np.sum(Laplace(length, 2.0)(r))


class Model:
    def __init__(self, params):
        self.params = params

    def predict(self, x):
        return self.params[0] * np.exp(-self.params[1] * x)


class Shifted(Model):
    def __init__(self, params, shift):
        super().__init__(params)
        self.shift = shift

    def predict(self, x):
        return super().predict(x - self.shift) + self.shift


class Base:
    def __init__(self, w):
        self.w = w

    @staticmethod
    def square(z):
        return z * z

    @classmethod
    def make(cls, w):
        return cls(w)

    def f(self, x):
        return np.sum(self.w * x)


class Child(Base):
    def f(self, x):
        return super().f(x) + np.sum(super().square(self.w))

    def remade(self, x):
        return np.sum(super().make(self.w * x).w * self.w)


def super_static_and_class(w):
    x = np.array([1.0, 2.0])
    return Child(w).f(x) * Child.make(w).f(x)


def super_method(p):
    return np.sum(Shifted(p, 0.1).predict(np.linspace(0.0, 1.0, 4)) ** 2)


def pendulum(theta0):
    th, om = theta0, 0.0
    for _ in range(20):
        om -= 9.81 * math.sin(th) * 0.01
        th += om * 0.01
    return th * th + om


def copied_parameter(x0):
    x = x0
    x *= 1.5
    return x ** 3


def _jvp_matches_grad(f, x, v, *rest):
    _, t = pullback.jvp(f, (x, *rest), (v,) + (pullback.ZERO,) * len(rest))
    np.testing.assert_allclose(t, np.sum(pullback.grad(f)(x, *rest) * v), rtol=1e-10)


@pytest.mark.parametrize(
    "f", [held_layer, held_layer_outside, held_dataclass_layer, listed_layers, listed_records]
)
def test_layers_held_by_objects(f):
    # before: a silent zero gradient (held_*), a zero jvp (listed_*)
    g = check_grad(f, W, X)
    assert np.any(g != 0)
    _jvp_matches_grad(f, W, V, X)
    check_hvp(lambda w: f(w, X), W, V, rtol=1e-5, atol=1e-7)


def test_layers_held_by_objects_float32():
    g = pullback.grad(held_layer)(W.astype(np.float32), X.astype(np.float32))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, pullback.grad(held_layer)(W, X), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "f, x",
    [
        (abc_kernels, 0.7),
        (super_method, np.array([1.2, 0.5])),
        # super() of a static and a class method; `cls(w)` in forward mode (jvp refused
        # the class found at run time before)
        (super_static_and_class, np.array([0.3, -0.4])),
    ],
)
def test_abc_classes_and_super_methods(f, x):
    # before: PB301 refusals (a metaclass; a call of super with a differentiated self)
    check_grad(f, x)
    v = np.ones_like(x) if isinstance(x, np.ndarray) else 1.0
    _, t = pullback.jvp(f, (x,), (v,))
    np.testing.assert_allclose(t, np.sum(pullback.grad(f)(x) * v), rtol=1e-10)
    if isinstance(x, np.ndarray):
        check_hvp(f, x, np.array([0.3, -1.0]), rtol=1e-5, atol=1e-7)
    else:
        h = pullback.hessian(f)(x)
        g = pullback.grad(f)
        np.testing.assert_allclose(h, (g(x + 1e-5) - g(x - 1e-5)) / 2e-5, rtol=1e-5)


def super_class_method(w):
    return Child(w).remade(np.array([1.0, 2.0])) ** 2


def test_super_class_method():
    # grad and jvp; its hvp is refused (PB501: the object `cls(w)` makes in code
    # differentiated again is no record), as for `Base.make(w)` in a method
    w = np.array([0.3, -0.4])
    check_grad(super_class_method, w)
    _, t = pullback.jvp(super_class_method, (w,), (np.ones(2),))
    np.testing.assert_allclose(t, np.sum(pullback.grad(super_class_method)(w)), rtol=1e-10)


def test_abstract_class_is_still_abstract():
    def make(length):
        return Kernel(length)(0.3)

    with pytest.raises(TypeError, match="abstract"):
        pullback.grad(make)(0.5)


@pytest.mark.parametrize("f", [pendulum, copied_parameter])
def test_augmented_assignment_on_a_copied_number(f):
    # before: PB105, as if the number could be an array
    check_grad(f, 0.6)
    h = pullback.hessian(f)(0.6)
    g = pullback.grad(f)
    np.testing.assert_allclose(h, (g(0.6 + 1e-5) - g(0.6 - 1e-5)) / 2e-5, rtol=1e-5)


def test_augmented_assignment_on_a_copied_array_is_refused():
    # the caller's array would change: refused, naming it, and left as it was
    x = np.array([0.6, 0.2])
    with pytest.raises(pullback.PullbackError, match=r"(?s)PB105.*caller's array"):
        pullback.grad(lambda v: np.sum(copied_parameter(v)))(x)
    np.testing.assert_array_equal(x, [0.6, 0.2])


class Scale:
    def __init__(self, k):
        self.k = k

    def __call__(self, z):
        return np.sin(self.k * z)


class Wrapper:
    def __init__(self, inner):
        self.inner = inner

    def run(self, z):
        return self.inner(z) ** 2


def held_scalar_layer(k):
    return Wrapper(Scale(k)).run(0.8) * k


def _fd(f, t, h=1e-5):
    return (f(t + h) - f(t - h)) / (2 * h)


def test_held_layer_nested_gradients():
    first = pullback.grad(held_scalar_layer)
    second = pullback.grad(first)
    np.testing.assert_allclose(first(0.7), _fd(held_scalar_layer, 0.7), rtol=1e-8)
    np.testing.assert_allclose(second(0.7), _fd(first, 0.7), rtol=1e-6)


def method_of_a_record(k):
    return Scale(k).__call__(0.8) ** 2


@pytest.mark.parametrize("f", [method_of_a_record, held_scalar_layer])
def test_third_derivative_through_record_methods(f):
    # was silently wrong (half the central difference for method_of_a_record): the
    # receiver reached method_vjp_pullback's reverse through method_reverse, which has no
    # derivative, so a third derivative lost the receiver's part
    second = pullback.grad(pullback.grad(f))
    third = pullback.grad(second)
    np.testing.assert_allclose(third(0.7), _fd(second, 0.7), rtol=1e-6)


def record_field_power(k):
    return Scale(k).k ** 4 + method_of_a_record(k)


def grown_tuple(x):
    parts = ("label", None)
    for k in range(2):
        parts = parts + (x * (k + 1),)
    return parts[3] * parts[2]


def test_forward_mode_over_a_gradient_through_a_record():
    # jvp(grad(f)) crashed (IndexError in the tangent of new_record's pullback, whose
    # `(NO_TANGENT, NO_TANGENT) + (item,)` got a tangent one item long)
    g = pullback.grad(record_field_power)
    _, t = pullback.jvp(g, (0.7,), (1.0,))
    np.testing.assert_allclose(t, _fd(g, 0.7), rtol=1e-6)


def test_forward_mode_of_a_tuple_grown_from_constants():
    _, t = pullback.jvp(grown_tuple, (0.5,), (1.0,))
    np.testing.assert_allclose(t, _fd(grown_tuple, 0.5), rtol=1e-8)
    np.testing.assert_allclose(pullback.grad(grown_tuple)(0.5), _fd(grown_tuple, 0.5), rtol=1e-8)
