"""Transformable pullbacks of scipy.linalg's factorizations (scipy_linalg_decomp.py): svd,
eigh, qr, cho_factor, lu and lu_factor, written in the differentiable subset so that second
derivatives run through them (see transformable.py). They call the rules' refusals from
scipy_linalg_refusals.py, never the family modules, which import this one.

They are the closures' formulas, recomputing the factors from ``a`` (the generated adjoint
keeps no closure): differentiated again, each factorization call goes through its own rule.
SciPy's conventions are kept: ``qr`` gives economic factors for ``mode='economic'`` and a
bare ``R`` (all m rows) for ``mode='r'``; ``lu`` factors ``a = P L U`` with L unit lower;
``lu_factor`` packs L and U into one matrix with LAPACK's row swaps ``piv``; ``eigh``
reads the lower triangle by default, ``cho_factor`` the upper one.

The generated code calls these functions instead of the rules' forward code, so the
refusals of the rules (repeated singular values with vectors, a rank-deficient QR, ...)
are repeated here, by opaque checks that run as they are when differentiated again.
"""

from __future__ import annotations

import numpy as np

from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO, densify
from . import scipy_linalg as base
from . import scipy_linalg_refusals as refusals
from .linalg_pullbacks import eigh_grad, is_zero, qr_square_grad, svd_grad
from .scipy_linalg import mT, on_triangle
from .transformable import set_pullbacks

# the cotangents of the flags after the matrix (one per positional parameter)
_NONE = (NO_TANGENT,)


def _opaque(fn):
    """Mark a check or integer bookkeeping: transformed code calls it as it is."""
    fn.__pullback_opaque__ = True
    return fn


# -- the rules' refusals, for the pullback functions ----------------------------------------
@_opaque
def svd_refusals(a, full_matrices, compute_uv):
    refusals.svd_refusals(a, full_matrices, compute_uv)


@_opaque
def eigh_refusals(a, b, eigvals_only, subset_by_index, subset_by_value):
    refusals.eigh_refusals(a, b, eigvals_only, subset_by_index, subset_by_value)


@_opaque
def qr_refusals(a, mode, pivoting):
    refusals.qr_refusals(a, mode, pivoting)


@_opaque
def lu_refusals(name, a):
    refusals.lu_refusals(name, a)


@_opaque
def real_matrix(name, a):
    base.real_only(name, a)


@_opaque
def keeps_other_triangle():
    return refusals.cho_factor_keeps_other_triangle()


@_opaque
def unpivoted_rows(piv, m):
    """The inverse of LAPACK's row order: ``B[unpivoted_rows] = A`` for ``B = A[order]``."""
    return np.argsort(refusals.row_order(piv, m))


# -- svd and eigh -------------------------------------------------------------------------
@transformable
def svd_pullback(
    dy,
    a,
    full_matrices=True,
    compute_uv=True,
    overwrite_a=False,
    check_finite=True,
    lapack_driver="gesdd",
):
    svd_refusals(a, full_matrices, compute_uv)
    U, s, Vh = base.sl.svd(a, full_matrices=False)
    if not compute_uv:
        return (svd_grad(a, U, s, Vh, ZERO, dy, ZERO),) + _NONE * 5
    return (svd_grad(a, U, s, Vh, dy[0], dy[1], dy[2]),) + _NONE * 5


@transformable
def eigh_pullback(
    dy,
    a,
    b=None,
    *,
    lower=True,
    eigvals_only=False,
    overwrite_a=False,
    overwrite_b=False,
    type=1,
    check_finite=True,
    subset_by_index=None,
    subset_by_value=None,
    driver=None,
):
    eigh_refusals(a, b, eigvals_only, subset_by_index, subset_by_value)
    w, V = base.sl.eigh(a, lower=lower, driver=driver)  # the forward sweep's signs
    dw = dy
    dV = ZERO
    if not eigvals_only:
        dw = dy[0]
        dV = dy[1]
    return on_triangle(eigh_grad(w, V, dw, dV), lower), NO_TANGENT


# -- qr -----------------------------------------------------------------------------------
@transformable
def qr_grad(a, Q, R, dQ, dR):
    """The cotangent of ``a = Q R`` (economic factors) from those of Q and R. A wide ``a =
    [X | Y]`` has ``X = Q R1`` (square R1) and ``R2 = Q^T Y``."""
    m = np.shape(a)[-2]
    n = np.shape(a)[-1]
    if m >= n:
        return qr_square_grad(Q, R, dQ, dR)
    Y = a[..., :, m:]
    if is_zero(dR):
        return np.concatenate([qr_square_grad(Q, R[..., :, :m], dQ, ZERO), 0.0 * Y], axis=-1)
    dR2 = dR[..., :, m:]
    extra = Y @ mT(dR2)
    dQ1 = extra if is_zero(dQ) else dQ + extra
    dX = qr_square_grad(Q, R[..., :, :m], dQ1, dR[..., :, :m])
    return np.concatenate([dX, Q @ dR2], axis=-1)


@transformable
def qr_pullback(
    dy, a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True
):
    qr_refusals(a, mode, pivoting)
    k = min(np.shape(a)[-2], np.shape(a)[-1])
    Q, R = base.sl.qr(a, mode="economic")
    dQ = ZERO
    if mode == "r":  # (R,) for one matrix, R itself for a stack
        dR = dy[0] if isinstance(dy, tuple) else dy
    else:
        dQ = dy[0]
        dR = dy[1]
    if not is_zero(dQ):
        dQ = densify(dQ)
    if not is_zero(dR):  # mode='r' gives all m rows of R; those below the k-th are zero
        dR = densify(dR)[..., :k, :]
    return (qr_grad(a, Q, R, dQ, dR),) + _NONE * 4


# -- Cholesky and LU ----------------------------------------------------------------------
@transformable
def cho_factor_pullback(dy, a, lower=False, overwrite_a=False, check_finite=True):
    real_matrix("cho_factor", a)
    c = base.sl.cho_factor(a, lower=lower)[0]
    dc = densify(dy[0])
    factor = np.tril(c) if lower else np.triu(c)
    da = refusals.cholesky_cotangent(factor, dc, lower)
    if keeps_other_triangle():  # then that triangle of c is a's own
        da = da + (np.triu(dc, 1) if lower else np.tril(dc, -1))
    return (da,) + _NONE * 3


@transformable
def left_solve_l(L, x):
    """``L^-T x`` for a unit lower triangular ``L``."""
    return base.sl.solve_triangular(L, x, trans=1, lower=True, unit_diagonal=True)


@transformable
def right_solve_u(x, U):
    """``x U^-T`` for an upper triangular ``U``."""
    return mT(base.sl.solve_triangular(U, mT(x), trans=0, lower=False))


@transformable
def lu_square_grad(L, U, Lbar, Ubar):
    """The cotangent of ``B = L U`` for square factors: ``L^-1 dB U^-1`` splits into its
    strictly lower triangle (dL) and its upper one (dU)."""
    middle = np.tril(mT(L) @ Lbar, -1) + np.triu(Ubar @ mT(U))
    return right_solve_u(left_solve_l(L, middle), U)


@transformable
def lu_product_grad(L, U, Lbar, Ubar):
    """The cotangent of ``B = L U`` (L unit lower m x k, U upper k x n, k = min(m, n), one
    matrix) from those of L and U. A tall B has extra rows ``L2 = B2 U^-1``; a wide one
    extra columns ``U2 = L^-1 B2``."""
    m = np.shape(L)[-2]
    k = np.shape(L)[-1]
    n = np.shape(U)[-1]
    Lbar = np.zeros(np.shape(L)) if is_zero(Lbar) else np.tril(Lbar, -1)
    Ubar = np.zeros(np.shape(U)) if is_zero(Ubar) else np.triu(Ubar)
    if m > k:
        L1 = L[:k, :]
        extra = right_solve_u(Lbar[k:, :], U)
        square_part = lu_square_grad(L1, U, Lbar[:k, :], Ubar - mT(L[k:, :]) @ extra)
        return np.concatenate([square_part, extra], axis=-2)
    if n > k:
        U1 = U[:, :k]
        extra = left_solve_l(L, Ubar[:, k:])
        square_part = lu_square_grad(L, U1, Lbar - extra @ mT(U[:, k:]), Ubar[:, :k])
        return np.concatenate([square_part, extra], axis=-1)
    return lu_square_grad(L, U, Lbar, Ubar)


@transformable
def _stack_entry(d, k):
    """Entry ``k`` of a stack's cotangent ``d`` (its leading axes flattened first)."""
    if is_zero(d):
        return d
    d = densify(d)
    return np.reshape(d, (-1,) + np.shape(d)[-2:])[k]


@transformable
def lu_pullback(dy, a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    if np.ndim(a) == 2:
        return (lu_matrix_cotangent(dy, a, permute_l),) + _NONE * 4
    # a stack: matrix by matrix (solve_triangular of stacks needs SciPy 1.16)
    a3 = np.reshape(a, (-1,) + np.shape(a)[-2:])
    parts = []
    for k in range(np.shape(a3)[0]):
        dk = tuple(_stack_entry(d, k) for d in dy)
        parts.append(lu_matrix_cotangent(dk, a3[k], permute_l))
    return (np.reshape(np.stack(parts), np.shape(a)),) + _NONE * 4


@transformable
def lu_matrix_cotangent(dy, a, permute_l):
    """The cotangent of one matrix ``a`` from those of ``scipy.linalg.lu(a)``'s factors."""
    lu_refusals("lu", a)
    P, L, U = base.sl.lu(a)
    if permute_l:
        dL = ZERO if is_zero(dy[0]) else mT(P) @ densify(dy[0])
        dU = dy[1]
    else:
        dL = dy[1]
        dU = dy[2]
    if not is_zero(dL):
        dL = densify(dL)
    if not is_zero(dU):
        dU = densify(dU)
    return P @ lu_product_grad(L, U, dL, dU)


@transformable
def lu_factor_pullback(dy, a, overwrite_a=False, check_finite=True):
    lu_refusals("lu_factor", a)
    lu, piv = base.sl.lu_factor(a)
    k = min(np.shape(lu)[-2], np.shape(lu)[-1])
    L, U = refusals.lu_parts(lu, k)
    dlu = densify(dy[0])
    db = lu_product_grad(L, U, dlu[:, :k], dlu[:k, :])
    return (db[unpivoted_rows(piv, np.shape(lu)[-2])],) + _NONE * 2


def register_pullbacks(reg, sl):
    set_pullbacks(
        reg,
        [
            (sl.svd, svd_pullback),
            (sl.eigh, eigh_pullback),
            (sl.qr, qr_pullback),
            (sl.cho_factor, cho_factor_pullback),
            (sl.lu, lu_pullback),
            (sl.lu_factor, lu_factor_pullback),
        ],
    )
