"""scipy.linalg factorizations: cholesky, cho_factor/cho_solve, lu, lu_factor/lu_solve,
qr, svd and eigh.

The pullbacks are the standard matrix-calculus ones: Murray (2016) for Cholesky, the
triangular splitting of ``L^-1 dA U^-1`` for LU (with the extra rows or columns of a
rectangular factor solved for separately), Walter et al. for QR, Giles (2008) and Seeger et
al. for the symmetric eigenproblem and the SVD. Real matrices only.

Where a derivative does not exist the rule refuses when it runs (the forward call), with
the fix: repeated eigenvalues or singular values with vectors, a rank-deficient QR, the
extra (non-unique) columns of ``qr(mode='full')`` or ``svd(full_matrices=True)`` of a
non-square matrix, a singular LU factor.

``cholesky`` reads one triangle (the upper one by default, as SciPy does), and so does
``eigh`` (the lower one by default): their cotangents live on that triangle.
``cho_factor`` leaves the other triangle of its input in ``c`` untouched before SciPy 1.18
(its cotangent passes straight through) and zeroes it from 1.18 on (no cotangent).
``cho_solve((c, lower), b)`` reads one triangle of ``c``; the cotangent of the pair is
``(dc, NO_TANGENT)``.
"""

from __future__ import annotations

import functools
import sys

import numpy as np

from ..registry import transformable
from . import scipy_linalg as base
from ._util import NO_TANGENT, ZERO, Registrar, bind, densify, dy_parts, finalize, zeros_for
from .linalg import _inverse_gap, _qr_square_grad, _svd_grad
from .scipy_linalg import (
    columns,
    mT,
    on_triangle,
    real_only,
    register_transformable,
    solve_matrix_cotangent,
    square,
    transposes,
    uncolumns,
)
from .scipy_linalg_pullbacks import register_pullbacks
from .scipy_linalg_refusals import (
    EIGH_UNSUPPORTED,
    cho_factor_keeps_other_triangle,
    cholesky_cotangent,
    eigh_refusals,
    lu_parts,
    lu_refusals,
    nonsingular_u,
    qr_refusals,
    row_order,
    svd_refusals,
)

FAMILY = "scipy_linalg_decomp"
REQUIRES = "scipy.linalg"


# -- Cholesky ------------------------------------------------------------------------------
@transformable
def cholesky_pullback(dy, a, lower=False, overwrite_a=False, check_finite=True):
    return (cholesky_cotangent(base.sl.cholesky(a, lower=lower), dy, lower),)


def _cholesky_check(a, *args, **kwargs):
    real_only("cholesky", a)


def _cho_factor_rrule(a, *args, **kwargs):
    real_only("cho_factor", a)
    y = base.sl.cho_factor(a, *args, **kwargs)
    c, lower = y

    def cho_factor_pullback(dy):
        dc = dy_parts(dy, 2)[0]
        if dc is ZERO:
            return zeros_for((a,)) + (NO_TANGENT,) * len(args)
        dc = np.asarray(densify(dc))
        factor = np.tril(c) if lower else np.triu(c)
        da = cholesky_cotangent(factor, dc, lower)
        if cho_factor_keeps_other_triangle():  # then that triangle of c is a's own
            da = da + (np.triu(dc, 1) if lower else np.tril(dc, -1))
        return (finalize(da, a),) + (NO_TANGENT,) * len(args)

    return y, cho_factor_pullback


@transformable
def cho_solve_pullback(dy, c_and_lower, b, overwrite_b=False, check_finite=True):
    c, lower = c_and_lower
    x = base.sl.cho_solve(c_and_lower, b)
    u = base.sl.cho_solve(c_and_lower, columns(dy, b))
    g = solve_matrix_cotangent(u, columns(x, b), False)  # of A = L L^T (symmetric)
    g = g + mT(g)
    if lower:  # A = L L^T: dL = (G + G^T) L
        dc = np.tril(g @ np.tril(c))
    else:  # A = R^T R: dR = R (G + G^T)
        dc = np.triu(np.triu(c) @ g)
    return (dc, NO_TANGENT), uncolumns(u, b)


def _cho_solve_check(c_and_lower, b, *args, **kwargs):
    real_only("cho_solve", c_and_lower[0], b)


# -- LU ------------------------------------------------------------------------------------
def _solve_triangular(a, b, **kwargs):
    """``scipy.linalg.solve_triangular`` of a stack of matrices on every SciPy: before 1.16
    it solves one matrix (``lu`` factors stacks from 1.11 on), so a stack is solved matrix
    by matrix there."""
    if np.ndim(a) <= 2 or _scipy_solves_stacks():
        return base.sl.solve_triangular(a, b, **kwargs)
    batch = np.broadcast_shapes(np.shape(a)[:-2], np.shape(b)[:-2])
    a = np.broadcast_to(a, batch + np.shape(a)[-2:])
    b = np.broadcast_to(b, batch + np.shape(b)[-2:])
    out = [base.sl.solve_triangular(a[i], b[i], **kwargs) for i in np.ndindex(batch)]
    return np.reshape(np.stack(out), batch + out[0].shape)


@functools.cache
def _scipy_solves_stacks() -> bool:
    # asked when a pullback runs: SciPy is imported by then (this module is imported first)
    return tuple(map(int, sys.modules["scipy"].__version__.split(".")[:2])) >= (1, 16)


def _left_solve_l(L, x):
    """``L^-T x`` for a unit lower triangular ``L``."""
    return _solve_triangular(L, x, lower=True, trans=1, unit_diagonal=True)


def _right_solve_u(x, U):
    """``x U^-T`` for an upper triangular ``U``."""
    return mT(_solve_triangular(U, mT(x), lower=False))


def _lu_product_grad(L, U, Lbar, Ubar):
    """The cotangent of ``B = L U`` (L unit lower m x k, U upper k x n, k = min(m, n)) from
    those of L and U. A tall B has extra rows ``L2 = B2 U^-1``; a wide one extra columns
    ``U2 = L^-1 B2``; the square part splits ``L^-1 dB U^-1`` into its strictly lower and
    its upper triangle."""
    m, k = L.shape[-2:]
    n = U.shape[-1]
    Lbar = np.zeros_like(L) if Lbar is ZERO else np.tril(Lbar, -1)
    Ubar = np.zeros_like(U) if Ubar is ZERO else np.triu(Ubar)
    extra = None
    if m > k:
        L2, L2bar = L[..., k:, :], Lbar[..., k:, :]
        L, Lbar = L[..., :k, :], Lbar[..., :k, :]
        extra = _right_solve_u(L2bar, U)
        Ubar = Ubar - mT(L2) @ extra
    if n > k:
        U2, U2bar = U[..., :, k:], Ubar[..., :, k:]
        U, Ubar = U[..., :, :k], Ubar[..., :, :k]
        extra = _left_solve_l(L, U2bar)
        Lbar = Lbar - extra @ mT(U2)
    middle = np.tril(mT(L) @ Lbar, -1) + np.triu(Ubar @ mT(U))
    square_part = _right_solve_u(_left_solve_l(L, middle), U)
    if extra is None:
        return square_part
    return np.concatenate([square_part, extra], axis=-2 if m > k else -1)


def _lu_rrule(a, *args, **kwargs):
    real_only("lu", a)
    p = bind(args, kwargs, ("permute_l", "overwrite_a", "check_finite", "p_indices"),
             (False, False, True, False), name="scipy.linalg.lu")  # fmt: skip
    y = base.sl.lu(a, *args, **kwargs)
    P, L, U = base.sl.lu(a) if p["permute_l"] or p["p_indices"] else y
    nonsingular_u("lu", U)
    rest = (NO_TANGENT,) * len(args)

    def lu_pullback(dy):
        if p["permute_l"]:
            dPL, dU = dy_parts(dy, 2)
            dL = ZERO if dPL is ZERO else mT(P) @ np.asarray(densify(dPL))
        else:
            _, dL, dU = dy_parts(dy, 3)
        if dL is ZERO and dU is ZERO:
            return zeros_for((a,)) + rest
        dL = dL if dL is ZERO else np.asarray(densify(dL))
        dU = dU if dU is ZERO else np.asarray(densify(dU))
        return (finalize(P @ _lu_product_grad(L, U, dL, dU), a),) + rest

    return y, lu_pullback


def _lu_factor_rrule(a, *args, **kwargs):
    lu_refusals("lu_factor", a)
    y = base.sl.lu_factor(a, *args, **kwargs)
    lu, piv = y
    m, n = lu.shape
    k = min(m, n)
    L, U = lu_parts(lu, k)
    order = row_order(piv, m)

    def lu_factor_pullback(dy):
        dlu = dy_parts(dy, 2)[0]
        if dlu is ZERO:
            return zeros_for((a,)) + (NO_TANGENT,) * len(args)
        dlu = np.asarray(densify(dlu))
        db = _lu_product_grad(L, U, dlu[:, :k], dlu[:k, :])
        return (finalize(db[np.argsort(order)], a),) + (NO_TANGENT,) * len(args)

    return y, lu_factor_pullback


@transformable
def lu_solve_pullback(dy, lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    lu, piv = lu_and_piv
    x = base.sl.lu_solve(lu_and_piv, b, trans=trans)
    L, U = lu_parts(lu, np.shape(lu)[-1])
    db = base.sl.lu_solve(lu_and_piv, columns(dy, b), trans=0 if transposes(trans) else 1)
    da = solve_matrix_cotangent(db, columns(x, b), transposes(trans))
    dB = da[row_order(piv, np.shape(lu)[-1])]  # B = A[order] = L U
    dlu = np.tril(dB @ mT(U), -1) + np.triu(mT(L) @ dB)
    return (dlu, NO_TANGENT), uncolumns(db, b)


def _lu_solve_check(lu_and_piv, b, *args, **kwargs):
    real_only("lu_solve", lu_and_piv[0], b)
    square("lu_solve", lu_and_piv[0])


# -- QR ------------------------------------------------------------------------------------
def _qr_grad(A, Q, R, dQ, dR):
    """The cotangent of A = Q R (economic) from those of Q and R."""
    m, n = A.shape[-2:]
    if m >= n:
        return _qr_square_grad(Q, R, dQ, dR)
    # Wide: A = [X | Y] with X = Q R1 square and R2 = Q^T Y.
    R1, Y = R[..., :, :m], A[..., :, m:]
    dR1 = ZERO if dR is ZERO else dR[..., :, :m]
    dY = np.zeros_like(Y)
    if dR is not ZERO:
        dR2 = dR[..., :, m:]
        dY = Q @ dR2
        extra = Y @ mT(dR2)
        dQ = extra if dQ is ZERO else dQ + extra
    return np.concatenate([_qr_square_grad(Q, R1, dQ, dR1), dY], axis=-1)


def _qr_rrule(a, *args, **kwargs):
    p = bind(
        args,
        kwargs,
        ("overwrite_a", "lwork", "mode", "pivoting"),
        (False, None, "full", False),
        name="scipy.linalg.qr",
        known=("check_finite",),
    )
    mode = p["mode"]
    real_only("qr", a)
    if p["pivoting"] or mode not in ("full", "economic", "r"):
        qr_refusals(a, mode, p["pivoting"])
    A = np.asarray(a)
    m, n = A.shape[-2:]
    y = base.sl.qr(a, *args, **kwargs)
    Q, R = base.sl.qr(A, mode="economic") if mode == "r" else y
    R = R[..., : min(m, n), :]
    qr_refusals(a, mode, p["pivoting"], R)
    rest = (NO_TANGENT,) * len(args)

    def qr_pullback(dy):
        if mode == "r":  # (R,) for one matrix, but R itself for a stack
            dQ, dR = ZERO, dy_parts(dy, 1)[0] if isinstance(y, tuple) else dy
        else:
            dQ, dR = dy_parts(dy, 2)
        if dQ is ZERO and dR is ZERO:
            return zeros_for((a,)) + rest
        dQ = dQ if dQ is ZERO else np.asarray(densify(dQ))
        # mode='r' gives all m rows of R; the ones below the first k are zero.
        dR = dR if dR is ZERO else np.asarray(densify(dR))[..., : min(m, n), :]
        return (finalize(_qr_grad(A, Q, R, dQ, dR), a),) + rest

    return y, qr_pullback


# -- SVD and eigh --------------------------------------------------------------------------
def _svd_rrule(a, *args, **kwargs):
    p = bind(
        args,
        kwargs,
        ("full_matrices", "compute_uv"),
        (True, True),
        name="scipy.linalg.svd",
        known=("overwrite_a", "check_finite", "lapack_driver"),
    )
    A = np.asarray(a)
    svd_refusals(a, p["full_matrices"], False)
    y = base.sl.svd(a, *args, **kwargs)
    U, s, Vh = y if p["compute_uv"] else base.sl.svd(A, full_matrices=False)
    svd_refusals(a, p["full_matrices"], p["compute_uv"], s)
    rest = (NO_TANGENT,) * len(args)

    def svd_pullback(dy):
        dU, ds, dVh = dy_parts(dy, 3) if p["compute_uv"] else (ZERO, dy, ZERO)
        if dU is ZERO and ds is ZERO and dVh is ZERO:
            return zeros_for((a,)) + rest
        return (finalize(_svd_grad(A, U, s, Vh, dU, ds, dVh), a),) + rest

    return y, svd_pullback


def _eigh_rrule(a, *args, **kwargs):
    b = args[0] if args else kwargs.get("b")
    subsets = [kwargs.get(k) for k in EIGH_UNSUPPORTED]
    eigh_refusals(a, b, True, *subsets)
    lower = kwargs.get("lower", True)
    only = kwargs.get("eigvals_only", False)
    y = base.sl.eigh(a, *args, **kwargs)
    w, V = base.sl.eigh(a, lower=lower) if only else y
    eigh_refusals(a, b, only, *subsets, w)
    rest = (NO_TANGENT,) * len(args)

    def eigh_pullback(dy):
        dw, dV = (dy, ZERO) if only else dy_parts(dy, 2)
        if dw is ZERO and dV is ZERO:
            return zeros_for((a,)) + rest
        inner = 0.0
        if dw is not ZERO:
            inner = np.asarray(densify(dw))[..., None, :] * np.eye(w.shape[-1])
        if dV is not ZERO:
            inner = inner + _inverse_gap(w) * (mT(V) @ np.asarray(densify(dV)))
        return (finalize(on_triangle(V @ inner @ mT(V), lower), a),) + rest

    return y, eigh_pullback


def register(reg):
    try:
        sl = base.load_scipy()
    except ImportError:  # pragma: no cover - scipy is optional
        return
    r = Registrar(reg, FAMILY)

    def rule(fn, rrule, notes=""):
        r.rule(fn, rrule, name=f"scipy.linalg.{fn.__name__}", notes=notes)

    register_transformable(
        r, sl.cholesky, cholesky_pullback, _cholesky_check, "real; reads one triangle"
    )
    rule(sl.cho_factor, _cho_factor_rrule, notes="real; reads one triangle")
    register_transformable(
        r, sl.cho_solve, cho_solve_pullback, _cho_solve_check, "real; (c, lower) gets (dc, -)"
    )
    rule(sl.lu, _lu_rrule, notes="real, nonsingular U")
    rule(sl.lu_factor, _lu_factor_rrule, notes="real, one matrix")
    register_transformable(r, sl.lu_solve, lu_solve_pullback, _lu_solve_check, "real, square")
    rule(sl.qr, _qr_rrule, notes="real, full rank; 'full' only where m <= n")
    rule(sl.svd, _svd_rrule, notes="real; distinct singular values with vectors")
    rule(sl.eigh, _eigh_rrule, notes="real, b=None; distinct eigenvalues with vectors")
    # Their pullbacks as transformable functions (second derivatives).
    register_pullbacks(reg, sl)
