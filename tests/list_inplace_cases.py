"""Functions whose local-list changes run in place (pullback.containers_inplace), used by
tests/test_list_mutation_inplace.py; and functions where an earlier state of the list is
read again, so the changes must keep copies."""

import numpy as np
import pytest

import pullback


def check_value_and_forward_mode(f, x, seed):
    """The value as Python computes it, and ``jvp`` against central differences."""
    value, _ = pullback.value_and_grad(f)(x)
    assert value == pytest.approx(f(x), rel=1e-12)
    v = np.random.default_rng(seed).standard_normal(x.shape)
    y, dy = pullback.jvp(f, (x,), (v,))
    h = 1e-6
    assert y == pytest.approx(f(x), rel=1e-12)
    np.testing.assert_allclose(dy, (f(x + h * v) - f(x - h * v)) / (2 * h), rtol=1e-6, atol=1e-8)


def fill_loop(x):
    lst = [0.0] * x.shape[0]
    for i in range(x.shape[0]):
        lst[i] = np.sin(x[i]) * x[i]
    return np.sum(np.array(lst) * np.arange(1.0, x.shape[0] + 1.0))


def fill_negative_indices(x):
    lst = [0.0] * 5
    for i in range(1, 6):
        lst[-i] = x[i - 1] * x[i - 1]
    lst[0] = lst[0] * 2.0  # a read then a write of the same slot
    return np.sum(np.array(lst) * np.arange(1.0, 6.0))


def overwrite_twice(x):
    # The first value written to a slot must get no cotangent (it was overwritten).
    lst = [x[0], x[1], x[2]]
    for k in range(3):
        lst[k] = x[k] * 5.0
        lst[k] = x[(k + 1) % 5] * lst[k]
    return lst[0] + 2.0 * lst[1] + 3.0 * lst[2]


def augmented_loop(x):
    acc = [x[0], x[1], 0.5]
    for i in range(5):
        acc[i % 3] += x[i] * x[i]
        acc[i % 3] *= 1.0 + x[i]
        acc[-1] -= x[i]
    return acc[0] * acc[1] + acc[2]


def stack_of_pops(x):
    stack = []
    total = 0.0
    for i in range(5):
        stack.append(x[i] * 2.0)
        if i % 2 == 1:
            total = total + stack.pop() * x[i]
    for _ in range(len(stack)):
        total = total * 0.5 + stack.pop()
    return total


def insert_and_delete(x):
    l = [x[0], x[1]]
    for i in range(4):
        l.insert(i % 2, x[i] * 3.0)
        l.insert(-1, x[i + 1])
        del l[0]
    v = l.pop(1)
    del l[-1]
    return v * x[4] + np.sum(np.array(l) * np.arange(1.0, len(l) + 1.0))


def array_elements(x):
    rows = [np.zeros(2) for _ in range(3)]
    for i in range(3):
        rows[i] = x[i : i + 2] * x[i + 2]
    rows.insert(1, x[3:5])
    last = rows.pop()
    return np.sum(np.stack(rows) ** 2) + np.sum(last * x[:2])


IN_PLACE = [
    fill_loop,
    fill_negative_indices,
    overwrite_twice,
    augmented_loop,
    stack_of_pops,
    insert_and_delete,
    array_elements,
]


# -- an earlier state is read again: each change keeps a copy ------------------------------
def stacked_before_the_store(x):
    l = [x[0], x[1], x[2]]
    s = np.stack(l)  # its pullback may keep the list it read
    l[0] = x[3] * x[4]
    return np.sum(s * np.arange(1.0, 4.0)) + np.sum(np.stack(l) ** 2)


def read_in_the_loop(x):
    l = [x[0], x[1], x[2]]
    t = 0.0
    for i in range(3):
        l.insert(0, x[i + 1] * x[i])
        t = t + np.sum(np.array(l)) * x[i]  # the whole list read between changes
        v = l.pop()
        t = t + v
    return t


SHARED_STATES = [stacked_before_the_store, read_in_the_loop]
