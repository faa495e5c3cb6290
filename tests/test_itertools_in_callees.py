"""``itertools.accumulate`` (and the other itertools a loop steps) inside a callee: a loop,
a comprehension or ``list(...)`` over it is stepped by the transform there as in the
differentiated function itself (check/call_checks.py, transform/loop_iterables.py);
checked against central differences, float64 and float32, scalars and arrays, first and
second order. An iterator kept as a value stays refused, with the place and the fix."""

import itertools
import operator

import numpy as np
import pytest
from fd import check_grad, check_hessian_against_differences

from pullback import UnsupportedSyntaxError, grad


def running_sums(xs):
    return list(itertools.accumulate(xs))


def running_products(xs):
    out = []
    for v in itertools.accumulate(xs, operator.mul):
        out.append(v)
    return out


def running_max(xs):
    return [m * 2.0 for m in itertools.accumulate(xs, max)]


def sums(x):
    return sum(running_sums([x, x * 2.0, np.sin(x)]))


def products(x):
    return sum(running_products([x, x + 1.0, x * x]))


def maxima(x):
    return sum(running_max([x, 1.0 - x, x * 3.0]))


CASES = [sums, products, maxima]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradients_match_differences(f, dtype):
    check_grad(f, dtype(0.7))
    if f is not maxima:  # (max of arrays is ambiguous in Python itself)
        check_grad(lambda x: np.sum(f(x)), np.array([0.3, 0.9], dtype=dtype))


@pytest.mark.parametrize("f", [sums, products], ids=lambda f: f.__name__)
def test_second_order(f):
    check_hessian_against_differences(lambda x: np.sum(f(x)), np.array([0.3, 0.9]))


def kept(xs):
    it = itertools.accumulate(xs)
    return list(it)


def calls_kept(x):
    return sum(kept([x, x * 2.0]))


def test_an_iterator_kept_as_a_value_stays_refused():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(calls_kept)(0.5)
    line = kept.__code__.co_firstlineno + 1
    text = str(info.value)
    assert f"{__file__}:{line}:10: PB301 call of 'itertools.accumulate', " in text
    assert "Fix: loop over it where it is made (`for s in itertools.accumulate(xs):`" in text
    check_grad(sums, 0.5)  # the fix: list(accumulate(xs)) where it is made
