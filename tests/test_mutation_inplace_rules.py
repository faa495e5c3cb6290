"""The rules of the helpers that in-place calls on local arrays become
(pullback.arrays_inplace_calls): each checked against finite differences with
``check_rrule`` in float64 and float32, scalars, arrays, broadcast values, n-D and
degenerate sizes, forward mode included."""

import numpy as np
import pytest

from pullback import default_registry
from pullback.arrays_inplace_calls import (
    array_add_at,
    array_add_at_copy,
    array_fill,
    array_fill_copy,
    array_iadd,
    array_sort,
    cycled,
    diagonal_index,
    put_index,
)
from pullback.testing import check_rrule

DTYPES = [np.float64, np.float32]
RNG = np.random.default_rng(7)


def iadd_copy(a, value):
    return array_iadd(np.array(a, copy=True), value)


def _iadd_copy_registry():
    reg = default_registry().copy()
    inner = reg.lookup(array_iadd)
    reg.register(iadd_copy, lambda a, v: inner.rrule(np.array(a, copy=True), v))
    reg.set_pullback_function(iadd_copy, inner.pullback_fn)
    return reg


def arr(shape, dtype):
    return RNG.normal(size=shape).astype(dtype)


ADD_AT_CASES = [
    ((5,), [0, 0, 3, 1, 0], (5,)),  # repeated indices, one value each
    ((5,), [0, 0, 3], ()),  # a scalar broadcast to every selected entry
    ((4, 3), ([0, 0, 2], [1, 1, 2]), (3,)),  # n-D, a repeated entry
    ((4, 3), [1, 1], (3,)),  # whole rows, repeated; a row broadcast
    ((4, 3), 2, ()),  # a plain integer index, a scalar
    ((4, 3), [1, 1], (2, 1)),  # a column broadcast along each repeated row
    ((4,), np.array([], dtype=int), (0,)),  # nothing selected
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, index, vshape", ADD_AT_CASES)
def test_add_at_rule(shape, index, vshape, dtype):
    # The in-place array_add_at has the same pullback function (and check_rrule needs a
    # rule that leaves its arguments as they were).
    a = arr(shape, dtype)
    value = arr(vshape, dtype) if vshape else dtype(0.7)
    check_rrule(array_add_at_copy, a, index, value, constants=(1,))
    reg = default_registry()
    assert reg.lookup(array_add_at).pullback_fn is reg.lookup(array_add_at_copy).pullback_fn


def test_add_at_is_unbuffered_and_in_place():
    a = np.zeros(3)
    assert array_add_at(a, [0, 0, 2], np.array([1.0, 2.0, 3.0])) is a
    np.testing.assert_array_equal(a, [3.0, 0.0, 3.0])
    b = np.zeros(3)
    c = array_add_at_copy(b, [1, 1], 1.0)
    assert c is not b and not b.any() and c[1] == 2.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape, vshape", [((4, 3), (3,)), ((4, 3), ()), ((2, 3), (2, 3)), ((0, 3), (3,)), ((), ())]
)
def test_fill_rule(shape, vshape, dtype):
    # array_fill (in place) has the same pullback function as array_fill_copy.
    a = arr(shape, dtype)
    value = arr(vshape, dtype) if vshape else dtype(0.7)
    check_rrule(array_fill_copy, a, value)
    reg = default_registry()
    assert reg.lookup(array_fill).pullback_fn is reg.lookup(array_fill_copy).pullback_fn
    b = np.zeros(shape, dtype)
    assert array_fill(b, value) is b and np.all(b == value)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape, vshape", [((4, 3), (3,)), ((4, 3), ()), ((2, 3), (2, 3)), ((), ())]
)
def test_iadd_rule(shape, vshape, dtype):
    a = arr(shape, dtype)
    value = arr(vshape, dtype) if vshape else dtype(0.7)
    # check_rrule needs a rule that leaves its arguments as they were: array_iadd's rule
    # and pullback function on a copy (its pullback needs no value of a).
    check_rrule(iadd_copy, a, value, registry=_iadd_copy_registry())
    b = np.zeros(shape, dtype)
    assert array_iadd(b, value) is b and np.all(b == value)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("vshape, count", [((3,), 7), ((3,), 2), ((), 4), ((2, 2), 4), ((4,), 0)])
def test_cycled_rule(vshape, count, dtype):
    value = arr(vshape, dtype) if vshape else dtype(1.3)
    index = (np.arange(count),)
    check_rrule(cycled, value, index, constants=(1,))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, axis", [((5,), -1), ((3, 4), 0), ((3, 4), 1), ((2, 3, 2), -1)])
def test_sort_rule(shape, axis, dtype):
    check_rrule(array_sort, arr(shape, dtype), axis, constants=(1,))


def test_positions_are_numpys():
    for shape, wrap in [
        ((3, 3), False),
        ((5, 2), True),
        ((5, 2), False),
        ((2, 5), False),
        ((3,) * 3, False),
    ]:
        expected = np.zeros(shape)
        np.fill_diagonal(expected, np.arange(1.0, 30.0), wrap=wrap)
        got = np.zeros(shape)
        i = diagonal_index(got, wrap)
        got[i] = np.resize(np.arange(1.0, 30.0), len(i[0]))
        np.testing.assert_array_equal(got, expected)
    for ind, mode in [([0, -1, 5], "raise"), ([7, -9], "wrap"), ([7, -3], "clip")]:
        expected = np.zeros((2, 3))
        np.put(expected, ind, [1.0, 2.0, 3.0][: len(ind)], mode=mode)
        got = np.zeros((2, 3))
        got[put_index(got, ind, mode)] = [1.0, 2.0, 3.0][: len(ind)]
        np.testing.assert_array_equal(got, expected)
