"""Second derivatives where the first ones were right (issue 12's gaps): np.where branches in
loops and in helpers (no NaN from the branch that was not selected, exactly where the
gradient has none), np.abs of a complex value, a np.vectorize object made inside the
differentiated function.

Each function's gradient is checked against central differences of the function, its
Hessian against central differences of the gradient at the points away from the where's
switch points (float64, and float32 with its dtype kept), against ``jacobian(grad(f))``
and ``hvp``, and is finite wherever the gradient is."""

import warnings

import numpy as np
import pytest
import second_order_gap_cases as gc
from fd import check_grad

import pullback
from pullback.testing import check_grads

POINTS = [-1.0, 0.0, 0.5, 2.0, 3.0]
SWITCHES = [0.0]


def quiet(fn, *args, **kwargs):
    """``fn(*args)`` without NumPy's warnings about the branch that was not selected."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


def gradient_differences(g, x, k, eps=1e-6):
    """Column ``k`` of the Hessian by central differences of the gradient ``g``."""
    hi, lo = x.copy(), x.copy()
    hi[k] += eps
    lo[k] -= eps
    return (quiet(g, hi) - quiet(g, lo)) / (2 * eps)


def check_hessian(fn, points, switches, dtypes=(np.float64, np.float32)):
    """The checks of the module docstring for ``fn`` of one vector."""
    x = np.array(points)
    g = quiet(pullback.grad(fn), x)
    h = quiet(pullback.hessian(fn), x)
    assert np.all(np.isfinite(g)), g
    assert np.all(np.isfinite(h)), h  # finite wherever the gradient is
    away = [k for k, p in enumerate(points) if all(abs(p - s) > 1e-3 for s in switches)]
    quiet(check_grad, fn, x[away])
    grad_fn = pullback.grad(fn)
    for k in away:
        np.testing.assert_allclose(
            h[:, k], gradient_differences(grad_fn, x, k), rtol=1e-5, atol=1e-6
        )
    np.testing.assert_allclose(h, h.T, rtol=1e-12, atol=1e-14)
    jac = quiet(pullback.jacobian(pullback.grad(fn)), x)
    np.testing.assert_allclose(jac, h, rtol=1e-12, atol=1e-14)
    v = np.linspace(-1.0, 1.0, x.size)
    np.testing.assert_allclose(quiet(pullback.hvp(fn), x, v), h @ v, rtol=1e-12, atol=1e-13)
    if np.float32 in dtypes:
        h32 = quiet(pullback.hessian(fn), x.astype(np.float32))
        assert h32.dtype == np.float32
        assert np.all(np.isfinite(h32)), h32
        np.testing.assert_allclose(h32, h, rtol=2e-4, atol=1e-4)
    return h


# -- 1. np.where inside a loop -----------------------------------------------------------
LOOPS = [
    gc.loop_xlogx,
    gc.loop_sqrt_shifted,
    gc.loop_sinc,
    gc.while_xlogx,
    gc.break_xlogx,
    gc.nested_loops_sqrt,
    gc.carried_sqrt,
    gc.nested_where_loop,
    gc.loop_helper,
    gc.loop_items,
]


@pytest.mark.parametrize("fn", LOOPS, ids=lambda f: f.__name__)
def test_where_in_a_loop(fn):
    switches = [0.0, 1.0] if fn is gc.loop_sqrt_shifted else SWITCHES
    check_hessian(fn, POINTS, switches)


def test_where_in_a_loop_exact_values():
    x = np.array(POINTS)
    # 3 * d2/dx2 (x log x) = 3 / x where x > 0, 0 elsewhere (the switch point too)
    want = np.diag(np.where(x > 0, 3.0 / np.where(x > 0, x, 1.0), 0.0))
    np.testing.assert_allclose(quiet(pullback.hessian(gc.loop_xlogx), x), want, rtol=1e-14)
    # sum over k = 0, 1 of -(x - k)^(-3/2) / 4 where x > k
    d = sum(np.where(x > k, -0.25 * np.where(x > k, x - k, 1.0) ** -1.5, 0.0) for k in range(2))
    h = quiet(pullback.hessian(gc.loop_sqrt_shifted), x)
    np.testing.assert_allclose(h, np.diag(d), rtol=1e-14)


def test_where_in_a_loop_first_order_is_unchanged():
    # the alt-only lines leave grad's own sweeps as they were: the same gradient, and the
    # differentiable-again gradient computes the same numbers
    x = np.array(POINTS)
    for fn in LOOPS:
        adjoint = pullback.grad(fn).adjoint(x)
        got = quiet(pullback.grad(fn), x)
        again = quiet(adjoint.gradient, x)
        np.testing.assert_array_equal(again, got)
        assert "kept(" not in adjoint.source


# -- 2. np.where in a helper with a scalar argument --------------------------------------
@pytest.mark.parametrize(
    "fn", [gc.safe_const, gc.safe_of_x, gc.safe_root_const], ids=lambda f: f.__name__
)
def test_helper_with_a_scalar_argument(fn):
    switches = [0.25] if fn is gc.safe_root_const else SWITCHES
    check_hessian(fn, POINTS, switches)


@pytest.mark.parametrize("fn", [gc.safe_param, gc.safe_in_loop], ids=lambda f: f.__name__)
def test_helper_with_a_differentiated_scalar(fn):
    x, c = np.array(POINTS), 2.0
    loops = 2.0 if fn is gc.safe_in_loop else 1.0
    blocks = quiet(pullback.hessian(fn, wrt=(0, 1)), x, c)
    for row in blocks:
        for block in row:
            assert np.all(np.isfinite(block)), blocks
    pos = x > 0
    safe_x = np.where(pos, x, 1.0)
    np.testing.assert_allclose(blocks[0][0], np.diag(np.where(pos, -loops * c / safe_x**2, 0)))
    np.testing.assert_allclose(blocks[0][1], np.where(pos, loops / safe_x, 0.0), rtol=1e-14)
    np.testing.assert_allclose(blocks[1][0], blocks[0][1], rtol=1e-14)
    assert blocks[1][1] == 0.0
    away = np.array([-1.0, 0.5, 2.0, 3.0])
    quiet(check_grad, fn, away, c, wrt=(0, 1))
    g = pullback.grad(fn, wrt=1)
    row = [gradient_differences(lambda y: g(y, c), away, k) for k in range(away.size)]
    np.testing.assert_allclose(
        quiet(pullback.hessian(fn, wrt=(0, 1)), away, c)[1][0], row, rtol=1e-6
    )


@pytest.mark.parametrize("t", [-1.0, 0.0, 0.5, 1.0, 2.0])
def test_helper_of_python_scalars(t):
    # (a Python float 0.0: the reverse sweep must not compute 1.0 / 0.0 for the branch
    # that was not selected, at either order)
    c = 2.0
    blocks = quiet(pullback.hessian(gc.safe_scalar, wrt=(0, 1)), t, c)
    want = [[0.0, 0.0], [0.0, 0.0]]
    for v in (t, t - 1.0):
        if v > 0:
            want[0][0] += -c / v**2
            want[0][1] += 1.0 / v
            want[1][0] += 1.0 / v
    np.testing.assert_allclose(np.array(blocks, dtype=float), want, rtol=1e-14, atol=0)
    if t not in (0.0, 1.0):
        quiet(check_grad, gc.safe_scalar, t, c, wrt=(0, 1))


# -- 3. np.abs of a complex value --------------------------------------------------------
COMPLEX = [gc.power_spectrum, gc.abs_of_complex, gc.abs_mixed, gc.abs_phase]
X = np.array([0.3, -1.2, 0.7, 2.0])


@pytest.mark.parametrize("fn", COMPLEX, ids=lambda f: f.__name__)
def test_abs_of_a_complex_value(fn):
    check_hessian(fn, list(X), [])


def test_abs_of_a_complex_value_exact():
    # Parseval: sum |fft(x)|^2 = n sum x^2; |exp(ix) x|^2 = x^2
    np.testing.assert_allclose(pullback.hessian(gc.power_spectrum)(X), 8.0 * np.eye(4))
    np.testing.assert_allclose(pullback.hessian(gc.abs_phase)(X), 2.0 * np.eye(4), atol=1e-14)
    check_grads(gc.abs_of_complex, X, order=2)


# -- 4. a np.vectorize object made inside the function -----------------------------------
VECTORIZED = [gc.vectorize_lambda, gc.vectorize_two_arguments, gc.vectorize_in_a_loop]


@pytest.mark.parametrize("fn", VECTORIZED, ids=lambda f: f.__name__)
def test_vectorize_object_made_inside(fn):
    check_hessian(fn, list(X), [0.0])


def test_vectorize_object_made_inside_exact():
    # t^2 sin t: 2 sin t + 4 t cos t - t^2 sin t
    want = 2 * np.sin(X) + 4 * X * np.cos(X) - X**2 * np.sin(X)
    np.testing.assert_allclose(pullback.hessian(gc.vectorize_lambda)(X), np.diag(want), rtol=1e-13)


# -- a user helper called in a branch: its scalar argument's cotangent (first order) -----
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "fn", [gc.helper_in_branch, gc.helper_in_branch_loop], ids=lambda f: f.__name__
)
def test_scalar_argument_of_a_helper_in_a_branch(fn, dtype):
    # c's cotangent is summed inside the helper: over the selected positions only (it was
    # NaN from 0 * log(-1) at the others)
    x, c = np.array(POINTS, dtype=dtype), 2.0
    loops = 2.0 if fn is gc.helper_in_branch_loop else 1.0
    gx, gc_ = quiet(pullback.grad(fn, wrt=(0, 1)), x, c)
    pos = np.array(POINTS) > 0
    want = loops * np.sum(np.log(np.array(POINTS)[pos]))
    tol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(gc_, want, rtol=tol)
    safe_x = np.where(pos, np.array(POINTS), 1.0)
    np.testing.assert_allclose(gx, np.where(pos, loops * c / safe_x, 0.0), rtol=tol)
    assert gx.dtype == dtype
    away = np.array([-1.0, 0.5, 2.0, 3.0], dtype=dtype)
    quiet(check_grad, fn, away, c, wrt=(0, 1))
