"""Classes with ``__slots__`` differentiated as plain classes (plain_classes.py,
records_plain.py): the record made by the constructor function holds its fields in the
slots, as the class's ``__init__`` stores them; checked against central differences,
float64 and float32, scalars and arrays, first and second order."""

import numpy as np
import pytest
from fd import check_grad, check_hessian_against_differences

from pullback import grad


class Slotted:
    __slots__ = ("w", "b")

    def __init__(self, w, b):
        self.w = w
        self.b = b

    def energy(self, x):
        return np.sum(self.w * x**2 + self.b * x)


class WithWeakref:
    __slots__ = ("w", "__weakref__")

    def __init__(self, w):
        self.w = np.tanh(w)

    def apply(self, x):
        return self.w * x


class Base:
    __slots__ = ("k",)

    def __init__(self, k):
        self.k = k


class Child(Base):
    __slots__ = "scale"  # a string names one slot

    def __init__(self, k, scale):
        super().__init__(k)
        self.scale = scale

    def value(self, x):
        return np.sum(self.k * self.scale * np.sin(x))


class DictBase:
    def __init__(self, a):
        self.a = a


class MixedChild(DictBase):
    __slots__ = ("c",)  # a slot beside the base's __dict__

    def __init__(self, a, c):
        super().__init__(a)
        self.c = c


def slotted(x):
    return Slotted(2.0 * x, np.cos(x)).energy(x)


def weakref_slots(x):
    m = WithWeakref(x)
    return np.sum(m.apply(x) ** 2)


def inherited(x):
    return Child(x * x, 3.0).value(x)


def mixed(x):
    m = MixedChild(x, x * 2.0)
    return np.sum(m.a * m.c)


def many_records(x):
    total = 0.0
    for i in range(300):  # more records than the holder prunes at (records_plain._Strong)
        total = total + Slotted(x, float(i)).energy(x)
    return total


CASES = [slotted, weakref_slots, inherited, mixed]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradients_match_differences(f, dtype):
    check_grad(f, np.array([0.3, -0.8, 1.1], dtype=dtype))
    check_grad(f, dtype(0.6))


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_second_order(f):
    check_hessian_against_differences(f, np.array([0.3, -0.8, 1.1]))


def test_many_records_stay_right():
    x = np.array([0.5, 1.5])
    g = grad(many_records)(x)
    np.testing.assert_allclose(g, sum(3 * x**2 + i for i in range(300)), rtol=1e-12)


def test_an_object_made_outside_is_a_constant():
    s = Slotted(3.0, 1.0)

    def f(x):
        return s.energy(x)

    np.testing.assert_allclose(grad(f)(np.array([1.0, 2.0])), 6.0 * np.array([1.0, 2.0]) + 1.0)


class Particle:
    __slots__ = ("position", "velocity")

    def __init__(self, position, velocity):
        self.position = position
        self.velocity = velocity


def stepped(v0):
    p = Particle(np.array([1.0, 0.0]), v0)
    for _ in range(4):  # stores into the slots, versioned as a plain class's
        p.velocity = p.velocity - 0.2 * p.position
        p.position = p.position + 0.1 * p.velocity
    return p.position @ p.position + p.velocity @ p.velocity


def test_stores_into_slots():
    check_grad(stepped, np.array([0.2, 0.7]))
    check_grad(stepped, np.array([0.2, 0.7], dtype=np.float32))
