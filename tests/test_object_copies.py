"""An attribute read or a method call on a copy of an object made inside the function:
``copy.copy(m).w``, ``copy.deepcopy(m).w``, ``m2 = copy.copy(m); m2.w``,
``copy.copy(m).energy(x)``.

A read of an attribute of a value a rule made is refused (PB501: a rule's result object,
whose undeclared attributes carry no gradient pullback follows); ``copy.copy`` and
``copy.deepcopy`` are rules, so an attribute of a copy of a record was refused too,
though the copy is the record's kind (its rule passes the cotangent through and adopts
the copy as a record). Checked against central differences, float64 and float32, and to
second order (``hessian`` against ``jacobian(grad)`` and ``hvp``). An attribute the
record does not store (a property) is still refused at the user's line.
"""

from __future__ import annotations

import copy
import os

import numpy as np
import pytest
from fd import check_grad, check_hvp

import pullback
from pullback import grad, hessian, jacobian

HERE = os.path.abspath(__file__)
W = np.array([0.3, -0.7, 1.1])
X = np.array([0.5, 1.5, -0.25])
V = np.array([0.5, -1.0, 0.25])


class Scale:
    k = 2.0  # a class attribute: read from a copy as from the object

    def __init__(self, w):
        self.w = w

    def energy(self, x):
        return np.sum(np.sin(self.w) * x)

    @property
    def double(self):
        return 2.0 * self.w


class Outer:
    def __init__(self, w):
        self.inner = Scale(w * w)
        self.b = np.cos(w)


def attribute_of_a_copy(w, x):
    m = Scale(w)
    return np.sum(copy.copy(m).w * x * w)


def attribute_of_a_deep_copy(w, x):
    m = Scale(np.sin(w))
    return np.sum(copy.deepcopy(m).w ** 2 * x)


def attribute_of_a_named_copy(w, x):
    m = Scale(w)
    m2 = copy.copy(m)
    return np.sum(m2.w * m.w * x)


def method_of_a_copy(w, x):
    m = Scale(w * 2.0)
    return copy.copy(m).energy(x) * np.sum(w)


def class_attribute_of_a_copy(w, x):
    m = Scale(w)
    return np.sum(copy.copy(m).k * m.w**3 * x)


def nested_attribute_of_a_deep_copy(w, x):
    o = Outer(w)
    o2 = copy.deepcopy(o)
    return np.sum(o2.inner.w * o2.b * x) + copy.deepcopy(o).inner.energy(x)


COPIES = [
    attribute_of_a_copy,
    attribute_of_a_deep_copy,
    attribute_of_a_named_copy,
    method_of_a_copy,
    class_attribute_of_a_copy,
    nested_attribute_of_a_deep_copy,
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", COPIES)
def test_an_attribute_of_a_copy_of_an_object_has_its_gradient(f, dtype):
    check_grad(f, W.astype(dtype), X.astype(dtype))


@pytest.mark.parametrize("f", COPIES)
def test_an_attribute_of_a_copy_of_an_object_has_second_derivatives(f):
    def g(w):
        return f(w, X)

    check_hvp(g, W, V)
    np.testing.assert_allclose(hessian(g)(W), jacobian(grad(g))(W), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("f", COPIES)
def test_the_hessian_through_a_copy_keeps_float32(f):
    def g(w):
        return f(w, X.astype(np.float32))

    h32 = hessian(g)(W.astype(np.float32))
    assert h32.dtype == np.float32
    np.testing.assert_allclose(h32, hessian(g)(W), rtol=1e-4, atol=1e-5)


def property_of_a_copy(w, x):
    m = Scale(w)
    return np.sum(copy.copy(m).double * x)


def test_a_property_of_a_copy_is_refused_golden():
    with pytest.raises(pullback.PullbackError) as info:
        grad(property_of_a_copy)(W, X)
    line = property_of_a_copy.__code__.co_firstlineno + 2
    assert str(info.value).replace(HERE, "here.py") == (
        f"here.py:{line}:19: PB501 property 'double' of a differentiated Scale cannot be "
        "differentiated: pullback follows the attributes its __init__ stores and its "
        "methods' calls.\n"
        "Fix: write it as a method and call it, `.double()`, or store it in __init__ (see "
        "docs/limitations.md#PB501)."
    )
