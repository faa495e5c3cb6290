"""The plan of a method call found at run time (adjoints.LazyAdjoint._call_dynamic) is kept
on the method's function, keyed by the registry and the shape of the arguments
(arguments.call_shape), and reused only while its adjoint's guard holds: a method swapped
on the class, a method whose code is replaced, another class at the same call site and
other argument kinds at the same call site each get their own gradient (against central
finite differences), and a loop plans its call once."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from fd import check_grad

import pullback.adjoints
from pullback import grad
from pullback.adjoints import LazyAdjoint
from pullback.arguments import call_shape

DTYPES = [np.float64, np.float32]


class Walker:
    def __init__(self, x):
        self.x = x

    def step(self, dt):
        return Walker(self.x + dt * np.sin(self.x))


@dataclass
class DataWalker:
    x: np.ndarray

    def step(self, dt):
        return DataWalker(self.x + dt * np.sin(self.x))


def cubed_step(self, dt):
    return type(self)(self.x + dt * self.x**3)


def tanh_step(self, dt):
    return type(self)(self.x + dt * np.tanh(self.x))


def walk_plain(x):
    w = Walker(x)
    for _ in range(5):
        w = w.step(0.1)
    return np.sum(w.x**2)


def walk_data(x):
    w = DataWalker(x)
    for _ in range(5):
        w = w.step(0.1)
    return np.sum(w.x**2)


def _x(dtype):
    return np.array([0.3, -0.7, 1.1], dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cls, fn", [(Walker, walk_plain), (DataWalker, walk_data)])
def test_a_method_swapped_on_the_class_is_the_one_differentiated(monkeypatch, cls, fn, dtype):
    x = _x(dtype)
    before = check_grad(fn, x)
    monkeypatch.setattr(cls, "step", cubed_step)
    after = check_grad(fn, x)
    assert not np.allclose(before, after)
    monkeypatch.undo()
    np.testing.assert_allclose(check_grad(fn, x), before, rtol=1e-6)


@pytest.mark.parametrize("cls, fn", [(Walker, walk_plain), (DataWalker, walk_data)])
def test_a_method_whose_code_is_replaced_is_differentiated_again(monkeypatch, cls, fn):
    x = _x(np.float64)
    before = check_grad(fn, x)
    monkeypatch.setattr(cls.step, "__code__", tanh_step.__code__)
    after = check_grad(fn, x)
    assert not np.allclose(before, after)


class Slow:
    def __init__(self, x):
        self.x = x

    def step(self, dt):
        return Fast(self.x + dt * np.cos(self.x))


class Fast:
    def __init__(self, x):
        self.x = x

    def step(self, dt):
        return DataWalker(self.x * (1.0 + dt * self.x))


def alternating_classes(x):
    w = Slow(x)
    for _ in range(7):  # Slow, Fast, DataWalker, DataWalker, ... at one call site
        w = w.step(0.2)
    return np.sum(w.x**2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_other_classes_at_one_call_site_each_get_their_method(dtype):
    check_grad(alternating_classes, _x(dtype))


def kinds_at_one_site(x):
    total = 0.0
    for w in (Walker(x), Walker(x[0]), DataWalker(x[1:])):
        for dt in (1, x[1], 0.1, 0.1 * x[:1], [0.5, x[2]][1]):  # an int first
            total = total + np.sum(w.step(dt).x)
    return total


@pytest.mark.parametrize("dtype", DTYPES)
def test_other_argument_kinds_at_one_call_site_each_get_their_gradient(dtype):
    check_grad(kinds_at_one_site, _x(dtype))


class Counted:
    def __init__(self, x):
        self.x = x

    def step(self, dt):
        return Counted(self.x + dt * np.sin(self.x))


def walk_counted(x):
    w = Counted(x)
    for _ in range(100):
        w = w.step(0.01)
    return np.sum(w.x**2)


def test_a_loop_plans_and_builds_its_method_call_once(monkeypatch):
    plans, builds = [], []
    plan, build = LazyAdjoint._plan, pullback.adjoints.build_adjoint

    def counting_plan(self, args, kwargs, *constants):
        plans.append(self.fn.__name__)
        return plan(self, args, kwargs, *constants)

    def counting_build(fn, *args, **kwargs):
        builds.append(fn.__name__)
        return build(fn, *args, **kwargs)

    monkeypatch.setattr(LazyAdjoint, "_plan", counting_plan)
    monkeypatch.setattr(pullback.adjoints, "build_adjoint", counting_build)
    x = _x(np.float64)
    first = check_grad(walk_counted, x)
    assert plans == ["step"]
    assert builds.count("step") == 1
    plans.clear(), builds.clear()
    np.testing.assert_array_equal(grad(walk_counted)(x), first)
    assert plans == [] and builds == []


def test_the_shape_of_a_call_names_leaf_types_ranks_and_record_classes():
    x = np.ones(3)
    # not made by a constructor function: no record, an object whose type alone decides
    # (its fields are no leaves of the call)
    assert call_shape((Walker(x),), {}) == (((Walker, "object"),), ())
    assert call_shape((DataWalker(x), 1.0), {}) == (((DataWalker, ((1, "f"),)), float), ())
    assert call_shape((1,), {}) != call_shape((1.0,), {})
    assert call_shape((x,), {}) != call_shape((x.astype(int),), {})
    assert call_shape((x,), {}) != call_shape((x[:, None],), {})
    assert call_shape((np.ma.masked_array(x),), {}) is None  # refused by the full path
    assert call_shape((), {"a": 1.0}) != call_shape((), {"b": 1.0})


def scaled_sin(v):
    return 3.0 * np.sin(v)


def walk_static(x):
    w = Walker(x)
    total = 0.0
    for _ in range(3):
        total = total + np.sum(w.step(x[0]).x)
    return total


def test_a_method_made_a_staticmethod_at_one_call_site_drops_the_receiver(monkeypatch):
    x = _x(np.float64)
    check_grad(walk_static, x)
    monkeypatch.setattr(Walker, "step", staticmethod(lambda dt: Walker(scaled_sin(dt))))
    assert Walker(1.0).step(0.5).x == scaled_sin(0.5)
    check_grad(walk_static, x)
