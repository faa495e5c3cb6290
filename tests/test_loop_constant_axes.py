"""A reduction over a tuple of axes inside a loop (``np.max(x[..., win], axis=(2, 3))``
in a naive max-pooling loop): the normal form names the tuple ``(2, 3)``, and the reverse
sweep used to keep it on the loop's tape beside the arrays; at second order the value read
back from the tape counted as differentiated, and the reductions whose pullbacks pass the
axis on as a keyword (max, min, var, std, prod, ptp, median, norm) were refused (PB502).
A tuple display of values from outside the loop is loop-invariant (reverse_flow._PURE):
the reverse sweep reads it as it is, and its kind stays an integer tuple."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_hvp

import pullback

DTYPES = [np.float64, np.float32]


def pool_max(x):
    out = np.zeros((2, 2))
    for i in range(2):
        out[:, i] = np.max(x[:, :, 2 * i : 2 * i + 2], axis=(1, 2))
    return np.sum(np.sin(out) + out**2)


def pool_min_method(x):
    out = np.zeros((2, 2))
    for i in range(2):
        out[:, i] = x[:, :, 2 * i : 2 * i + 2].min(axis=(1, 2), keepdims=False)
    return np.sum(np.sin(out))


def pooled_statistics(x):
    total = 0.0
    for i in range(2):
        a = x[:, :, 2 * i : 2 * i + 2] ** 2
        ax = (1, 2)
        total = total + np.sum(np.var(a, axis=ax) + np.std(a, axis=ax) * np.prod(a, axis=ax))
        total = total + np.sum(np.ptp(a, axis=ax) + np.median(a, axis=ax))
        total = total + np.sum(np.linalg.norm(a, axis=ax))
    return total


def axis_from_the_loop(x):
    total = 0.0
    for k in range(2):
        total = total + np.sum(np.max(x, axis=(k + 1,)) ** 2)
    return total


X = np.random.default_rng(7).standard_normal((2, 3, 4))
V = np.random.default_rng(8).standard_normal((2, 3, 4))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", [pool_max, pool_min_method, pooled_statistics, axis_from_the_loop])
def test_gradient(f, dtype):
    check_grad(f, X.astype(dtype))


@pytest.mark.parametrize("f", [pool_max, pool_min_method, pooled_statistics])
def test_second_order(f):
    check_hvp(f, X, V, rtol=1e-5, atol=1e-7)


def test_the_constant_axis_is_not_kept_on_the_tape():
    g = pullback.grad(pool_max)
    g(X)
    assert "(1, 2)" not in next(
        line for line in g.source.splitlines() if "_stack1 +=" in line or "_stack1.append" in line
    )
