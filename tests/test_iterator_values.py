"""``list``/``tuple``/``dict`` of a ``zip``/``enumerate``/``reversed`` call: the iterator is
consumed whole, so it is differentiated as the comprehension that builds the same container
(pullback/iteration.py, transform/iterator_values.py). Gradients against central finite
differences (tests/fd.py), float64 and float32, scalars and arrays, forward mode and second
order; an iterator kept and consumed later stays refused where a gradient flows through it."""

# ruff: noqa: B905 - the functions under test are written as users write zip()
from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_jvp

import pullback
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


def list_of_pairs(x):
    pairs = list(zip(x[:-1], x[1:]))
    return sum(a * b for a, b in pairs)


def indexed_pairs(x):
    pairs = list(enumerate(x))
    total = 0.0
    for i, v in pairs:
        total = total + (i + 1) * v * v
    return total + pairs[2][1] * pairs[0][1]


def nested_items(x):
    rows = list(zip(x, enumerate(np.cos(x), start=1)))
    return sum(a * k * c for a, (k, c) in rows)


def named_values(x):
    d = dict(zip(["w", "b", "s"], [x[0], x[1], np.tanh(x[2])]))
    return d["w"] * d["s"] + d["b"] ** 2


def numbered(x):
    d = dict(enumerate(x * x))
    return d[0] * d[3] + sum(d.values())


def reversed_tuple(x):
    t = tuple(reversed(x))
    return t[0] * 2.0 + t[-1] * t[1]


def stacked_rows(x, y):
    rows = [np.array(r) for r in zip(x, y)]
    m = np.array(list(zip(x, np.sin(y))))
    return np.sum(np.stack(rows) ** 2) + np.sum(m[:, 0] * m[:, 1])


CASES = [list_of_pairs, indexed_pairs, nested_items, named_values, numbered, reversed_tuple]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", CASES)
def test_against_finite_differences(f, dtype):
    check_grad(f, np.array([0.9, -0.7, 1.3, 0.4], dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_two_arguments_and_arrays(dtype):
    x = np.array([0.9, -0.7, 1.3], dtype=dtype)
    y = np.array([0.2, 0.5, -1.1], dtype=dtype)
    check_grad(stacked_rows, x, y, wrt=(0, 1))


def test_rows_of_a_matrix_are_items():
    def row_products(m, v):
        return sum(np.dot(r, w) * k for k, (r, w) in enumerate(list(zip(m, v))))

    m = np.arange(6.0).reshape(3, 2) / 5
    v = np.linspace(-1, 1, 6).reshape(3, 2)
    check_grad(row_products, m, v, wrt=(0, 1))


@pytest.mark.parametrize("f", [list_of_pairs, nested_items, named_values, reversed_tuple])
def test_forward_mode_and_second_order(f):
    x = np.array([0.9, -0.7, 1.3, 0.4])
    check_jvp(f, (x,), (np.array([1.0, 0.5, -0.25, 2.0]),))
    check_grads(f, x, order=2)


def test_the_values_are_pythons():
    x = np.array([0.9, -0.7, 1.3, 0.4])
    for f in CASES:
        value, _ = pullback.value_and_grad(f)(x)
        assert value == pytest.approx(f(x))


def test_zip_strict_raises_as_python_does():
    def strict_pairs(x):
        return sum(a * b for a, b in list(zip(x, x[1:], strict=True)))

    with pytest.raises(ValueError):
        strict_pairs(np.ones(3))
    with pytest.raises(ValueError):
        pullback.grad(strict_pairs)(np.ones(3))


def test_an_iterator_kept_for_later_stays_refused():
    def kept(x):
        z = zip(x, x[1:])
        return sum(a * b for a, b in list(z))

    with pytest.raises(pullback.UnsupportedSyntaxError, match="PB301"):
        pullback.grad(kept)(np.ones(3))


# -- next(): the first item, found by a loop that stops there -------------------------------
def first_positive(x):
    return next(v * v for v in x if v > 0) * 3.0


def first_or_default(x):
    return next((v for v in x if v > 100), 0.5) + x[0] * next(iter(x))


def first_pair(x, y):
    return next(a * b for a, b in zip(x, y) if a + b > 0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", [first_positive, first_or_default])
def test_next_against_finite_differences(f, dtype):
    check_grad(f, np.array([-0.9, 0.7, 1.3, 0.4], dtype=dtype))


def test_next_of_a_zip_and_forward_and_second_order():
    x, y = np.array([-0.9, 0.7, 1.3]), np.array([0.2, 0.5, -1.1])
    check_grad(first_pair, x, y, wrt=(0, 1))
    check_jvp(first_pair, (x, y), (np.ones(3), np.linspace(-1, 1, 3)))
    for f in (first_positive, first_or_default):
        check_jvp(f, (x,), (np.array([1.0, 0.5, -0.25]),))
        check_grads(f, x, order=2)


def test_next_stops_where_python_stops():
    def stops(x):
        # Python never evaluates 1 / v for the items after the first match
        return next(1.0 / v for v in x if v != 0.0)

    x = np.array([2.0, 0.0, 4.0])
    assert pullback.grad(stops)(x) == pytest.approx([-0.25, 0.0, 0.0])


def test_next_with_nothing_found_raises_stop_iteration():
    def nothing(x):
        return next(v for v in x if v > 100)

    with pytest.raises(StopIteration):
        pullback.grad(nothing)(np.ones(3))


def test_an_iterator_stepped_by_hand_is_read_by_index():
    # (was refused; tests/test_hand_iteration.py has the forms: pullback/iterators_by_hand.py)
    def stepped(x):
        it = iter(x)
        first = next(it)
        return first * next(it)

    check_grad(stepped, np.array([0.5, -2.0, 3.0]))


def test_an_iterator_handed_on_is_refused_with_a_fix():
    def handed_on(x):
        it = iter(x)
        first = next(it)
        return first * max(it)

    with pytest.raises(pullback.UnsupportedSyntaxError, match=r"(?s)PB301.*index the sequence"):
        pullback.grad(handed_on)(np.ones(3))


def test_a_tuple_of_nested_items_found_by_the_program_generator():
    # tuple(...) of a list whose items are tuples: the items' cotangents are passed as they
    # are (builtins_pullbacks.sequence_pullback unbroadcast them as numbers before)
    def nested_tuple(x, y):
        s = 0.0
        items = tuple(zip(x, y, enumerate(x)))
        for v0, v1, (i2, v3) in items:
            s = s + v0 * v1 * (i2 + 1.0) * v3
        return s

    x, y = np.linspace(0.4, 1.3, 5), np.linspace(-0.6, 0.9, 5)
    check_grad(nested_tuple, x, y, wrt=(0, 1))
    check_grads(nested_tuple, x, y, wrt=(0, 1), order=2)
