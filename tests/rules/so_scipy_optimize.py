"""Second-order cases of the scipy.optimize rules whose pullbacks are transformable (the
implicit function theorem written so that pullback differentiates it again)."""

from __future__ import annotations

import numpy as np
import pytest
from second_order_table import case

so = pytest.importorskip("scipy.optimize")


def residual(x, a, b):
    return np.array([x[0] ** 3 + x[1] - a, x[1] ** 3 - x[0] - b * x[0] ** 2])


def scalar_residual(x, c):
    return np.cos(x) - c * x


def shifted_residual(x, p):
    return x + 0.3 * np.tanh(x) - p


X0 = np.array([0.8, 0.5])

case("scipy.optimize.fsolve", residual, X0, (1.2, 0.3), wrt=(2,), xtol=1e-13)
case(
    "scipy.optimize.fsolve",
    shifted_residual,
    np.zeros(3),
    (np.array([0.2, -0.4, 0.9]),),
    wrt=(2,),
    xtol=1e-13,
)
case("scipy.optimize.brentq", scalar_residual, 0.0, 2.0, (0.7,), wrt=(3,), xtol=1e-14)


def residual_and_jacobian(x, a, b):
    jac = np.array([[3 * x[0] ** 2, 1.0], [-1.0 - 2 * b * x[0], 3 * x[1] ** 2]])
    return residual(x, a, b), jac


case("scipy.optimize.root", residual, X0, (1.2, 0.3), "hybr", None, 1e-13, wrt=(2,))
case("scipy.optimize.root", residual, X0, (1.2, 0.3), "lm", None, 1e-13, wrt=(2,))
case("scipy.optimize.root", residual_and_jacobian, X0, (1.2, 0.3), "hybr", True, 1e-13, wrt=(2,))


def objective(x, p, s):
    return np.sum((x - p) ** 4) + s * np.sum(x * x) + np.sum(np.exp(x))


def objective_gradient(x, p, s):
    return 4 * (x - p) ** 3 + 2 * s * x + np.exp(x)


def objective_and_gradient(x, p, s):
    return objective(x, p, s), objective_gradient(x, p, s)


P = np.array([0.5, -0.3])
TIGHT = {"gtol": 1e-10}
START = [0.0, 0.0]  # a list: the float32 cases keep a float64 start (BFGS needs it)
case(
    "scipy.optimize.minimize",
    objective,
    START,
    (P, 0.7),
    "BFGS",
    objective_gradient,
    None,
    None,
    None,
    (),
    None,
    None,
    TIGHT,
    wrt=(2,),
)
case(
    "scipy.optimize.minimize",
    objective_and_gradient,
    START,
    (P, 0.7),
    "BFGS",
    True,
    None,
    None,
    None,
    (),
    None,
    None,
    TIGHT,
    wrt=(2,),
)
