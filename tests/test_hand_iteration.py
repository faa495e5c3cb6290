"""Iteration written by hand over NumPy's and Python's iterators: ``for i, v in
np.ndenumerate(x)`` (an index loop: the pair ``(index, x[index])`` of each element in C
order, the index Python ints as NumPy yields them). Checked against central differences
in float64 and float32, and to second order."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_hvp

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
