"""Ufunc methods that are NumPy functions under another name (``np.add.reduce`` is
``np.sum`` along axis 0, ``np.multiply.accumulate`` is ``np.cumprod``, ``np.subtract.outer``
a broadcast ``np.subtract``): differentiated as those functions, against finite
differences, float64 and float32, with forward mode and second order."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_jvp

import pullback
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


def add_reduce(x):
    return np.sum(np.add.reduce(x**2) * np.arange(1.0, 4.0))  # axis 0 by default


def add_reduce_axis(x):
    return np.sum(np.add.reduce(x**2, 1) ** 2) + np.add.reduce(x, axis=None, keepdims=False)


def multiply_reduce(x):
    return np.sum(np.multiply.reduce(x + 2.0, axis=1))


def maximum_minimum_reduce(x):
    return np.sum(np.maximum.reduce(x, axis=0)) - np.minimum.reduce(x, axis=None) ** 2


def accumulate(x):
    return np.sum(np.add.accumulate(x, axis=1) ** 2) + np.sum(np.multiply.accumulate(x + 2.0))


def outer(x):
    pairwise = np.subtract.outer(x[0], x[1])
    return np.sum(pairwise**2) + np.sum(np.multiply.outer(x[0], x) * 0.5)


def outer_of_scalars_and_matrices(x):
    return np.sum(np.hypot.outer(x[0, :2], x[1:, 1:])) + np.sum(np.add.outer(x[0, 0], x[1]))


CASES = [
    add_reduce,
    add_reduce_axis,
    multiply_reduce,
    maximum_minimum_reduce,
    accumulate,
    outer,
    outer_of_scalars_and_matrices,
]


def _x(dtype):
    return np.array([[0.3, -1.2, 2.3], [0.7, 1.1, -0.4], [1.9, -0.8, 0.2]], dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", CASES)
def test_ufunc_methods_against_finite_differences(f, dtype):
    x = _x(dtype)
    assert pullback.grad(f)(x).shape == x.shape
    check_grad(f, x)


@pytest.mark.parametrize("f", [add_reduce_axis, accumulate, outer])
def test_ufunc_methods_forward_and_second_order(f):
    x = _x(np.float64)
    check_grads(f, x, order=2)
    check_jvp(f, (x,), (np.linspace(-1.0, 1.0, 9).reshape(3, 3),))


def test_the_value_is_the_methods():
    x = _x(np.float64)
    for f in CASES:
        value, _ = pullback.value_and_grad(f)(x)
        assert value == f(x)


def _helper(x):
    return np.sum(np.subtract.outer(x, x) ** 2)


def calls_helper(x):
    return _helper(x[0]) + np.add.reduce(x[1])


def test_a_called_function_using_them_passes_the_check():
    assert pullback.check(calls_helper) == []
    check_grad(calls_helper, _x(np.float64))


def test_a_method_without_a_numpy_equivalent_is_refused_where_a_gradient_flows():
    def log_total(x):
        return np.hypot.reduce(x[0])

    with pytest.raises(pullback.UnsupportedSyntaxError, match="PB301"):
        pullback.grad(log_total)(_x(np.float64))

    def counted(x):
        n = np.hypot.reduce(np.ones(3))  # no gradient flows through it: it just runs
        return n * np.sum(x)

    check_grad(counted, _x(np.float64))
