"""``n += 1`` on a counter that ``range(n)`` or ``isinstance`` also read is a rebinding:
those builtins keep no reference to their arguments, so the augmented assignment can change
nothing another name sees (PB105 used to refuse these loops). Against hand-derived
gradients and central finite differences, first and second order."""

from __future__ import annotations

import numpy as np
import pytest

from pullback import grad
from pullback.errors import UnsupportedSyntaxError
from pullback.testing import check_grads


def triangle(x):
    total = 0.0
    i = 0
    while i < 3:
        for j in range(i):
            total = total + x[j] * x[i]
        i += 1
    return total


def grows(x):
    total = 0.0
    n = 2
    for j in range(n):
        total = total + np.sin(x[j])
    n += 1
    for j in range(n):
        total = total + x[j] ** 2
    return total


def until_break(x):
    total = 0.0
    i = 0
    while True:
        for j in range(i):
            total = total + x[j]
        i += 1
        if isinstance(i, int) and i > 3:
            break
    return total * x[j]


@pytest.mark.parametrize("fn", [triangle, grows, until_break], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_counters_against_finite_differences(fn, dtype):
    check_grads(fn, np.array([0.7, -1.2, 0.4, 1.5], dtype=dtype), order=2)


def test_counters_against_the_hand_gradient():
    x = np.array([0.7, -1.2, 0.4, 1.5])
    np.testing.assert_allclose(grad(triangle)(x), [x[1] + x[2], x[0] + x[2], x[0] + x[1], 0])
    np.testing.assert_allclose(
        grad(grows)(x), [np.cos(x[0]) + 2 * x[0], np.cos(x[1]) + 2 * x[1], 2 * x[2], 0]
    )


def test_an_array_shared_with_another_name_is_still_refused():
    def shares(x):
        acc = x * 1.0
        kept = [acc]
        acc += 1.0
        return np.sum(kept[0])

    with pytest.raises(UnsupportedSyntaxError, match="PB105"):
        grad(shares)(np.array([1.0, 2.0]))
