"""Second-order cases of the Lyapunov and Riccati solvers (scipy_linalg_lyapunov.py): the
Riccati equations' ``q`` and ``r`` move only along symmetric directions (SciPy refuses
others), so their cases differentiate ``a`` and ``b``; test_scipy_linalg_lyapunov.py
takes ``q`` and ``r`` through a symmetric parametrization."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import make
from second_order_table import case

pytest.importorskip("scipy.linalg")

STABLE = -2.0 * np.eye(3) + 0.3 * make("real", (3, 3), seed=11)  # eigenvalues left of 0
CONTRACT = 0.4 * make("real", (3, 3), seed=12)  # spectral radius below 1
Q = make("real", (3, 3), seed=13)
B = make("real", (3, 2), seed=14)
SPD_Q = Q @ Q.T + np.eye(3)
SPD_R = np.array([[1.5, 0.2], [0.2, 0.8]])

case("scipy.linalg.solve_continuous_lyapunov", STABLE, Q)
case("scipy.linalg.solve_discrete_lyapunov", CONTRACT, Q)
case("scipy.linalg.solve_continuous_are", make("real", (3, 3), seed=15), B, SPD_Q, SPD_R,
     wrt=(0, 1))  # fmt: skip
case("scipy.linalg.solve_discrete_are", make("real", (3, 3), seed=15), B, SPD_Q, SPD_R,
     wrt=(0, 1))  # fmt: skip
