"""Which arguments of a call found at run time carry no tangent when a gradient is
differentiated again (``dynamic_vjps._no_tangent``, the arguments left out of the callee's
generated vjp): the atoms ``tangents.is_differentiable_value`` rejects. Checked on each kind
of atom against that question, and a Hessian through a callee held in a variable, with an
integer index array and an integer among its arguments, against central differences of the
gradient (float64 and float32)."""

from __future__ import annotations

import numpy as np
import pytest

import pullback
from pullback.dynamic_vjps import _no_tangent
from pullback.tangents import is_differentiable_value

ATOMS = [
    3,
    0,
    True,
    False,
    np.int64(4),
    np.int32(-2),
    np.bool_(True),
    "mean",
    None,
    1.5,
    np.float64(2.0),
    np.float32(0.5),
    np.array([1.0, 2.0]),
    np.array([1.0, 2.0], dtype=np.float32),
    np.array(3.0),
    np.array([1, 2]),
    np.array([True, False]),
    np.arange(3, dtype=np.uint8),
    2.0 + 1.0j,
    np.complex128(1.0 - 2.0j),
    np.array([1.0 + 1.0j]),
]


@pytest.mark.parametrize("value", ATOMS, ids=lambda v: f"{type(v).__name__}-{v!r}"[:40])
def test_no_tangent_is_the_atoms_that_are_no_differentiable_value(value):
    assert _no_tangent(value) == (not is_differentiable_value(value))


@pytest.mark.parametrize(
    "value",
    [[1.0, 2.0], (np.ones(2), 3), (1.5,), {"w": 1.0}, [0, 1], np.array([1.0, None], dtype=object)],
)
def test_containers_are_not_asked(value):
    # a list, tuple, dict or object array may hold floats: its tangent is its own question (objects,
    # records and containers are judged apart), never "no tangent" here
    assert not _no_tangent(value)


@pytest.mark.parametrize("value", [(0,), (0, 1), (np.int64(2), None), ((0, 1), "mean")])
def test_tuples_of_atoms_without_tangent_carry_none(value):
    assert _no_tangent(value)


def median_cubed(x, stat):
    return np.sum(stat(x, axis=(0,), keepdims=True) ** 3)


@pytest.mark.parametrize(
    "dtype, tol", [(np.float64, 1e-6), (np.float32, 2e-2)], ids=["float64", "float32"]
)
def test_hessian_of_a_rule_held_in_a_variable_with_an_axis_tuple(dtype, tol):
    # np.median found at run time with axis=(0,): its pullback function was differentiated
    # with respect to the axis too, and refused (PB502 in order_cotangents)
    x = np.array([[0.3, -1.1, 2.0], [1.4, 0.2, -0.7], [0.9, 2.2, 0.1]], dtype=dtype)
    H = pullback.hessian(median_cubed)(x, np.median)
    g = pullback.grad(median_cubed)
    x64, eps = x.astype(np.float64), 1e-5
    cols = []
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = eps
        e = e.reshape(x.shape)
        cols.append((g(x64 + e, np.median) - g(x64 - e, np.median)) / (2 * eps))
    expected = np.stack(cols, axis=-1).reshape(x.shape + x.shape)  # (symmetric)
    np.testing.assert_allclose(H, expected, rtol=tol, atol=tol)


def cubic_at(x, idx, k):
    return np.sum(x[idx] ** 3) * k + np.sum(np.sin(x) * x[idx[0]])


def through_a_variable(x, h, idx):
    return h(x, idx, 2) + np.sum(x**2)


def _central_hessian(x, idx):
    g = pullback.grad(through_a_variable)
    eps = 1e-5 if x.dtype == np.float64 else 3e-3
    cols = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = eps
        hi = g(x + e, cubic_at, idx)
        lo = g(x - e, cubic_at, idx)
        cols.append((hi - lo) / (2 * eps))
    return np.stack(cols, axis=1)


@pytest.mark.parametrize(
    "dtype, tol", [(np.float64, 1e-6), (np.float32, 2e-2)], ids=["float64", "float32"]
)
def test_hessian_through_a_callee_with_an_integer_index_array(dtype, tol):
    x = np.array([0.5, -1.2, 2.0, 0.3], dtype=dtype)
    idx = np.array([0, 2])
    H = pullback.hessian(through_a_variable)(x, cubic_at, idx)
    expected = _central_hessian(x.astype(np.float64), idx)
    np.testing.assert_allclose(H, expected, rtol=tol, atol=tol)
