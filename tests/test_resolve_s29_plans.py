"""Calls of methods and functions found in a loop whose arguments hold an object of a
user class (a method's ``self``, a model passed along) or a record: their plan and
adjoint are found from the call's shape (arguments.call_shape; an object by its type,
a record by its class and fields' kinds), not derived again on every call
(adjoints.LazyAdjoint). Gradients against central finite differences; other kinds at the
same call site get their own adjoint."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from fd import check_grad

import pullback.adjoints
from pullback import grad
from pullback.adjoints import LazyAdjoint
from pullback.arguments import call_shape, kinds_key


@dataclass
class Params:
    w: np.ndarray
    b: float


class Layer:
    def __init__(self, scale):
        self.scale = scale

    def pre(self, p, x):
        return p.w * x + p.b

    def act(self, z):
        return np.tanh(z) * self.scale

    def loss(self, p, x):
        return np.sum(self.act(self.pre(p, x)) ** 2)


def layered(w, x, layer):
    p = Params(w, 0.3)
    total = 0.0
    for i in range(10):
        total = total + layer.loss(p, x * (i + 1))
    return total


def pre(p, x):
    return p.w * x + p.b


def act(p, z):
    return np.tanh(z) * p.b


def loss(p, x):
    return np.sum(act(p, pre(p, x)) ** 2)


def functional(w, x):
    p = Params(w, 0.7)
    total = 0.0
    for i in range(10):
        total = total + loss(p, x * (i + 1))
    return total


def _x(dtype):
    return np.linspace(0.1, 0.9, 5).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_methods_of_an_object_in_a_loop(dtype):
    w = np.linspace(-1.0, 1.0, 5).astype(dtype)
    check_grad(layered, w, _x(dtype), Layer(1.5))
    check_grad(layered, w, _x(dtype), Layer(0.5), wrt=1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_functions_of_a_record_in_a_loop(dtype):
    w = np.linspace(-1.0, 1.0, 5).astype(dtype)
    check_grad(functional, w, _x(dtype))
    check_grad(functional, w, _x(dtype), wrt=1)


def test_a_loop_plans_the_methods_of_an_object_once(monkeypatch):
    plans = []
    plan = LazyAdjoint._plan

    def counting_plan(self, args, kwargs):
        plans.append(self.fn.__name__)
        return plan(self, args, kwargs)

    monkeypatch.setattr(LazyAdjoint, "_plan", counting_plan)
    w, x = np.linspace(-1.0, 1.0, 5), _x(np.float64)
    first = check_grad(layered, w, x, Layer(1.5))
    # at most once per method (none if an earlier test planned them): 10 iterations
    # planned each call again before
    assert len(plans) == len(set(plans)) and set(plans) <= {"act", "loss", "pre"}
    plans.clear()
    np.testing.assert_array_equal(grad(layered)(w, x, Layer(1.5)), first)
    assert plans == []


def test_a_record_call_finds_its_adjoint_without_kinds_key(monkeypatch):
    """The second gradient finds every adjoint from the call's shape: kinds_key is not
    computed again (it decides only which adjoint is built, on a miss)."""
    w, x = np.linspace(-1.0, 1.0, 5), _x(np.float64)
    first = check_grad(functional, w, x)
    counted = []

    def counting_kinds_key(args, kwargs):
        counted.append(len(args))
        return kinds_key(args, kwargs)

    monkeypatch.setattr(pullback.adjoints, "kinds_key", counting_kinds_key)
    np.testing.assert_array_equal(grad(functional)(w, x), first)
    assert counted == []


def test_other_kinds_at_the_same_call_site_get_their_own_adjoint():
    """A record whose field is a float, then an array of another rank: the shape differs,
    so another adjoint runs (each gradient against finite differences)."""

    def site(w, x, b):
        p = Params(w, b)
        return loss(p, x)

    w, x = np.linspace(-1.0, 1.0, 5), _x(np.float64)
    check_grad(site, w, x, 0.3)
    check_grad(site, w, x, np.full(5, 0.3))
    check_grad(site, w.reshape(5, 1), x, 0.3)


def test_the_shape_of_an_object_is_its_type_and_never_an_arrays():
    layer = Layer(1.5)
    assert call_shape((layer,), {}) == (((Layer, "object"),), ())
    assert call_shape((layer,), {}) != call_shape((Params(np.ones(2), 1.0),), {})
    assert call_shape((np.ma.masked_array(np.ones(2)),), {}) is None  # refused by the full path
    assert call_shape((np.complex128(1.0),), {}) is None
    assert call_shape((np.ones(2).view(np.matrix),), {}) is None
