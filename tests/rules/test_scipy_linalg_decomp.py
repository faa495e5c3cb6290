"""scipy.linalg factorization rules against finite differences, and their refusals."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make, spd, well_conditioned

sl = pytest.importorskip("scipy.linalg")
# SciPy's own behaviour, not the rules': cholesky, qr, svd and eigh take stacks of
# matrices from 1.16 on (before, the primal itself refuses them).
BATCHES = tuple(int(p) for p in __import__("scipy").__version__.split(".")[:2]) >= (1, 16)

from pullback import ArgumentError, default_registry  # noqa: E402
from pullback.tangents import NO_TANGENT, ZERO  # noqa: E402
from pullback.testing import check_grads, check_rrule  # noqa: E402

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)


def rule_of(fn):
    return default_registry().lookup(fn)


@D
@pytest.mark.parametrize("lower", [False, True])
def test_cholesky(lower, dtype):
    check_rrule(sl.cholesky, spd(4, dtype), lower=lower)
    if BATCHES:
        check_rrule(sl.cholesky, spd(3, dtype, batch=(2,)), lower)
    check_rrule(sl.cholesky, spd(1, dtype))


def test_cholesky_reads_one_triangle():
    _, back = rule_of(sl.cholesky).rrule(spd(3))
    (g,) = back(np.ones((3, 3)))
    assert np.all(np.tril(g, -1) == 0) and np.any(np.triu(g, 1) != 0)


@D
@pytest.mark.parametrize("lower", [False, True])
def test_cho_factor_and_solve(lower, dtype):
    a = spd(4, dtype)
    check_rrule(sl.cho_factor, a, lower)
    c = sl.cho_factor(a, lower=lower)
    check_rrule(sl.cho_solve, c, make("real", (4,), dtype, seed=1))
    check_rrule(sl.cho_solve, c, make("real", (4, 2), dtype, seed=1))


@D
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 3), (1, 1)], ids=str)
def test_lu(shape, dtype):
    a = well_conditioned(shape, dtype) + 0.3 * make("real", shape, dtype, seed=4)
    check_rrule(sl.lu, a)
    check_rrule(sl.lu, a, True)
    check_rrule(sl.lu, a, p_indices=True)


@D
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)], ids=str)
def test_lu_factor(shape, dtype):
    a = make("real", shape, dtype) + 0.5 * well_conditioned(shape, dtype)
    check_rrule(sl.lu_factor, a)


@D
@pytest.mark.parametrize("trans", [0, 1, 2])
@pytest.mark.parametrize("bshape", [(3,), (3, 2)], ids=str)
def test_lu_solve(trans, bshape, dtype):
    a = make("real", (3, 3), dtype) + 0.5 * well_conditioned((3, 3), dtype)
    lu_piv = sl.lu_factor(a)
    check_rrule(sl.lu_solve, lu_piv, make("real", bshape, dtype, seed=1), trans)


def test_lu_refusals():
    with pytest.raises(ArgumentError, match="U is singular"):
        rule_of(sl.lu).rrule(np.ones((3, 3)))
    with pytest.raises(ArgumentError, match="one matrix"):
        rule_of(sl.lu_factor).rrule(np.ones((2, 3, 3)))


@D
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 4, 3)], ids=str)
def test_qr(shape, dtype):
    if len(shape) > 2 and not BATCHES:
        pytest.skip("SciPy < 1.16 factors no stacks of matrices")
    a = well_conditioned(shape, dtype)
    check_rrule(sl.qr, a, mode="economic")
    check_rrule(sl.qr, a, mode="r")
    if shape[-2] <= shape[-1]:
        check_rrule(sl.qr, a)


def test_qr_refusals():
    qr = rule_of(sl.qr).rrule
    with pytest.raises(ArgumentError, match="mode='economic'"):
        qr(np.ones((3, 2)))
    with pytest.raises(ArgumentError, match="pivoting"):
        qr(np.eye(2), pivoting=True)
    with pytest.raises(ArgumentError, match="rank deficient"):
        qr(np.ones((2, 2)), mode="economic")


@D
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 2)], ids=str)
def test_svd(shape, dtype):
    if len(shape) > 2 and not BATCHES:
        pytest.skip("SciPy < 1.16 factors no stacks of matrices")
    a = make("real", shape, dtype) + 0.5 * well_conditioned(shape, dtype)
    check_rrule(sl.svd, a, False)
    check_rrule(sl.svd, a, compute_uv=False)
    if shape[-1] == shape[-2]:
        check_rrule(sl.svd, a)


def test_svd_refusals():
    svd = rule_of(sl.svd).rrule
    with pytest.raises(ArgumentError, match="full_matrices=False"):
        svd(np.ones((3, 2)))
    with pytest.raises(ArgumentError, match="singular values repeat"):
        svd(np.eye(3))
    svd(np.eye(3), compute_uv=False)  # the values alone are fine


@D
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("driver", ["evd", "ev"])
def test_eigh(lower, driver, dtype):
    # The default driver ('evr') picks the signs of eigenvectors in a way that jumps under
    # tiny perturbations of some matrices, which finite differences cannot follow; the
    # rule is the derivative along the computed vectors whichever driver ran.
    s = make("real", (4, 4), seed=1) * 0.2
    a = (np.diag([1.0, 2.0, 3.0, 4.0]) + s + s.T).astype(dtype)
    check_rrule(sl.eigh, a, lower=lower, driver=driver)
    check_rrule(sl.eigh, a, lower=lower, eigvals_only=True)
    if BATCHES:
        b = spd(3, dtype, batch=(2,), seed=1) + np.diag([0.0, 0.7, 1.4]).astype(dtype)
        check_rrule(sl.eigh, b, driver=driver)
        check_rrule(sl.eigh, b, None, eigvals_only=True)
    check_rrule(sl.eigh, a, lower=lower, output_cotangent=(make("real", (4,), dtype), ZERO))


def test_eigh_refusals():
    eigh = rule_of(sl.eigh).rrule
    with pytest.raises(ArgumentError, match="eigenvalues repeat"):
        eigh(np.eye(3))
    eigh(np.eye(3), eigvals_only=True)
    with pytest.raises(ArgumentError, match="generalized"):
        eigh(spd(2), spd(2, seed=1))
    with pytest.raises(ArgumentError, match="real matrices"):
        eigh(np.eye(2) + 0j)


def test_cotangent_of_the_pair_arguments():
    a = spd(3)
    c = sl.cho_factor(a)
    _, back = rule_of(sl.cho_solve).rrule(c, np.ones(3))
    (dc, dlower), db = back(np.ones(3))
    assert dlower is NO_TANGENT and dc.shape == (3, 3) and db.shape == (3,)
    assert back(ZERO)[1] is ZERO


def _cholesky_quadratic(a, b):
    L = sl.cholesky(a, lower=True)
    x = sl.solve_triangular(L, b, lower=True)
    return np.sum(x**3) + np.sum(L * L * L)


def test_second_order_through_cholesky():
    a, b = spd(3), make("real", (3, 2), seed=1)
    for i in (0, 1):
        assert check_grads(_cholesky_quadratic, a, b, wrt=i, order=2) == "reverse over reverse"


def _eigenvector_loss(a):
    w, v = sl.eigh(a)
    return np.sum(v[:, 0] ** 2 * w)


def test_refusal_reaches_the_user_in_the_forward_sweep():
    from pullback import grad

    with pytest.raises(ArgumentError, match="eigenvalues repeat") as info:
        grad(_eigenvector_loss)(np.eye(3))
    text = str(info.value)
    assert "Fix: use eigvals_only=True" in text and "test_scipy_linalg_decomp.py" in text
    g = grad(_eigenvector_loss)(np.diag([1.0, 2.0, 3.0]) + 0.1 * spd(3))
    assert g.shape == (3, 3)
    check_grads(_eigenvector_loss, np.diag([1.0, 2.0, 3.0]) + 0.1 * spd(3))
