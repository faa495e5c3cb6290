"""Object arrays (``np.array([a, b], dtype=object)``) in a differentiated function.

An object array of numbers passes its items' gradients back (each read's cotangent is a
number, scattered into the array's cotangent), and one of objects that carry no gradient
(made of constants) is no differentiated value at all. An object array whose items are
arrays or objects carrying a gradient (records of a user's class made from differentiated
values) cannot hold their cotangents (an array's, or a record's tuple of fields): it is
refused at the user's line with a fix, where it failed with NumPy's "setting an array
element with a sequence" (and, to second order, without naming the line).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from fd import check_grad, check_hvp

import pullback
from pullback import grad, hessian, jacobian

HERE = os.path.abspath(__file__)
X = np.array([0.3, -0.2])
V = np.array([1.0, 0.5])


class Scale:
    def __init__(self, w):
        self.w = w

    def f(self, x):
        return self.w * x


class Doubler:  # no fields
    def f(self, x):
        return x * 2.0


def numbers_in_an_object_array(x):
    a = np.array([x[0], np.sin(x[1])], dtype=object)
    return a[0] * a[1] ** 2 + a[1]


def constant_objects_in_an_object_array(x):
    objs = np.array([Doubler(), Doubler()], dtype=object)
    return np.sum(objs[0].f(x) * np.cos(objs[1].f(x)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", [numbers_in_an_object_array, constant_objects_in_an_object_array])
def test_an_object_array_without_gradients_in_objects_is_differentiated(f, dtype):
    check_grad(f, X.astype(dtype))


@pytest.mark.parametrize("f", [numbers_in_an_object_array, constant_objects_in_an_object_array])
def test_an_object_array_without_gradients_in_objects_has_second_derivatives(f):
    check_hvp(f, X, V)
    np.testing.assert_allclose(hessian(f)(X), jacobian(grad(f))(X), rtol=1e-10, atol=1e-12)


def records_in_an_object_array(x):
    objs = np.array([Scale(x), Scale(2.0 * x)], dtype=object)
    return np.sum(objs[0].f(x) * objs[1].f(x))


def arrays_in_an_object_array(x):
    a = np.array([x, 2.0 * x[:1]], dtype=object)
    return np.sum(a[0] * a[1])


def records_in_an_object_array_iterated(x):
    objs = np.array([Scale(x), Scale(2.0 * x)], dtype=object)
    t = 0.0
    for o in objs:
        t = t + np.sum(o.f(x))
    return t


def records_unpacked_from_an_object_array(x):
    objs = np.array([Scale(x), Scale(2.0 * x)], dtype=object)
    a, b = objs
    return np.sum(b.f(x))


def records_written_into_an_object_array(x):
    objs = np.empty(2, dtype=object)
    objs[0] = Scale(x)
    objs[1] = Scale(2.0 * x)
    return np.sum(objs[1].f(x))


WHAT = (
    "pullback: an item of an object array (np.array(..., dtype=object)) that is an array "
    "or an object carrying a gradient cannot pass its gradient back: an object array "
    "holds numbers' gradients only."
)
FIX = (
    "Fix: keep the items in a list or tuple (`items = [a, b]`, then `items[0]`), whose "
    "items carry their gradients."
)


@pytest.mark.parametrize(
    "f, line, derivative",
    [
        (records_in_an_object_array, 1, grad),
        (records_in_an_object_array, 1, hessian),
        (arrays_in_an_object_array, 1, grad),
        (arrays_in_an_object_array, 1, hessian),
    ],
)
def test_gradients_in_an_object_array_are_refused_golden(f, line, derivative):
    with pytest.raises(pullback.PullbackError) as info:
        derivative(f)(X)
    lineno = f.__code__.co_firstlineno + line
    text = _source_line(f, line)
    assert str(info.value).replace(HERE, "here.py") == (
        f"here.py:{lineno}: {WHAT}\n        {text}\n{FIX}"
    )


@pytest.mark.parametrize(
    "f",
    [
        records_in_an_object_array_iterated,
        records_unpacked_from_an_object_array,
        records_written_into_an_object_array,
    ],
)
def test_other_reads_of_gradients_in_an_object_array_are_refused(f):
    with pytest.raises(pullback.PullbackError) as info:
        grad(f)(X)
    message = str(info.value)
    assert WHAT in message and "test_object_arrays.py:" in message
    assert message.endswith("\n" + FIX)


def _source_line(f, k) -> str:
    import inspect

    return inspect.getsource(f).splitlines()[k].strip()
