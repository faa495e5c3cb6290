"""Second-order cases of scipy.linalg's factorizations and expm_frechet (their transformable
pullbacks: scipy_linalg_pullbacks.py, scipy_linalg_matfuncs.py). Their results are tuples,
so they are coverage cases (see second_order_table.py), run by
test_second_order_coverage.py in float64 and float32."""

from __future__ import annotations

import importlib.util

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
    case("scipy.linalg.lu_factor", W3)
    case("scipy.linalg.lu_factor", T43)
    case("scipy.linalg.lu_factor", T34)
    A = 0.5 * make("real", (3, 3), seed=8)
    case("scipy.linalg.expm_frechet", A, make("real", (3, 3), seed=9))
    case("scipy.linalg.expm_frechet", A, make("real", (3, 3), seed=10), compute_expm=False)
