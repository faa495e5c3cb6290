"""A loop variable that a later loop (or statement) binds again: the SSA pass carries the
name through the loops that bind it, and its copies read it on a first iteration where
the user's code has not bound it yet. Those names start bound in the generated code
(ssa.LoopInfo.unbound_at_entry), for grad, hessian and jvp. Against hand-derived
gradients and central finite differences, float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest

from pullback import grad, hessian, jvp
from pullback.testing import check_grads


def pairs_then_squares(x):
    d = x.shape[0]
    total = 0.0
    for i in range(d):
        for j in range(i + 1, d):
            total = total + x[i] * x[j]
    for i in range(d):
        for j in range(d):
            total = total + x[i] * x[j] * 0.5
    return total


def pairs_then_linear(x):
    d = x.shape[0]
    total = 0.0
    for i in range(d):
        for j in range(i + 1, d):
            total = total + x[i] * x[j]
    for j in range(d):
        total = total + x[j]
    return total


def list_of_pairs(x):
    d = x.shape[0]
    out = []
    for i in range(d):
        for j in range(i + 1, d):
            out.append(x[i] * x[j])
    total = np.sum(np.stack(out))
    for i in range(d):
        for j in range(d):
            total = total + np.sin(x[i]) * x[j]
    return total


def while_around_a_for(x):
    total = 0.0
    k = 0
    while k < x.shape[0]:
        for j in range(k):
            total = total + x[j] * x[k]
        k = k + 1
    j = 2
    return total + x[j]


def breaks_out(x):
    total = 0.0
    for i in range(x.shape[0]):
        for j in range(i, x.shape[0]):
            if j > i + 1:
                break
            total = total + np.cos(x[i] * x[j])
    for j in range(2):
        total = total * x[j]
    return total


def hand_pairs_then_linear(x):
    return np.sum(x) - x + 1.0


def hand_pairs_then_squares(x):
    return 2.0 * np.sum(x) - x


CASES = [pairs_then_squares, pairs_then_linear, list_of_pairs, while_around_a_for, breaks_out]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_against_finite_differences(fn, dtype):
    x = np.array([0.7, -1.3, 0.4, 1.1], dtype=dtype)
    check_grads(fn, x, order=2)


def test_against_the_hand_gradient():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(grad(pairs_then_linear)(x), hand_pairs_then_linear(x))
    np.testing.assert_allclose(grad(pairs_then_squares)(x), hand_pairs_then_squares(x))
    expected = np.ones((3, 3)) - np.eye(3)
    np.testing.assert_allclose(hessian(pairs_then_linear)(x), expected)
    np.testing.assert_allclose(hessian(pairs_then_squares)(x), expected + np.ones((3, 3)))


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_forward_mode_agrees(fn):
    x = np.array([0.7, -1.3, 0.4, 1.1])
    v = np.array([0.3, 0.2, -0.5, 1.0])
    value, tangent = jvp(fn, (x,), (v,))
    assert value == pytest.approx(fn(x), rel=1e-14)
    assert tangent == pytest.approx(grad(fn)(x) @ v, rel=1e-12)
