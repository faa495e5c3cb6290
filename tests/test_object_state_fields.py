"""Attributes a method stores first outside ``__init__`` (a layer's ``self.inp = x`` in
``forward``, a history list made and appended to in a method): an attribute any method
stores is a field of the object's records (plain_classes.py), so such a store is a new
version of the object like one into an attribute ``__init__`` stores; the forms once given
as fixes (a first value in ``__init__``; a tuple for a list a method appends to) too. Each
checked against central differences (float64 and float32, jvp and Hessian-vector
products)."""

from __future__ import annotations

import numpy as np
import pytest
from probe.probe_harness import check_float32, check_probe

P3 = np.array([0.3, -0.2, 0.7])


class Layer:
    def __init__(self, W):
        self.W = W

    def forward(self, x):
        self.inp = x  # first stored here, not in __init__
        return np.tanh(self.W * x)

    def input_norm(self):
        return np.sum(self.inp**2)


def layer_cache(p):
    layer = Layer(p)
    y = layer.forward(p * 2.0)
    return np.sum(y) + layer.input_norm()


class FixedLayer(Layer):
    def __init__(self, W):
        self.W = W
        self.inp = None  # the fix: a first value in __init__


def layer_cache_fixed(p):
    layer = FixedLayer(p)
    y = layer.forward(p * 2.0)
    return np.sum(y) + layer.input_norm()


class History:
    def __init__(self, x):
        self.x = x
        self.history = ()  # the fix for a list a method appends to: a tuple

    def step(self, k):
        self.history = self.history + (self.x,)
        self.x = np.sin(self.x) * k


def history_as_a_tuple(p):
    h = History(p)
    for k in range(3):
        h.step(1.0 + 0.5 * k)
    return np.sum(h.x) + sum(np.sum(v * v) for v in h.history)


FIXED = {"layer_cache_fixed": layer_cache_fixed, "history_as_a_tuple": history_as_a_tuple}


@pytest.mark.parametrize("name", sorted(FIXED))
def test_fixed_forms_against_differences(name):
    check_probe(FIXED[name], P3, second=True)
    check_float32(FIXED[name], P3)


def _line(f, k):
    return f"{__file__}:{f.__code__.co_firstlineno + k}"


def test_an_attribute_first_stored_in_a_method_differentiates():
    # once refused where read ('inp' is not one of the attributes Layer.__init__ stores):
    # an attribute any method of the class stores is a field too (plain_classes.py), absent
    # until that method runs, and the method's store a new version of the object
    check_probe(layer_cache, P3, second=True)
    check_float32(layer_cache, P3)


def cache_never_read(p):
    layer = Layer(p)
    return np.sum(layer.forward(p * 2.0))  # the cache is kept, never read: runs


def test_a_cache_never_read_back_runs():
    check_probe(cache_never_read, P3, second=True)
