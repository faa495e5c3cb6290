"""In-place array methods and functions and ``out=`` on arrays the function created
itself (issue 11): ``a.fill``, ``a.sort``, ``a.put``, ``np.copyto``, ``np.put``,
``np.fill_diagonal``, ``np.add.at`` / ``np.subtract.at`` and ufuncs and functions with
``out=``. Values as NumPy computes them (return values included), reverse mode against
finite differences in float64 and float32, scalars, broadcast values, n-D, loops,
branches, read-after-write, forward mode and second order. Refusals:
tests/test_mutation_inplace_refusals.py."""

import numpy as np
import pytest

import pullback
from pullback import grad, jvp
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]
X = np.array([0.7, -1.2, 0.4, 0.9, 1.3, -0.6])


# -- the functions under test ---------------------------------------------------------------
def fill_scalar(x):
    a = np.empty(x.shape[0])
    a.fill(x[0] * x[1])
    return np.sum(a * x)


def fill_then_store(x):
    a = np.zeros((2, 3))
    a.fill(x[2])
    a[1] = x[:3] ** 2  # a row over the filled value
    return np.sum(a * a) + a[0, 1] * x[4]


def copyto_broadcast(x):
    a = np.zeros((2, 3))
    np.copyto(a, x[:3] * x[3])  # a row broadcast into every row
    a[0, 0] = x[5]
    return np.sum(np.sin(a))


def fill_diagonal_matrix(x):
    m = np.eye(3) * 0.5
    np.fill_diagonal(m, x[:3])
    return np.sum((m @ x[3:]) ** 2)


def fill_diagonal_scalar_wrap(x):
    m = np.zeros((5, 2))
    np.fill_diagonal(m, x[0], wrap=True)
    return np.sum(m * x[:2])


def fill_diagonal_cycled(x):
    m = np.zeros((4, 4))
    np.fill_diagonal(m, x[:3])  # values repeat: m[3, 3] = x[0]
    return np.sum(m * m) + m[3, 3] * x[5]


def fill_diagonal_3d(x):
    t = np.ones((2, 2, 2))
    np.fill_diagonal(t, x[:2] * x[2])
    return np.sum(t**3)


def put_repeated(x):
    a = np.zeros(5)
    np.put(a, [0, 3, 0], x[:3])  # the last write to position 0 wins: x[2]
    return np.sum(a * a) + a[0] * x[4]


def put_method_cycled_2d(x):
    a = np.ones((2, 3))
    a.put([5, -1, 1, 2], x[:2] * 2.0)  # flat positions; -1 is 5 again; values cycle
    return np.sum(np.exp(a))


def put_wrap(x):
    a = np.zeros(4)
    np.put(a, [5, 6], x[:2], mode="wrap")
    return np.sum(a**3)


def add_at_repeated(x):
    a = np.zeros(4)
    np.add.at(a, [0, 0, 2, 0], x[:4])  # unbuffered: a[0] = x[0] + x[1] + x[3]
    return np.sum(a * a)


def add_at_scalar_2d(x):
    a = np.ones((3, 2)) * x[5]
    np.add.at(a, (np.array([0, 0, 2]), np.array([1, 1, 0])), x[0])
    np.subtract.at(a, [1, 1], x[1:3])  # a row value broadcast along repeated rows
    return np.sum(a**2)


def add_at_after_read(x):
    a = x[:4] * 1.0
    s = np.sum(a * a)  # a whole read before the write: the write copies
    np.add.at(a, [1, 1], x[4:])
    return s + np.sum(a * x[:4])


def ufunc_out(x):
    a = np.zeros(3)
    r = np.multiply(x[:3], x[3:], out=a)
    return np.sum(r * x[:3]) + a[1]


def ufunc_out_tuple_and_positional(x):
    a = np.empty(3)
    np.add(x[:3], x[3], out=(a,))
    b = np.empty(3)
    np.sin(a, b)  # the positional output of a ufunc
    return np.sum(b * x[3:])


def ufunc_out_self(x):
    a = x[:3] * 2.0
    np.multiply(a, a, out=a)  # reads a and writes it
    np.exp(a, out=a)
    return np.sum(a)


def cumsum_out(x):
    a = np.zeros((2, 3))
    np.cumsum(x.reshape(2, 3), axis=1, out=a)
    return np.sum(a * a)


def sum_out_broadcast(x):
    a = np.zeros(2)
    np.sum(x.reshape(2, 3) ** 2, axis=1, out=a)
    return a[0] * a[1]


def sort_method(x):
    a = x * np.array([1.0, -2.0, 0.5, 3.0, -1.0, 2.0])
    a.sort()
    return a[0] * 3.0 + a[-1] ** 2 + np.sum(a * np.arange(6.0))


def sort_axis_2d(x):
    m = x.reshape(2, 3) * 1.0
    m.sort(axis=0)
    m.sort(1)
    return np.sum(m * np.arange(6.0).reshape(2, 3))


def in_a_loop(x):
    acc = np.zeros(3)
    out = np.empty(3)
    for k in range(4):
        np.add.at(acc, [k % 3, 0], x[k : k + 2])
        np.multiply(acc, x[k], out=out)
        if k % 2 == 0:
            acc.fill(np.sum(out) * 0.1)
    return np.sum(acc * out)


def branches(x):
    a = np.zeros(3)
    if x[0] > 0:
        np.copyto(a, x[:3])
    else:
        a.fill(x[1])
    while a[0] < 5.0:
        np.multiply(a, 2.0, out=a)
    return np.sum(a * x[3:])


def read_after_write(x):
    a = np.zeros(4)
    a.fill(x[0])
    b = a[1] * x[1]  # read back what fill wrote
    np.add.at(a, [1, 1], b)
    c = a[1:3] * x[2]  # a slice read of a written array
    np.copyto(a, c[0] + a)
    return np.sum(a * a) + np.sum(c)


def augmented_in_place(x):
    acc = np.zeros((2, 3))
    for k in range(3):
        acc[0, k] = x[k] * x[k + 1]
        acc += x[3:]  # in place: acc is written by index, nothing holds its old state
        acc -= x[k]
    np.add.at(acc, (0, [1, 1]), x[0])
    return np.sum(acc * acc)


def augmented_after_whole_read(x):
    a = np.zeros(3)
    a[1] = x[0]
    s = np.sum(a * x[:3])  # a pullback holds a: the += below rebinds instead
    a += x[3:]
    return s * np.sum(a**2)


def helper_writes(a, v):
    a = a.copy()  # the fix for an argument: the helper's own array
    a.fill(v)
    return a


def through_user_function(x):
    b = helper_writes(np.zeros(3), x[0] * x[1])
    return np.sum(b * x[3:])


REVERSE = [
    fill_scalar,
    fill_then_store,
    copyto_broadcast,
    fill_diagonal_matrix,
    fill_diagonal_scalar_wrap,
    fill_diagonal_cycled,
    fill_diagonal_3d,
    put_repeated,
    put_method_cycled_2d,
    put_wrap,
    add_at_repeated,
    add_at_scalar_2d,
    add_at_after_read,
    ufunc_out,
    ufunc_out_tuple_and_positional,
    ufunc_out_self,
    cumsum_out,
    sum_out_broadcast,
    sort_method,
    sort_axis_2d,
    in_a_loop,
    branches,
    read_after_write,
    through_user_function,
    augmented_in_place,
    augmented_after_whole_read,
]


# -- reverse mode -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", REVERSE, ids=lambda f: f.__name__)
def test_reverse_mode_matches_finite_differences(f, dtype):
    check_grads(f, X.astype(dtype))


@pytest.mark.parametrize("f", REVERSE, ids=lambda f: f.__name__)
def test_value_is_what_numpy_computes_and_argument_unchanged(f):
    x = X.copy()
    value, _ = pullback.value_and_grad(f)(x)
    np.testing.assert_array_equal(x, X)
    assert value == pytest.approx(f(X.copy()), rel=1e-12)


def test_add_at_gradient_is_unbuffered():
    # a[0] = x[0] + x[1] + x[3]; a[2] = x[2]: d sum(a^2) = 2 a[index]
    a0 = X[0] + X[1] + X[3]
    np.testing.assert_allclose(
        grad(add_at_repeated)(X), [2 * a0, 2 * a0, 2 * X[2], 2 * a0, 0.0, 0.0]
    )


def test_put_last_write_wins():
    g = grad(put_repeated)(X)
    # a = [x2, 0, 0, x1, 0]: x[0] was overwritten, so it gets nothing
    np.testing.assert_allclose(g, [0.0, 2 * X[1], 2 * X[2] + X[4], 0.0, X[2], 0.0])


# -- what the calls return ----------------------------------------------------------------------
def test_return_values_are_numpys():
    def f(x):
        a = np.zeros(3)
        n2 = np.add.at(a, [0], x[0])
        n3 = np.copyto(a, a * x[1])
        r = np.multiply(x[:3], a, out=a)  # r is a: no write may follow (refusals)
        same = r is a
        return (
            np.sum(r) * x[2] + (1.0 if same else 0.0) + (1.0 if n2 is None and n3 is None else 0.0)
        )

    check_grads(f, X)
    assert pullback.value_and_grad(f)(X)[0] == pytest.approx(f(X))

    def g(x):
        a = np.zeros(3)
        r = a.fill(x[0])
        s = np.add.at(a, [1], x[1])
        m = np.zeros((2, 2))
        t = np.fill_diagonal(m, x[3])
        u = np.put(a, [2], x[2])
        return (
            np.sum(a * x[:3])
            + np.sum(m)
            + (1.0 if r is None and s is None else 0.0)
            + (1.0 if t is None and u is None else 0.0)
        )

    assert pullback.value_and_grad(g)(X)[0] == pytest.approx(g(X))
    check_grads(g, X)


# -- forward mode -------------------------------------------------------------------------------


@pytest.mark.parametrize("f", REVERSE, ids=lambda f: f.__name__)
def test_forward_mode_matches_finite_differences(f):
    v = np.random.default_rng(5).standard_normal(X.shape)
    y, dy = jvp(f, (X.copy(),), (v,))
    h = 1e-6
    fd = (f(X + h * v) - f(X - h * v)) / (2 * h)
    assert y == pytest.approx(f(X.copy()))
    assert dy == pytest.approx(fd, rel=1e-6, abs=1e-8)


# -- second order -------------------------------------------------------------------------------


@pytest.mark.parametrize("f", REVERSE, ids=lambda f: f.__name__)
def test_second_order_reverse_over_reverse(f):
    assert check_grads(f, X, order=2) == "reverse over reverse"


def test_hessian_and_grad_of_grad():
    def f(x):
        a = np.zeros(2)
        np.add.at(a, [0, 0, 1], x**2)
        m = np.zeros((2, 2))
        np.fill_diagonal(m, a)
        return np.sum(m @ m)

    x = np.array([0.5, 1.5, 2.0])
    # f = (x0^2 + x1^2)^2 + x2^4
    s = x[0] ** 2 + x[1] ** 2
    expected = np.array(
        [
            [4 * s + 8 * x[0] ** 2, 8 * x[0] * x[1], 0.0],
            [8 * x[0] * x[1], 4 * s + 8 * x[1] ** 2, 0.0],
            [0.0, 0.0, 12 * x[2] ** 2],
        ]
    )
    np.testing.assert_allclose(pullback.hessian(f)(x), expected)

    def g(x):
        return grad(f)(x)[1]

    np.testing.assert_allclose(grad(g)(x), expected[1])


# -- cost: in place unless a pullback needs an earlier state -----------------------------------
def _adjoint_source(f, *args):
    g = grad(f)
    g(*args)
    return g.adjoint(*args).source


def test_writes_in_place_when_nothing_reads_the_whole_array_between():
    source = _adjoint_source(fill_diagonal_matrix, X)
    assert "_pb_array_set(" in source and "_pb_array_set_copy" not in source
    source = _adjoint_source(add_at_repeated, X)
    assert "_pb_array_add_at(" in source and "_pb_array_add_at_copy" not in source


def test_augmented_assignment_of_a_written_array_is_in_place():
    source = _adjoint_source(augmented_in_place, X)
    assert source.count("_pb_array_iadd(") == 2
    source = _adjoint_source(augmented_after_whole_read, X)
    assert "_pb_array_iadd(" not in source


def test_whole_read_before_a_write_copies():
    source = _adjoint_source(add_at_after_read, X)
    assert "_pb_array_add_at_copy(" in source
    source = _adjoint_source(ufunc_out_self, X)
    assert "_pb_array_fill_copy(" in source


# -- reads after the last write stay views (no array_fresh copy) ---------------------------------
def recurrence_then_slice(x):
    y = np.zeros(6)
    for t in range(1, 6):
        y[t] = 0.5 * y[t - 1] + x[t]
    return np.sum(y[1:] ** 2) + np.sum(y[::2] * x[::2])


def slice_read_between_writes(x):
    y = np.zeros(6)
    y[:3] = x[:3]
    head = np.sum(y[:4] ** 2)  # read before a later write: copied
    y[3:] = x[3:] * 2.0
    return head + np.sum(y**2)


def _jvp_source(f):
    from pullback.adjoints import kinds_key
    from pullback.forward_mode import jvp_function

    return jvp_function(f, (0,), pullback.default_registry(), kinds_key((X,), {})).source


def test_reads_after_the_last_write_are_not_copied():
    # y[1:] and y[::2] after the loop are not copied; nor is y[t - 1] inside it, whose
    # value is only scaled and added at once (mutation.sum_operand_reads), in forward and
    # reverse mode alike
    assert _jvp_source(recurrence_then_slice).count("array_fresh") == 0
    assert _adjoint_source(recurrence_then_slice, X).count("_pb_array_fresh(") == 0
    assert _jvp_source(slice_read_between_writes).count("array_fresh") == 1
    for f in (recurrence_then_slice, slice_read_between_writes):
        check_grads(f, X)
        check_grads(f, X.astype(np.float32))
        v = np.random.default_rng(2).standard_normal(X.shape)
        _, dy = jvp(f, (X.copy(),), (v,))
        h = 1e-6
        assert dy == pytest.approx((f(X + h * v) - f(X - h * v)) / (2 * h), rel=1e-6)
        assert check_grads(f, X, order=2) == "reverse over reverse"
