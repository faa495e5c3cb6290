"""Loops over itertools' endless iterators (``count``, ``cycle``, ``repeat(value)``).

pullback reads what a loop goes over into a list before the loop runs, which never ended
for an endless iterator (the gradient hung). Zipped with sequences, the endless iterator is
now cut to the shortest sequence's length (zip reads no further), so ``zip(xs,
itertools.count(1))``, ``zip(xs, itertools.cycle(signs))`` and ``zip(xs,
itertools.repeat(c))`` differentiate in the sequences (float64 and float32, to second
order, against central differences); a gradient that would flow into the endless iterator
is refused at its call (PB301, as itertools has no rule), and a loop over an endless
iterator alone (``for k in itertools.count(): ... break``) is refused when it runs, with
a rewrite.
"""

import itertools

import numpy as np
import pytest
from fd import check_grad, check_hvp

import pullback
from pullback import NotIterableError, UnsupportedSyntaxError


def counted(x):
    return sum(k * v**2 for k, v in zip(itertools.count(1), x))


def alternating(x):
    total = 0.0
    for v, sign, w in zip(x, itertools.cycle([1.0, -1.0]), x[::-1]):
        total = total + sign * v * w
    return total


def repeated(x, c=2.5):
    return sum(np.sin(v) * r for v, r in zip(x, itertools.repeat(c)))


def enumerated_count(x):
    total = 0.0
    for i, (k, v) in enumerate(zip(itertools.count(0.5, 0.25), x)):
        total = total + (k + i) * np.exp(v)
    return total


X = np.array([0.3, -0.8, 1.1, 0.6])
V = np.array([1.0, 0.5, -0.25, 2.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", [counted, alternating, repeated, enumerated_count])
def test_zipped_with_sequences(f, dtype):
    check_grad(f, X.astype(dtype))


@pytest.mark.parametrize("f", [counted, alternating, enumerated_count])
def test_second_order(f):
    check_hvp(f, X, V)


def test_scalar_argument():
    check_grad(lambda t: counted(np.array([t, 2 * t])), 0.7)


def repeat_of_parameter(c, x):
    return sum(v * r for v, r in zip(x, itertools.repeat(c)))


def cycle_of_parameter(c, x):
    return sum(v * r for v, r in zip(x, itertools.cycle([c, 1.0])))


@pytest.mark.parametrize("f", [repeat_of_parameter, cycle_of_parameter])
def test_gradient_into_the_endless_iterator_is_refused(f):
    with pytest.raises(UnsupportedSyntaxError) as info:
        pullback.grad(f)(0.7, X)
    text = str(info.value)
    assert "PB301 call of 'itertools." in text and "test_endless_iterators.py:" in text


def newton_count(x):
    v = x
    for it in itertools.count():
        v = 0.5 * (v + 2.0 / v)
        if it >= 5:
            break
    return np.sum(v)


def test_loop_over_count_alone_is_refused_when_it_runs():
    with pytest.raises(NotIterableError) as info:
        pullback.grad(newton_count)(np.array([1.0, 3.0]))
    text = str(info.value)
    assert "itertools.count(...), which never ends" in text
    assert "`for k in range(max_iter):` with the same break" in text
    assert "test_endless_iterators.py:" in text
