"""numpy.linalg rules against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make, make_complex, spd, well_conditioned

from pullback.registry import NONDIFF, default_registry
from pullback.tangents import ZERO
from pullback.testing import check_grads, check_rrule

la = np.linalg
D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)


def cplx(shape, seed=0):
    return (make_complex(shape, seed=seed) * 0.3 + 1.5 * np.eye(shape[-1])).astype(complex)


@D
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)], ids=str)
def test_inv_det_slogdet(shape, dtype):
    a = well_conditioned(shape, dtype)
    check_rrule(la.inv, a)
    check_rrule(la.det, a)
    check_rrule(la.slogdet, a)
    check_rrule(la.slogdet, -a)


def test_complex_inv_det_slogdet_solve():
    a = cplx((3, 3))
    check_rrule(la.inv, a)
    check_rrule(la.det, a)
    check_rrule(la.slogdet, a)
    check_rrule(la.solve, a, make_complex((3, 2), seed=1))
    check_rrule(la.pinv, make_complex((3, 2)))


@D
@pytest.mark.parametrize(
    "ashape,bshape",
    [
        ((3, 3), (3,)),
        ((3, 3), (3, 2)),
        ((2, 3, 3), (3,)),
        ((2, 3, 3), (2, 3, 4)),
        ((2, 3, 3), (3, 1)),
        ((3, 3), (2, 3, 2)),
    ],
    ids=str,
)
def test_solve(ashape, bshape, dtype):
    check_rrule(la.solve, well_conditioned(ashape, dtype), make("real", bshape, dtype, seed=1))


@D
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 2)], ids=str)
def test_pinv(shape, dtype):
    a = well_conditioned(shape, dtype)
    check_rrule(la.pinv, a)
    check_rrule(la.pinv, a, 1e-10, constants=(1,))


@D
@pytest.mark.parametrize("n", [0, 1, 2, 3, -1, -2])
def test_matrix_power(n, dtype):
    check_rrule(la.matrix_power, well_conditioned((3, 3), dtype), n)
    check_rrule(la.matrix_power, well_conditioned((2, 3, 3), dtype), n)


def test_matrix_power_complex():
    check_rrule(la.matrix_power, cplx((3, 3)), 3)


@D
def test_tensorsolve(dtype):
    a = well_conditioned((6, 6), dtype).reshape(2, 3, 6)
    b = make("real", (2, 3), dtype, seed=1)
    check_rrule(la.tensorsolve, a, b)
    a2 = np.moveaxis(well_conditioned((6, 6), dtype, seed=3).reshape(2, 3, 6), -1, 0)
    check_rrule(la.tensorsolve, a2, make("real", (2, 3), dtype, seed=2), (0,))


@D
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(upper, dtype):
    check_rrule(la.cholesky, spd(4, dtype), upper=upper)
    check_rrule(la.cholesky, spd(3, dtype, batch=(2,)), upper=upper)


@D
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(uplo, dtype):
    a = spd(4, dtype) + np.diag([0.0, 0.5, 1.0, 1.5]).astype(dtype)
    check_rrule(la.eigh, a, uplo)
    check_rrule(la.eigvalsh, a, UPLO=uplo)
    b = spd(3, dtype, batch=(2,), seed=1) + np.diag([0.0, 0.7, 1.4]).astype(dtype)
    check_rrule(la.eigh, b)
    check_rrule(la.eigvalsh, b)


def test_cholesky_reads_one_triangle():
    a = spd(3)
    _, back = default_registry().lookup(la.cholesky).rrule(a)
    (g,) = back(np.ones((3, 3)))
    assert np.all(np.triu(g, 1) == 0)


def _real_eig_matrix(n, seed=0, dtype=np.float64):
    g = np.random.default_rng(seed)
    v = g.standard_normal((n, n)) + 2 * np.eye(n)
    return (v @ np.diag(np.arange(1.0, n + 1)) @ np.linalg.inv(v)).astype(dtype)


def test_eig_real_eigenvalues():
    a = _real_eig_matrix(4)
    check_rrule(la.eig, a)
    check_rrule(la.eigvals, a)
    check_rrule(la.eigvals, _real_eig_matrix(3, seed=2, dtype=np.float32))


@pytest.mark.parametrize("dtype", (np.float64, np.float32, np.complex128), ids=str)
def test_eig_complex_eigenvalues(dtype):
    # A real matrix with complex eigenvalues (a rotation part): complex w and V, a real
    # cotangent for the real matrix; and a complex matrix.
    g = np.random.default_rng(3)
    a = g.standard_normal((4, 4)) + np.array([[0, -2, 0, 0], [2, 0, 0, 0], [0] * 4, [0] * 4])
    if dtype == np.complex128:
        a = a + 1j * g.standard_normal((4, 4))
    a = a.astype(dtype)
    assert np.iscomplexobj(np.linalg.eigvals(a))
    check_rrule(la.eigvals, a)
    check_rrule(la.eig, a)
    check_rrule(la.eig, np.stack([a, a.T]))


def test_eig_of_a_rotation_through_generated_code():
    # (LAPACK may flip an eigenvector's sign between nearby matrices: the function uses
    # v only through sign-invariant products, which still depend on its phase.)
    def f(x):
        w, v = np.linalg.eig(x)
        phase = np.sum(np.real(v[1] * v[0]) + np.imag(v[2] * v[0]))
        return np.sum(np.real(w) ** 2 + np.imag(w)) + phase

    check_grads(f, np.array([[0.3, -1.2, 0.1], [1.0, 0.4, 0.2], [0.0, 0.3, 1.1]]))


@D
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 2)], ids=str)
def test_svd(shape, dtype):
    a = make("real", shape, dtype) + 0.5 * well_conditioned(shape, dtype)
    check_rrule(la.svd, a, False)
    check_rrule(la.svd, a, compute_uv=False)
    check_rrule(la.svdvals, a)
    if shape[-1] == shape[-2]:
        check_rrule(la.svd, a)


def test_svd_full_matrices_rectangular():
    a = make("real", (4, 2))
    U, s, Vh = la.svd(a)
    dU = np.zeros_like(U)
    dU[:, :2] = make("real", (4, 2), seed=3)
    check_rrule(la.svd, a, output_cotangent=(dU, make("real", (2,), seed=4), ZERO))
    _, back = default_registry().lookup(la.svd).rrule(a)
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        back((np.ones((4, 4)), ZERO, ZERO))


@D
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 4, 3)], ids=str)
def test_qr(shape, dtype):
    a = well_conditioned(shape, dtype)
    check_rrule(la.qr, a)
    check_rrule(la.qr, a, "r")
    if shape[-2] <= shape[-1]:
        check_rrule(la.qr, a, mode="complete")


@D
@pytest.mark.parametrize("bshape", [(4,), (4, 2)], ids=str)
def test_lstsq(bshape, dtype):
    a = well_conditioned((4, 3), dtype)
    check_rrule(la.lstsq, a, make("real", bshape, dtype, seed=1))
    check_rrule(la.lstsq, a, make("real", bshape, dtype, seed=1), None)
    check_rrule(la.lstsq, well_conditioned((3, 3), dtype), make("real", (3,), dtype, seed=2))


VECTOR_ORDS = [None, 2, 1, np.inf, -np.inf, 3, 0.5, 0]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@D
@pytest.mark.parametrize("ord", VECTOR_ORDS, ids=str)
def test_vector_norms(ord, dtype):
    x = make("distinct", (3, 4), dtype)
    const = (1,) if isinstance(ord, float) else ()
    check_rrule(la.norm, x[0], ord, constants=const)
    check_rrule(la.norm, x, ord, 1, constants=const)
    check_rrule(la.norm, x, ord=ord, axis=0, keepdims=True)
    check_rrule(la.vector_norm, x, ord=2 if ord is None else ord)
    check_rrule(la.vector_norm, x, axis=1, ord=2 if ord is None else ord, keepdims=True)


@D
@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=str)
def test_matrix_norms(ord, dtype):
    x = make("distinct", (3, 4), dtype)
    const = (1,) if isinstance(ord, float) else ()
    check_rrule(la.norm, x, ord, constants=const)
    check_rrule(la.norm, make("distinct", (2, 3, 4), dtype), ord, (2, 0), constants=const)
    check_rrule(la.norm, make("distinct", (2, 3, 4), dtype), ord=ord, axis=(1, 2), keepdims=True)
    check_rrule(
        la.matrix_norm, make("distinct", (2, 3, 4), dtype), ord="fro" if ord is None else ord
    )


def test_norm_default_flattens():
    check_rrule(la.norm, make("real", (2, 3, 4)))
    check_rrule(la.vector_norm, make("real", (2, 3, 4)), axis=(0, 2))


def test_complex_norms():
    z = make_complex((3, 4))
    check_rrule(la.norm, z)
    check_rrule(la.norm, z[0], 1)
    check_rrule(la.norm, z, axis=1)
    check_rrule(la.norm, z, "fro")
    check_rrule(la.vector_norm, z, ord=3)


def test_matrix_rank_is_not_differentiable():
    assert default_registry().lookup(la.matrix_rank).kind == NONDIFF


def _complex_solves(a):
    z = a + 1j * a.T  # complex matrices built from a real one
    return (
        np.sum(np.real(np.linalg.inv(z)) ** 2)
        + np.sum(np.imag(np.linalg.solve(z, a)) ** 2)
        + np.sum(np.imag(np.linalg.solve(z, a[:, 0])) ** 2)  # a real b
        + np.sum(np.real(np.linalg.solve(a, z[0])) ** 2)  # a real a
        + np.real(np.linalg.det(z) ** 2)
    )


def test_complex_inv_solve_det_through_their_pullback_functions():
    # the pullback functions take conjugate transposes (a transpose gave wrong gradients)
    a = np.array([[0.3, -1.2, 0.1], [1.1, 0.2, 0.4], [0.2, 0.5, 0.9]])
    check_grads(_complex_solves, a)
    assert check_grads(_complex_solves, a, order=2) == "reverse over reverse"
