"""A callable record called by name: ``layer(x)`` with ``layer`` a dataclass whose
``__call__`` is a method (a layer passed in as the differentiated argument, made inside
from differentiated weights, or one of a list of layers). The value ``layer`` itself depends
on a differentiated value, so the call is made the method call ``layer.__call__(x)``, whose
pullback gives the record its cotangent (it used to be refused, PB504, although
``layer.__call__(x)`` and ``layer.forward(x)`` were differentiated). Against central finite
differences, float64 and float32, by hand, forward mode and second order; a closure that
reaches such a call is still refused (PB504)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from fd import check_grad

from pullback import dynamic_calls, grad, jvp
from pullback.call_sites import CallSite
from pullback.errors import UnsupportedSyntaxError
from pullback.registry import default_registry
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


@dataclass
class Dense:
    W: np.ndarray
    b: np.ndarray

    def __call__(self, x):
        return np.tanh(x @ self.W + self.b)


def through_a_layer_argument(layer, x):
    return np.sum(layer(x) ** 2)


def through_a_layer_made_inside(W, b, x):
    layer = Dense(W, b)
    return np.sum(layer(x) ** 2)


def through_a_list_of_layers(W, b, x):
    for layer in [Dense(W, b), Dense(W.T, b * 2.0)]:
        x = layer(x)
    return np.sum(x**2)


def _inputs(dtype):
    g = np.random.default_rng(3)
    W = (g.normal(size=(3, 3)) * 0.5).astype(dtype)
    b = g.normal(size=3).astype(dtype)
    return W, b, g.normal(size=(4, 3)).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_against_finite_differences(dtype):
    W, b, x = _inputs(dtype)
    check_grads(through_a_layer_made_inside, W, b, x, wrt=(0, 1, 2))
    check_grads(through_a_list_of_layers, W, b, x, wrt=(0, 1, 2))
    check_grad(through_a_list_of_layers, W, b, x)
    layer = Dense(W, b)
    g = grad(through_a_layer_argument)(layer, x)
    assert isinstance(g, Dense) and g.W.dtype == dtype
    want = grad(lambda W, b: through_a_layer_made_inside(W, b, x), wrt=(0, 1))(W, b)
    assert np.allclose(g.W, want[0]) and np.allclose(g.b, want[1])


def test_by_hand():
    W, b, x = _inputs(np.float64)
    t = np.tanh(x @ W + b)
    d = 2 * t * (1 - t**2)
    g = grad(through_a_layer_argument)(Dense(W, b), x)
    assert np.allclose(g.W, x.T @ d) and np.allclose(g.b, d.sum(axis=0))


def test_forward_mode_and_second_order():
    W, b, x = _inputs(np.float64)
    v = np.random.default_rng(4).normal(size=W.shape)
    _, t = jvp(through_a_list_of_layers, (W, b, x), (v, np.zeros(3), np.zeros_like(x)))
    assert np.isclose(t, np.sum(grad(through_a_list_of_layers)(W, b, x) * v))
    how = check_grads(through_a_layer_made_inside, W, b, x, order=2)
    assert how == "reverse over reverse"


def test_a_closure_reaching_such_a_call_is_refused_when_it_runs():
    site = CallSite("model.py", 7, 4, "    return f(x)\n", default_registry(), None)
    w = np.array([1.5])
    with pytest.raises(UnsupportedSyntaxError) as info:
        dynamic_calls.call_method(site, lambda z: z * w, "__call__", w)
    assert [d.code for d in info.value.diagnostics] == ["PB504"]
    assert "@dataclass with a `__call__` method" in str(info.value)
