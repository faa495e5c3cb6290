"""Second-order cases of the scipy.linalg, scipy.signal and scipy.integrate rules whose
pullback is a transformable function (see ``second_order_table``).

``simpson`` with sample points ``x`` (by position or keyword, 1-D or with ``y``'s shape,
odd and even counts) is here since its pullback writes the spacings' derivative out
(scipy_integrate.simpson_spacing_cotangent). The scipy.linalg factorizations (``lu``,
``qr``, ``svd``, ``eigh``, ...) have their cases in so_scipy_linalg_decomp.py. The rules
that call a user's function — ``quad``, ``odeint``, ``solve_ivp`` — are here (their
pullback functions: scipy_quad_pullbacks.py, scipy_ode_pullbacks.py), with the primitives
behind them that can be differentiated once more (``user_call``, ``quad_cotangents`` in the
limits, ``odeint_cotangents`` and ``solve_ivp_cotangents``); the coverage test runs those
cases, and test_so_scipy_calculus.py checks the small problems of issue 12 (decay,
oscillator, Lotka-Volterra, a Gaussian integrand, moving limits) against closed forms and
finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import make, spd, well_conditioned
from second_order_table import case, coverage_case

sl = pytest.importorskip("scipy.linalg")
pytest.importorskip("scipy.signal")
pytest.importorskip("scipy.integrate")

A = spd(3) + 0.5 * np.eye(3)
G = well_conditioned((3, 3))
B = make("real", (3, 2), seed=1)
V = make("real", (3,), seed=2)
X = make("real", (6,), seed=3)
H = make("real", (3,), seed=4)
T = np.array([0.0, 0.3, 0.5, 1.1, 1.4])

# -- scipy.linalg -----------------------------------------------------------------------------
case("scipy.linalg.solve", G, B)
case("scipy.linalg.solve", A, V, True)  # lower=True
case("scipy.linalg.solve_triangular", G, B, 0, True)  # trans=0, lower=True
case("scipy.linalg.inv", G)
case("scipy.linalg.det", G)
case("scipy.linalg.solve_sylvester", G, G.T, make("real", (3, 3), seed=5))
case("scipy.linalg.pinv", make("real", (4, 3), seed=6))
case("scipy.linalg.toeplitz", V, make("real", (4,), seed=7))
case("scipy.linalg.cholesky", A, True)  # lower=True
case("scipy.linalg.cho_solve", (sl.cholesky(A, lower=True), True), B, wrt=(1,))
case("scipy.linalg.lu_solve", sl.lu_factor(G), B, wrt=(1,))
case("scipy.linalg.expm", 0.5 * make("real", (3, 3), seed=8))
case("scipy.linalg.sqrtm", A)

# -- scipy.signal -----------------------------------------------------------------------------
case("scipy.signal.convolve", X, H)
case("scipy.signal.correlate", X, H, "same")
case("scipy.signal.fftconvolve", X, H)
case("scipy.signal.lfilter", H, np.array([1.2, -0.4]), X)

# -- scipy.integrate on samples ---------------------------------------------------------------
case("scipy.integrate.trapezoid", make("real", (5,), seed=9), T)
case("scipy.integrate.cumulative_trapezoid", make("real", (5,), seed=9), T)
case("scipy.integrate.simpson", make("real", (5,), seed=9))  # uniform spacing only
case("scipy.integrate.simpson", make("real", (2, 4), seed=9))
# with sample points: an odd and an even count (Cartwright's last interval), 1-D x against
# N-D samples, x with y's shape, and x by keyword along another axis
T6 = np.array([0.0, 0.3, 0.5, 1.1, 1.4, 1.6])
case("scipy.integrate.simpson", make("real", (5,), seed=9), T)
case("scipy.integrate.simpson", make("real", (6,), seed=9), T6)
case("scipy.integrate.simpson", make("real", (2, 6), seed=9), T6)
case("scipy.integrate.simpson", make("real", (2, 4), seed=9), np.stack([T[:4], 0.5 * T[1:]]))
coverage_case("scipy.integrate.simpson", make("real", (5,), seed=9), x=T)
coverage_case("scipy.integrate.simpson", make("real", (6, 2), seed=9), x=T6, axis=0)

# -- scipy.integrate with a user's function ---------------------------------------------------
# Tolerances: quad with epsabs = epsrel = 1e-13 gives the integrals (and, on the same
# subintervals, their parameter derivatives) to ~1e-13, far below the finite-difference
# error of the check (step 1e-3 on the gradient: ~1e-7 relative), so the comparison keeps
# its own tolerance.
QUAD_TIGHT = (0, 1e-13, 1e-13)  # full_output, epsabs, epsrel


def bump(x, c, k):
    return np.exp(-c * x * x) * np.sin(k * x)


def wave(x):
    return np.sin(2.0 * x) * np.exp(-x)


def gaussian(x, s):
    return np.exp(-0.5 * (x / s) ** 2)


case("scipy.integrate.quad", bump, 0.2, 1.5, (0.7, 1.3), *QUAD_TIGHT)
case("scipy.integrate.quad", gaussian, -0.4, 1.1, (np.float64(0.8),), *QUAD_TIGHT)
case("scipy.integrate.quad", bump, 0.3, np.inf, (0.9, 2.0), *QUAD_TIGHT)  # infinite limit
# The primitives behind quad's pullback function: their second derivatives are quad's
# third. Through the limits they run (the integrand's third derivative comes from
# user_function_vjp's rule); a third derivative in a parameter of ``args`` would need the
# integrand's vjp differentiated twice, which user_function_vjp does not take.
case("pullback.rules.scipy_quad_pullbacks.user_call", bump, 0.4, (0.7, 1.3))
case(
    "pullback.rules.scipy_quad_pullbacks.quad_cotangents",
    *(1.3, wave, -0.4, 1.1, 1e-13, 1e-13, 50, None, ()),
    wrt=(0, 2, 3),
)


# -- odeint and solve_ivp ------------------------------------------------------------------------
# Tolerances: the solvers run at rtol = atol = 1e-10 (odeint) and 1e-9 (solve_ivp, RK45), so
# the gradients (adjoint solves at the same tolerances) are accurate to ~1e-9 relative; the
# check differences the gradient with a step of 1e-3, where that error becomes ~1e-6 of the
# second derivative: inside the check's own float64 tolerance (1e-5), which stays as it is.
ODE_T = np.array([0.0, 0.4, 1.0])
ODE_Y0 = np.array([1.0, 0.5])


def decay(y, t, k):
    return -k * y


def oscillator(t, y, w, c):
    return np.array([y[1], -w * w * y[0] - c * y[1]])


ODEINT_TIGHT = (None, 0, 0, None, None, 1e-10, 1e-10)  # Dfun ... rtol, atol
case("scipy.integrate.odeint", decay, ODE_Y0, ODE_T, (0.7,), *ODEINT_TIGHT, wrt=(1, 2, 3))
IVP_T_EVAL = np.array([0.5, 1.0])
case(
    "scipy.integrate.solve_ivp",
    *(oscillator, (0.0, 1.2), ODE_Y0, "RK45", IVP_T_EVAL, False, None, False, (1.3, 0.2)),
    rtol=1e-9,
    atol=1e-9,
    wrt=(1, 2, 4, 8),
)


# The primitives behind odeint's and solve_ivp's pullback functions: their second derivatives
# are the solvers' third (reverse over reverse through odeint_cotangents_reference and
# solve_ivp_cotangents_reference, whose augmented solves are differentiated again). Small
# problems at tight tolerances (rtol = atol = 1e-10: the check's differences of the gradient
# then stay ~1e-7 relative), wrt the output cotangent, y0, the times and the parameter.
def decay_first(t, y, k):
    return -k * y


ODE_DY = np.array([[0.8], [-0.5]])
case(
    "pullback.rules.scipy_ode_pullbacks.odeint_cotangents",
    *(ODE_DY, decay, np.array([1.0]), np.array([0.0, 0.6]), (0.7,), False, 1e-10, 1e-10, 0, 0.0),
    wrt=(0, 2, 3, 4),
)
IVP_TOL = (("rtol", 1e-10), ("atol", 1e-10), ("max_step", np.inf))
case(
    "pullback.rules.scipy_ode_pullbacks.solve_ivp_cotangents",
    *(ODE_DY.T, decay_first, (0.0, 0.8), np.array([1.0]), "DOP853", np.array([0.3, 0.6])),
    *((0.7,), IVP_TOL),
    wrt=(0, 2, 3, 5, 6),
)

# The solvers' args trees (rules/_args_trees.py): a nested tuple's leaves as one vector
# and back, both linear in the cotangent (the tree itself is a constant).
_TREE = (0.5, (1.2, np.array([0.3, -0.4])))
case(
    "pullback.rules._args_trees.tree_vector",
    (0.2, (0.7, np.array([1.1, -0.6]))),
    _TREE,
    wrt=(0,),
)
case(
    "pullback.rules._args_trees.tree_from_vector", np.array([0.2, 0.7, 1.1, -0.6]), _TREE, wrt=(0,)
)
