"""Closures handed to SciPy's solvers (transform/solver_closures.py): a lambda or nested
``def`` that reads the differentiated function's variables takes them through the solver's
``args``, so the solver's rule differentiates them. Each case against central finite
differences (float64, and float32 inputs where the solver runs), forward mode, and second
order where the solver's rule has it; calls that cannot be converted keep their refusal."""

from __future__ import annotations

import numpy as np
import pytest
from fd import numerical_grad

scipy = pytest.importorskip("scipy")
from scipy import integrate, optimize  # noqa: E402

from pullback import grad, hessian, jvp  # noqa: E402
from pullback.errors import UnsupportedSyntaxError  # noqa: E402


def central(f, x, h=1e-6):
    """Central differences of ``f`` at ``x`` (tests/fd.py)."""
    return numerical_grad(f, (x,), 0, eps=h)


def quad_lambda(p):
    return integrate.quad(lambda t: np.exp(-p[0] * t) * np.cos(p[1] * t), 0.0, 2.0)[0]


def quad_def_two_names(p):
    a, b = p[0], p[1] ** 2

    def integrand(t):
        return np.exp(-a * t) * np.sin(b * t + 0.3)

    return integrate.quad(integrand, 0.0, 1.5)[0] + a


def quad_with_args_and_capture(p):
    scale = p[1]
    value = integrate.quad(lambda t, c: scale * np.exp(-c * t * t), 0.0, 1.0, args=(p[0],))[0]
    return value**2


def quad_in_loop(p):
    total = 0.0
    for k in range(3):
        w = p[0] * (k + 1)
        total += integrate.quad(lambda t: np.cos(w * t) * p[1], 0.0, 1.0)[0]
    return total


def quad_captures_an_int(p):
    n = 3
    return integrate.quad(lambda t: t**n * p[0] + p[1] * t, 0.0, 1.0)[0]


def ivp_lambda(p):
    sol = integrate.solve_ivp(
        lambda t, y: -p[0] * y + p[1], (0.0, 1.0), [1.0], t_eval=[0.5, 1.0], rtol=1e-10, atol=1e-12
    )
    return np.sum(sol.y**2)


def ivp_oscillator_def(p):
    k, c = p[0], p[1]

    def rhs(t, y):
        return [y[1], -k * y[0] - c * y[1]]

    sol = integrate.solve_ivp(rhs, (0.0, 2.0), [1.0, 0.0], rtol=1e-10, atol=1e-12)
    return sol.y[0, -1]


def odeint_lambda(p):
    ys = integrate.odeint(
        lambda y, t: -p[0] * y + np.sin(p[1] * t), [1.0], [0.0, 0.5, 1.0], rtol=1e-10, atol=1e-12
    )
    return np.sum(ys**2)


def brentq_lambda(p):
    return optimize.brentq(lambda z: z**3 + p[0] * z - p[1], -5.0, 5.0, xtol=1e-14)


def root_lambda(p):
    sol = optimize.root(lambda z: z**3 + p[0] * z - p[1], 0.5, tol=1e-13)
    return sol.x[0] * p[1]


def minimize_lambda_with_jac(p):
    r = optimize.minimize(
        lambda z: np.sum((z - p) ** 2) + np.sum(z**4),
        np.zeros(2),
        jac=lambda z: 2 * (z - p) + 4 * z**3,
        method="BFGS",
        options={"gtol": 1e-9},
    )
    return np.sum(r.x**2)


def fsolve_def(p):
    def residual(z):
        return z**3 + p[0] * z - p[1]

    return optimize.fsolve(residual, 0.5, xtol=1e-13)[0]


def fitted(p):
    """The amplitude and rate of an exponential fitted to data scaled by ``p[0]``."""
    ts = np.linspace(0.0, 1.0, 6)
    data = np.exp(-0.7 * ts) + 0.1 * np.sin(5 * ts)
    r = optimize.least_squares(
        lambda q: q[0] * np.exp(-q[1] * ts) - data * p[0],
        [1.0, 1.0],
        xtol=1e-14,
        ftol=1e-14,
        gtol=1e-14,
    )
    return r.x


def least_squares_lambda(p):
    q = fitted(p)
    return q[0] + p[1] * q[1]


def apply_along_rows(p):
    rows = np.array([[0.5, 1.0], [2.0, -1.0]])

    def row_value(r, s):
        return np.sum(r**2) * p[0] + s * p[1]

    return np.sum(np.apply_along_axis(row_value, 1, rows, 2.0)) + np.sum(
        np.apply_along_axis(lambda r: np.sin(p[0] * r) * r[0], 0, rows) * p[1]
    )


def piecewise_closures(p):
    x = np.linspace(-1.0, 1.0, 7)
    # (a list written in the call: one bound to a name first keeps PB404's refusal)
    outer = np.piecewise(
        x, [x < -0.5, x > 0.5], [lambda t: p[0] * t**2, 0.0, lambda t: np.sin(p[1] * t)]
    )
    return np.sum(outer) + np.sum(
        np.piecewise(x, [x < 0, x >= 0], [lambda t: p[0] * t, lambda t: p[1] * t**3])
    )


P = np.array([0.7, 1.3])
# central differences of an ODE solution carry the solver's error over h: a wider step
STEP = {"ivp_lambda": 1e-4, "ivp_oscillator_def": 1e-4, "odeint_lambda": 1e-4}
CASES = {
    "quad_lambda": (quad_lambda, 1e-6),
    "quad_def_two_names": (quad_def_two_names, 1e-6),
    "quad_with_args_and_capture": (quad_with_args_and_capture, 1e-6),
    "quad_in_loop": (quad_in_loop, 1e-6),
    "quad_captures_an_int": (quad_captures_an_int, 1e-6),
    "ivp_lambda": (ivp_lambda, 1e-5),
    "ivp_oscillator_def": (ivp_oscillator_def, 1e-5),
    "odeint_lambda": (odeint_lambda, 1e-5),
    "brentq_lambda": (brentq_lambda, 1e-6),
    "apply_along_rows": (apply_along_rows, 1e-6),
    "piecewise_closures": (piecewise_closures, 1e-6),
    "root_lambda": (root_lambda, 1e-6),
    "fsolve_def": (fsolve_def, 1e-6),
}
FORWARD = {
    **CASES,
    "least_squares_lambda": (least_squares_lambda, 1e-6),
    "minimize_lambda_with_jac": (minimize_lambda_with_jac, 1e-6),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences(name):
    f, rtol = CASES[name]
    want = central(f, P, h=STEP.get(name, 1e-6))
    np.testing.assert_allclose(grad(f)(P), want, rtol=rtol, atol=1e-8)


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_forward_mode_matches_reverse(name):
    f, rtol = FORWARD[name]
    v = np.array([1.0, -0.5])
    _, t = jvp(f, (P,), (v,))
    np.testing.assert_allclose(t, np.dot(grad(f)(P), v), rtol=rtol, atol=1e-9)


@pytest.mark.parametrize(
    "name",
    [
        "quad_lambda",
        "quad_def_two_names",
        "brentq_lambda",
        "apply_along_rows",
        "piecewise_closures",
    ],
)
def test_second_order_matches_finite_differences_of_the_gradient(name):
    f, _ = CASES[name]
    g = grad(f)
    want = np.array([central(lambda z, i=i: g(z)[i], P, h=1e-5) for i in range(P.size)])
    np.testing.assert_allclose(hessian(f)(P), want, rtol=1e-5, atol=1e-7)


def test_value_is_the_primal_value():
    from pullback import value_and_grad

    value, _ = value_and_grad(quad_def_two_names)(P)
    assert value == quad_def_two_names(P)


def test_float32_parameters():
    g32 = grad(quad_lambda)(P.astype(np.float32))
    np.testing.assert_allclose(g32, grad(quad_lambda)(P), rtol=1e-5)


def test_hand_derived_quad_gradient():
    # d/dk of integral_0^1 k t^2 dt = 1/3; d/dc of integral_0^1 exp(c t) dt
    def f(p):
        return integrate.quad(lambda t: p[0] * t * t + np.exp(p[1] * t), 0.0, 1.0)[0]

    c = 0.4
    want = [1 / 3, (np.exp(c) * (c - 1) + 1) / c**2]
    np.testing.assert_allclose(grad(f)(np.array([2.0, c])), want, rtol=1e-10)


def test_least_squares_against_the_hand_derived_gradient():
    # scaling the data by p0 scales the fitted amplitude q0 by p0 and leaves the rate q1:
    # d/dp0 (q0 + p1 q1) = q0 / p0, d/dp1 = q1 (finite differences of a least-squares fit
    # carry the solver's stopping noise, about 1e-3 here)
    q = fitted(P)
    np.testing.assert_allclose(grad(least_squares_lambda)(P), [q[0] / P[0], q[1]], rtol=1e-7)


def test_minimize_against_the_hand_derived_gradient():
    # per component 2 (z - p) + 4 z^3 = 0, so dz/dp = 2 / (2 + 12 z^2) and
    # d/dp sum z^2 = 2 z dz/dp (finite differences carry the optimizer's stopping noise)
    z = optimize.minimize(
        lambda z: np.sum((z - P) ** 2) + np.sum(z**4),
        np.zeros(2),
        jac=lambda z: 2 * (z - P) + 4 * z**3,
        method="BFGS",
        options={"gtol": 1e-12},
    ).x
    want = 2 * z * 2 / (2 + 12 * z**2)
    np.testing.assert_allclose(grad(minimize_lambda_with_jac)(P), want, rtol=1e-6)


def test_a_module_level_jacobian_keeps_the_refusal():
    # the solver hands args to jac as well: a function of fixed parameters cannot take them
    def f(p):
        return optimize.minimize(lambda z: np.sum((z - p) ** 2), np.zeros(2), jac=_fixed_jac).x[0]

    with pytest.raises(UnsupportedSyntaxError, match="PB404"):
        grad(f)(P)


def test_a_closure_calling_a_local_function_keeps_the_refusal():
    # the local function would have to travel through args as a value
    def f(p):
        def power(t):
            return t**3

        return integrate.quad(lambda t: power(t) * p[0], 0.0, 1.0)[0]

    with pytest.raises(UnsupportedSyntaxError, match="PB404 lambda passed to a call reads 'p'"):
        grad(f)(P)


def _fixed_jac(z):
    return 2 * z
