"""Indexing and selection rules against finite differences."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rule_inputs import FLOATS, make, make_complex

from pullback.registry import default_registry
from pullback.tangents import NO_TANGENT, ZERO
from pullback.testing import check_rrule, distinct_arrays

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)

INDICES = [
    2,
    -1,
    slice(1, 3),
    (1, 2),
    (slice(None), 0),
    (Ellipsis, 1),
    (None, 1),
    np.array([0, 2, 2, 1]),
    np.array([[0, 1], [3, 3]]),
    (np.array([0, 0, 1]), np.array([1, 1, 3])),
    np.array([True, False, True, True]),
    (slice(None, None, -1), np.array([1, 0, 1])),
]


@D
@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_getitem_arrays(index, dtype):
    check_rrule(operator.getitem, make("real", (4, 5), dtype), index)


def test_getitem_containers():
    check_rrule(operator.getitem, [1.5, make("real", (3,)), 2.0], 1)
    check_rrule(operator.getitem, (1.5, 2.5, -1.0), slice(0, 2))
    check_rrule(operator.getitem, {"a": make("real", (2,)), "b": 3.0}, "a")
    check_rrule(operator.getitem, make("real", (3,))[1], ())
    _, back = default_registry().lookup(operator.getitem).rrule([1.0, 2.0, 3.0], 0)
    assert back(5.0) == ([5.0, ZERO, ZERO], NO_TANGENT)


def test_getitem_of_int_array_has_no_tangent():
    _, back = default_registry().lookup(operator.getitem).rrule(np.arange(4), 1)
    assert back(1.0) == (NO_TANGENT, NO_TANGENT)


@D
def test_take(dtype):
    x = make("real", (3, 4), dtype)
    check_rrule(np.take, x, np.array([0, 5, 5, 11]))
    check_rrule(np.take, x, 2, 1)
    check_rrule(np.take, x, [[0, 2], [2, 2]], axis=1)
    check_rrule(np.take, x, [-1, 0], axis=0)
    check_rrule(np.take, x, [4, -5, 1], axis=1, mode="wrap")
    check_rrule(np.take, x, [7, -2, 1], axis=1, mode="clip")


@D
def test_take_along_axis(dtype):
    x = make("distinct", (3, 4), dtype)
    idx = np.argsort(x, axis=1)
    check_rrule(np.take_along_axis, x, idx, 1)
    check_rrule(np.take_along_axis, x, np.array([[0], [2], [2]]), axis=1)
    check_rrule(np.take_along_axis, x, np.array([[0, 1, 1, 2]]), axis=0)
    check_rrule(np.take_along_axis, x[:1], np.array([[0, 3], [1, 1]]), axis=1)
    check_rrule(np.take_along_axis, x.ravel(), np.array([3, 3, -1]), axis=None)
    if np.lib.NumpyVersion(np.__version__) >= "2.3.0":  # axis defaults to -1 from 2.3
        check_rrule(np.take_along_axis, x, np.argsort(x, axis=-1))


@D
def test_compress_extract(dtype):
    x = make("real", (3, 4), dtype)
    check_rrule(np.compress, [True, False, True], x, 0)
    check_rrule(np.compress, [False, True], x, axis=1)
    check_rrule(np.compress, np.array([1, 0, 1, 1, 0, 1], bool), x)
    check_rrule(np.extract, x > 0.0, x)


@D
def test_diagonals(dtype):
    m = make("real", (3, 4), dtype)
    v = make("real", (3,), dtype)
    for k in (0, 1, -1, 2):
        check_rrule(np.diag, v, k)
        check_rrule(np.diag, m, k)
        check_rrule(np.diagflat, m[:2, :2], k)
        check_rrule(np.diagonal, m, k)
        check_rrule(np.triu, m, k)
        check_rrule(np.tril, m, k=k)
    t = make("real", (2, 3, 4), dtype)
    check_rrule(np.diagonal, t, 1, 1, 2)
    check_rrule(np.diagonal, t, offset=-1, axis1=2, axis2=0)
    check_rrule(np.linalg.diagonal, t, offset=1)
    check_rrule(np.triu, t)
    check_rrule(np.tril, t, -1)


@D
@pytest.mark.parametrize("axis", [-1, 0, None], ids=str)
def test_sort_partition(axis, dtype):
    x = make("distinct", (3, 5), dtype)
    check_rrule(np.sort, x, axis)
    check_rrule(np.sort, x, axis=axis, kind="stable")
    check_rrule(np.partition, x, 2, axis)
    check_rrule(np.partition, x, [0, 2], axis=axis)


def test_sort_and_partition_with_ties():
    # Not differentiable at ties: each cotangent still goes to exactly one element.
    x = np.array([2.0, 1.0, 2.0, 0.5, 1.0])
    _, back = default_registry().lookup(np.sort).rrule(x)
    (g,) = back(np.arange(5.0))
    np.testing.assert_array_equal(g, [3.0, 1.0, 4.0, 0.0, 2.0])
    _, back = default_registry().lookup(np.partition).rrule(x, 2)
    g, _ = back(np.arange(5.0))
    assert sorted(g) == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_complex_selection():
    z = make_complex((3, 4))
    check_rrule(operator.getitem, z, (slice(None), np.array([0, 0, 2])))
    check_rrule(np.take, z, [1, 1, 3])
    check_rrule(np.diagonal, z)
    check_rrule(np.sort, z)


@given(distinct_arrays(np.float64, (4, 3)), st.sampled_from([0, 1, -1, None]))
def test_sort_hypothesis(x, axis):
    check_rrule(np.sort, x, axis=axis)
    check_rrule(np.partition, x, 1, axis=axis)
