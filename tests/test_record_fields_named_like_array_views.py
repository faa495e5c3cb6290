"""A record's field named like an array view (``T`` for a temperature, ``real``, ``imag``,
``mT``): ``state.T`` read it as ``np.transpose(state)`` (a TypeError when the primal
ran). In a module holding a user class with such a field (this one), the read is
dispatched on the value when it runs (``dynamic_attrs.array_attribute_of``): the field of
a record, NumPy's view of an array or a number. Checked against central differences,
float64 and float32, by hand, to second order and in forward mode; arrays in the same
module keep NumPy's meaning, complex ones included."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pytest
from fd import check_grad

import pullback


@dataclass
class State:
    T: float
    p: float


class Field(NamedTuple):
    T: np.ndarray
    real: float


class Plain:
    def __init__(self, a, b):
        self.imag = a
        self.mT = b


def ideal_gas(x):
    s = State(x[0] * 2.0, x[1])
    return s.T * s.p


def state_parameter(s):
    return s.T * s.p**2


def named_field(x):
    f = Field(x * 2.0, 3.0)
    return np.sum(f.T**2) * f.real


def plain_fields(x):
    o = Plain(x[0], x[1:])
    return o.imag * np.sum(o.mT**3)


def arrays_here(w):
    m = np.reshape(w, (2, 3))
    z = m + 1j * m**2
    return np.sum(m.T @ m) + np.sum(z.real * z.imag) + np.sum(m.mT[0] ** 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fn", [ideal_gas, named_field, plain_fields, arrays_here])
def test_against_differences(fn, dtype):
    x = np.linspace(0.3, 1.4, 6 if fn is arrays_here else 3).astype(dtype)
    check_grad(fn, x)


def test_by_hand():
    np.testing.assert_allclose(pullback.grad(ideal_gas)(np.array([0.5, 1.5])), [3.0, 1.0])
    g = pullback.grad(state_parameter)(State(0.5, 1.5))
    assert g == State(T=2.25, p=1.5)
    # 3 * sum((2 x)**2) = 12 x**2
    np.testing.assert_allclose(pullback.grad(named_field)(np.array([1.0, 3.0])), [24.0, 72.0])


@pytest.mark.parametrize("fn", [ideal_gas, named_field, plain_fields, arrays_here])
def test_second_order_and_forward_mode(fn):
    x = np.linspace(0.3, 1.4, 6 if fn is arrays_here else 3)
    h = pullback.hessian(fn)(x)
    grad_f = pullback.grad(fn)
    eps = 1e-6
    want = np.stack([(grad_f(x + e) - grad_f(x - e)) / (2 * eps) for e in np.eye(x.size) * eps])
    np.testing.assert_allclose(h, want, rtol=1e-6, atol=1e-6)
    v = np.linspace(-1.0, 1.0, x.size)
    _, dy = pullback.jvp(fn, (x,), (v,))
    np.testing.assert_allclose(dy, grad_f(x) @ v, rtol=1e-10)
