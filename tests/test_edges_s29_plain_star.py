"""Forward mode through a plain (non-dataclass) class constructed with ``*args``
(``Lin(*c)``): the call is a star-call found at run time, whose tangent runs the class's
constructor function (plain_classes.py) as reverse mode does (rule_tangents.function_tangent);
jvp, jacobian(mode="forward"), jvp of the gradient and hvp against central differences,
float64 and float32; a class whose construction cannot be followed is refused by name."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_hvp, check_jvp, numerical_grad

from pullback import grad, jacobian, jvp


class Lin:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __call__(self, x):
        return self.a * x + self.b


class Scaled(Lin):
    def __init__(self, a, b, s=2.0):
        super().__init__(a * s, b)
        self.s = s


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a = a
        self.b = b


def lin_star(c):
    m = Lin(*c)
    return np.sin(m(2.0)) * m.a


def lin_star_vector(c):
    m = Lin(*c[:2])
    return np.array([m(1.5), m.b * m.a, m(-1.0) ** 2])


def subclass_star(c):
    m = Scaled(*c)  # (a, b, s): all three from the tuple
    return m(0.5) ** 2 + m.s


def star_and_tail(c):
    m = Lin(*c[:1], c[1])
    return m(3.0) * m.b


def slotted_star(c):
    m = Slotted(*c)
    return m.a * m.b


C = np.array([0.7, -0.4, 1.3])
V = np.array([0.3, -1.1, 0.6])


@pytest.mark.parametrize("f", [lin_star, subclass_star, star_and_tail], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_jvp_of_a_plain_class_built_with_star(f, dtype):
    c = (C if f is subclass_star else C[:2]).astype(dtype)
    v = (V if f is subclass_star else V[:2]).astype(dtype)
    if dtype is np.float64:
        check_jvp(f, (c,), (v,))
    else:
        y, t = jvp(f, (c,), (v,))
        want = np.dot(numerical_grad(f, (c,), 0), v.astype(np.float64))
        np.testing.assert_allclose(t, want, rtol=1e-4, atol=1e-5)
        assert np.asarray(t).dtype == np.float32


def test_forward_jacobian_of_a_plain_class_built_with_star():
    c = C[:2]
    got = jacobian(lin_star_vector, mode="forward")(c)
    want = np.stack(
        [numerical_grad(lambda z, i=i: lin_star_vector(z)[i], (c,), 0) for i in range(3)]
    )
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got, jacobian(lin_star_vector)(c), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("f", [lin_star, subclass_star], ids=lambda f: f.__name__)
def test_second_order_of_a_plain_class_built_with_star(f):
    c = C if f is subclass_star else C[:2]
    v = V if f is subclass_star else V[:2]
    check_hvp(f, c, v)
    g = grad(f)
    want = (g(c + 1e-5 * v) - g(c - 1e-5 * v)) / 2e-5
    _, forward_over_reverse = jvp(g, (c,), (v,))
    np.testing.assert_allclose(forward_over_reverse, want, rtol=1e-6, atol=1e-8)


def test_a_slotted_class_in_forward_mode():
    # (__slots__ was refused: a plain class now, records_plain.new_record)
    _, got = jvp(slotted_star, (C[:2],), (V[:2],))
    np.testing.assert_allclose(got, V[0] * C[1] + C[0] * V[1], rtol=1e-12)
