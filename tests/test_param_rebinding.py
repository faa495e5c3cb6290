"""``n += 1`` on a parameter rebinds where the argument is a number (check/param_rebinding.py).

Python rebinds ``n`` on an int, a float, a tuple or a NumPy scalar, and writes into the
caller's array on an array: pullback runs the first (the check decides from the kinds of
the call's arguments) and refuses the second, before running where the call passes an
array of one axis or more and as the statement runs for a 0-d array. Against central
finite differences, float64 and float32, first and second order."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest

from pullback import check, grad
from pullback.errors import UnsupportedCallError, UnsupportedSyntaxError
from pullback.testing import check_grads

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import helper_writes_cases as C  # noqa: E402


def counts_down(x, n):
    s = 0.0
    while n > 0:
        s = s + np.sin(x * n)
        n -= 1
    return np.sum(s)


def doubles(x, n):
    for _ in range(3):
        n *= 2
    return np.sum(x**2) * n


def shifted(x, k=0):
    k += 1
    return np.sum(x * k) + np.sum(x[:k] ** 2)


def scaled_scalar(s, x):
    s *= np.sum(x)
    s += 1.0
    return s * s


def grows_tuple(x, acc):
    for v in x:
        acc += (v * 2.0,)
    return np.sum(np.stack(acc) ** 2)


def step(x, n):
    n += 1
    return x * n


def calls_step(x):
    return np.sum(step(x, 2)) + np.sum(step(x, 0.5))


X = np.array([0.7, -1.2, 0.4])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_int_counter_parameter(dtype):
    x = X.astype(dtype)
    for n in (0, 1, 3):
        check_grads(counts_down, x, n, order=2)
    check_grads(doubles, x, 3, order=2)
    check_grads(shifted, x, order=2)  # the default 0: an int
    check_grads(shifted, x, 2, order=2)
    assert grad(counts_down)(x, 3).dtype == dtype


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_differentiated_float_parameter(dtype):
    s = dtype(0.8)
    x = X.astype(dtype)
    check_grads(scaled_scalar, s, x, wrt=(0, 1), order=2)
    check_grads(scaled_scalar, 0.8, X, wrt=(0, 1), order=2)
    np.testing.assert_allclose(grad(scaled_scalar)(0.8, X), 2 * (0.8 * np.sum(X) + 1) * np.sum(X))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_tuple_parameter_rebinds(dtype):
    acc = (np.zeros(()),)
    check_grads(grows_tuple, X.astype(dtype), acc, order=2)
    before = (1.0,)
    grad(grows_tuple)(X, before)
    assert before == (1.0,)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_helper_called_with_numbers(dtype):
    check_grads(calls_step, X.astype(dtype), order=2)
    check_grads(C.passes_a_float_to_augmented_assignment, X.astype(dtype), order=2)
    np.testing.assert_allclose(grad(C.passes_a_float_to_augmented_assignment)(X), [4.0, 1.0, 0.0])


def adds_into(x):
    x += 1.0
    return np.sum(x)


def test_an_array_argument_is_refused_before_running():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(adds_into)(X)
    message = re.sub(r"\S*test_param_rebinding\.py", "t.py", str(info.value))
    line = adds_into.__code__.co_firstlineno + 1
    assert message.splitlines()[2:] == [
        f"  t.py:{line}:5: PB105 augmented assignment 'x += ...' may change an array that another "
        "name also refers to",
        "        x += 1.0",
        "        ^^^^^^^^",
        "    'x' is the caller's array at this call (its argument is an array), and `+=` would "
        "change that array in place (on a number it rebinds).",
        "    Fix: write `x = x + 1.0` (a new array), which leaves other references unchanged "
        "(see docs/limitations.md#PB105).",
    ]
    # a number there rebinds: the same function differentiates
    assert grad(adds_into)(2.0) == 1.0


def test_a_0d_array_is_refused_as_it_runs():
    x = np.array(2.0)
    with pytest.raises(UnsupportedCallError, match=r"'x \+= \.\.\.' ran on a ndarray"):
        grad(adds_into)(x)
    assert x == 2.0  # refused before the write


def test_an_array_passed_to_a_helper_is_refused():
    # the helper's adjoint is built for the kinds of its call: n is an array there
    def calls_with_array(x):
        return np.sum(step(x * 1.0, X))

    with pytest.raises(UnsupportedSyntaxError, match="'n' is the caller's array at this call"):
        grad(calls_with_array)(X)


def test_a_non_differentiated_array_argument_is_refused():
    def takes_offsets(x, offsets):
        offsets += 1.0
        return np.sum(x * offsets)

    with pytest.raises(UnsupportedSyntaxError, match="PB105"):
        grad(takes_offsets)(X, np.ones(3))
    np.testing.assert_allclose(grad(takes_offsets)(X, 1.0), 2.0 * np.ones(3))


def test_check_without_a_call():
    # no call: a parameter may be an array, unless its default is a number
    assert [d.code for d in check(adds_into)] == ["PB105"]
    assert "may be the caller's array" in check(adds_into)[0].why
    assert check(shifted) == []
