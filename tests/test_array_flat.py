"""``x.flat``: reads (``x.flat[i]``, ``x.flat[2:5]``, ``x.flat[[0, 4]]``, iteration) are
the elements of ``np.ravel(x)``; writes ``a.flat[key] = v`` into an array the function
made are ``np.put`` at the positions ``np.arange(a.size)[key]`` (values cycled as NumPy
cycles them). Against finite differences (float64 and float32), second order, forward
mode; a record's field named ``flat`` keeps its own gradient; the refusals that stay."""

from __future__ import annotations

from collections import namedtuple
from types import SimpleNamespace

import numpy as np
import pytest
from fd import check_grad, check_hvp, check_jvp

from pullback import grad
from pullback.errors import UnsupportedSyntaxError
from pullback.testing import check_grads

FLOATS = pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])


def reads(x):
    return x.flat[3] * 2.0 + np.sum(x.flat[2:5] ** 2) + np.sum(x.flat[[0, 4]]) * x.flat[-1]


def iterated(x):
    s = 0.0
    for v in x.flat:
        s = s + np.sin(v) * v
    return s


def writes(x):
    y = np.zeros(6)
    y.flat[2] = x[0, 1]
    y.flat[3:5] = x[1, :2] * 2.0
    return np.sum(y**2) + np.sum(np.cos(y))


def cycled_writes(x):
    y = np.ones((2, 3), dtype=x.dtype)
    y.flat[[0, 4]] = x.flat[1:3] ** 2
    y.flat[-1] = x[1, 1]
    y.flat[1:5] = x[0, :2]  # two values for four positions: cycled
    return np.sum(y * np.arange(6.0).reshape(2, 3)) + np.sum(y**3)


def loop_writes(x):
    y = x * 1.0
    for i in range(3):
        y.flat[i] = y.flat[i + 1] * x[0, i]
    return np.sum(y**2)


CASES = [reads, iterated, writes, cycled_writes, loop_writes]


def _x(dtype=np.float64):
    return np.array([[0.7, -1.2, 0.4], [1.5, 0.3, -0.8]], dtype=dtype)


@FLOATS
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_against_finite_differences(f, dtype):
    check_grad(f, _x(dtype))


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_second_order_and_forward(f):
    x, v = _x(), np.array([[0.3, 0.1, -0.5], [0.2, -0.4, 0.6]])
    check_grads(f, x, order=2)
    check_hvp(f, x, v)
    check_jvp(f, (x,), (v,))


def test_writes_are_numpys():
    x = _x()
    y = np.ones((2, 3))
    y.flat[[0, 4]] = x.flat[1:3] ** 2
    y.flat[-1] = x[1, 1]
    y.flat[1:5] = x[0, :2]
    want = np.sum(y * np.arange(6.0).reshape(2, 3)) + np.sum(y**3)
    assert cycled_writes(x) == want
    g = grad(writes)(x)
    np.testing.assert_array_equal(g[0, 2], 0.0)  # never written into y


Rec = namedtuple("Rec", "flat w")


def record_field(p):
    return np.sum(p.flat * p.w) + p.flat[0, 1]


def test_a_records_field_named_flat():
    x = _x()
    g = grad(record_field)(Rec(x, x + 1.0))
    want = x + 1.0
    want[0, 1] += 1.0
    np.testing.assert_array_equal(g.flat, want)
    np.testing.assert_array_equal(g.w, x)


def constant_object(x, cfg):
    return np.sum(x * cfg.flat)


def test_a_constant_objects_attribute():
    cfg = SimpleNamespace(flat=np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(grad(constant_object)(np.ones(3), cfg), cfg.flat)


def into_parameter(x):
    x.flat[0] = 1.0
    return np.sum(x)


def test_write_into_a_parameter_is_refused():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(into_parameter)(_x())
    text = str(info.value)
    assert "PB101 array mutation: assignment to elements of 'x.flat'" in text
    assert "`x = x.copy()`" in text
