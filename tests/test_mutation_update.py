"""``a[idx] += v`` and ``a[idx] -= v`` on local arrays as one call (issue 11): the rules of
``array_add_set`` / ``array_sub_set`` (and their copying forms) checked with ``check_rrule``
in float64 and float32 (scalars, arrays, broadcast values, n-D, repeated indices, masks,
degenerate sizes), and functions that use them checked against finite differences, at
second order and in forward mode, with the cotangent buffers of the loop still owned."""

import numpy as np
import pytest

from pullback import grad, jvp
from pullback.arrays_inplace import (
    array_add_set,
    array_add_set_copy,
    array_sub_set,
    array_sub_set_copy,
)
from pullback.testing import check_grads, check_rrule

DTYPES = [np.float64, np.float32]
RNG = np.random.default_rng(11)

UPDATE_CASES = [
    ((5,), 2, ()),  # one entry
    ((5,), slice(1, 4), (3,)),  # a slice
    ((5,), slice(1, 4), ()),  # a scalar broadcast into a slice
    ((5,), np.array([0, 3, 0, 1]), ()),  # repeated positions: the last write wins
    ((5,), np.array([0, 3, 0, 1]), (4,)),
    ((5,), np.array([-1, 4, 2]), (3,)),  # -1 and 4 are one entry
    ((5,), np.array([True, False, True, True, False]), (3,)),  # a mask
    ((4, 3), (1, slice(None)), (3,)),  # a row
    ((4, 3), (slice(None), 2), (1,)),  # a column, broadcast
    ((4, 3), np.array([1, 1, 3]), (3,)),  # whole rows, repeated, a row broadcast
    ((4, 3), np.array([1, 1, 3]), ()),  # a scalar into repeated rows
    ((4, 3), (slice(1, 3), slice(None)), ()),  # a scalar into a block
    ((4, 3), (np.array([0, 0, 2]), np.array([1, 1, 2])), (3,)),  # n-D repeated entries
    ((4,), np.array([], dtype=int), (0,)),  # nothing selected
    ((0, 3), slice(None), (3,)),  # an empty array
]


def arr(shape, dtype):
    return RNG.normal(size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, index, vshape", UPDATE_CASES)
@pytest.mark.parametrize("copier", [array_add_set_copy, array_sub_set_copy])
def test_update_rule(copier, shape, index, vshape, dtype):
    # The copying form leaves its arguments as they were (check_rrule needs that); the
    # in-place form has the same pullback function.
    a = arr(shape, dtype)
    value = arr(vshape, dtype) if vshape else dtype(0.7)
    check_rrule(copier, a, index, value, constants=(1,))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, index, vshape", UPDATE_CASES)
def test_updates_run_as_numpy(shape, index, vshape, dtype):
    value = arr(vshape, dtype) if vshape else dtype(0.7)
    for update, copier, sign in (
        (array_add_set, array_add_set_copy, 1),
        (array_sub_set, array_sub_set_copy, -1),
    ):
        a = arr(shape, dtype)
        expected = a.copy()
        if sign > 0:
            expected[index] += value
        else:
            expected[index] -= value
        b = a.copy()
        copied = copier(b, index, value)
        assert copied is not b and np.array_equal(b, a)
        np.testing.assert_array_equal(copied, expected)
        assert update(a, index, value) is a
        np.testing.assert_array_equal(a, expected)


IDX = np.array([[0, 3, 0, 1], [2, 2, 4, 0], [1, 4, 3, 3], [0, 0, 0, 2], [4, 1, 2, 3]])


def scatter(x):
    acc = np.zeros(5)
    for k in range(5):
        acc[IDX[k]] += x[k] * x[k]  # repeated positions in one step
    return np.sum(acc * acc)


def scatter_rows(x):
    acc = np.ones(5)
    for k in range(5):
        acc[IDX[k]] -= x[IDX[k]] * x[k]  # an array value, repeated positions
    return np.sum(np.sin(acc) * acc)


def recurrence_add(x):
    y = np.zeros(x.shape[0])
    y[0] = x[0]
    for t in range(1, x.shape[0]):
        y[t] = 0.5 * y[t - 1]
        y[t] += x[t] * y[t - 1]  # a set and an update of one array in one loop
    return np.sum(y * y)


def slice_update(x):
    a = x * 1.0
    a[1:] += a[:-1] * 0.5  # the value reads the array it updates (before the write)
    a[::2] -= x[:3]
    return np.sum(a * a)


def mask_update(x):
    a = np.ones(x.shape[0])
    a[x > 0.7] += x[x > 0.7] ** 2
    return np.sum(a * x)


def matrix_update(x):
    m = np.zeros((3, x.shape[0]))
    for i in range(3):
        m[i] += x * (i + 1.0)
        m[:, i] -= x[i]
    return np.sum(m * m)


def whole_use_update(x):
    # the whole array is used between writes: every update makes a new array
    a = np.zeros(x.shape[0])
    s = 0.0
    for i in range(x.shape[0]):
        a[i] += x[i] * x[i]
        s = s + np.sum(a * a)
    return s


FUNCTIONS = [
    scatter,
    scatter_rows,
    recurrence_add,
    slice_update,
    mask_update,
    matrix_update,
    whole_use_update,
]
X = np.array([0.6, 1.1, 0.8, 0.95, 0.3])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_matches_finite_differences(f, dtype):
    check_grads(f, X.astype(dtype))


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_second_order(f):
    check_grads(f, X, order=2)


@pytest.mark.parametrize("f", [scatter, recurrence_add, matrix_update], ids=lambda f: f.__name__)
def test_forward_mode(f):
    v = np.random.default_rng(2).normal(size=X.shape)
    _, dy = jvp(f, (X,), (v,))
    h = 1e-6
    fd = (f(X + h * v) - f(X - h * v)) / (2 * h)
    np.testing.assert_allclose(dy, fd, rtol=1e-6)
    np.testing.assert_allclose(dy, np.dot(grad(f)(X), v), rtol=1e-10)


def test_update_keeps_the_loop_owned():
    # The update's pullback hands the buffer through: the set beside it still writes in
    # place (else the loop would copy the cotangent at every step).
    source = grad(recurrence_add).source_for(X)
    assert "_array_add_set_pullback(" in source
    assert "_array_set_pullback_owned(" in source


def test_whole_use_copies():
    source = grad(whole_use_update).source_for(X)
    assert "_pb_array_add_set_copy(" in source


# -- reads consumed by + or - at once take no copy (transform/mutation.py) ---------------
def stencil_sum(x):
    g = x * 1.0
    for _ in range(2):
        for i in range(1, x.shape[0] - 1):
            g[i] = 0.5 * (g[i - 1] + g[i + 1]) - g[i] * x[i]  # a product keeps its copy
    return np.sum(g * g)


def row_sum_then_write(x):
    m = np.zeros((3, x.shape[0]))
    m[0] = x
    for i in range(1, 3):
        s = m[i - 1] + x  # a view read, summed at once
        m[i - 1] = 0.0  # the row read is overwritten afterwards
        m[i] = s * s - m[i - 1, ::-1]
    return np.sum(m * m) + np.sum(s)


def scaled_rows(x):
    m = np.zeros((4, x.shape[0]))
    m[0] = x
    for i in range(1, 4):
        m[i] = 0.5 * m[i - 1] - m[i - 1] / 4.0 + x * m[i - 1] - -m[i - 1]
        m[i - 1] = m[i - 1] * 2  # a row read is scaled and written back
    return np.sum(m * m)


def read_beside_a_call(x):
    a = np.zeros(x.shape[0])
    for i in range(1, x.shape[0]):
        a[i] = a[i - 1] + np.sin(x[i])  # a call in the statement: the read is copied
    return np.sum(a * a)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", [stencil_sum, row_sum_then_write, scaled_rows, read_beside_a_call])
def test_sum_operand_reads(f, dtype):
    check_grads(f, X.astype(dtype))


@pytest.mark.parametrize("f", [stencil_sum, row_sum_then_write, scaled_rows])
def test_sum_operand_reads_second_order(f):
    check_grads(f, X, order=2)


def test_only_sum_operands_skip_the_copy():
    source = grad(stencil_sum).source_for(X)
    assert source.count("_pb_array_fresh(") == 1  # g[i] * x[i] only
    assert "_pb_array_fresh(" in grad(read_beside_a_call).source_for(X)
    assert grad(scaled_rows).source_for(X).count("_pb_array_fresh(") == 1  # x * m[i - 1]
