"""Iteration written by hand over NumPy's and Python's iterators: ``for i, v in
np.ndenumerate(x)`` (an index loop: the pair ``(index, x[index])`` of each element in C
order, the index Python ints as NumPy yields them), and ``it = iter(xs)`` stepped by
``next(it)``, ``next(it, d)`` and ``for v in it:`` (reads of ``xs`` by a position,
pullback/iterators_by_hand.py; both were PB301). Checked against central differences in
float64 and float32, and to second order; other uses of an iterator stay refused."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_hvp, check_jvp

from pullback import grad
from pullback.errors import UnsupportedSyntaxError

W = np.array([0.3, -0.7, 1.1, 0.4])
V = np.array([0.5, -1.0, 0.25, 1.0])


def ndenumerate_matrix(x):
    t = 0.0
    for i, v in np.ndenumerate(x.reshape(2, 2)):
        t = t + np.sin(v) * (i[0] + 2 * i[1] + 1)
    return t


def ndenumerate_unpacked_index(x):
    t = 0.0
    for (i, j), v in np.ndenumerate(np.outer(x, x[:3])):
        t = t + v * v * (i - j)
    return t


def ndenumerate_in_a_comprehension(x):
    return sum([v * (i[0] + 1) ** 2 for i, v in np.ndenumerate(x)])


def ndenumerate_of_a_list(x):
    t = 0.0
    for (i,), v in np.ndenumerate([x[0], x[1] * 2.0]):
        t = t + v**2 * (i + 1)
    return t


def ndenumerate_index_reads_again(x):
    t = 0.0
    for i, v in np.ndenumerate(x):
        if v > 0:
            t = t + v * x[i] * (i[0] + 1)
    return t


def ndenumerate_of_a_scalar(x):
    t = 0.0
    for i, v in np.ndenumerate(np.sum(x**2)):
        t = t + v * (len(i) + 1)
    return t


NDENUMERATE = [
    ndenumerate_matrix,
    ndenumerate_unpacked_index,
    ndenumerate_in_a_comprehension,
    ndenumerate_of_a_list,
    ndenumerate_index_reads_again,
    ndenumerate_of_a_scalar,
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", NDENUMERATE)
def test_ndenumerate_loops(f, dtype):
    check_grad(f, W.astype(dtype))


@pytest.mark.parametrize("f", NDENUMERATE)
def test_ndenumerate_loops_second_order(f):
    check_hvp(f, W, V)


def test_ndenumerate_yields_what_numpy_yields():
    from pullback.unpacking import nd_index

    x = np.arange(24.0).reshape(2, 3, 4)
    assert [(nd_index(k, x.shape), x[nd_index(k, x.shape)]) for k in range(x.size)] == list(
        np.ndenumerate(x)
    )
    assert all(type(i) is int for i in nd_index(5, x.shape))


# -- iter and next by hand ------------------------------------------------------------


def first_then_loop(x):
    it = iter(x)
    first = next(it)
    t = first**2
    for v in it:
        t = t + np.sin(v) * first
    return t


def next_in_a_loop_then_default(x):
    it = iter([x[0], x[1], x[2], x[3]])
    t = 0.0
    for k in range(3):
        t = t + next(it) * (k + 1)
    return t + next(it, 0.0) + next(it, 0.5)


def until_exhausted(x):
    it = iter(x)
    t = 0.0
    while True:
        v = next(it, None)
        if v is None:
            break
        t = t + v * v
    return t


def made_again_each_step(x):
    t = 0.0
    for r in range(2):
        it = iter(x[2 * r : 2 * r + 2])
        a = next(it)
        b = next(it)
        t = t + a * b
    return t


def loop_then_next_with_default(x):
    it = iter(x)
    a = next(it)
    for v in it:
        a = a * v
    return a + next(it, 2.0)


def skip_one(x):
    it = iter((x[0], x[1] * 2.0, x[2]))
    next(it)
    return next(it) * 3.0


def keys_of_a_dict(x):
    d = {"a": x[0], "b": x[1]}
    it = iter(d)
    return d[next(it)] * 2.0 + d[next(it)]


def loop_with_else(x):
    it = iter(x)
    t = 0.0
    for v in it:
        t = t + v * v
    else:
        t = t * 2.0
    return t


step = next


def next_by_another_name(x):
    it = iter(x)
    return step(it) * step(it)


BY_HAND = [
    first_then_loop,
    next_in_a_loop_then_default,
    until_exhausted,
    made_again_each_step,
    loop_then_next_with_default,
    skip_one,
    keys_of_a_dict,
    loop_with_else,
    next_by_another_name,
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", BY_HAND)
def test_iter_and_next_by_hand(f, dtype):
    check_grad(f, W.astype(dtype))


@pytest.mark.parametrize("f", BY_HAND)
def test_iter_and_next_by_hand_second_order(f):
    check_hvp(f, W, V)


def exhausted(x):
    it = iter(x[:1])
    return next(it) * next(it)


def test_next_of_an_exhausted_iterator_raises_stop_iteration_as_python_does():
    with pytest.raises(StopIteration):
        exhausted(W)
    with pytest.raises(StopIteration):
        grad(exhausted)(W)


def loop_that_may_break(x):
    it = iter(x)
    t = 0.0
    for v in it:
        if v > 0:
            break
        t = t + v
    return t + next(it)


def consumed_by_a_generator(x):
    it = iter(x)
    return sum(v for v in it)


def handed_on(x):
    it = iter(x)
    return next(it) * _next_of(it)


def _next_of(it):
    return next(it)


@pytest.mark.parametrize("f", [loop_that_may_break, consumed_by_a_generator, handed_on])
def test_other_uses_of_an_iterator_stay_refused(f):
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f)(W)
    text = str(info.value)
    assert "PB301" in text and "an iterator stepped by hand" in text
    assert "it = iter(x)" in text and "Fix: step it only those ways" in text


@pytest.mark.parametrize("f", [first_then_loop, next_in_a_loop_then_default, ndenumerate_matrix])
def test_forward_mode_through_hand_iteration(f):
    check_jvp(f, (W,), (np.array([1.0, 0.5, -0.25, 2.0]),))
