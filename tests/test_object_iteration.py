"""A user's object iterated or unpacked through its own ``__iter__`` (``a, b = v``,
``for c in v``, ``list(v)``, ``sum(v)``, ``np.array(list(v))``) passes the items'
gradients back to its fields (object_items.py, transform/iter_items.py): checked against
central differences in float64 and float32, to second order and in forward mode."""

from __future__ import annotations

import numpy as np
import pytest
from fd import central_jacobian, form_tests

from pullback import grad, hessian, jvp
from pullback.errors import UnsupportedCallError


class Pair:
    """Two values, iterated by a generator."""

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __iter__(self):
        yield self.x
        yield self.y


class Triple:
    """Three values, iterated through a tuple's iterator."""

    def __init__(self, a, b, c):
        self.a = a
        self.b = b
        self.c = c

    def __iter__(self):
        return iter((self.a, self.b * 2.0, self.c))


class Rows:
    """An array's rows, iterated by `yield from`."""

    def __init__(self, m):
        self.m = m

    def __iter__(self):
        yield from self.m


class Counter:
    """An iterator object of its own: no list of items pullback can read."""

    def __init__(self, v):
        self.v = v

    def __iter__(self):
        return _CounterIterator(self.v)


class _CounterIterator:
    def __init__(self, v):
        self.v = v
        self.k = 0

    def __next__(self):
        if self.k >= 2:
            raise StopIteration
        self.k += 1
        return self.v * self.k


def unpacked(w):
    p = Pair(w[0], w[1] * w[2])
    a, b = p
    return a * b + np.sin(a)


def looped(w):
    t = Triple(w[0], w[1], w[2] ** 2)
    total = 0.0
    for c in t:
        total = total + c * c
    return total


def listed(w):
    p = Pair(w[0] * 3.0, w[2])
    items = list(p)
    return items[0] * items[1] + np.sum(np.array(list(Pair(w[1], w[0]))) ** 2)


def summed(w):
    return sum(Triple(w[0], w[1] * w[2], 1.0)) ** 2


def starred(w):
    first, *rest = Triple(w[0], w[1], w[2])
    return first * rest[0] + rest[1]


def rows(w):
    r = Rows(np.outer(w, w))
    total = 0.0
    for row in r:
        total = total + np.sum(np.tanh(row))
    return total


def helper_made(w):
    x, y = make_pair(w)  # a user function's result: an object only when it runs
    return x / y


def make_pair(w):
    return Pair(w[0] + 1.0, w[1] + 2.0)


FORMS = [unpacked, looped, listed, summed, starred, rows, helper_made]
W = np.array([0.3, 0.7, -0.4])


test_gradient_float64, test_gradient_float32, test_hessian, test_jvp = form_tests(
    FORMS, W, np.array([0.4, -1.3, 0.8])
)


def wrong_count(w):
    a, b = Triple(w[0], w[1], w[2])
    return a * b


def test_a_wrong_number_of_items_is_python_s_value_error():
    with pytest.raises(ValueError, match=r"too many values to unpack \(expected 2\)"):
        grad(wrong_count)(W)


def own_iterator(w):
    total = 0.0
    for c in Counter(w[0]):
        total = total + c
    return total


def test_an_iterator_object_of_its_own_is_refused_with_the_fix():
    assert own_iterator(W) == pytest.approx(3 * W[0])  # (what Python computes)
    with pytest.raises(UnsupportedCallError) as info:
        grad(own_iterator)(W)
    message = str(info.value)
    assert "object of class Counter" in message
    assert "Fix: write Counter.__iter__ as a generator" in message
    assert "test_object_iteration.py:" in message  # the user's line


def plain_helper(w):
    a, b = split(w)  # a helper returning a tuple of arrays: unpacked as before
    return np.sum(a * b)


def split(w):
    return w[:2], w[1:]


def test_a_helper_s_tuple_is_unpacked_as_before():
    np.testing.assert_allclose(grad(plain_helper)(W), central_jacobian(plain_helper, W), rtol=1e-6)
    np.testing.assert_allclose(
        hessian(plain_helper)(W),
        central_jacobian(grad(plain_helper), W, 1e-5),
        rtol=1e-5,
        atol=1e-6,
    )


def unpack_in_helper(p):
    a, b = p  # a helper's parameter: dispatched on its value when the code runs
    return a * b


def sum_in_helper(t):
    total = 0.0
    for c in t:
        total = total + c
    return total * sum(t) + np.sum(np.array(list(t)))


def handed_on(w):
    return unpack_in_helper(Pair(w[0], w[1])) + sum_in_helper(Triple(w[0], w[1], w[2]))


def test_an_object_iterated_in_a_helper():
    np.testing.assert_allclose(grad(handed_on)(W), central_jacobian(handed_on, W), rtol=1e-6)
    want = central_jacobian(grad(handed_on), W, 1e-5)
    np.testing.assert_allclose(hessian(handed_on)(W), want, rtol=1e-5, atol=1e-6)
    v = np.array([0.4, -1.3, 0.8])
    want_t = central_jacobian(handed_on, W) @ v
    assert jvp(handed_on, (W,), (v,))[1] == pytest.approx(want_t, rel=1e-6)


def test_a_class_reached_through_a_module(tmp_path, monkeypatch):
    """``mod.Triple(...)``: the class is no name of the function's module, but the function
    resolves it (dunder_operators._class_with_any reads the resolved attribute chains)."""
    import importlib

    (tmp_path / "pb_trip_cls.py").write_text(
        "class Triple:\n"
        "    def __init__(self, a, b, c):\n"
        "        self.a = a\n"
        "        self.b = b\n"
        "        self.c = c\n"
        "\n"
        "    def __iter__(self):\n"
        "        return iter((self.a, self.b * 2.0, self.c))\n"
        "\n"
        "    def __getitem__(self, k):\n"
        "        return self.c * k\n"
    )
    (tmp_path / "pb_trip_use.py").write_text(
        "import pb_trip_cls\n"
        "\n"
        "\n"
        "def summed(w):\n"
        "    return sum(pb_trip_cls.Triple(w[0], w[1], w[2])) ** 2\n"
        "\n"
        "\n"
        "def unpacked(w):\n"
        "    t = pb_trip_cls.Triple(w[0], w[1], w[2])\n"
        "    a, b, c = t\n"
        "    return a * b * c + t[w[0]]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    use = importlib.import_module("pb_trip_use")
    for f in (use.summed, use.unpacked):
        np.testing.assert_allclose(grad(f)(W), central_jacobian(f, W), rtol=1e-6, atol=1e-8)
        v = np.array([0.4, -1.3, 0.8])
        assert jvp(f, (W,), (v,))[1] == pytest.approx(central_jacobian(f, W) @ v, rel=1e-6)


class Holder:
    def __init__(self, v):
        self.v = v


def unpack_a_field(h):
    a, b = h.v  # a parameter's field holding a Pair: its own __iter__ runs
    return a * b + sum(h.v) * tuple(h.v)[1]


def field_handed_on(w):
    return unpack_a_field(Holder(Pair(w[0], w[1] * w[2])))


def test_an_object_in_a_parameter_s_field_is_iterated_through_its_own_iter():
    """``a, b = h.v``, ``sum(h.v)``, ``tuple(h.v)`` where ``h`` is a parameter and ``h.v`` a
    Pair (refused before: a parameter's fields were taken to be plain values)."""
    f = field_handed_on
    np.testing.assert_allclose(grad(f)(W), central_jacobian(f, W), rtol=1e-6, atol=1e-8)
    g32 = grad(f)(W.astype(np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, central_jacobian(f, W), rtol=2e-3, atol=2e-4)
    want = central_jacobian(grad(f), W, 1e-5)
    np.testing.assert_allclose(hessian(f)(W), want, rtol=1e-5, atol=1e-6)
    v = np.array([0.4, -1.3, 0.8])
    assert jvp(f, (W,), (v,))[1] == pytest.approx(central_jacobian(f, W) @ v, rel=1e-6)


def test_a_helper_whose_module_does_not_see_the_class_is_refused_with_the_fix(
    tmp_path, monkeypatch
):
    """A helper of a module that neither defines nor imports the class unpacks it: the
    dispatch does not go there, and the items' gradient has nowhere to go."""
    import importlib

    from pullback.errors import NotDifferentiableError

    (tmp_path / "pb_blind_helper.py").write_text(
        "def unpack(h):\n    a, b = h.v\n    return a * b\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    helper = importlib.import_module("pb_blind_helper")

    def blind(w):
        return helper.unpack(Holder(Pair(w[0], w[1])))

    with pytest.raises(NotDifferentiableError) as info:
        grad(blind)(W)
    message = str(info.value)
    assert "pb_blind_helper.py:2: a gradient flows back through the items of a Pair" in message
    assert (
        "Fix: import Pair into the module of the function that loops over or unpacks it "
        f"(`from {__name__} import Pair`): pullback then runs Pair.__iter__ and "
        "differentiates it; or loop over a list of its items." in message
    )
    assert "a, b = h.v" in message
