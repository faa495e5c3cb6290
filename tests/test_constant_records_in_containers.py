"""Objects of a plain class made of constants, kept in a container beside objects made of
differentiated values (``{"amp": Parameter("amp", a), "dec": Parameter("dec", 0.3)}``),
as lmfit-style code keeps its parameters: each is made as a record (records_plain.py)
whose fields carry no gradient, so that a callee reading ``params["dec"].value`` reads a
constant instead of refusing an object it cannot follow (PB501). A dict subclass whose
own method stores the items (lmfit's ``Parameters.add``) stays refused, at the call, with
the plain dict as the fix."""

from __future__ import annotations

import numpy as np
import pytest
from probe.probe_harness import check_float32, check_probe

import pullback


class Parameter:
    def __init__(self, name, value, vary=True):
        self.name = name
        self.value = value
        self.vary = vary


def model(params, x):
    return params["amp"].value * np.exp(-x * params["dec"].value)


def in_a_display(amp, x):
    params = {"amp": Parameter("amp", amp), "dec": Parameter("dec", 0.3)}
    return np.sum(model(params, x) ** 2)


def stored_by_item(amp, x):
    params = {}
    params["amp"] = Parameter("amp", amp)
    fixed = Parameter("dec", 0.3, vary=False)
    params["dec"] = fixed
    return np.sum(model(params, x) ** 2)


def in_a_list(a, x):
    layers = [Parameter("w", a), Parameter("b", np.full(3, 0.5))]
    return np.sum(np.tanh(layers[0].value * x + layers[1].value))


class Parameters(dict):
    def add(self, name, value=0.0):
        self[name] = Parameter(name, value)


def subclass_add(amp, x):
    params = Parameters()
    params.add("amp", amp)
    params.add("dec", 0.3)
    return np.sum(model(params, x) ** 2)


X = np.linspace(0.0, 1.0, 3)


@pytest.mark.parametrize("f", [in_a_display, stored_by_item, in_a_list], ids=lambda f: f.__name__)
def test_constant_objects_beside_differentiated_ones(f):
    check_probe(f, 1.5, X, second=True)
    check_probe(f, np.array([1.5, 0.5, -0.2]), X)
    check_float32(f, np.array([1.5, 0.5, -0.2]), X)


def test_golden_a_dict_subclass_method_storing_items():
    line = subclass_add.__code__.co_firstlineno + 2
    with pytest.raises(pullback.UnsupportedSyntaxError) as info:
        pullback.grad(subclass_add)(1.5, X)
    message = str(info.value)
    where = f"{__file__}:{line}:5: PB106 container mutation: "
    assert where + """'params.add("amp", amp)' calls Parameters.add""" in message
    assert (
        "calls Parameters.add, a method of a dict subclass, which changes 'params' in place"
        in message
    )
    assert (
        "Fix: keep the values in a plain dict the function builds (for a dict: `params = {}` "
        "and `params[key] = value`)" in message
    )
