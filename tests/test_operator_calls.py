"""Calls of the ``operator`` module's arithmetic functions are the operators themselves
(``operator.mul(a, b)`` is ``a * b``): in user code, as the function of
``functools.reduce`` and of ``map``, with first and second derivatives (reverse over
reverse) and forward mode, against finite differences in float64 and float32; lists and
tuples concatenate and repeat as Python does."""

from __future__ import annotations

import functools
import operator

import numpy as np
import pytest
from fd import check_grad, check_jvp

import pullback
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


def product_by_reduce(x):
    return functools.reduce(operator.mul, [x[0], x[1], x[2]]) + functools.reduce(
        operator.add, x, 0.5
    )


def arithmetic(x):
    a = operator.truediv(operator.sub(x[0], x[1]), operator.add(x[2], 2.0))
    b = operator.pow(operator.neg(x[1]), 2) + operator.mod(x[0], 0.3)
    return operator.matmul(x, x) * a + b + operator.pos(x[2])


def mapped(x):
    return sum(map(operator.mul, [x[0], x[1]], [x[2], x[0]]))


def sequences(x):
    row = operator.add([x[0]], [x[1], x[2]])
    twice = operator.mul((x[0], x[1]), 2)
    return row[0] * row[2] + twice[2] * twice[1]


CASES = [product_by_reduce, arithmetic, mapped, sequences]
X = np.array([0.7, -1.3, 0.4])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", CASES)
def test_against_finite_differences(f, dtype):
    check_grad(f, X.astype(dtype))


@pytest.mark.parametrize("f", CASES)
def test_second_order_and_forward_mode(f):
    assert check_grads(f, X, order=2) == "reverse over reverse"
    check_jvp(f, (X,), (np.array([1.0, 0.5, -2.0]),))


def test_hand_derived_hessian_of_a_reduce():
    # x0 * x1 * x2 + (0.5 + x0 + x1 + x2)
    a, b, c = X
    want = np.array([[0.0, c, b], [c, 0.0, a], [b, a, 0.0]])
    np.testing.assert_allclose(pullback.hessian(product_by_reduce)(X), want, rtol=1e-12)
