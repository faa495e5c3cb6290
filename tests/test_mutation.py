"""Writes into arrays the function created itself (issue 11): element, slice, n-D,
``...``, boolean mask and integer-array stores, augmented stores with NumPy's buffered
semantics, read-after-write, loops and branches; reverse mode against finite differences
in float64 and float32, forward mode (``jvp``) and second order (``hvp`` reverse over
reverse). Refusals are in tests/test_mutation_refusals.py."""

import re

import numpy as np
import pytest

import pullback
from pullback import grad, jvp
from pullback.arrays_inplace import write_winners
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


# -- the functions under test ---------------------------------------------------------------
def element_fill(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = np.sin(x[i]) * x[i]
    return np.sum(out * out)


def slice_store(x):
    buf = np.ones(x.shape[0] + 2)
    buf[1:-1] = x * x
    buf[::2] = 0.5 * buf[::2]
    return np.sum(buf * np.arange(1.0, x.shape[0] + 3))


def broadcast_store(x):
    m = np.zeros((3, 4))
    m[1] = x[0]  # a scalar broadcast into a row
    m[:, 2] = x[1:4]
    m[0, :] = x[:4] * 2.0
    return np.sum(m ** 3)


def grid_store(x):
    g = np.zeros((4, 4))
    g[1:-1, 1:-1] = x
    g[:, 0] = 1.0
    g[0, :] = g[1, 1]
    return np.sum(g ** 3)


def ellipsis_store(x):
    a = np.empty_like(x)
    a[...] = x * 3.0
    a[...] = a * a
    return np.sum(a)


def mask_store(x):
    y = x.copy()
    y[x < 0.7] = -y[x < 0.7] * 0.5
    y[y > 0.9] *= 0.1
    return np.sum(y ** 2)


def fancy_store(x):
    acc = np.zeros(3)
    idx = np.array([0, 2, 0, 1])
    acc[idx] += x[:4] * x[:4]  # buffered: acc[0] gets x[2]**2 only
    acc[1:] *= x[:2]
    acc[np.array([2, 2])] = x[2:4]  # the last write lands
    return np.sum(acc * np.arange(1.0, 4.0))


def augmented_ops(x):
    a = np.ones_like(x)
    a[0] += x[0]
    a[1] -= x[1] * x[0]
    a[2] *= x[2]
    a[3] /= x[3] + 1.0
    a += x  # a rebinding on a local array
    a *= x[0]
    return np.sum(a)


def recurrence(x, c):
    y = np.zeros_like(x)
    y[0] = x[0]
    for t in range(1, x.shape[0]):
        y[t] = c * y[t - 1] + x[t]
    return np.sum(y ** 2)


def overwrite_after_read(x):
    a = x * 2.0
    s = np.sum(a * a)  # reads a whole, then a is overwritten
    a[1] = 0.0  # the old a[1] must not leak into the gradient
    a[2] = x[0] ** 3
    return s + np.sum(a * x)


def branches_and_nested(x):
    m = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            if (i + j) % 2 == 0:
                m[i, j] = x[i] * x[j]
            else:
                m[i, j] = x[i] - x[j]
        m[i, i] += 1.0
    return np.sum(m @ m)


def while_loop(x):
    out = np.zeros(4)
    k = 0
    while k < 4:
        out[k] = np.exp(-x[k]) if k > 0 else x[0]
        k = k + 1
    return np.sum(out * out)


def copied_argument(x):
    x = x.copy()
    x[0] = 0.0
    x[2:] *= 2.0
    return np.sum(x * x)


def np_copied_argument(x):
    x = np.copy(x)
    x[1] = x[0] * x[2]
    return np.sum(x * x)


def returns_written(x):
    out = np.zeros(x.shape[0])
    out[1:] = x[:-1] * x[1:]
    return out


def int_dtype_index_array(x):
    out = np.zeros(5)
    out[np.arange(5)[::-1]] = x
    return np.sum(out * np.arange(5.0))


SCALAR_CASES = [
    element_fill,
    slice_store,
    broadcast_store,
    ellipsis_store,
    mask_store,
    fancy_store,
    augmented_ops,
    overwrite_after_read,
    branches_and_nested,
    while_loop,
    copied_argument,
    np_copied_argument,
    int_dtype_index_array,
]
X = np.array([0.6, 1.1, 0.8, 0.95, 0.3])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", SCALAR_CASES, ids=lambda f: f.__name__)
def test_reverse_mode_matches_finite_differences(f, dtype):
    check_grads(f, X.astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_two_dimensional_stores(dtype):
    check_grads(grid_store, np.array([[0.4, 0.7], [0.3, 0.9]], dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_recurrence_in_both_arguments(dtype):
    check_grads(recurrence, X.astype(dtype), dtype(0.7), wrt=(0, 1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_returned_written_array(dtype):
    check_grads(returns_written, X.astype(dtype))


def test_gradient_values_are_exact():
    # acc[[0, 2, 0, 1]] += x*x  ->  acc = [x2^2, x3^2, x1^2]  (buffered: last repeat wins)
    def f(x):
        acc = np.zeros(3)
        acc[np.array([0, 2, 0, 1])] += x * x
        return np.sum(acc * np.array([1.0, 10.0, 100.0]))

    x = np.array([1.0, 2.0, 3.0, 4.0])
    assert f(x) == 3.0**2 + 10 * 4.0**2 + 100 * 2.0**2
    np.testing.assert_allclose(grad(f)(x), [0.0, 400.0, 6.0, 80.0])

    def g(x):
        a = x * 1.0
        a[0] = 7.0  # overwritten: no gradient to x[0]
        return np.sum(a * a)

    np.testing.assert_allclose(grad(g)(X), np.r_[0.0, 2 * X[1:]])


def test_primal_value_and_caller_array_unchanged():
    x = X.copy()
    value, g = pullback.value_and_grad(copied_argument)(x)
    np.testing.assert_array_equal(x, X)
    assert value == pytest.approx(copied_argument(X))
    np.testing.assert_allclose(g, np.r_[0.0, 2 * X[1], 8 * X[2:]])


def test_returned_array_is_what_numpy_computes():
    y, back = pullback.vjp(returns_written, X)
    np.testing.assert_allclose(y, returns_written(X))
    (dx,) = back(np.ones_like(y))
    np.testing.assert_allclose(dx, np.r_[X[1], X[:-2] + X[2:], X[-2]])
    np.testing.assert_allclose(y, returns_written(X))  # the reverse sweep left it alone


def test_constant_mask_built_in_place_just_runs():
    def f(x):
        m = np.zeros(x.shape[0])
        m[1:3] = 1.0
        return np.sum(x * m)

    np.testing.assert_allclose(grad(f)(X), [0.0, 1.0, 1.0, 0.0, 0.0])


# -- forward mode -------------------------------------------------------------------------------
FORWARD_CASES = SCALAR_CASES + [returns_written]


@pytest.mark.parametrize("f", FORWARD_CASES, ids=lambda f: f.__name__)
def test_forward_mode_matches_finite_differences(f):
    rng = np.random.default_rng(3)
    v = rng.standard_normal(X.shape)
    _, dy = jvp(f, (X,), (v,))
    h = 1e-6
    fd = (np.asarray(f(X + h * v)) - np.asarray(f(X - h * v))) / (2 * h)
    np.testing.assert_allclose(dy, fd, rtol=1e-6, atol=1e-8)


def test_forward_mode_recurrence():
    _, dy = jvp(recurrence, (X, 0.7), (np.zeros_like(X), 1.0))
    h = 1e-6
    fd = (recurrence(X, 0.7 + h) - recurrence(X, 0.7 - h)) / (2 * h)
    assert dy == pytest.approx(fd, rel=1e-6)


# -- second order -------------------------------------------------------------------------------
SECOND_ORDER = [
    element_fill,
    slice_store,
    broadcast_store,
    ellipsis_store,
    fancy_store,
    augmented_ops,
    overwrite_after_read,
    branches_and_nested,
    int_dtype_index_array,
]


@pytest.mark.parametrize("f", SECOND_ORDER, ids=lambda f: f.__name__)
def test_second_order_reverse_over_reverse(f):
    assert check_grads(f, X, order=2) == "reverse over reverse"


def test_second_order_recurrence_and_grid():
    assert check_grads(recurrence, X, 0.7, wrt=(0, 1), order=2) == "reverse over reverse"
    grid = np.array([[0.4, 0.7], [0.3, 0.9]])
    assert check_grads(grid_store, grid, order=2) == "reverse over reverse"


def test_hessian_and_grad_of_grad():
    def f(x):
        out = np.zeros(3)
        out[0] = x[0] * x[1]
        out[1:] = x[1:] ** 3
        return np.sum(out)

    x = np.array([0.5, 1.5, 2.0])
    expected = np.array([[0.0, 1.0, 0.0], [1.0, 9.0, 0.0], [0.0, 0.0, 12.0]])
    np.testing.assert_allclose(pullback.hessian(f)(x), expected)

    def g(x):
        return grad(f)(x)[1]

    np.testing.assert_allclose(grad(g)(x), expected[1])


# -- the helpers --------------------------------------------------------------------------------
def test_write_winners():
    assert write_winners((4,), 2) is None
    assert write_winners((4,), slice(1, 3)) is None
    np.testing.assert_array_equal(write_winners((4,), np.array([1, 1, 2])), [False, True, True])
    w = write_winners((2, 3), (np.array([0, 0]), np.array([1, 1])))
    np.testing.assert_array_equal(w, [False, True])


# -- cost: in place unless a pullback needs an earlier state -----------------------------------
def _adjoint_source(f, *args):
    g = grad(f)
    g(*args)
    return g.adjoint(*args).source


def _writes_in_place(source):
    # the helper's call, or the store written inline where the array is proved a NumPy
    # array (``out_2 = out_1; out_1[i] = _t8``)
    return "_pb_array_set(" in source or re.search(r"= (\w+); \1\[\w+\] = ", source)


def test_fill_loop_writes_in_place_and_saves_no_copies():
    source = _adjoint_source(element_fill, X)
    assert _writes_in_place(source) and "_pb_array_set_copy" not in source
    assert "_pb_array_fresh" not in source  # out is never read by index


def test_whole_array_read_between_writes_copies():
    source = _adjoint_source(overwrite_after_read, X)
    assert "_pb_array_set_copy(" in source
    source = _adjoint_source(recurrence, X, 0.7)
    assert _writes_in_place(source) and "_pb_array_fresh(" in source


def test_float32_forward_mode():
    x = X.astype(np.float32)
    v = np.ones_like(x)
    _, dy = jvp(element_fill, (x,), (v,))
    h = 1e-6
    fd = (element_fill(X + h) - element_fill(X - h)) / (2 * h)
    assert dy == pytest.approx(fd, rel=1e-4)
