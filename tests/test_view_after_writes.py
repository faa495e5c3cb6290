"""``dx = dx_pad[:, :, pad:-pad, pad:-pad]`` after the loop that fills ``dx_pad``: a view
of an array the function wrote, read after its last write. Nothing changes the array
afterwards, so the view shows what the read gave and is differentiated as an ordinary read
(transform/mutation.py, ``named_read`` with ``read_after_writes``). Before, it was refused
when it ran as a view that a later write could change. A view that a later write (or a
write in the same loop) can change is still refused, by the check before running."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_hvp, check_jvp

import pullback

DTYPES = [np.float64, np.float32]


def padded_accumulation(x, w):
    n = x.shape[0]
    acc = np.zeros(n + 2)
    for i in range(n):
        acc[i : i + 3] += w * x[i]
    core = acc[1:-1]
    return np.sum(core**2) + np.sum(np.sin(core) * x)


def block_after_nested_loops(x):
    n, m = x.shape
    out = np.zeros((n + 2, m + 2))
    for i in range(n):
        for j in range(m):
            out[i : i + 3, j : j + 3] += x[i, j] ** 2 * np.ones((3, 3))
    inner = out[1:-1, 1:-1]
    row = out[1]
    return np.sum(inner * x) + np.sum(row**2)


def read_then_written(x):
    out = np.zeros(x.shape[0] + 1)
    out[1:] = x
    head = out[:2]  # a view: the write below changes it
    out[0] = 5.0
    return np.sum(head * x[:2])


def read_inside_the_writing_loop(x):
    out = np.zeros(x.shape[0] + 1)
    total = 0.0
    for i in range(x.shape[0]):
        out[i + 1] = out[i] + x[i]
        part = out[: i + 2]
        total = total + np.sum(part)
    return total


X = np.array([0.5, -1.2, 0.8, 2.0])
W = np.array([0.3, 1.0, -0.5])
M = np.array([[0.5, -1.0, 0.3], [1.5, 0.2, -0.7]])


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradients(dtype):
    check_grad(padded_accumulation, X.astype(dtype), W.astype(dtype), wrt=(0, 1))
    check_grad(block_after_nested_loops, M.astype(dtype))


def test_forward_and_second_order():
    v = np.array([1.0, -0.5, 0.2, 0.7])
    check_jvp(lambda x: padded_accumulation(x, W), (X,), (v,))
    check_hvp(lambda x: padded_accumulation(x, W), X, v, rtol=1e-5, atol=1e-7)
    check_hvp(block_after_nested_loops, M, M[::-1] * 0.5, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("f", [read_then_written, read_inside_the_writing_loop])
def test_a_view_a_later_write_changes_is_still_refused(f):
    with pytest.raises(pullback.PullbackError, match=r"(?s)PB101.*may let another name"):
        pullback.grad(f)(X)
