"""No NaN from np.where's unselected branch where a branch's value crosses blocks: two
np.where's with different conditions in one ``try`` body (the second's branch is computed
steps before its np.where: SSA joins it with None between them), a handler of a ``try``
with ``finally``, and the Hessian of a np.where under a plain ``if`` (the gradient's
forward and backward parts are two ``if`` blocks, joined with None when differentiated
again). Checked against central differences away from the switch points and against
exact values where the unselected branch is masked, float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_jvp_of_grad
from test_where_nan_more import AWAY, check_hessian, quiet, try_in_loop

import pullback


def two_wheres(x):
    a = np.where(x > 0, np.log(x) * x, 0.0)
    b = np.where(x >= 0, np.sqrt(x), -x)
    return np.sum(a * b + np.exp(a))


def two_wheres_try_return(x):
    try:
        a = np.where(x > 0, np.log(x) * x, 0.0)
        b = np.where(x >= 0, np.sqrt(x), -x)
        return np.sum(a * b + np.exp(a))
    except ValueError:
        return np.sum(x)


def two_wheres_try(x):
    try:
        a = np.where(x > 0, np.log(x) * x, 0.0)
        b = np.where(x >= 0, np.sqrt(x), -x)
    except ValueError:
        a = x
        b = x
    return np.sum(a * b + np.exp(a))


def handler_sum_finally(x):
    try:
        raise ValueError("always")
    except ValueError:
        y = np.where(x > 0, x * np.log(x) + np.sqrt(x), 0.0)
    finally:
        z = 2.0
    return np.sum(y) * z


def where_under_if(x):
    s = np.sum(x)
    if s > -100:
        s = s + np.sum(np.where(x >= 0.5, x**1.5 * np.log(x), 2.0 * x))
    return s


POINTS = [-1.0, 0.0, 0.5, 2.0, 3.0]
TWO_TRIES = [two_wheres_try_return, two_wheres_try]


@pytest.mark.parametrize("fn", TWO_TRIES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_two_wheres_in_a_try_body_have_the_gradient_of_the_plain_form(fn, dtype):
    x = np.array(POINTS, dtype)
    g = quiet(pullback.grad(fn), x)
    assert g.dtype == dtype
    # the same as without try everywhere: at 0 both are NaN, as the selected sqrt's
    # derivative is infinite there (and exp(a)'s is -inf from the right)
    np.testing.assert_array_equal(g, quiet(pullback.grad(two_wheres), x))
    assert g[0] == 0.0  # (a = 0 and b = -x selected: a * b + exp(a) is constant)
    assert np.all(np.isfinite(g[[0, 2, 3, 4]])), g
    quiet(check_grad, fn, x[[0, 2, 3, 4]])


@pytest.mark.parametrize("fn", TWO_TRIES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_two_wheres_in_a_try_body_at_second_order(fn, dtype):
    x = np.array([-1.0, 0.5, 2.0, 3.0], dtype)
    check_hessian(fn, x, [0, 1, 2, 3])
    h = quiet(pullback.hessian(fn), x)
    np.testing.assert_allclose(h, quiet(pullback.hessian(two_wheres), x), rtol=1e-12)
    assert h[0, 0] == 0.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_handler_with_finally_whose_branch_is_a_sum(dtype):
    x = np.array(POINTS, dtype)
    g = quiet(pullback.grad(handler_sum_finally), x)
    assert g.dtype == dtype
    assert np.all(np.isfinite(g)), g
    assert g[0] == 0.0 and g[1] == 0.0  # (the branch was not selected there)
    quiet(check_grad, handler_sum_finally, x[[0, 2, 3, 4]])
    check_hessian(handler_sum_finally, x, [0, 2, 3, 4])
    h = quiet(pullback.hessian(handler_sum_finally), x)
    assert h[0, 0] == 0.0 and h[1, 1] == 0.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_hessian_of_a_where_under_a_plain_if(dtype):
    x = np.array(POINTS, dtype)
    g = quiet(pullback.grad(where_under_if), x)
    np.testing.assert_array_equal(g[:2], np.array([3.0, 3.0], dtype))  # 1 + d(2x)/dx
    check_hessian(where_under_if, x, [0, 1, 3, 4])
    h = quiet(pullback.hessian(where_under_if), x)
    np.testing.assert_array_equal(h[:2], np.zeros((2, 5), dtype))  # 2x selected there


@pytest.mark.parametrize("fn", [where_under_if, handler_sum_finally, two_wheres_try])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_forward_over_reverse(fn, dtype):
    x = np.array([-1.0, 0.5, 2.0, 3.0], dtype)
    v = np.linspace(-1.0, 1.0, x.size).astype(dtype)
    check_jvp_of_grad(fn, x, v)


# -- a np.where in a try body inside a loop, at second order ---------------------------------
# (the gradient's forward and reverse loops are two loops; its values and masks join the
# previous iteration's through them, and the members it keeps for the reverse loop join
# their kept values: where_joins.loop_carried, where_joins.kept_joins)


def try_sqrt_in_loop(x):
    s = 0.0
    for k in range(2):
        try:
            s = s + (k + 1.0) * np.sum(np.where(x > 0, np.sqrt(x) * x, -x))
        except ValueError:
            s = s - 1.0
    return s


def try_in_while(x):
    # (a lowered while copies what it carries in the `if go:` it ends with)
    s = 0.0
    k = 0
    while k < 2:
        try:
            s = s + np.sum(np.where(x > 0, np.log(x) * x, 0.0))
        except ValueError:
            s = s - 1.0
        k += 1
    return s


def try_else_in_loop(x):
    s = 0.0
    for _ in range(2):
        try:
            t = np.sum(x)
        except ValueError:
            t = 0.0
        else:
            s = s + t * np.sum(np.where(x >= 0.5, x**1.5 * np.log(x), 2.0 * x))
    return s


def where_under_if_in_loop(x):
    s = 0.0
    for _ in range(2):
        if s > -100:
            s = s + np.sum(np.where(x > 0, x * np.log(x), 0.0))
    return s


LOOPS = [try_in_loop, try_sqrt_in_loop, try_in_while, try_else_in_loop, where_under_if_in_loop]


@pytest.mark.parametrize("fn", LOOPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_hessian_of_a_where_in_a_try_body_inside_a_loop(fn, dtype):
    x = np.array(POINTS, dtype)
    check_hessian(fn, x, [0, 1, 3, 4] if fn is try_else_in_loop else AWAY)  # (switch at 0.5)
    h = quiet(pullback.hessian(fn), x)
    if fn is not try_else_in_loop:  # (there t = sum(x) multiplies the where's sum)
        assert h[0, 0] == 0.0 and h[1, 1] == 0.0  # (the branch was not selected there)
    if fn is try_in_loop:  # 3 x log(x): the diagonal 3 / x where x > 0
        want = np.diag(np.where(x > 0, 3.0 / np.where(x > 0, x, 1.0), 0.0))
        np.testing.assert_allclose(h, want, rtol=1e-6 if dtype is np.float64 else 1e-5)


@pytest.mark.parametrize("fn", LOOPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_forward_over_reverse_of_a_where_in_a_try_body_inside_a_loop(fn, dtype):
    x = np.array(POINTS, dtype)
    v = np.linspace(-1.0, 1.0, x.size).astype(dtype)
    check_jvp_of_grad(fn, x, v)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_where_in_a_try_body_inside_a_loop_whose_branch_is_computed_steps_before(dtype):
    # (np.sqrt(x) * x is joined with the previous iteration's value before the np.where)
    x = np.array(POINTS, dtype)
    g = quiet(pullback.grad(try_sqrt_in_loop), x)
    assert g.dtype == dtype
    np.testing.assert_array_equal(g[:2], np.array([-3.0, -3.0], dtype))  # (1 + 2) * d(-x)
    quiet(check_grad, try_sqrt_in_loop, x[AWAY])


def kept_after_the_loop(x):
    s = 0.0
    t = x
    for _ in range(2):
        try:
            t = x * 2.0
            s = s + np.sum(np.where(x > 0, np.sqrt(x) * t, -x))
        except ValueError:
            s = s - 1.0
    return s + np.sum(t * t)


def kept_after_the_loop_plain(x):
    s = 0.0
    t = x
    for _ in range(2):
        t = x * 2.0
        s = s + np.sum(np.where(x > 0, np.sqrt(x) * t, -x))
    return s + np.sum(t * t)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_branch_value_the_loop_hands_on_keeps_its_other_gradient(dtype):
    # t is in the branch and read after the loop: its cotangent from np.sum(t * t) is
    # not masked (8 x at x = -1, 0, where the branch was not selected)
    x = np.array(POINTS, dtype)
    g = quiet(pullback.grad(kept_after_the_loop), x)
    np.testing.assert_allclose(g, quiet(pullback.grad(kept_after_the_loop_plain), x), rtol=1e-6)
    np.testing.assert_array_equal(g[:2], np.array([-10.0, -2.0], dtype))  # 8x + 2
    quiet(check_grad, kept_after_the_loop, x[AWAY])
    h = quiet(pullback.hessian(kept_after_the_loop), x)
    np.testing.assert_allclose(h, quiet(pullback.hessian(kept_after_the_loop_plain), x), rtol=1e-6)
    check_hessian(kept_after_the_loop, x, AWAY)


def carried_into_the_branch(x):
    s = 0.0
    t = x
    for _ in range(3):
        try:
            s = s + np.sum(np.where(x > 0, np.sqrt(t) * x, -x))  # t: the last iteration's
            t = x * 2.0 + s
        except ValueError:
            s = s - 1.0
    return s


def carried_into_the_branch_plain(x):
    s = 0.0
    t = x
    for _ in range(3):
        s = s + np.sum(np.where(x > 0, np.sqrt(t) * x, -x))
        t = x * 2.0 + s
    return s


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_branch_that_reads_the_value_the_loop_carried(dtype):
    x = np.array(POINTS, dtype)
    g = quiet(pullback.grad(carried_into_the_branch), x)
    assert np.all(np.isfinite(g)), g
    np.testing.assert_allclose(g, quiet(pullback.grad(carried_into_the_branch_plain), x), rtol=1e-6)
    quiet(check_grad, carried_into_the_branch, x[AWAY])
    h = quiet(pullback.hessian(carried_into_the_branch), x)
    want = quiet(pullback.hessian(carried_into_the_branch_plain), x)
    np.testing.assert_allclose(h, want, rtol=1e-6 if dtype is np.float64 else 1e-4, atol=1e-7)
    check_hessian(carried_into_the_branch, x, AWAY)
