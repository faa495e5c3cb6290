"""``functools.cached_property`` reads (transform/property_reads.py): on an object the
function makes and only reads, each read is the getter's value of the unchanged object,
differentiated through the object's fields (checked against central differences, float64
and float32, scalars and arrays, second order); where the object may change or is handed
on, the read stays refused (PB501) with the place and a fix that works."""

import functools

import numpy as np
import pytest
from fd import check_grad, check_hessian_against_differences

from pullback import grad


class Model:
    def __init__(self, w, scale=2.0):
        self.w = w
        self.scale = scale

    @functools.cached_property
    def energy(self):
        return self.scale * np.sin(self.w) ** 2

    def reset(self):
        return None


def made_and_read(x):
    return np.sum(Model(x * 1.5).energy)


def read_twice(x):
    m = Model(np.tanh(x), 3.0)
    return np.sum(m.energy * m.w + m.energy)


CASES = [made_and_read, read_twice]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradients_match_differences(f, dtype):
    check_grad(f, np.array([0.3, -0.8, 1.1], dtype=dtype))
    check_grad(f, dtype(0.6))


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_second_order(f):
    check_hessian_against_differences(f, np.array([0.3, -0.8, 1.1]))


def handed_on(x):
    m = Model(x)
    m.reset()  # a method may change the object the cache was filled from
    return np.sum(m.energy)


def test_an_object_that_may_change_stays_refused():
    with pytest.raises(Exception) as info:
        grad(handed_on)(np.array([0.5, 1.0]))
    line = handed_on.__code__.co_firstlineno + 3
    text = str(info.value)
    assert text == (
        f"{__file__}:{line}:19: PB501 cached property 'energy' of a differentiated Model "
        "cannot be differentiated here: the object may change (a method call, a store) or be "
        "handed on before the read, so its cache may hold a value of other fields.\n"
        "Fix: read it on an object the function makes and only reads (`Model(...).energy`, "
        "or a name bound to it used only for attribute reads), or write it as a method and "
        "call it, `.energy()` (see docs/limitations.md#PB501)."
    )

    def fixed(x):
        e = Model(x).energy  # read on an object made for the read
        m = Model(x)
        m.reset()
        return np.sum(e)

    check_grad(fixed, np.array([0.5, 1.0]))
