"""Third derivatives through odeint and solve_ivp (issue 12): the second derivative of an ODE
solution runs through the primitives odeint_cotangents / solve_ivp_cotangents, whose own
derivatives come from their reference sweeps (scipy_ode_pullbacks.py) differentiated again.

A small problem, ``y' = -k y`` from ``y(0) = a`` read at ``T``, so that the loss
``L(a, k) = sum_t a^2 exp(-2 k t)`` has closed-form derivatives. ``grad`` of the mixed
second derivative ``d2L/da dk`` with respect to ``a`` and ``k`` (the initial state and a
parameter in ``args``) is checked against central differences of that second derivative
and against the closed form. The solvers run at rtol = atol = 1e-10, so the second
derivative is accurate to about that relative error; its central difference with step
``H = 1e-4`` carries about ``1e-10 / H`` of it (the truncation, ``H**2``, is smaller).
"""

from __future__ import annotations

import numpy as np
import pytest

from pullback import grad

si = pytest.importorskip("scipy.integrate")

TOL = 1e-10  # the solvers' rtol and atol
H = 1e-4  # the central-difference step of the second derivative
T = np.array([0.0, 0.8])  # odeint's output times (one segment)
T_EVAL = np.array([0.8])  # solve_ivp's
A, K = 1.0, 0.7


def decay(y, t, k):
    return -k * y


def decay_first(t, y, k):
    return -k * y


def odeint_loss(a, k):
    ys = si.odeint(decay, np.stack((a,)), T, args=(k,), rtol=TOL, atol=TOL)
    return np.sum(ys**2)


def solve_ivp_loss(a, k):
    sol = si.solve_ivp(
        decay_first, (0.0, 0.8), np.stack((a,)), "DOP853", T_EVAL, args=(k,), rtol=TOL, atol=TOL
    )
    return np.sum(sol.y**2)


def exact_third(times, a, k):
    """``(d3L/da2 dk, d3L/da dk2)`` of ``L = sum_t a^2 exp(-2 k t)``."""
    e = np.exp(-2 * k * times)
    return np.sum(-4 * times * e), np.sum(8 * a * times**2 * e)


@pytest.mark.parametrize(
    "loss, times", [(odeint_loss, T), (solve_ivp_loss, T_EVAL)], ids=["odeint", "solve_ivp"]
)
def test_third_derivative_in_y0_and_a_parameter(loss, times):
    second = grad(grad(loss, wrt=0), wrt=1)  # d2L / da dk
    third = grad(second, wrt=(0, 1))  # its gradient: (d3L/da2 dk, d3L/da dk2)
    got = np.array(third(A, K))
    fd = np.array(
        [
            (second(A + H, K) - second(A - H, K)) / (2 * H),
            (second(A, K + H) - second(A, K - H)) / (2 * H),
        ]
    )
    np.testing.assert_allclose(got, fd, rtol=TOL / H)
    # the third derivative itself is as accurate as the solves (a few solver tolerances)
    np.testing.assert_allclose(got, exact_third(times, A, K), rtol=100 * TOL)
