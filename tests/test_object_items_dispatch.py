"""``d[i]``, ``d[i, j]`` and ``d[lo:hi]`` of a user's object with a Python ``__getitem__``
that the function did not make from a class known before running (a helper's parameter,
a user function's result) run that method at run time (operator_dispatch.py), float keys
included: their cotangents come from the method (the key is an argument of the dispatched
call, and activity is analysed again). Against central differences, float64 and float32,
hessian and jvp."""

from __future__ import annotations

import numpy as np
import pytest
from fd import central_jacobian, form_tests

from pullback import grad, hessian, jvp


class Data:
    def __init__(self, a, s):
        self.a = a
        self.s = s

    def __getitem__(self, i):
        return self.s * self.a[i]


class Table:
    def __init__(self, a):
        self.a = a.reshape(2, 2)

    def __getitem__(self, ij):
        i, j = ij
        return self.a[i, j]


class Interp:
    """A function of a float position, indexed by it (`f[x, y]`)."""

    def __init__(self, c):
        self.c = c

    def __getitem__(self, xy):
        x, y = xy
        return self.c * x * x * y


class Bowl:
    def __init__(self, a):
        self.a = a

    def __getitem__(self, x):
        return self.a * x * x


def first_two(d, w):
    return d[0] * w[1] + d[1]


def helper_parameter(w):
    return first_two(Data(w * w, w[2]), w)


def corners(t, k):
    return t[0, k] * t[k, 0] + t[1, 1]


def tuple_key_in_helper(w):
    return corners(Table(w), 1)


def make_interp(c):
    return Interp(c)


def make_bowl(w):
    return Bowl(w[0])


def float_keys(w):
    f = make_interp(w[0])  # a helper's result: its class known only when it runs
    b = make_bowl(w)
    return f[w[1], w[2]] + b[w[3]]


def sliced_in_helper(w):
    return np.sum(head(Data(w, w[3])) ** 2)


def head(d):
    return d[:2]


FORMS = [helper_parameter, tuple_key_in_helper, float_keys, sliced_in_helper]
W = np.array([0.3, 0.7, -0.4, 1.1])


test_gradient_float64, test_gradient_float32, test_hessian, test_jvp = form_tests(
    FORMS, W, np.array([0.4, -1.3, 0.8, 0.2])
)


def test_third_derivative_of_a_float_key():
    def cube_key(x):
        return make_bowl(np.array([2.0]))[x] * x  # 2 x^3

    assert grad(grad(grad(cube_key)))(0.7) == pytest.approx(12.0)


class Outer:
    class Poly:
        """A nested class (not among the module's globals) indexing itself."""

        def __init__(self, c):
            self.c = c

        def __getitem__(self, k):
            return self.c[k] if k < len(self.c) else 0.0

        def __call__(self, t):
            return sum(self[k] * t**k for k in range(4))


def nested_class_self(w):
    return Outer.Poly(w[:3] * w[3])(0.7)


def test_a_class_known_only_to_the_function_is_dispatched_too():
    """A closure's class and a nested class's ``self[k]``: the classes the function
    resolves and self's class count with the module's (dunder_operators._class_with_any)."""

    class Grid:
        def __init__(self, v):
            self.v = v

        def __getitem__(self, i):
            return self.v[i] * 2.0

    def closure_class(w):
        g = Grid(w * w)
        return g[0] * g[1, ...] + np.sum(g[1:3] ** 2) + np.sum(Grid(w)[::2])

    for f in (closure_class, nested_class_self):
        np.testing.assert_allclose(grad(f)(W), central_jacobian(f, W), rtol=1e-6, atol=1e-8)
        want = central_jacobian(grad(f), W, 1e-5)
        np.testing.assert_allclose(hessian(f)(W), want, rtol=1e-5, atol=1e-6)
        g32 = grad(f)(W.astype(np.float32))
        np.testing.assert_allclose(g32, central_jacobian(f, W), rtol=2e-3, atol=2e-4)


def test_a_float_key_of_a_class_the_module_does_not_see(tmp_path, monkeypatch):
    """The helper's module holds the class, the differentiated function's does not: its
    subscript with a key that carries a gradient is dispatched all the same."""
    import importlib

    (tmp_path / "pb_bowl_maker.py").write_text(
        "class Bowl:\n"
        "    def __init__(self, a):\n"
        "        self.a = a\n"
        "\n"
        "    def __getitem__(self, x):\n"
        "        return self.a * x * x\n"
        "\n"
        "\n"
        "def make(a):\n"
        "    return Bowl(a)\n"
    )
    (tmp_path / "pb_bowl_user.py").write_text(
        "from pb_bowl_maker import make\n\n\ndef cube(x):\n    b = make(2.0)\n    return b[x] * x\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    cube = importlib.import_module("pb_bowl_user").cube
    assert grad(cube)(0.7) == pytest.approx(6 * 0.49)
    assert grad(grad(cube))(0.7) == pytest.approx(12 * 0.7)
    assert jvp(cube, (0.7,), (1.0,))[1] == pytest.approx(6 * 0.49)
