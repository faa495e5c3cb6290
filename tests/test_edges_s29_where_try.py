"""Second derivatives of a ``np.where`` in a ``try`` body whose unselected branch is not
finite (``np.sqrt`` of a negative, ``sin(x) / x`` at 0, ``x * log(x)`` at 0): the gradient
keeps the body's steps in ``if ok:`` blocks, which a derivative of it lowers again, so
the branch's subgraph is found across those blocks through the joins with None
(transform/where_joins.py). Hessians (hessian, grad of grad, jacobian of grad, hvp, jvp
of the gradient) are finite, have the argument's dtype, and match central differences of
the gradient away from the switch points, float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest
from test_where_nan_more import (
    AWAY,
    POINTS,
    check_hessian,
    column_differences,
    quiet,
    try_sqrt_finally,
    try_where_raises,
    try_xlogx,
)

import pullback


def try_sqrt(x):
    try:
        y = np.where(x > 0, np.sqrt(x), 0.0)
    except ValueError:
        y = x
    return np.sum(y * y * x)


def try_sinc(x):
    try:
        y = np.where(x != 0, np.sin(x) / x, 1.0)
    except ValueError:
        y = x
    return np.sum(y**3)


def handler_with_finally(x):
    # (a handler of a try with finally runs one operation per step, as a try body does)
    try:
        raise ValueError("always")
    except ValueError:
        y = np.where(x > 0, x * np.log(x), 0.0)
    finally:
        z = 2.0
    return np.sum(y) * z


def try_else_where(x):
    try:
        s = np.sum(x)
    except ValueError:
        s = 0.0
    else:
        s = s + np.sum(np.where(x > 0, x**1.5 * np.log(x), 2.0 * x))
    return s


CASES = [try_sqrt, try_sinc, try_xlogx, try_sqrt_finally, handler_with_finally, try_else_where]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hessian_of_a_where_in_a_try_body(fn, dtype):
    check_hessian(fn, np.array(POINTS, dtype), AWAY)


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_grad_of_grad_and_forward_over_reverse(fn):
    x = np.array(POINTS)
    h = quiet(pullback.hessian(fn), x)
    g = pullback.grad(fn)

    def component(z, e):  # (grad of grad: the inner grad made where it is called)
        return np.sum(pullback.grad(fn)(z) * e)

    for k in range(x.size):
        row = quiet(pullback.grad(component), x, np.eye(x.size)[k])
        np.testing.assert_allclose(row, h[k], rtol=1e-10, atol=1e-12)
    v = np.linspace(-1.0, 1.0, x.size)
    _, dg = quiet(pullback.jvp, g, (x,), (v,))
    assert np.all(np.isfinite(dg)), dg
    np.testing.assert_allclose(dg, h @ v, rtol=1e-6, atol=1e-8)


def test_the_unselected_positions_have_zero_second_derivatives():
    x = np.array(POINTS)
    h = quiet(pullback.hessian(try_sqrt), x)
    # y * y * x is x**2 where x > 0 and 0 elsewhere: the diagonal 2 there, 0 elsewhere
    np.testing.assert_array_equal(h, np.diag(np.where(x > 0, 2.0, 0.0)))
    h = quiet(pullback.hessian(try_sinc), x)
    assert h[1, 1] == 0.0  # (the constant 1.0 was selected at 0)


def test_a_where_that_raises_keeps_the_handler_s_hessian():
    x = np.array(POINTS)
    h = quiet(pullback.hessian(try_where_raises), x, np.array([True, False]))
    np.testing.assert_array_equal(h, np.zeros((5, 5)))
    h = quiet(pullback.hessian(try_where_raises), x, x > 0)
    assert np.all(np.isfinite(h)), h
    grad_fn = pullback.grad(try_where_raises)
    for k in AWAY:
        want = column_differences(lambda z: grad_fn(z, z > 0), x, k)
        np.testing.assert_allclose(h[:, k], want, rtol=1e-5, atol=1e-6)
