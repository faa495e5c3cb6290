"""Probe: state that changes between two gradient calls.

A global rebound, a global array changed in place, a module attribute, a class attribute,
a mutated default argument, a helper redefined under the same name or monkeypatched, a
closure cell rebound by ``nonlocal``, a partial read through a module attribute, a
property replaced on the class or overridden by a subclass defined after the first
gradient. Each gradient is taken once, the state is changed, and the gradient is taken
again (by the same ``grad`` object and by a fresh one): both must be the derivative of
what the function computes now, against central differences (probe_harness.py).
"""

import functools
import sys
import types

import numpy as np
import pytest
from probe_harness import check_probe, fd_grad

import pullback
from pullback.errors import UnsupportedCallError

X = np.array([0.3, -0.7, 1.2])
THIS = sys.modules[__name__]


def _twice(f, x, change):
    """grad of f against differences, then again after ``change()`` by the same grad object
    and by a fresh one."""
    g = pullback.grad(f)
    np.testing.assert_allclose(g(x), fd_grad(f, (x,)), rtol=1e-6, atol=1e-8)
    change()
    want = fd_grad(f, (x,))
    np.testing.assert_allclose(g(x), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(pullback.grad(f)(x), want, rtol=1e-6, atol=1e-8)
    return g


# -- stale state ------------------------------------------------------------------------------

RATE = 2.0
GAINS = np.array([1.0, 2.0, 3.0])
SETTINGS = {"a": 1.0, "act": np.sin}
ORDERS = [1.0]


def uses_rate(x):
    return np.sum(RATE * x ** 2 + np.sin(RATE * x))


def uses_gains(x):
    return np.sum(GAINS * np.sin(x)) + GAINS[0] * x[1] ** 3


def uses_settings(x):
    return np.sum(SETTINGS["a"] * SETTINGS["act"](x))


def uses_orders(x):
    return sum(w * np.sum(x ** (i + 1)) for i, w in enumerate(ORDERS))


def test_global_rebound(monkeypatch):
    _twice(uses_rate, X, lambda: monkeypatch.setattr(THIS, "RATE", -3.5))


def test_global_array_changed_in_place(monkeypatch):
    monkeypatch.setattr(THIS, "GAINS", GAINS.copy())

    def change():
        THIS.GAINS[:] = [4.0, -1.0, 0.5]
        THIS.GAINS *= 3.0

    _twice(uses_gains, X, change)


def test_global_dict_entries_replaced(monkeypatch):
    monkeypatch.setattr(THIS, "SETTINGS", dict(SETTINGS))

    def change():
        THIS.SETTINGS["a"] = 3.0
        THIS.SETTINGS["act"] = np.tanh

    _twice(uses_settings, X, change)


def test_global_list_appended(monkeypatch):
    monkeypatch.setattr(THIS, "ORDERS", list(ORDERS))
    _twice(uses_orders, X, lambda: THIS.ORDERS.extend([2.0, -0.5]))


cfg = types.ModuleType("probe_s30_cfg")  # a configuration module, read by attribute
cfg.k = 1.5


def uses_module_attribute(x):
    return np.sum(np.exp(cfg.k * x))


def test_module_attribute_changed(monkeypatch):
    monkeypatch.setattr(cfg, "k", 1.5)
    _twice(uses_module_attribute, X, lambda: setattr(cfg, "k", -0.5))


class Scaled:
    scale = 2.0

    def __call__(self, x):
        return np.sum(self.scale * x ** 3)


SCALED = Scaled()


def uses_scaled(x):
    return SCALED(x) + 0.5 * np.sum(x)


def test_class_attribute_changed(monkeypatch):
    monkeypatch.setattr(Scaled, "scale", 2.0)
    _twice(uses_scaled, X, lambda: setattr(Scaled, "scale", -3.0))


def test_instance_attribute_shadows_class_attribute(monkeypatch):
    monkeypatch.setattr(SCALED, "scale", 2.0, raising=False)
    _twice(uses_scaled, X, lambda: setattr(SCALED, "scale", 7.0))


def test_default_array_mutated():
    def f(x, w=np.array([1.0, 1.0, 1.0])):  # noqa: B008 - the mutated default is the probe
        return np.sum(w * x ** 2)

    _twice(f, X, lambda: f.__defaults__[0].__setitem__(slice(None), [3.0, 0.0, -2.0]))


def test_default_dict_mutated_then_replaced():
    def f(x, opts={"p": 2.0}):  # noqa: B006 - the mutated default is the probe
        return np.sum(np.abs(x) ** opts["p"])

    g = _twice(f, X, lambda: f.__defaults__[0].__setitem__("p", 3.0))
    f.__defaults__ = ({"p": 4.0},)
    np.testing.assert_allclose(g(X), fd_grad(f, (X,)), rtol=1e-6)


def activation(z):
    return np.sin(z)


def uses_activation(x):
    return np.sum(activation(x) * x)


def test_helper_redefined_under_the_same_name(monkeypatch):
    def activation(z):  # the same name, redefined (as a notebook cell run again does)
        return 2.0 * np.cos(z)

    _twice(uses_activation, X, lambda: monkeypatch.setattr(THIS, "activation", activation))


def test_helper_monkeypatched_with_a_lambda(monkeypatch):
    _twice(uses_activation, X, lambda: monkeypatch.setattr(THIS, "activation", lambda z: z ** 3))


def test_function_code_swapped():
    def f(x):
        return np.sum(x ** 2)

    def other(x):
        return np.sum(x ** 3)

    _twice(f, X, lambda: setattr(f, "__code__", other.__code__))


def test_closure_rebound_by_nonlocal():
    def make():
        c = 1.0

        def f(x):
            return np.sum(c * np.exp(x))

        def set_c(v):
            nonlocal c
            c = v

        return f, set_c

    f, set_c = make()
    _twice(f, X, lambda: set_c(-2.0))


def test_partial_replaced_in_a_global(monkeypatch):
    def base(x, p):
        return np.sum(np.abs(x) ** p)

    monkeypatch.setattr(THIS, "POWER", functools.partial(base, p=2.0), raising=False)

    def f(x):
        return THIS.POWER(x)

    # (before: refused, PB301 'functools.partial object', where a partial found by a
    # plain global name was differentiated)
    _twice(f, X, lambda: monkeypatch.setattr(THIS, "POWER", functools.partial(base, p=3.0)))
    check_probe(f, X, second=True)


def test_method_replaced_on_the_instance_then_on_the_class():
    class Net:
        def __init__(self):
            self.w = 1.0

        def act(self, z):
            return np.tanh(z)

        def loss(self, x):
            return np.sum(self.act(self.w * x))

    net = Net()

    def f(x):
        return net.loss(x)

    g = _twice(f, X, lambda: setattr(net, "act", lambda z: z ** 2))
    del net.act
    Net.act = lambda self, z: np.exp(z)
    np.testing.assert_allclose(g(X), fd_grad(f, (X,)), rtol=1e-6)


# A property read through `self` is differentiated as a call of its getter when the class
# is known; what that bakes in (no subclass overrides it, the class holds that property)
# is guarded: before, a subclass defined after the first gradient, or a property replaced
# on the class, kept the old getter (a silent wrong gradient).


class Particle:
    def __init__(self, w):
        self.w = w

    @property
    def w2(self):
        return self.w ** 2

    def loss(self, x):
        return np.sum(x * self.w2)


class Body:  # the same, for the subclass test (a subclass stays until collected)
    def __init__(self, w):
        self.w = w

    @property
    def w2(self):
        return self.w ** 2

    def loss(self, x):
        return np.sum(x * self.w2)


def particle_through_method(w, x):
    return Particle(w).loss(x)


def particle_through_local(w, x):
    p = Particle(w)
    return np.sum(p.w2 * x)


def body_through_method(w, x):
    return Body(w).loss(x)


def test_property_replaced_on_the_class_after_a_gradient(monkeypatch):
    for f in (particle_through_method, particle_through_local):
        check_probe(f, 0.7, X, second=True)
    monkeypatch.setattr(Particle, "w2", property(lambda self: self.w ** 3))
    for f in (particle_through_method, particle_through_local):
        check_probe(f, 0.7, X, second=True)
        np.testing.assert_allclose(pullback.grad(f)(0.7, X), 3 * 0.7 ** 2 * np.sum(X))


def test_property_overridden_by_a_subclass_defined_later_is_refused_not_stale():
    check_probe(body_through_method, 0.7, X)

    class Sub(Body):
        @property
        def w2(self):
            return np.exp(self.w)

    def sub(w, x):
        return Sub(w).loss(x)

    # the adjoint of Body.loss built first calls Body's getter: now it is built again,
    # and the read through `self`, whose class is no longer certain, is refused
    with pytest.raises(UnsupportedCallError, match="property 'w2'"):
        pullback.grad(sub)(0.7, X)
    with pytest.raises(UnsupportedCallError, match="property 'w2'"):
        pullback.grad(body_through_method)(0.7, X)




class Strategy:
    act = staticmethod(np.tanh)  # a library function as a static method (strategy pattern)

    def loss(self, x):
        return np.sum(self.act(x) ** 2)


STRATEGY = Strategy()


def uses_strategy(x):
    return STRATEGY.loss(x)


def test_static_method_of_a_library_function_replaced_on_the_class(monkeypatch):
    # before: np.tanh's rule was given the object first (x became tanh's `out`): a
    # UFuncOutputCastingError in the forward sweep, in reverse and forward mode alike
    check_probe(uses_strategy, X, second=True)
    _twice(uses_strategy, X, lambda: monkeypatch.setattr(Strategy, "act", staticmethod(np.sin)))
    check_probe(uses_strategy, X, second=True)


class PlainAttributes:
    act = np.tanh  # a ufunc held by the class: no descriptor, Python passes no self
    scale = functools.partial(np.multiply, 3.0)

    def loss(self, x):
        return np.sum(self.act(x) ** 2) + np.sum(self.scale(x) * x)


def uses_plain_attributes(x):
    return PlainAttributes().loss(x)


def test_library_callables_held_by_a_class(monkeypatch):
    # before: the ufunc's rule got the object first (UFuncOutputCastingError), the partial
    # was "a method with neither source nor rule" (MissingRuleError)
    check_probe(uses_plain_attributes, X)
    _, tangent = pullback.jvp(uses_plain_attributes, (X,), (np.ones(3),))
    np.testing.assert_allclose(tangent, np.sum(fd_grad(uses_plain_attributes, (X,))), rtol=1e-6)
    _twice(uses_plain_attributes, X, lambda: monkeypatch.setattr(PlainAttributes, "act", np.sin))
