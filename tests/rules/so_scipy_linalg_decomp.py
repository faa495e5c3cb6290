"""Second-order cases of scipy.linalg's factorizations, expm_frechet, solve_banded, lstsq and
block_diag (their transformable pullbacks: scipy_linalg_pullbacks.py,
scipy_linalg_matfuncs.py). Most results are tuples, so they are coverage cases (see
second_order_table.py), run by test_second_order_coverage.py in float64 and float32."""

from __future__ import annotations

import importlib.util

import numpy as np
from rule_inputs import make, spd, well_conditioned
from second_order_table import coverage_case as case

if importlib.util.find_spec("scipy") is not None:  # SciPy is optional
    W3 = well_conditioned((3, 3), seed=4)
    T43 = well_conditioned((4, 3), seed=8)
    T34 = well_conditioned((3, 4), seed=9)
    S3 = spd(3, seed=6)
    case("scipy.linalg.svd", W3)
    case("scipy.linalg.svd", T43, False)
    case("scipy.linalg.svd", T34, compute_uv=False)
    # SciPy's default driver ('evr') gives eigenvectors signs that jump under steps of
    # 1e-3 (a loss that reads their signs is not differentiable there, and finite
    # differences of its gradient are noise); 'evd' (NumPy's) keeps them
    case("scipy.linalg.eigh", S3, driver="evd")
    case("scipy.linalg.eigh", S3, lower=False, driver="evd")
    case("scipy.linalg.eigh", S3, eigvals_only=True)
    case("scipy.linalg.qr", W3)
    case("scipy.linalg.qr", T43, mode="economic")
    case("scipy.linalg.qr", T34)
    case("scipy.linalg.qr", T43, mode="r")
    case("scipy.linalg.cho_factor", S3)
    case("scipy.linalg.cho_factor", S3, True)
    case("scipy.linalg.lu", W3)
    case("scipy.linalg.lu", T43)
    case("scipy.linalg.lu", T34, permute_l=True)
    # a stack of matrices (matrix by matrix)
    case("scipy.linalg.lu", np.stack([W3, W3.T + 0.5 * np.eye(3)]))
    case("scipy.linalg.lu", np.stack([T43, 0.5 * T43]), permute_l=True)
    case("scipy.linalg.lu_factor", W3)
    case("scipy.linalg.lu_factor", T43)
    case("scipy.linalg.lu_factor", T34)
    A = 0.5 * make("real", (3, 3), seed=8)
    case("scipy.linalg.expm_frechet", A, make("real", (3, 3), seed=9))
    case("scipy.linalg.expm_frechet", A, make("real", (3, 3), seed=10), compute_expm=False)

    # solve_banded (its diagonal, row `up` of the band, dominant), lstsq (tall, with
    # residues, and square) and block_diag (vectors, scalars and empty blocks among them)
    AB = make("real", (4, 5), seed=3) * 0.3 + 3.0 * (np.arange(4) == 1)[:, None]
    AB20 = make("real", (3, 5), seed=4) * 0.3 + 3.0 * (np.arange(3) == 0)[:, None]
    case("scipy.linalg.solve_banded", (1, 2), AB, make("real", (5,), seed=1))
    case("scipy.linalg.solve_banded", (2, 0), AB20, make("real", (5, 2), seed=1))
    case("scipy.linalg.lstsq", well_conditioned((5, 3)), make("real", (5,), seed=1))
    case("scipy.linalg.lstsq", well_conditioned((5, 3)), make("real", (5, 2), seed=1))
    case("scipy.linalg.lstsq", W3, make("real", (3,), seed=1))
    case("scipy.linalg.block_diag", W3, make("real", (3,), seed=1), make("real", (1, 2), seed=2))
    case("scipy.linalg.block_diag", W3, np.float64(1.5), np.zeros((0, 2)))
