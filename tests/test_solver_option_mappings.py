"""Solver calls given their options in a mapping (``solve_ivp(rhs, ts, y0, args=(p,),
**opts)``, ``opts = dict(rtol=1e-10, atol=1e-12)``): a key of a mapping no
differentiated value reaches is passed on as it is (transform/star_calls._keywords_active,
star_runtime.active_keys), a key the solver's rule differentiates (``solve_ivp``'s
``args``) gets its cotangent at every order (star_runtime.call_plan), and a lambda the
solver is handed beside ``**opts`` takes what it reads through ``args``
(transform/solver_closures.py). Each case against central finite differences (float64,
float32 inputs where the solver runs), the hessian against differences of the gradient
where the solver's rule has second derivatives, and a key that does carry a gradient
where no rule takes it keeps its refusal."""

from __future__ import annotations

import numpy as np
import pytest
from fd import central_jacobian, numerical_grad

scipy = pytest.importorskip("scipy")
from scipy import integrate, optimize  # noqa: E402

from pullback import grad, hessian, jvp  # noqa: E402
from pullback.errors import NotDifferentiableError  # noqa: E402

P = np.array([0.7, 0.4])
TIGHT = {"rtol": 1e-10, "atol": 1e-12}
Y0 = np.array([1.0])


def rhs(t, y, a, b):
    return -a * y + b


def ode_rhs(y, t, a):
    return -a * y


def objective(z, a):
    return np.sum((z - a) ** 2) + np.sum(z**4)


def objective_gradient(z, a):
    return 2 * (z - a) + 4 * z**3


def ivp_literal_mapping(p):
    sol = integrate.solve_ivp(
        rhs, (0.0, 1.0), Y0, args=(p[0], p[1]), t_eval=[0.5, 1.0], **{"rtol": 1e-10, "atol": 1e-12}
    )
    return sol.y[0, 0] + sol.y[0, -1] ** 2


def ivp_local_opts(p):
    opts = {"rtol": 1e-10, "atol": 1e-12}
    sol = integrate.solve_ivp(rhs, (0.0, 1.0), Y0, t_eval=[0.5, 1.0], args=(p[0], p[1]), **opts)
    return sol.y[0, -1]


def ivp_global_opts(p):
    sol = integrate.solve_ivp(rhs, (0.0, 1.0), Y0, args=(p[0], p[1]), t_eval=[1.0], **TIGHT)
    return sol.y[0, -1] * p[0]


def ivp_dict_call(p):
    sol = integrate.solve_ivp(
        rhs, (0.0, 1.0), Y0, t_eval=[1.0], args=(p[0], p[1]), **dict(rtol=1e-10, atol=1e-12)
    )
    return sol.y[0, -1]


def ivp_args_in_mapping(p):
    # args itself in the mapping: the rule's keyword, passed at its place
    sol = integrate.solve_ivp(rhs, (0.0, 1.0), Y0, t_eval=[1.0], **{"args": (p[0], p[1])}, **TIGHT)
    return sol.y[0, -1]


def ivp_lambda_opts(p):
    opts = {"rtol": 1e-10, "atol": 1e-12}
    sol = integrate.solve_ivp(lambda t, y: -p[0] * y + p[1], (0.0, 1.0), Y0, t_eval=[1.0], **opts)
    return sol.y[0, -1]


def ivp_passed_opts(p, opts):
    sol = integrate.solve_ivp(rhs, (0.0, 1.0), Y0, args=(p[0], p[1]), t_eval=[1.0], **opts)
    return sol.y[0, -1]


def quad_opts(p):
    opts = {"epsabs": 1e-13, "epsrel": 1e-13, "limit": 100}
    g = integrate.quad(
        lambda t, a, b: np.exp(-a * t) * np.cos(b * t), 0.0, 2.0, args=(p[0], p[1]), **opts
    )
    return g[0]


def quad_lambda_opts(p):
    opts = {"epsabs": 1e-13, "epsrel": 1e-13}
    return integrate.quad(lambda t: np.exp(-p[0] * t) * np.cos(p[1] * t), 0.0, 2.0, **opts)[0]


def odeint_opts(p):
    y = integrate.odeint(ode_rhs, [1.0], [0.0, 0.5, 1.0], args=(p[0],), **TIGHT)
    return y[-1, 0] * p[1]


def odeint_lambda_opts(p):
    opts = dict(rtol=1e-10, atol=1e-12)
    return integrate.odeint(lambda y, t: -p[0] * y + p[1], [1.0], [0.0, 0.5, 1.0], **opts)[-1, 0]


def minimize_opts(p):
    opts = {"jac": objective_gradient, "method": "BFGS", "options": {"gtol": 1e-9}}
    return np.sum(optimize.minimize(objective, np.zeros(2), args=(p,), **opts).x ** 2)


def minimize_lambda_opts(p):
    opts = {"method": "BFGS", "options": {"gtol": 1e-9}}
    r = optimize.minimize(
        lambda z: np.sum((z - p) ** 2) + np.sum(z**4),
        np.zeros(2),
        jac=lambda z: 2 * (z - p) + 4 * z**3,
        **opts,
    )
    return np.sum(r.x**2)


# central differences of an ODE solution carry the solver's error over h: a wider step
ODE = {"ivp", "ode"}
CASES = {
    "ivp_literal_mapping": ivp_literal_mapping,
    "ivp_local_opts": ivp_local_opts,
    "ivp_global_opts": ivp_global_opts,
    "ivp_dict_call": ivp_dict_call,
    "ivp_args_in_mapping": ivp_args_in_mapping,
    "ivp_lambda_opts": ivp_lambda_opts,
    "quad_opts": quad_opts,
    "quad_lambda_opts": quad_lambda_opts,
    "odeint_opts": odeint_opts,
    "odeint_lambda_opts": odeint_lambda_opts,
}
SECOND_ORDER = sorted(CASES)


def step(name):
    return 1e-4 if name[:3] in ODE else 1e-6


def central(f, x, h):
    return numerical_grad(f, (x,), 0, eps=h)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences(name):
    f = CASES[name]
    np.testing.assert_allclose(grad(f)(P), central(f, P, step(name)), rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_inputs(name):
    f = CASES[name]
    g32 = grad(f)(P.astype(np.float32))
    np.testing.assert_allclose(g32, central(f, P, step(name)), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_mode_matches_reverse(name):
    f = CASES[name]
    v = np.array([1.0, -0.5])
    _, t = jvp(f, (P,), (v,))
    np.testing.assert_allclose(t, np.dot(grad(f)(P), v), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_hessian_matches_differences_of_the_gradient(name):
    f = CASES[name]
    g = grad(f)
    want = np.array([central(lambda z, i=i: g(z)[i], P, 1e-5) for i in range(P.size)])
    np.testing.assert_allclose(hessian(f)(P), want, rtol=1e-5, atol=1e-7)


def test_options_passed_in_as_an_argument():
    opts = {"rtol": 1e-10, "atol": 1e-12}
    got = grad(ivp_passed_opts)(P, opts)
    want = central(lambda z: ivp_passed_opts(z, opts), P, 1e-4)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-8)


def minimizer(p):
    """The minimizer the cases find, as tightly (the hand-derived derivatives read it)."""
    options = {"gtol": 1e-12}
    return optimize.minimize(
        objective, np.zeros(2), args=(p,), jac=objective_gradient, method="BFGS", options=options
    ).x


@pytest.mark.parametrize("f", [minimize_opts, minimize_lambda_opts])
def test_minimize_against_the_hand_derived_gradient(f):
    # per component 2 (z - p) + 4 z^3 = 0, so dz/dp = 2 / (2 + 12 z^2) and
    # d/dp sum z^2 = 2 z dz/dp (finite differences carry the optimizer's stopping noise)
    z = minimizer(P)
    want = 2 * z * 2 / (2 + 12 * z**2)
    np.testing.assert_allclose(grad(f)(P), want, rtol=1e-6)


def test_the_same_as_the_keywords_written_out():
    def written(p):
        sol = integrate.solve_ivp(
            rhs, (0.0, 1.0), Y0, t_eval=[0.5, 1.0], args=(p[0], p[1]), rtol=1e-10, atol=1e-12
        )
        return sol.y[0, -1]

    np.testing.assert_allclose(grad(ivp_local_opts)(P), grad(written)(P), rtol=1e-12)
    np.testing.assert_allclose(hessian(ivp_local_opts)(P), hessian(written)(P), rtol=1e-10)


def tolerance_from_p(p):
    opts = {"rtol": 1e-8 * p[1], "atol": 1e-12}
    sol = integrate.solve_ivp(rhs, (0.0, 1.0), Y0, args=(p[0], p[1]), t_eval=[1.0], **opts)
    return sol.y[0, -1]


def quad_limit_from_p(p):
    opts = {"epsabs": p[1] * 1e-10}
    return integrate.quad(lambda t: np.exp(-p[0] * t), 0.0, 1.0, **opts)[0]


def test_a_tolerance_that_carries_a_gradient_is_refused():
    with pytest.raises(NotDifferentiableError) as e:
        grad(tolerance_from_p)(P)
    message = str(e.value)
    assert "test_solver_option_mappings.py:" in message
    assert (
        "the keyword argument 'rtol' of 'solve_ivp' carries a gradient, but it cannot be "
        "passed by position, and keyword arguments found at run time are not differentiated."
    ) in message
    assert "sol = integrate.solve_ivp(rhs, (0.0, 1.0), Y0, args=(p[0], p[1]), t_eval=" in message
    assert message.rstrip().endswith(
        "Fix: pass 'rtol' by position, or give the callee a parameter for it."
    )


def test_a_converted_closure_keeps_the_refusal_of_an_active_key():
    with pytest.raises(NotDifferentiableError, match="keyword argument 'epsabs' of 'quad'"):
        grad(quad_limit_from_p)(P)


def weights_in_a_list(p):
    xs = [np.array([1.0, 3.0])]
    return np.average(*xs, weights=[p[0], p[1]])


def test_a_list_of_floats_with_a_gradient_in_a_keyword_is_differentiated():
    # (its gradient was silently zero: the callee's pullback gave positional cotangents
    # only; np.average's weights now move into position, and a keyword that cannot is
    # refused, as 'rtol' above)
    np.testing.assert_allclose(
        grad(weights_in_a_list)(P), central(weights_in_a_list, P, 1e-6), rtol=1e-7
    )
    want = central_jacobian(grad(weights_in_a_list), P, 1e-5)
    np.testing.assert_allclose(hessian(weights_in_a_list)(P), want, rtol=1e-6, atol=1e-8)


def test_a_constant_list_in_a_keyword_is_passed_on():
    def f(p):
        xs = [p * p]
        return np.average(*xs, weights=[1.0, 3.0])

    np.testing.assert_allclose(grad(f)(P), central(f, P, 1e-6), rtol=1e-7)


@pytest.mark.parametrize("f", [minimize_opts, minimize_lambda_opts])
def test_minimize_hessian_against_the_hand_derived_one(f):
    # the gradient is h(z) = 4 z / (2 + 12 z^2) per component, z(p) as above: its
    # derivative h'(z) dz/dp with h'(z) = 4 (2 - 12 z^2) / (2 + 12 z^2)^2 (diagonal)
    z = minimizer(P)
    dz = 2 / (2 + 12 * z**2)
    want = np.diag(4 * (2 - 12 * z**2) / (2 + 12 * z**2) ** 2 * dz)
    np.testing.assert_allclose(hessian(f)(P), want, rtol=1e-6, atol=1e-12)
