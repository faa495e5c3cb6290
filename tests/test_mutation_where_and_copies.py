"""Two of issue 11's last write forms:

- ufuncs with ``out=`` and ``where=`` together into a local array: the ufunc computes and
  writes only where the mask holds, the other entries keep the array's old values (and
  their old values' gradient); nothing is computed outside the mask, so
  ``np.log(x, out=y, where=x > 0)`` meets no log(0) in value or derivative;
- second order through ``y = x.copy(); y[i] = ...`` (the copy is a method found at run
  time: its second derivative runs through ``np.copy``'s transformable pullback).

Each against finite differences (reverse mode in float64 and float32, forward mode, reverse
over reverse) and the values against NumPy's."""

import numpy as np
import pytest
from inplace_cases import check_value_forward_and_second_order

import pullback
from pullback.arrays_inplace_calls import take_broadcast, where_index
from pullback.check import check
from pullback.errors import UnsupportedSyntaxError
from pullback.testing import check_grads, check_rrule

DTYPES = [np.float64, np.float32]
X = np.array([0.7, -1.2, 0.4, 0.9, 1.3, -0.6])
RNG = np.random.default_rng(29)


# -- out= with where= ---------------------------------------------------------------------------
def add_where(x):
    y = x * 3.0  # the entries outside the mask keep these values
    np.add(x, x[0] * x, out=y, where=x > 0)
    return np.sum(y * y)


def log_where_guarded(x):
    y = np.full(x.shape, -1.0)
    np.log(np.abs(x) - 0.65, out=y, where=np.abs(x) > 0.65)  # log of <= 0 never computed
    return np.sum(y * x)


def multiply_where_broadcast(x):
    y = np.outer(x[:2], x[2:5])  # 2 x 3
    np.multiply(x[2:5], x[5], out=y, where=np.array([[True], [False]]))  # row, scalar, mask
    return np.sum(np.sin(y))


def where_scalar_mask_in_loop(x):
    y = np.zeros(4) + x[:4]
    for k in range(3):
        np.subtract(y, x[k + 1] * y, out=y, where=k % 2 == 0)  # y read and written
    return np.sum(y**3)


def where_positional_out_result(x):
    y = np.ones(6)
    r = np.multiply(x, x, y, where=x < 0.5)  # the result is y itself
    return np.sum(r * x)


WHERE_CASES = [
    add_where,
    log_where_guarded,
    multiply_where_broadcast,
    where_scalar_mask_in_loop,
    where_positional_out_result,
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", WHERE_CASES, ids=lambda f: f.__name__)
def test_where_reverse_mode_matches_finite_differences(f, dtype):
    check_grads(f, X.astype(dtype))


@pytest.mark.parametrize("f", WHERE_CASES, ids=lambda f: f.__name__)
def test_where_value_forward_mode_and_second_order(f):
    assert check_value_forward_and_second_order(f, X) == "reverse over reverse"


def test_where_keeps_old_values_and_their_gradient():
    # y = 3x outside the mask, x + x0 x inside: d/dx of sum(y^2) by hand.
    g = pullback.grad(add_where)(X)
    inside = X > 0
    y = np.where(inside, X + X[0] * X, 3.0 * X)
    expected = np.where(inside, 2 * y * (1 + X[0]), 2 * y * 3.0)
    expected[0] += np.sum(np.where(inside, 2 * y * X, 0.0))
    np.testing.assert_allclose(g, expected, rtol=1e-12)


def test_where_outside_mask_is_never_computed():
    x = np.array([0.0, 2.0, -1.0, 3.0])

    def f(x):
        y = np.full(x.shape, -1.0)
        np.log(x, out=y, where=x > 0)
        return np.sum(y * x)

    with np.errstate(all="raise"):  # a log(0) or log(-1) anywhere would raise
        g = pullback.grad(f)(x)
    np.testing.assert_allclose(g, [-1.0, np.log(2.0) + 1.0, -1.0, np.log(3.0) + 1.0])


def test_where_reduction_stays_refused():
    def f(x):
        y = np.zeros(())
        np.sum(x, out=y, where=x > 0)
        return y * 2.0

    (d,) = check(f)
    assert "np.where(mask, f(...), a)" in str(d)
    assert "np.sum(x, out=y, where=x > 0)" in str(d)  # the user's line
    x = X.copy()
    with pytest.raises(UnsupportedSyntaxError) as info:
        pullback.grad(f)(x)
    assert "np.where(mask, f(...), a)" in str(info.value)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape, xshape, where",
    [
        ((2, 3), (3,), np.array([True, False, True])),  # x and mask broadcast
        ((2, 3), (2, 1), "half"),
        ((4,), (), True),  # a scalar input, every entry
        ((0, 3), (3,), True),  # nothing written
        ((3,), (3,), False),  # nothing written
    ],
)
def test_take_broadcast_rule(shape, xshape, where, dtype):
    a = RNG.normal(size=shape).astype(dtype)
    x = RNG.normal(size=xshape).astype(dtype)
    mask = a > 0 if isinstance(where, str) else where
    index = where_index(a, mask)
    expected = np.broadcast_to(x, shape)[np.broadcast_to(mask, shape)]
    np.testing.assert_array_equal(take_broadcast(x, a, index), expected)
    check_rrule(take_broadcast, x, a, index, constants=(1, 2))


# -- second order through x.copy() then writes ----------------------------------------------
def copy_then_store(x):
    y = x.copy()
    y[1] = x[0] * x[2]
    return np.sum(y * y * x)


def copy_then_slice_and_loop(x):
    y = x.copy()
    y[2:4] = np.sin(x[:2]) * x[5]
    for i in range(1, 6):
        y[i] = y[i - 1] * 0.5 + y[i]
    return np.sum(y**2)


def argument_rebound_by_copy(x):
    x = x.copy()
    x[0] = 0.0
    x[3] *= x[4]
    return np.sum(x * np.cos(x))


COPY_CASES = [copy_then_store, copy_then_slice_and_loop, argument_rebound_by_copy]


@pytest.mark.parametrize("f", COPY_CASES, ids=lambda f: f.__name__)
def test_copy_then_write_second_order(f):
    assert check_value_forward_and_second_order(f, X) == "reverse over reverse"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", COPY_CASES, ids=lambda f: f.__name__)
def test_copy_then_write_hessian_matches_finite_differences(f, dtype):
    x = X.astype(dtype)
    h = pullback.hessian(f)(x)
    eps = 1e-6 if dtype == np.float64 else 1e-2
    g = pullback.grad(f)
    xd = X.astype(np.float64)
    columns = [(g(xd + eps * e) - g(xd - eps * e)) / (2 * eps) for e in np.eye(6)]
    tol = 1e-5 if dtype == np.float64 else 2e-2
    np.testing.assert_allclose(h, np.stack(columns, axis=1), rtol=tol, atol=tol)


def test_copy_then_write_grad_of_grad():
    def f(x):
        y = x.copy()
        y[1] = x[0] * x[2]
        return np.sum(y * y * x)

    def g0(x):
        return pullback.grad(f)(x)[0]

    check_grads(g0, X[:3])
    # f = x0^3 + (x0 x2)^2 x1 + x2^3: d/dx of df/dx0 = 3 x0^2 + 2 x0 x2^2 x1
    x0, x1, x2 = X[:3]
    expected = [6 * x0 + 2 * x2**2 * x1, 2 * x0 * x2**2, 4 * x0 * x2 * x1]
    np.testing.assert_allclose(pullback.grad(g0)(X[:3]), expected, rtol=1e-12)


def test_copy_of_a_known_array_calls_no_user_code():
    # x.copy() on a NumPy array is found at run time but never reaches user code: the
    # adjoint is not marked as calling it, so grad's fast entry and fused sweeps run it.
    from pullback.adjoints import get_adjoint
    from pullback.arguments import kinds_key
    from pullback.registry import default_registry

    def f(x):
        y = x.copy()
        y[0] = x[1] * 2.0
        return np.sum(y * y)

    x = X.copy()
    adj = get_adjoint(f, ("x",), default_registry(), kinds_key((x,), {}))
    assert not adj.calls_user_code
    check_grads(f, x)
