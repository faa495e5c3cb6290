"""Second-order cases of the scipy.optimize rules whose pullbacks are transformable (the
implicit function theorem written so that pullback differentiates it again)."""

from __future__ import annotations

import numpy as np
import pytest
from second_order_table import case

so = pytest.importorskip("scipy.optimize")

from test_scipy_optimize import (  # noqa: E402
    X0,
    T,
    exponential,
    exponential_jac,
    objective,
    objective_and_gradient,
    objective_gradient,
    residual,
    residual_and_jacobian,
    scalar_residual,
)


def shifted_residual(x, p):
    return x + 0.3 * np.tanh(x) - p


case("scipy.optimize.fsolve", residual, X0, (1.2, 0.3), wrt=(2,), xtol=1e-13)
P3 = (np.array([0.2, -0.4, 0.9]),)
case("scipy.optimize.fsolve", shifted_residual, np.zeros(3), P3, wrt=(2,), xtol=1e-13)
case("scipy.optimize.brentq", scalar_residual, 0.0, 2.0, (0.7,), wrt=(3,), xtol=1e-14)

for _fn, _method, _jac in (
    (residual, "hybr", None),
    (residual, "lm", None),
    (residual_and_jacobian, "hybr", True),
):
    case("scipy.optimize.root", _fn, X0, (1.2, 0.3), _method, _jac, 1e-13, wrt=(2,))

# minimize(fun, x0, args, method, jac, hess, hessp, bounds, constraints, tol, callback,
# options): a start given as a list, so that the float32 cases keep a float64 one (BFGS
# on a float32 start stops short of gtol)
P = np.array([0.5, -0.3])
# (without jac=, G is pullback's gradient of the objective: complex steps get BFGS as close)
for _fn, _jac in (
    (objective, objective_gradient),
    (objective_and_gradient, True),
    (objective, "cs"),
):
    _rest = (None, None, None, (), None, None, {"gtol": 1e-10})
    case("scipy.optimize.minimize", _fn, [0.0, 0.0], (P, 0.7), "BFGS", _jac, *_rest, wrt=(2,))

# least_squares(fun, x0, jac, bounds, method, ftol, xtol, gtol, x_scale, loss, f_scale,
# diff_step, tr_solver, tr_options, jac_sparsity, max_nfev, verbose, args): with a jac=
# function (G = J^T r), and without one (G by pullback's reverse mode of the residuals)
_Y = 2.0 * np.exp(-0.7 * T) + 0.05 * np.sin(5 * T)
_FREE = so.Bounds(np.full(2, -np.inf), np.full(2, np.inf))
_LS_REST = (1.0, "linear", 1.0, None, None, {}, None, None, 0)
for _jac in (exponential_jac, "2-point"):
    _LS = (exponential, [1.0, 1.0], _jac, _FREE, "trf", 1e-15, 1e-15, 1e-15)
    case("scipy.optimize.least_squares", *_LS, *_LS_REST, (T, _Y), wrt=(17,))
