"""scipy.optimize solutions by the implicit function theorem, against central finite
differences of the solution (tight solver tolerances)."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS

so = pytest.importorskip("scipy.optimize")

import pullback  # noqa: E402
from pullback.errors import UnsupportedCallError, UnsupportedSyntaxError  # noqa: E402
from pullback.testing import check_grads, check_rrule  # noqa: E402

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)


def residual(x, a, b):
    return np.array([x[0] ** 3 + x[1] - a, x[1] ** 3 - x[0] - b * x[0] ** 2])


def residual_and_jacobian(x, a, b):
    jac = np.array([[3 * x[0] ** 2, 1.0], [-1.0 - 2 * b * x[0], 3 * x[1] ** 2]])
    return residual(x, a, b), jac


def scalar_residual(x, c):
    return np.cos(x) - c * x


def objective(x, p, s):
    return np.sum((x - p) ** 4) + s * np.sum(x * x) + np.sum(np.exp(x))


def objective_gradient(x, p, s):
    return 4 * (x - p) ** 3 + 2 * s * x + np.exp(x)


def objective_and_gradient(x, p, s):
    return objective(x, p, s), objective_gradient(x, p, s)


gradient = pullback.grad(objective)
T = np.linspace(0.0, 2.0, 6)


def exponential(x, t, y):
    return x[0] * np.exp(-x[1] * t) - y


X0 = np.array([0.8, 0.5])


@D
def test_root_rules(dtype):
    args = (dtype(1.2), dtype(0.3))
    dx = np.array([0.3, -1.0])
    for method, jac in (("hybr", None), ("lm", None), ("hybr", True)):
        fn = residual_and_jacobian if jac else residual
        check_rrule(
            so.root,
            fn,
            X0.astype(dtype),
            args,
            method,
            jac,
            1e-13,
            output_cotangent={"x": dx},
            constants=(5,),  # tol
        )
    check_rrule(so.fsolve, residual, X0.astype(dtype), args, xtol=1e-13)
    check_rrule(so.brentq, scalar_residual, dtype(0.0), dtype(2.0), (dtype(0.7),), xtol=1e-14)


@D
def test_minimize_rule(dtype):
    args = (np.array([0.5, -0.3], dtype=dtype), dtype(0.7))
    x0 = np.zeros(2)  # float64: BFGS on a float32 start stops short of gtol
    dy = {"x": np.array([0.4, -1.1]), "fun": 0.8}
    opts = {"gtol": 1e-10}
    for fn, jac in (
        (objective, objective_gradient),
        (objective_and_gradient, True),
        (objective, "3-point"),
    ):
        # The starting point is a setting: the optimum does not depend on it, but where
        # BFGS stops (within gtol) does, by ~1e-8, which finite differences would see.
        check_rrule(
            so.minimize,
            fn,
            x0,
            args,
            "BFGS",
            jac,
            options=opts,
            output_cotangent=dy,
            constants=(1,),
        )


@D
def test_least_squares_rule(dtype):
    y = (2.0 * np.exp(-0.7 * T) + 0.05 * np.sin(5 * T)).astype(dtype)
    dy = {"x": np.array([0.4, -1.1]), "cost": 0.8, "fun": np.linspace(-1, 1, 6)}
    tols = (1e-15, 1e-15, 1e-15)  # ftol, xtol, gtol
    bounds = (-np.inf, np.inf)
    # x_scale 1.0: SciPy < 1.16 takes no None (its default was 1.0 then)
    settings = (1.0, "linear", 1.0, None, None, {}, None, None, 0)
    call = (exponential, np.ones(2, dtype=dtype), "2-point", bounds, "trf") + tols + settings
    # the float settings (start, bounds, tolerances, x_scale, f_scale) are constants
    constants = (1, 3, 5, 6, 7, 8, 10)
    check_rrule(so.least_squares, *call, (T, y), constants=constants, output_cotangent=dy)


# -- through grad: args= by keyword and the result's attributes -----------------------------------
def root_loss(a, b):
    sol = so.root(residual, X0, args=(a, b), tol=1e-13)
    return np.sum(sol.x**2)


def fsolve_loss(a, b):
    return np.sum(np.sin(so.fsolve(residual, X0, args=(a, b), xtol=1e-13)))


def brentq_loss(c):
    return so.brentq(scalar_residual, 0.0, 2.0, args=(c,), xtol=1e-14) ** 2


def minimize_loss(p, s):
    sol = so.minimize(objective, np.zeros(2), args=(p, s), jac=gradient, options={"gtol": 1e-10})
    return np.sum(sol.x**2) + sol.fun


def least_squares_loss(y):
    sol = so.least_squares(exponential, np.ones(2), args=(T, y), xtol=1e-15, ftol=1e-15)
    return sol.x[0] + sol.x[1] ** 2 + sol.cost + np.sum(sol.fun**3)


def test_grad_through_keyword_args():
    check_grads(root_loss, 1.2, 0.3, wrt=(0, 1))
    check_grads(fsolve_loss, 1.2, 0.3, wrt=(0, 1))
    check_grads(brentq_loss, 0.7)
    check_grads(minimize_loss, np.array([0.5, -0.3]), 0.7, wrt=(0, 1))
    check_grads(least_squares_loss, 2.0 * np.exp(-0.7 * T) + 0.05 * np.sin(5 * T))


def test_no_convergence_is_refused():
    def loss(c):
        sol = so.minimize(objective, np.zeros(2), args=(np.ones(2), c), options={"maxiter": 1})
        return sol.fun

    with pytest.raises(UnsupportedCallError, match="did not converge"):
        pullback.grad(loss)(0.7)


def no_real_root(x, p):
    return x * x + p  # no root for p > 0: fsolve stops where it makes no progress


def cube_residual(x, p):
    return x**3 - p


def fsolve_without_a_root(p):
    x = so.fsolve(no_real_root, np.array([1.0]), args=(p,))
    return np.sum(x**3)


def brentq_cut_short(p):
    x = so.brentq(cube_residual, 0.0, 3.0, args=(p,), maxiter=2, disp=False)
    return x**2


@pytest.mark.filterwarnings("ignore:The iteration is not making good progress:RuntimeWarning")
@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize(
    "f,name",
    [(fsolve_without_a_root, "fsolve"), (brentq_cut_short, "brentq")],
    ids=["fsolve", "brentq"],
)
def test_fsolve_and_brentq_without_convergence_are_refused(f, name, order):
    # The sweeps run fsolve and brentq themselves (the rules' closures are not called) and
    # their pullback functions solve again: those refuse an unconverged solve as the rules
    # do, at first order and in the gradient differentiated again (both once returned a
    # number: the implicit function theorem at a point that is no root)
    g = f
    for _ in range(order):
        g = pullback.grad(g)
    with pytest.raises(UnsupportedCallError, match=f"scipy.optimize.{name} did not converge"):
        g(0.5)


@pytest.mark.filterwarnings("ignore:The iteration is not making good progress:RuntimeWarning")
def test_the_pullback_functions_refuse_an_unconverged_solve():
    from pullback.rules import scipy_optimize_pullbacks as pbs

    with pytest.raises(UnsupportedCallError, match="fsolve did not converge"):
        pbs.fsolve_pullback(np.ones(1), no_real_root, np.array([1.0]), (0.5,))
    with pytest.raises(UnsupportedCallError, match="brentq did not converge"):
        pbs.brentq_pullback(1.0, cube_residual, 0.0, 3.0, (0.5,), maxiter=2, disp=False)
    # and, converged, they pull back through the solution the solver finds
    x = so.fsolve(residual, X0, args=(1.2, 0.3), xtol=1e-13)
    cots = pbs.fsolve_pullback(np.ones(2), residual, X0, (1.2, 0.3), xtol=1e-13)[2]
    rule = pullback.default_registry().lookup(so.fsolve)
    y, back = rule.rrule(residual, X0, (1.2, 0.3), xtol=1e-13)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_allclose(cots, back(np.ones(2))[2], rtol=1e-12)


def test_constraints_and_active_bounds_are_refused():
    rule = pullback.default_registry().lookup(so.minimize)
    args = (np.array([0.5, -0.3]), 0.7)
    cons = {"type": "eq", "fun": lambda x, p, s: x[0] - 0.1}
    with pytest.raises(UnsupportedCallError, match="constraints"):
        rule.rrule(objective, np.zeros(2), args, constraints=cons)
    with pytest.raises(UnsupportedCallError, match="bound"):
        _, back = rule.rrule(objective, np.zeros(2), args, bounds=[(0.0, 1.0), (0.0, 1.0)])


def test_other_keywords_are_still_refused():
    def loss(c):
        return so.brentq(scalar_residual, 0.0, 2.0, args=(c,), xtol=c)

    with pytest.raises(UnsupportedSyntaxError, match="PB502"):
        pullback.grad(loss)(0.5)


# -- second order: the implicit function theorem differentiated again --------------------------
def fsolve_vector_loss(p):
    x = so.fsolve(residual, X0, args=(p[0], p[1]), xtol=1e-13)
    return np.sum(x * x * x) + x[0] * x[1]


def root_vector_loss(p):
    sol = so.root(residual_and_jacobian, X0, args=(p[0], p[1]), jac=True, tol=1e-13)
    x = sol.x
    return x[0] * x[0] * x[1]


@pytest.mark.parametrize(
    "f,x",
    [
        (brentq_loss, 0.7),
        (fsolve_vector_loss, np.array([1.2, 0.3])),
        (root_vector_loss, np.array([1.2, 0.3])),
    ],
    ids=["brentq", "fsolve", "root"],
)
def test_hessians_through_solutions(f, x):
    assert check_grads(f, x, order=2) == "reverse over reverse"


def minimize_vector_loss(p):
    sol = so.minimize(
        objective, np.zeros(2), args=(p, 0.7), jac=objective_gradient, options={"gtol": 1e-9}
    )
    x = sol.x
    return x[0] * x[1] + sol.fun


class ObjectiveGradient:
    """A callable object as jac=."""

    def __call__(self, x, p, s):
        return objective_gradient(x, p, s)


def minimize_with(jac, gtol=1e-9):
    def loss(p):
        sol = so.minimize(objective, np.zeros(2), args=(p, 0.7), jac=jac, options={"gtol": gtol})
        x = sol.x
        return x[0] * x[1] ** 2 + sol.fun

    return loss


def test_hessian_through_minimize():
    assert check_grads(minimize_vector_loss, np.array([0.5, -0.3]), order=2) == (
        "reverse over reverse"
    )


def test_hessian_through_minimize_without_jac():
    # G is pullback's reverse mode of the objective, and dG/dx its second derivative,
    # through user_function_vjp: a second derivative of the solution differentiates that
    # again (the objective's third derivative, by user_function_vjp's transformable
    # pullback). jac="cs" (complex steps) gets BFGS to gtol=1e-10, so that finite
    # differences of the gradient see the optimum, not where BFGS stopped.
    p = np.array([0.5, -0.3])
    assert check_grads(minimize_with("cs", 1e-10), p, order=2) == "reverse over reverse"
    assert check_grads(minimize_with(None, 1e-6), p, order=2) == "reverse over reverse"
    # every kind of jac= gives the Hessian of the exact jac= function (SciPy's finite
    # differences only move where BFGS stops)
    exact = pullback.hessian(minimize_with(objective_gradient))(p)
    for jac, gtol, tol in (
        (None, 1e-6, 1e-6),
        ("2-point", 1e-6, 1e-6),
        ("3-point", 1e-9, 1e-8),
        (gradient, 1e-9, 1e-8),
        (ObjectiveGradient(), 1e-9, 1e-8),
    ):
        hessian = pullback.hessian(minimize_with(jac, gtol))(p)
        np.testing.assert_allclose(hessian, exact, atol=tol)


def test_hessian_through_minimize_with_jac_a_pullback_gradient():
    # jac=grad(f) of a function f that is not the objective (here its double, whose zeros
    # are the same): the solver's G is what jac computes, f's reverse-mode gradient
    def double(x, p, s):
        return 2.0 * objective(x, p, s)

    p = np.array([0.5, -0.3])
    loss = minimize_with(pullback.grad(double))
    assert check_grads(loss, p, order=2) == "reverse over reverse"
    exact = pullback.hessian(minimize_with(objective_gradient))(p)
    np.testing.assert_allclose(pullback.hessian(loss)(p), exact, atol=1e-8)


# -- least_squares twice: G = J^T r from the user's jac= function -------------------------------
def exponential_jac(x, t, y):
    e = np.exp(-x[1] * t)
    return np.stack([e, -x[0] * t * e], axis=1)


def least_squares_with_jac(y, jac=exponential_jac):
    sol = so.least_squares(
        exponential, np.ones(2), jac=jac, args=(T, y), xtol=1e-15, ftol=1e-15, gtol=1e-15
    )
    return sol.x[0] + sol.x[1] ** 2 + sol.cost + np.sum(sol.fun**3)


def least_squares_in_t(t, y, jac=exponential_jac):
    # the parameters in args: the sample times and the data
    sol = so.least_squares(exponential, np.ones(2), jac=jac, args=(t, y), xtol=1e-15, ftol=1e-15)
    return np.sum(np.sin(sol.x)) * sol.x[1]


@D
def test_hessian_through_least_squares_with_jac(dtype):
    y = (2.0 * np.exp(-0.7 * T) + 0.05 * np.sin(5 * T)).astype(dtype)
    assert check_grads(least_squares_with_jac, y) == "reverse"
    assert check_grads(least_squares_with_jac, y, order=2) == "reverse over reverse"
    t = T.astype(dtype)
    assert check_grads(least_squares_in_t, t, y, wrt=(0, 1), order=2) == "reverse over reverse"


@D
def test_least_squares_without_jac_is_exact_twice(dtype):
    y = (2.0 * np.exp(-0.7 * T) + 0.05 * np.sin(5 * T)).astype(dtype)
    # G = J^T r by reverse mode, dG/dx by the residuals' second derivative and its
    # derivative by their third (user_function_vjp's transformable pullback): no finite
    # differences, the derivatives of the exact jac= (the two solves stop ~1e-10 apart,
    # which the second derivative sees)
    tols = [(pullback.grad, 1e-9, 1e-12), (pullback.hessian, 1e-6, 1e-8)]
    for order, rtol, atol in tols:
        if dtype is np.float32:
            rtol = atol = 1e-6
        have = order(least_squares_with_jac)(y, "2-point")
        want = order(least_squares_with_jac)(y)
        np.testing.assert_allclose(have, want, rtol=rtol, atol=atol)
    assert check_grads(least_squares_with_jac, y, "2-point", order=2) == "reverse over reverse"
    t = T.astype(dtype)
    assert check_grads(least_squares_in_t, t, y, "2-point", wrt=(0, 1), order=2) == (
        "reverse over reverse"
    )


def kinked_argmin(theta):
    # the minimum of (x - theta)^2 + |x - 1| sits on the kink x = 1 for theta in (0.5, 1.5):
    # x* does not move (dx*/dtheta = 0); the implicit function theorem would say 1
    sol = so.minimize(
        lambda x, t: (x[0] - t) ** 2 + np.abs(x[0] - 1.0),
        np.array([0.0]),
        args=(theta,),
        method="Nelder-Mead",
        options={"xatol": 1e-10},
    )
    return sol.x[0]


def smooth_argmin(theta):
    sol = so.minimize(
        lambda x, t: (x[0] - t) ** 2 + np.cosh(x[0] - 1.0),
        np.array([0.0]),
        args=(theta,),
        method="Nelder-Mead",
        options={"xatol": 1e-10, "fatol": 1e-14},
    )
    return sol.x[0]


def test_a_minimum_on_a_kink_is_refused():
    with pytest.raises(UnsupportedCallError) as info:
        pullback.grad(kinked_argmin)(0.8)
    text = str(info.value)
    assert "the gradient of the objective (or the residual) at the solution is not 0" in text
    assert "so the solution has no derivative" in text
    assert "test_scipy_optimize.py:" in text
    # a smooth minimum found by the same derivative-free method still differentiates:
    # 2 (x - t) + sinh(x - 1) = 0 gives dx/dt = 2 / (2 + cosh(x - 1))
    x = smooth_argmin(0.8)
    want = 2.0 / (2.0 + np.cosh(x - 1.0))
    np.testing.assert_allclose(pullback.grad(smooth_argmin)(0.8), want, rtol=1e-7)
