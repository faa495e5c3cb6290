"""Where the array writes (issue 11, arrays) and the list changes (issue 11, lists) meet:
a name written by index is an array or a list, and each must get its own semantics. A list
written by index and extended with ``+=`` once went through the array's in-place add (a
silent wrong gradient, found by the list program generator)."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad

import pullback


def list_indexed_then_extended(x):
    items = [x[0]]
    items += [x[0] * x[0]]
    items[0] = items[0] * x[0]
    return np.sum(np.array(items) * np.arange(1.0, len(items) + 1.0))


def array_indexed_then_added(x):
    a = np.zeros(3)
    a += x
    a[0] = a[0] * x[1]
    return np.sum(a**2)


def list_sorted_in_place(x):
    items = [x[2], x[0] * 2.0, x[1]]
    items.sort()
    return items[0] * 3.0 + items[-1]


def array_copy_sorted_in_place(x):
    a = x.copy()
    a.sort()
    return a[0] * 3.0 + a[-1]


CASES = [
    list_indexed_then_extended,
    array_indexed_then_added,
    list_sorted_in_place,
    array_copy_sorted_in_place,
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", CASES)
def test_lists_and_arrays_written_alike_keep_their_own_semantics(f, dtype):
    check_grad(f, np.array([0.7, -0.3, 1.1], dtype=dtype))


@pytest.mark.parametrize("f", CASES)
def test_forward_mode_agrees(f):
    x, v = np.array([0.7, -0.3, 1.1]), np.array([1.0, 0.5, -0.2])
    _, jv = pullback.jvp(f, (x,), (v,))
    assert jv == pytest.approx(pullback.grad(f)(x) @ v, rel=1e-10)


# Character-RNN caches (the min-char-rnn style): `xs, hs = {}, {}` makes two local dicts like
# two statements would; and a one-hot `x = np.zeros(...)`, `x[k] = 1`, `xs[t] = x` in a loop
# writes each pass into the array made in that pass, though the dict keeps last pass's.
def dicts_from_one_assignment(w):
    xs, hs, loss = {}, {}, 0.0
    hs[-1] = w * 0.5
    for t in range(3):
        x = np.zeros(3)
        x[t] = 1.0
        xs[t] = x
        hs[t] = np.tanh(w * xs[t] + hs[t - 1])
        loss += np.sum(hs[t] ** 2)
    return loss + np.sum(xs[1] * w)


def renewed_array_kept_in_a_list(w):
    kept = []
    for t in range(3):
        row = w * 0.0 + 1.0
        row[t] = w[t] ** 2
        kept.append(row)
    return np.sum(np.array(kept) * w)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", [dicts_from_one_assignment, renewed_array_kept_in_a_list])
def test_arrays_made_anew_each_pass_and_dicts_made_together(f, dtype):
    check_grad(f, np.array([0.7, -0.3, 1.1], dtype=dtype))


def shared_before_the_write(w):
    kept = []
    row = np.zeros(3)
    for t in range(3):
        kept.append(row)  # the same array each pass: a write changes every kept row
        row[t] = w[t]
    return np.sum(np.array(kept) * w)


def test_an_array_made_once_before_the_loop_is_still_refused():
    with pytest.raises(pullback.UnsupportedSyntaxError, match="PB101"):
        pullback.grad(shared_before_the_write)(np.array([0.7, -0.3, 1.1]))
