"""Syntax that Python dispatches to a user class's own dunder method (``a + b``,
``2.0 * v``, ``-v``, ``abs(v)``) differentiates through that method
(operator_dispatch.py, transform/dunder_operators.py), checked against central
differences, to second order and in forward mode."""

from __future__ import annotations

import numpy as np
import pytest

from pullback import grad, hessian, jvp
from pullback.errors import UnsupportedCallError, UnsupportedSyntaxError


class Vec:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, o):
        return Vec(self.x + o.x, self.y + o.y)

    def __radd__(self, o):  # a number on the left
        return Vec(o + self.x, o + self.y)

    def __sub__(self, o):
        return Vec(self.x - o.x, self.y - o.y)

    def __rsub__(self, o):
        return Vec(o - self.x, o - self.y)

    def __mul__(self, s):
        return Vec(self.x * s, self.y * s)

    __rmul__ = __mul__

    def __truediv__(self, s):
        return Vec(self.x / s, self.y / s)

    def __rtruediv__(self, s):
        return Vec(s / self.x, s / self.y)

    def __pow__(self, p):
        return Vec(self.x**p, self.y**p)

    def __mod__(self, m):
        return Vec(self.x % m, self.y % m)

    def __matmul__(self, o):
        return self.x * o.x + self.y * o.y

    def __rmatmul__(self, m):
        return Vec(m[0, 0] * self.x + m[0, 1] * self.y, m[1, 0] * self.x + m[1, 1] * self.y)

    def __neg__(self):
        return Vec(-self.x, -self.y)

    def __pos__(self):
        return Vec(self.x, self.y)

    def __abs__(self):
        return (self.x**2 + self.y**2) ** 0.5


class Vec3:
    def __init__(self, x, y, z):
        self.x = x
        self.y = y
        self.z = z

    def __iadd__(self, o):
        return Vec3(self.x + o.x, self.y + o.y, self.z + o.z)

    def norm2(self):
        return self.x * self.x + self.y * self.y + self.z * self.z


class Poly:
    def __init__(self, c0, c1):
        self.c0 = c0
        self.c1 = c1

    def __add__(self, o):
        if not isinstance(o, Poly):
            return NotImplemented
        return Poly(self.c0 + o.c0, self.c1 + o.c1)


class Scaled:
    def __init__(self, k):
        self.k = k

    def __radd__(self, p):
        return Poly(p.c0 * self.k, p.c1 + self.k)


def central(f, x, h):
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def central_hessian(f, x, h=1e-4):
    n = x.size
    out = np.zeros((n, n))
    for i in range(n):
        e = np.zeros(n)
        e[i] = h
        out[i] = (grad(f)(x + e) - grad(f)(x - e)) / (2 * h)
    return out


class Data:
    """An indexable view of an array (its own __getitem__ and __len__)."""

    def __init__(self, a, scale):
        self.a = a
        self.scale = scale

    def __getitem__(self, i):
        return self.scale * self.a[i]

    def __len__(self):
        return len(self.a)


def indexed(w):
    d = Data(w, 2.0)
    return d[0] * d[1] + len(d)


def indexed_in_a_loop(w):
    d = Data(w * w, w[0])
    total = 0.0
    for k in range(len(d)):
        total = total + d[k] * (k + 1.0)
    return total


def sliced(w):
    d = Data(w * 3.0, w[1])
    head = d[:2]  # Data.__getitem__(slice(None, 2, None))
    tail = d[1:]
    return np.sum(head * tail) + d[0:3:2][1]


def ops(w):
    a = Vec(w[0], w[1])
    b = Vec(w[1], 2.0)
    c = a + b * 3.0
    d = 2.0 * c
    return abs(d)


def sub_neg_div(w):
    a = Vec(w[0], w[1])
    b = Vec(w[1], w[0] * w[1])
    c = -(a - b) / 2.0
    d = +c
    return d.x * d.y + (1.0 - a).x + (a**2.0).y


def reflected(w):
    a = Vec(w[0], w[1])
    b = 3.0 + a  # float.__add__ gives NotImplemented: Vec.__radd__
    c = 2.0 - b  # Vec.__rsub__
    d = 6.0 / c  # Vec.__rtruediv__
    e = w[1] * d  # a NumPy scalar's __mul__ defers to Vec.__rmul__ with a float
    return e.x + e.y * w[0]


def matmul_and_mod(w):
    a = Vec(w[0], w[1])
    b = Vec(w[1] * w[1], 3.0)
    c = a @ b  # Vec.__matmul__: a dot product
    return c + (a % 1.5).x


def not_implemented(w):
    # Poly.__add__ returns NotImplemented for a Scaled: Scaled.__radd__ runs instead
    p = Poly(w[0], w[1])
    s = Scaled(w[1])
    q = p + s
    return q.c0 * q.c1


def augmented(w):
    a = Vec(w[0], w[1])
    a += Vec(w[1], 1.0)  # no __iadd__: __add__ and a rebinding
    a *= w[0]
    v = Vec3(w[0], w[1], 1.0)
    v += Vec3(1.0, w[0], w[1])  # Vec3.__iadd__ returns a new object
    return abs(a) + v.norm2()


def in_a_loop(w):
    acc = Vec(0.0, 0.0)
    for k in range(3):
        acc = acc + Vec(w[0], w[1]) * (k + 1.0)
    return abs(acc)


def helper_result(w):
    v = make(w)  # a user function's result: an object only when it runs
    return abs(v * w[0])


def make(w):
    return Vec(w[0] * w[1], w[1])


FORMS = [
    indexed,
    sliced,
    indexed_in_a_loop,
    ops,
    sub_neg_div,
    reflected,
    matmul_and_mod,
    not_implemented,
    augmented,
    in_a_loop,
    helper_result,
]
W = np.array([0.3, 0.7, -0.4])


@pytest.mark.parametrize("f", FORMS, ids=lambda f: f.__name__)
def test_gradient_float64(f):
    g = grad(f)(W)
    np.testing.assert_allclose(g, central(f, W, 1e-6), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", FORMS, ids=lambda f: f.__name__)
def test_gradient_float32(f):
    w = W.astype(np.float32)
    g = grad(f)(w)
    assert g.dtype == np.float32
    want = central(f, W, 1e-6)
    np.testing.assert_allclose(g, want, rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize(
    "f",
    [ops, reflected, in_a_loop, not_implemented, augmented, indexed, indexed_in_a_loop, sliced],
    ids=lambda f: f.__name__,
)
def test_hessian(f):
    np.testing.assert_allclose(hessian(f)(W), central_hessian(f, W), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", FORMS, ids=lambda f: f.__name__)
def test_jvp(f):
    v = np.array([0.4, -1.3, 0.8])
    y, t = jvp(f, (W,), (v,))
    assert y == pytest.approx(f(W))
    assert t == pytest.approx(central(f, W, 1e-6) @ v, rel=1e-6, abs=1e-8)


def test_arrays_keep_their_code():
    """Operands proved numbers or arrays generate the code they did: no dispatch."""

    def f(x, y):
        return np.sum(x * y + 2.0 * x)

    source = grad(f).source_for(np.ones(3), np.ones(3))
    assert "__pb_" not in source


def pair_items(w, pair):
    a, b = pair  # objects handed in inside a tuple: items of a parameter of unknown kind
    return abs(a * w[0] + b)


def through_a_tuple(w):
    return pair_items(w, (Vec(w[1], 2.0), Vec(0.5, w[2])))  # their gradients too


def test_objects_inside_a_tuple_argument():
    pair = (Vec(1.0, 2.0), Vec(0.5, 0.1))
    f = lambda w: pair_items(w, pair)  # noqa: E731
    np.testing.assert_allclose(grad(pair_items)(W, pair), central(f, W, 1e-6), rtol=1e-6)
    g = grad(through_a_tuple)(W)
    np.testing.assert_allclose(g, central(through_a_tuple, W, 1e-6), rtol=1e-6, atol=1e-8)
    g32 = grad(through_a_tuple)(W.astype(np.float32))
    np.testing.assert_allclose(g32, central(through_a_tuple, W, 1e-6), rtol=2e-3, atol=2e-4)
    h = hessian(through_a_tuple)(W)
    np.testing.assert_allclose(h, central_hessian(through_a_tuple, W), rtol=1e-5, atol=1e-6)
    v = np.array([0.4, -1.3, 0.8])
    t = jvp(through_a_tuple, (W,), (v,))[1]
    assert t == pytest.approx(central(through_a_tuple, W, 1e-6) @ v, rel=1e-6)


class Holder:
    def __init__(self, v):
        self.v = v


def field_operand(w):
    h = Holder(Vec(w[0], w[1]))
    u = h.v * w[2]  # an object in a field of an object a call made
    return abs(u + h.v)




def field_minus(h, w):
    return abs(h.v - Vec(w[2], 1.0))  # the other operand an object: dispatched


def field_minus_object(w):
    return field_minus(Holder(Vec(w[0], w[1])), w)


class Box:
    def __init__(self, inner):
        self.inner = inner


def item_field(pair, w):
    return abs(pair[0].v * w[0])  # a field of an item of a parameter


def deeper(w):
    h = Box(Holder(Vec(w[1], 2.0)))
    u = h.inner.v * w[0]  # a field's field of an object a call made
    return abs(u) + item_field((Holder(Vec(w[2], w[0])), 1.0), w)


def test_an_object_in_a_field():
    for f in (field_operand, field_minus_object, deeper):
        np.testing.assert_allclose(grad(f)(W), central(f, W, 1e-6), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(hessian(f)(W), central_hessian(f, W), rtol=1e-5, atol=1e-6)
        v = np.array([0.4, -1.3, 0.8])
        assert jvp(f, (W,), (v,))[1] == pytest.approx(central(f, W, 1e-6) @ v, rel=1e-6)
        g32 = grad(f)(W.astype(np.float32))
        np.testing.assert_allclose(g32, central(f, W, 1e-6), rtol=2e-3, atol=2e-4)


def no_operator(w):
    v = Vec3(w[0], w[1], 1.0)
    return (v - v).x  # Vec3 has no __sub__: Python's TypeError


def test_a_missing_operator_is_python_s_type_error():
    with pytest.raises(TypeError, match="unsupported operand type"):
        grad(no_operator)(W)


def array_times_object(w):
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    return abs(m @ Vec(w[0], w[1]))  # NumPy's matmul would take the object in


def test_an_array_operator_on_an_object_is_refused():
    with pytest.raises(UnsupportedCallError, match="runs ndarray.__matmul__"):
        grad(array_times_object)(W)


def kept_array(w):
    x = w * 2.0
    v = Vec(x, 1.0)  # v.x is the array x
    x += 1.0  # would change v.x in place: not a rebinding
    return v.x[0]


def test_an_array_an_object_keeps_is_still_written_in_place():
    with pytest.raises(UnsupportedSyntaxError, match="PB105"):
        grad(kept_array)(W)


class ScaledVec(Vec):
    def scale(self, s):
        return Vec(self.x * s, self.y * s)


def method_of_a_field(h, w):
    return abs(h.v.scale(w[2]) * 3.0) + abs(h.v.__mul__(w[0]))  # what the methods return


def methods_on_a_parameter_s_field(w):
    return method_of_a_field(Holder(ScaledVec(w[0], w[1])), w)


def test_what_a_method_of_a_field_returns_may_be_an_object():
    """(Before, abs() and `* 3.0` took the returned Vec for a number: a zero gradient.)"""
    f = methods_on_a_parameter_s_field
    np.testing.assert_allclose(grad(f)(W), central(f, W, 1e-6), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hessian(f)(W), central_hessian(f, W), rtol=1e-5, atol=1e-6)
    v = np.array([0.4, -1.3, 0.8])
    assert jvp(f, (W,), (v,))[1] == pytest.approx(central(f, W, 1e-6) @ v, rel=1e-6)
