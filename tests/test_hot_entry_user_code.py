"""grad's hot entry for a function that calls user code (a helper, itself, a method, a
gradient): from its second call, the generated entry runs it inside the scope the general
path gives such a function (``transformed._in_evaluation_scope``: the raised recursion
limit and its error, one evaluation's kept values refused where read back, a refused
cotangent checked) instead of the general path's argument checks and lookups. Every call
gives what the first gives, and what central differences give."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from fd import check_grad

import pullback
from pullback import grad, value_and_grad
from pullback.errors import UnsupportedCallError
from pullback.running import _no_entry


def bump(v, c):
    return np.exp(-c * v * v) * np.cos(v)


def calls_a_helper(x, c):
    return np.sum(bump(x, c) * x)


def _recursive(x, n):
    if n == 0:
        return x
    return _recursive(x, n - 1) * 1.0001


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("x", [0.7, np.array([0.3, -1.2, 2.0])], ids=["scalar", "array"])
def test_every_call_of_a_function_calling_a_helper_agrees(dtype, x):
    x = np.asarray(x, dtype=dtype)[()] if np.ndim(x) else dtype(x)
    c = dtype(0.4)
    g = value_and_grad(calls_a_helper, wrt=(0, 1))
    first = g(x, c)
    for _ in range(3):
        value, grads = g(x, c)
        assert value == first[0]
        for a, b in zip(grads, first[1], strict=True):
            np.testing.assert_array_equal(a, b)
            assert np.asarray(a).dtype == dtype
    if dtype == np.float64:  # (float32 values take the general path, as without helpers)
        assert g._hot is not _no_entry  # (the calls after the first ran the hot entry)
    check_grad(calls_a_helper, x, c, wrt=0)
    check_grad(calls_a_helper, x, c, wrt=1)


def test_recursion_on_the_hot_entry_reaches_the_primals_depth_and_says_when_not():
    limit = sys.getrecursionlimit()
    g = grad(_recursive)
    for _ in range(3):
        assert g(1.0, 900) == pytest.approx(1.0001**900)
    assert g._hot is not _no_entry
    with pytest.raises(pullback.AdjointRuntimeError, match="sys.setrecursionlimit"):
        g(1.0, 20_000)
    assert sys.getrecursionlimit() == limit
    assert g(1.0, 900) == pytest.approx(1.0001**900)


KEPT: list = [np.array([1.0, 2.0])]  # a constant an earlier evaluation kept


def keep(x):
    KEPT.append(x * 2.0)


def keeps_when_positive(x):
    if x[0] > 0:
        keep(x)  # the helper keeps a differentiated value ...
    return np.sum(KEPT[-1] * x)  # ... read back here: refused; else a constant


def test_a_value_kept_by_a_helper_is_refused_on_the_hot_entry_too():
    g = grad(keeps_when_positive)
    x = np.array([-0.5, 1.5])
    for _ in range(3):
        np.testing.assert_array_equal(g(x), KEPT[-1])
    assert g._hot is not _no_entry
    with pytest.raises(UnsupportedCallError, match="reads back a value that carries a gradient"):
        g(np.array([0.5, 1.5]))
    KEPT[:] = [np.array([1.0, 2.0])]  # (what the refused evaluation appended)
    np.testing.assert_array_equal(g(x), KEPT[-1])


def inner(x):
    return np.sum(np.sin(x) * x)


INNER_GRAD = grad(inner)


def calls_a_gradient(x):
    return np.sum(INNER_GRAD(x) ** 2)


def test_a_gradient_called_inside_on_the_hot_entry():
    x = np.array([0.3, -1.1])
    g = grad(calls_a_gradient)
    first = g(x)
    for _ in range(3):
        np.testing.assert_array_equal(g(x), first)
    assert g._hot is not _no_entry
    check_grad(calls_a_gradient, x)
