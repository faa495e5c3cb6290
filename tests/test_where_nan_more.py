"""No NaN from np.where's unselected branch in more places (issue 12, principle 1): a where
in a ``try`` body (one step per operation), forward mode over a generated gradient whose
loop saves the branch on its tape, chained wheres, and third derivatives.

Each derivative is checked against central differences of the derivative one order below
at the points away from the where's switch point (x = 0), float64 and float32, and is
finite wherever the one below it is."""

import warnings

import numpy as np
import pytest
from fd import check_grad, check_jvp_of_grad

import pullback

POINTS = [-1.0, 0.0, 0.5, 2.0, 3.0]
AWAY = [0, 2, 3, 4]  # (the points of POINTS away from the switch at 0)


def quiet(fn, *args, **kwargs):
    """``fn(*args)`` without NumPy's warnings about the branch that was not selected."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


def column_differences(g, x, k, eps=1e-6):
    """The derivative of ``g`` in ``x[k]`` by central differences (the last axis)."""
    hi, lo = x.copy(), x.copy()
    hi[k] += eps
    lo[k] -= eps
    return (quiet(g, hi) - quiet(g, lo)) / (2 * eps)


def check_hessian(fn, x, away):
    """``fn``'s gradient and Hessian at ``x`` are finite, the Hessian has ``x``'s dtype,
    equals ``jacobian(grad(fn))`` and agrees with ``hvp``, and (float64) its columns ``away``
    from the switch points match central differences of the gradient."""
    g = quiet(pullback.grad(fn), x)
    h = quiet(pullback.hessian(fn), x)
    assert h.dtype == x.dtype
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(h)), h
    np.testing.assert_allclose(h, quiet(pullback.jacobian(pullback.grad(fn)), x), rtol=1e-6)
    v = np.linspace(-1.0, 1.0, x.size).astype(x.dtype)
    np.testing.assert_allclose(quiet(pullback.hvp(fn), x, v), h @ v, rtol=1e-5, atol=1e-6)
    if x.dtype == np.float64:
        grad_fn = pullback.grad(fn)
        for k in away:
            want = column_differences(grad_fn, x, k)
            np.testing.assert_allclose(h[:, k], want, rtol=1e-5, atol=1e-6)


# -- 1. np.where in a try body --------------------------------------------------------------
def try_xlogx(x):
    try:
        y = np.where(x > 0, x * np.log(x), 0.0)
    except ValueError:
        y = x
    return np.sum(y)


def try_sqrt_finally(x):
    try:
        y = np.where(x > 0, np.sqrt(x) * x, 0.0)
    finally:
        z = 2.0
    return np.sum(y) * z


def try_in_loop(x):
    s = 0.0
    for _ in range(3):
        try:
            s = s + np.sum(np.where(x > 0, x * np.log(x), 0.0))
        except ValueError:
            s = s - 1.0
    return s


def try_where_raises(x, c):
    try:
        y = np.where(c, x * np.log(x), 0.0)  # c of another shape: raises after the log
    except ValueError:
        y = 2.0 * x
    return np.sum(y)


@pytest.mark.parametrize("fn", [try_xlogx, try_sqrt_finally, try_in_loop])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_where_in_a_try_body_has_a_finite_gradient(fn, dtype):
    x = np.array(POINTS, dtype)
    g = quiet(pullback.grad(fn), x)
    assert g.dtype == dtype
    assert np.all(np.isfinite(g)), g
    assert g[0] == 0.0 and g[1] == 0.0  # (the branch was not selected there)
    quiet(check_grad, fn, x[AWAY])


def test_a_where_that_raises_in_a_try_body_leaves_the_handler_s_gradient():
    x = np.array(POINTS)
    g = quiet(pullback.grad(try_where_raises), x, np.array([True, False]))
    np.testing.assert_array_equal(g, np.full(5, 2.0))
    g = quiet(pullback.grad(try_where_raises), x, x > 0)
    assert np.all(np.isfinite(g)), g
    quiet(check_grad, try_where_raises, x[AWAY], x[AWAY] > 0)


def test_a_scalar_where_in_a_try_body():
    for v, want in ((-1.0, 0.0), (0.0, 0.0), (2.0, np.log(2.0) + 1.0)):
        assert quiet(pullback.grad(try_xlogx), v) == pytest.approx(want, rel=1e-12)


# -- 2. chained wheres, each with a NaN branch ----------------------------------------------
def chained(x):
    y = np.where(x > 0, np.log(x), 0.0)
    z = np.where(y > 1, np.sqrt(y - 1), y)
    return np.sum(z)


def chained_products(x):
    y = np.where(x > 0, x * np.log(x), 0.0)
    z = np.where(y > 1, np.sqrt(y - 1), 0.0)
    return np.sum(z * z)


def chained_sqrts(x):
    v = np.where(x <= 0.1, x * 0.5, np.sqrt(x - 0.1))
    w = np.where(v <= 0.1, 0.0, np.sqrt(v - 0.1))
    return np.sum(w * w)


def rebound_in_a_loop(x):
    v = x * 1.0
    for _ in range(2):
        v = np.where(v > 0, v**1.5, 0.0)
    return np.sum(v * v)


CHAIN_POINTS = [-1.0, 0.0, 0.5, 2.0, 4.0, 10.0]  # log(x) > 1 from e, x log(x) > 1 from 1.76


@pytest.mark.parametrize("fn", [chained, chained_products, chained_sqrts, rebound_in_a_loop])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_chained_wheres_have_finite_hessians(fn, dtype):
    check_hessian(fn, np.array(CHAIN_POINTS, dtype), [0, 2, 3, 4, 5])


# -- 3. forward over reverse of a where in a loop ---------------------------------------------
def loop_xlogx(x):
    s = 0.0
    for _ in range(2):
        s = s + np.sum(np.where(x > 0, x * np.log(x), 0.0))
    return s


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_jvp_of_the_gradient_of_a_where_in_a_loop(dtype):
    x = np.array(POINTS, dtype)
    v = np.linspace(-1.0, 1.0, x.size).astype(dtype)
    # (finite: the gradient's log(0) made NaN at every position)
    g, _, h = check_jvp_of_grad(loop_xlogx, x, v, atol=0)
    np.testing.assert_allclose(quiet(pullback.hvp(loop_xlogx), x, v), h @ v, rtol=1e-6)
    assert g.dtype == dtype


def test_the_tangent_of_unpacking_a_tuple_is_the_tuple_s_tangent():
    # an infinite tangent at one position (log at 0) stays at that position
    def f(x):
        t = (np.log(x), x)
        a, b = t
        return a * 1.0 + b

    x = np.array([0.0, 2.0])
    _, dy = quiet(pullback.jvp, f, (x,), (np.ones(2),))
    assert dy[0] == np.inf
    assert dy[1] == pytest.approx(1.5)


# -- 5. third derivatives through a masked where --------------------------------------------
def xlogx(x):
    return np.sum(np.where(x > 0, x * np.log(x), 0.0))


def third_exact(x):
    """d3/dx3 of x log(x) is -1 / x**2 where x > 0, else 0 (a diagonal tensor)."""
    d = np.where(x > 0, -1.0 / np.where(x > 0, x, 1.0) ** 2, 0.0)
    t = np.zeros((x.size,) * 3, x.dtype)
    for k in range(x.size):
        t[k, k, k] = d[k]
    return t


def helper_xlogx(x):
    return np.sum(np.where(x > 0, h_xlogx(x), 0.0))


@pytest.mark.parametrize("fn", [xlogx, loop_xlogx, helper_xlogx])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_third_derivatives_through_a_masked_where(fn, dtype):
    x = np.array(POINTS, dtype)
    t = quiet(pullback.jacobian(pullback.hessian(fn)), x)
    assert np.all(np.isfinite(t)), t
    times = 2 if fn is loop_xlogx else 1  # (the loop adds it twice)
    np.testing.assert_allclose(t, times * third_exact(x), rtol=1e-5, atol=1e-6)
    t2 = quiet(pullback.jacobian(pullback.jacobian(pullback.grad(fn))), x)
    np.testing.assert_allclose(t2, t, rtol=1e-12, atol=1e-14)
    if dtype is np.float64:
        hess = pullback.hessian(fn)
        for k in AWAY:
            want = column_differences(hess, x, k)
            np.testing.assert_allclose(t[:, :, k], want, rtol=1e-5, atol=1e-6)


# -- 4. a user's helper in a where branch, at second order ------------------------------------
def h_xlogx(v):
    return v * np.log(v)


def h_sqrt(v):
    w = np.sqrt(v)
    return w * v + 1.0


def helper_branch(x):
    return np.sum(np.where(x > 0, h_xlogx(x), 0.0))


def helper_two_branches(x):
    return np.sum(np.where(x > 0, h_sqrt(x), h_xlogx(1.0 - x)))  # (log(1 - x): NaN from 1)


def h_with_branch(v):
    return np.where(v > 1.0, v, 1.0) * np.log(v)


def helper_not_proved(x):
    return np.sum(np.where(x > 0, h_with_branch(x) * 1.0, 0.0))


@pytest.mark.parametrize("fn", [helper_branch, helper_two_branches])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_helper_in_a_where_branch_at_second_order(fn, dtype):
    check_hessian(fn, np.array(POINTS, dtype), AWAY)


def test_a_helper_that_is_not_proved_elementwise_keeps_its_hessian():
    # (np.where with a constant branch inside the helper: no proof, no mask; the values
    # where the gradient is finite are the same)
    x = np.array([0.5, 2.0, 3.0])
    h = quiet(pullback.hessian(helper_not_proved), x)
    np.testing.assert_allclose(h, quiet(pullback.jacobian(pullback.grad(helper_not_proved)), x))
    grad_fn = pullback.grad(helper_not_proved)
    for k in range(3):
        np.testing.assert_allclose(h[:, k], column_differences(grad_fn, x, k), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", [chained, chained_products])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_third_derivatives_of_chained_wheres(fn, dtype):
    x = np.array(CHAIN_POINTS, dtype)
    t = quiet(pullback.jacobian(pullback.hessian(fn)), x)
    assert t.dtype == dtype
    assert np.all(np.isfinite(t)), t
    t2 = quiet(pullback.jacobian(pullback.jacobian(pullback.grad(fn))), x)
    np.testing.assert_allclose(t2, t, rtol=1e-12, atol=1e-14)
    x64 = x.astype(np.float64)
    t64 = t if dtype is np.float64 else quiet(pullback.jacobian(pullback.hessian(fn)), x64)
    np.testing.assert_allclose(t, t64, rtol=2e-4, atol=1e-4)
    hess = pullback.hessian(fn)
    for k in (0, 2, 3, 4, 5):
        want = column_differences(hess, x64, k)
        np.testing.assert_allclose(t64[:, :, k], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fn", [helper_branch, helper_two_branches])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_jvp_of_the_gradient_of_a_helper_in_a_where_branch(fn, dtype):
    # (forward mode over the gradient runs the helper's generated vjp function)
    x = np.array(POINTS, dtype)
    v = np.linspace(-1.0, 1.0, x.size).astype(dtype)
    g, _, _ = check_jvp_of_grad(fn, x, v)
    np.testing.assert_allclose(g, quiet(pullback.grad(fn), x))
