"""Masked and indexed in-place calls on arrays the function created itself (issue 11):
``np.copyto(..., where=, casting=)``, ``np.place``, ``np.putmask``, ``np.put_along_axis``.
Values as NumPy computes them, reverse mode against finite differences in float64 and
float32, scalars, broadcast values, n-D, repeated positions, loops, forward mode and second
order; the rules with check_rrule; refusals on arguments, views and globals."""

import numpy as np
import pytest
from inplace_cases import check_value_forward_and_second_order

import pullback
from pullback import default_registry
from pullback.arrays_inplace_calls import (
    along_axis_index,
    array_copyto,
    array_copyto_copy,
    mask_index,
    putmask_positions,
    take_flat,
)
from pullback.check import check
from pullback.errors import UnsupportedSyntaxError
from pullback.testing import check_grads, check_rrule

DTYPES = [np.float64, np.float32]
X = np.array([0.7, -1.2, 0.4, 0.9, 1.3, -0.6])
RNG = np.random.default_rng(17)


def copyto_where_broadcast(x):
    a = np.ones((2, 3))
    np.copyto(a, x[:3] * x[3], where=x[3:] > 0)  # a row and a mask broadcast over rows
    return np.sum(a**2)


def copyto_where_scalar_then_read(x):
    a = x * 1.5
    np.copyto(a, x[0], where=a < 0)  # the mask reads a before the write
    return np.sum(a**3) + a[1] * x[2]


def copyto_casting(x):
    a = np.zeros(6)
    np.copyto(a, x, casting="same_kind")
    a[0] = x[4]
    return np.sum(a**3)


def place_cycled(x):
    a = np.ones(6)
    np.place(a, x > 0, x[:2] * 2.0)  # 4 positive entries: the 2 values cycle
    return np.sum(a**3)


def putmask_2d(x):
    a = np.ones((2, 3))
    np.putmask(a, np.array([[1, 0, 1], [0, 1, 1]], bool), x[:2] ** 2)  # v[n % 2]
    return np.sum(np.sin(a) * x.reshape(2, 3))


def putmask_full_values(x):
    a = x * 1.0  # (grad(grad) of x.copy() is not supported yet: a rule-level limit)
    np.putmask(a, a > 0, np.cos(x))  # entry n takes cos(x[n])
    return np.sum(a * a)


def put_along_axis_repeated(x):
    a = np.zeros((2, 3))
    # row 0 writes column 0 twice: the last write wins
    np.put_along_axis(a, np.array([[0, 0], [2, 1]]), x[:2].reshape(1, 2) * 3.0, axis=1)
    return np.sum(a**3) + a[0, 0] * x[5]


def put_along_axis_argmax(x):
    m = np.stack([x[:3], x[3:]])
    j = np.argmax(m, axis=0)[None, :]
    np.put_along_axis(m, j, 0.5 * x[:3], axis=0)
    return np.sum(m**2)


def put_along_axis_flat(x):
    a = np.zeros(4)
    np.put_along_axis(a, np.array([3, 0, 3]), x[:3], axis=None)
    return np.sum(a**3)


def in_a_loop(x):
    a = np.zeros(6)
    for k in range(3):
        np.copyto(a, a + x * k, where=x > -1.0 + 0.5 * k)
        np.putmask(a, a > 1.0, x[k])
    return np.sum(a**2)


CASES = [
    copyto_where_broadcast,
    copyto_where_scalar_then_read,
    copyto_casting,
    place_cycled,
    putmask_2d,
    putmask_full_values,
    put_along_axis_repeated,
    put_along_axis_argmax,
    put_along_axis_flat,
    in_a_loop,
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_reverse_mode_matches_finite_differences(f, dtype):
    check_grads(f, X.astype(dtype))


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_value_forward_mode_and_second_order(f):
    assert check_value_forward_and_second_order(f, X) == "reverse over reverse"


def test_put_along_axis_last_write_wins():
    g = pullback.grad(put_along_axis_repeated)(X)
    # a[0, 0] = 3 x[1] (x[0]'s write was overwritten), a[1, 2] = 3 x[0], a[1, 1] = 3 x[1]
    a00, a12, a11 = 3 * X[1], 3 * X[0], 3 * X[1]
    expected = np.zeros(6)
    expected[1] = 3 * (3 * a00**2 + X[5]) + 3 * 3 * a11**2
    expected[0] = 3 * 3 * a12**2
    expected[5] = a00
    np.testing.assert_allclose(g, expected)


# -- the rules ----------------------------------------------------------------------------------
COPYTO_CASES = [
    ((4, 3), (3,), np.array([True, False, True])),  # src and mask broadcast
    ((4, 3), (), "full"),  # a scalar, a full mask
    ((4, 3), (4, 1), True),  # the whole array
    ((0, 3), (3,), np.array([True, False, True])),  # nothing to write
    ((), (), True),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, sshape, where", COPYTO_CASES)
def test_copyto_rule(shape, sshape, where, dtype):
    a = RNG.normal(size=shape).astype(dtype)
    src = RNG.normal(size=sshape).astype(dtype) if sshape else dtype(0.3)
    mask = a > 0 if isinstance(where, str) else where
    check_rrule(array_copyto_copy, a, src, mask, constants=(2,))
    check_rrule(array_copyto_copy, a, src, mask, "same_kind", constants=(2, 3))
    reg = default_registry()
    assert reg.lookup(array_copyto).pullback_fn is reg.lookup(array_copyto_copy).pullback_fn
    b = a.copy()
    expected = a.copy()
    np.copyto(expected, src, where=mask)
    assert array_copyto(b, src, mask) is b
    np.testing.assert_array_equal(b, expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "vshape, positions",
    [((3,), [0, 2, 0, 1, 0]), ((2, 2), [3, 1]), ((), [0, 0]), ((4,), []), ((1,), [0])],
)
def test_take_flat_rule(vshape, positions, dtype):
    value = RNG.normal(size=vshape).astype(dtype)
    check_rrule(take_flat, value, np.array(positions, dtype=np.intp), constants=(1,))


def test_positions_are_numpys():
    mask = np.array([[1, 0, 1], [0, 1, 1]], bool)
    for values in ([1.0, 2.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [9.0]):
        expected = np.zeros((2, 3))
        np.putmask(expected, mask, values)
        got = np.zeros((2, 3))
        got[mask_index(got, mask)] = np.ravel(values)[putmask_positions(got, mask, values)]
        np.testing.assert_array_equal(got, expected)
        expected = np.zeros((2, 3))
        np.place(expected, mask, values)
        got = np.zeros((2, 3))
        index = mask_index(got, mask)
        got[index] = np.resize(values, len(index[0]))
        np.testing.assert_array_equal(got, expected)
    for shape, ind, axis in [
        ((2, 3), [[0, 0], [2, 1]], 1),
        ((3, 2), [[2, 0]], 0),
        ((2, 3, 2), np.zeros((2, 1, 2), int), -2),
    ]:
        values = np.arange(1.0, 1.0 + np.size(ind)).reshape(np.shape(ind))
        expected = np.zeros(shape)
        np.put_along_axis(expected, np.array(ind), values, axis=axis)
        got = np.zeros(shape)
        got[along_axis_index(got, np.array(ind), axis)] = values
        np.testing.assert_array_equal(got, expected)


def test_mismatched_mask_is_numpys_error():
    with pytest.raises(ValueError, match="same size"):
        mask_index(np.zeros(4), np.array([True, False]))


# -- refusals -----------------------------------------------------------------------------------
G = np.zeros(6)


def putmask_argument(x):
    np.putmask(x, x > 0, 0.0)
    return np.sum(x)


def place_view_of_argument(x):
    v = x[1:4]
    np.place(v, v > 0, [1.0])
    return np.sum(x)


def put_along_axis_global(x):
    np.put_along_axis(G, np.array([0]), x[0], axis=0)
    return np.sum(G * x)


def copyto_where_alias(x):
    y = x
    np.copyto(y, 0.0, where=y < 0)
    return np.sum(y)


@pytest.mark.parametrize(
    "f, shown, fix",
    [
        (putmask_argument, "np.putmask(x, x > 0, 0.0)", "write `x = x.copy()`"),
        (place_view_of_argument, "np.place(v, v > 0, [1.0])", "cannot prove that 'v'"),
        (put_along_axis_global, "np.put_along_axis(G", None),
        (copyto_where_alias, "np.copyto(y, 0.0, where=y < 0)", "cannot prove that 'y'"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_refused_before_running_at_the_users_line(f, shown, fix):
    x = X.copy()
    with pytest.raises(UnsupportedSyntaxError) as info:
        pullback.grad(f)(x)
    np.testing.assert_array_equal(x, X)  # nothing ran
    text = str(info.value)
    assert "PB104" in text and shown in text
    assert "writes into its argument" in text
    if fix is not None:
        assert fix in text


def test_golden_putmask_on_an_argument():
    (d,) = check(putmask_argument)
    assert (d.code, d.message, d.why, d.fix) == (
        "PB104",
        "array mutation: 'numpy.putmask' writes into its argument",
        "'x' comes from a parameter, so it may be the caller's array, and a differentiated "
        "function may write only into arrays it created itself.",
        "write `x = x.copy()` before the first write (then 'x' is the function's own array), "
        "or build a new array with a mask: `x = np.where(mask, values, x)` "
        "(see docs/limitations.md#PB104).",
    )


def test_put_along_axis_needs_an_axis():
    def f(x):
        a = np.zeros(6)
        np.put_along_axis(a, np.array([0]), x[0])
        return np.sum(a)

    with pytest.raises(UnsupportedSyntaxError, match="pass the axis"):
        pullback.grad(f)(X)
