"""Assignment expressions (``n := ...``) are bound where Python evaluates them: in a
condition, in a comprehension's filter (binding the enclosing function's name), in a
``while`` test each time it runs, on one side of ``and``/``or`` only when that side runs.
Gradients against finite differences, float64 and float32, forward and second order."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_jvp

import pullback
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


def mean_if_long(x):
    if (n := len(x)) > 3:
        return np.sum(x**2) / n
    return np.sum(x)


def reuse_in_expression(x):
    return (s := np.sum(x)) * s + (t := np.sin(s)) * t


def filtered_comprehension(x):
    return sum(y * y for v in x if (y := np.tanh(v)) > -0.5)


def while_test(x):
    total = x[0]
    k = 0
    while (step := total * 0.5) > 0.1:
        total = step
        k += 1
    return total * k + step


def short_circuit(x):
    if x[0] > 10.0 and (big := x[1] * 3.0) > 0:
        return big
    if x[0] > 0.0 or (neg := -x[1]) > 0:
        return x[0] * x[2]
    return neg


def walrus_in_loop(x):
    acc = 0.0
    for v in x:
        if (sq := v * v) > 0.5:
            acc = acc + sq
    return acc


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "f",
    [
        mean_if_long,
        reuse_in_expression,
        filtered_comprehension,
        while_test,
        short_circuit,
        walrus_in_loop,
    ],
)
def test_walrus_against_finite_differences(f, dtype):
    check_grad(f, np.array([0.9, -0.7, 1.3, 0.4], dtype=dtype))


def test_the_name_bound_in_a_comprehension_is_the_functions():
    def last_kept(x):
        _ = [v for v in x if (kept := v) > 0]
        return kept * 2.0  # noqa: F821 - bound by the comprehension's filter

    x = np.array([0.5, -1.0, 1.5, -2.0])
    assert last_kept(x) == pytest.approx(-4.0)
    np.testing.assert_allclose(pullback.grad(last_kept)(x), [0, 0, 0, 2.0])


def test_walrus_forward_and_second_order():
    x = np.array([0.9, -0.7, 1.3, 0.4])
    for f in (reuse_in_expression, walrus_in_loop):
        check_grads(f, x, order=2)
        check_jvp(f, (x,), (np.array([1.0, 0.5, -0.25, 2.0]),))
