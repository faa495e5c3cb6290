"""Transformable pullbacks of numpy.linalg (linalg.py), written in the differentiable
subset so that second derivatives run through them (see transformable.py). They are the
closures' formulas, made of matrix products, solves and factorizations that have rules;
a cotangent part that is ``ZERO`` (an output not used) is skipped as the closures skip it.
"""

from __future__ import annotations

import math

import numpy as np

from ..list_operands import dense_operand
from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO, densify, unbroadcast
from .transformable import (
    by_rule,
    det_pullback,
    inv_pullback,
    matrix_abs_norm_cotangent,
    norm_pullback,
    p_norm_cotangent,
    set_pullbacks,
    solve_pullback,
)

la = np.linalg


@transformable
def mT(x):
    return np.swapaxes(x, -1, -2)


@transformable
def mH(x):
    return np.conj(np.swapaxes(x, -1, -2))


@transformable
def diag_matrix(v):
    """``(..., n) -> (..., n, n)`` diagonal matrices."""
    return v[..., :, None] * np.eye(np.shape(v)[-1])


@transformable
def on_triangle(x, lower):
    """The cotangent for a function that reads one triangle of its symmetric argument."""
    full = x + mT(x)
    tri = np.tril(full) if lower else np.triu(full)
    return tri - diag_matrix(np.diagonal(x, axis1=-2, axis2=-1))


@transformable
def inverse_gap(w):
    """``F[..., i, j] = 1 / (w_j - w_i)`` off the diagonal; 0 on it and where equal."""
    gap = w[..., None, :] - w[..., :, None]
    zero = gap == 0
    return np.where(zero, 0.0, 1.0 / np.where(zero, 1.0, gap))


@transformable
def is_zero(d):
    return d is ZERO or d is NO_TANGENT or d is None


@transformable
def slogdet_pullback(dy, a):
    d_sign = dy[0]
    d_log = dy[1]
    if is_zero(d_log) and (is_zero(d_sign) or not np.iscomplexobj(a)):
        return (np.zeros(np.shape(a), np.result_type(dense_operand(a), 1.0)),)
    coeff = 0.0
    if not is_zero(d_log):
        coeff = np.real(densify(d_log))
    if not is_zero(d_sign) and np.iscomplexobj(a):
        sign = la.slogdet(a)[0]
        coeff = coeff + 1j * np.imag(np.conj(sign) * densify(d_sign))
    coeff = np.asarray(coeff)
    return (unbroadcast(coeff[..., None, None] * mH(la.inv(a)), a),)


@transformable
def pinv_grad(A, X, G):
    """The cotangent of A for X = pinv(A) (constant rank), given dX = G."""
    Xh = mH(X)
    eye_m = np.eye(np.shape(A)[-2])
    eye_n = np.eye(np.shape(A)[-1])
    term1 = -((Xh @ G) @ Xh)
    term2 = ((eye_m - A @ X) @ mH(G)) @ (X @ Xh)
    term3 = (Xh @ X) @ (mH(G) @ (eye_n - X @ A))
    return term1 + term2 + term3


@transformable
def pinv_pullback(dy, a, rcond=None, hermitian=False):
    if hermitian:
        return by_rule(la.pinv, dy, a, rcond, hermitian)
    X = la.pinv(a) if rcond is None else la.pinv(a, rcond)
    return unbroadcast(pinv_grad(a, X, densify(dy)), a), NO_TANGENT, NO_TANGENT


@transformable
def matrix_power_pullback(dy, a, n):
    if n == 0:
        return np.zeros(np.shape(a), np.result_type(dense_operand(a), 1.0)), NO_TANGENT
    g = densify(dy)
    base = a if n > 0 else la.inv(a)
    k = abs(n)
    powers = [np.broadcast_to(np.eye(np.shape(a)[-1]), np.shape(a))]
    for _ in range(k - 1):
        powers = powers + [powers[len(powers) - 1] @ base]
    # d(B^k) = sum_j B^j dB B^(k-1-j):  dB = sum_j (B^j)^H g (B^(k-1-j))^H
    db = (mH(powers[0]) @ g) @ mH(powers[k - 1])
    for j in range(1, k):
        db = db + (mH(powers[j]) @ g) @ mH(powers[k - 1 - j])
    if n < 0:  # B = inv(A): dA = -B^H dB B^H
        db = -((mH(base) @ db) @ mH(base))
    return unbroadcast(db, a), NO_TANGENT


@transformable
def cholesky_pullback(dy, a, upper=False):
    y = la.cholesky(a, upper=upper) if upper else la.cholesky(a)
    L = mT(y) if upper else y
    g = densify(dy)
    Lbar = mT(g) if upper else g
    P = mT(L) @ Lbar
    P = np.tril(P) - 0.5 * diag_matrix(np.diagonal(P, axis1=-2, axis2=-1))
    # S = L^-T P L^-1
    Z = la.solve(mT(L), P)
    S = mT(la.solve(mT(L), mT(Z)))
    return (unbroadcast(on_triangle(S, not upper), a),)


# NumPy's cholesky, recomputed here, is Dask's upper factor on a Dask array (a wrong value,
# no error): on Dask the adjoint calls the rule's closure pullback, refused by name there.
cholesky_pullback.__pullback_numpy_only__ = True


@transformable
def eigh_grad(w, V, dw, dV):
    """The (full, symmetric) gradient of ``a = V diag(w) V^T`` from the cotangents of the
    eigenvalues and eigenvectors (``ZERO`` where unused)."""
    inner = np.zeros(np.shape(V))
    if not is_zero(dw):
        inner = inner + diag_matrix(densify(dw))
    if not is_zero(dV):
        inner = inner + inverse_gap(w) * (mT(V) @ densify(dV))
    return (V @ inner) @ mT(V)


@transformable
def eigh_pullback(dy, a, UPLO="L"):
    w, V = la.eigh(a, UPLO)
    X = eigh_grad(w, V, dy[0], dy[1])
    return unbroadcast(on_triangle(X, UPLO.upper() == "L"), a), NO_TANGENT


@transformable
def eigvalsh_pullback(dy, a, UPLO="L"):
    w, V = la.eigh(a, UPLO)
    X = (V * densify(dy)[..., None, :]) @ mT(V)
    return unbroadcast(on_triangle(X, UPLO.upper() == "L"), a), NO_TANGENT


@transformable
def svd_grad(A, U, s, Vh, dU, ds, dVh):
    """The cotangent of A = U diag(s) Vh (reduced, real) from those of U, s, Vh."""
    V = mT(Vh)
    k = np.shape(s)[-1]
    m = np.shape(A)[-2]
    n = np.shape(A)[-1]
    F = inverse_gap(s * s)  # F_ij = 1 / (s_j^2 - s_i^2)
    S = diag_matrix(s)
    s_inv = np.where(s == 0, 0.0, 1.0 / np.where(s == 0, 1.0, s))
    inner = np.zeros(np.shape(s) + (k,))
    out = np.zeros(np.shape(A))
    if not is_zero(ds):
        inner = inner + diag_matrix(densify(ds))
    if not is_zero(dU):
        dUd = densify(dU)
        UtdU = mT(U) @ dUd
        inner = inner + (F * (UtdU - mT(UtdU))) @ S
        if m > k:
            out = out + ((dUd - U @ UtdU) * s_inv[..., None, :]) @ Vh
    if not is_zero(dVh):
        dV = mT(densify(dVh))
        VtdV = mT(V) @ dV
        inner = inner + S @ (F * (VtdV - mT(VtdV)))
        if n > k:
            out = out + (U * s_inv[..., None, :]) @ mT(dV - V @ VtdV)
    return (U @ inner) @ Vh + out


@transformable
def svd_pullback(dy, a, full_matrices=True, compute_uv=True, hermitian=False):
    m = np.shape(a)[-2]
    n = np.shape(a)[-1]
    if hermitian or (full_matrices and compute_uv and m != n):
        return by_rule(la.svd, dy, a, full_matrices, compute_uv, hermitian)
    U, s, Vh = la.svd(a, full_matrices=False)
    if not compute_uv:
        return unbroadcast(svd_grad(a, U, s, Vh, ZERO, dy, ZERO), a), NO_TANGENT, NO_TANGENT
    g = svd_grad(a, U, s, Vh, dy[0], dy[1], dy[2])
    return unbroadcast(g, a), NO_TANGENT, NO_TANGENT, NO_TANGENT


# Dask's svd is not NumPy's (a second positional argument is its coerce_signs, reduced
# factors always): recomputed here it can differ from the forward sweep's factors, a wrong
# gradient with no error. On Dask the adjoint calls the closure pullback, refused by name.
svd_pullback.__pullback_numpy_only__ = True


@transformable
def svdvals_pullback(dy, x):
    U, s, Vh = la.svd(x, full_matrices=False)
    return (unbroadcast(svd_grad(x, U, s, Vh, ZERO, dy, ZERO), x),)


@transformable
def qr_square_grad(Q, R, dQ, dR):
    """The cotangent of A = Q R for square R (A is m x n with m >= n, reduced)."""
    M = np.zeros(np.shape(R))
    if not is_zero(dR):
        M = M + R @ mT(dR)
    if not is_zero(dQ):
        M = M - mT(dQ) @ Q
    low = np.tril(M, -1)
    b = Q @ (low + mT(low) + diag_matrix(np.diagonal(M, axis1=-2, axis2=-1)))
    if not is_zero(dQ):
        b = b + dQ
    return mT(la.solve(R, mT(b)))  # A-bar = b R^-T


@transformable
def qr_pullback(dy, a, mode="reduced"):
    m = np.shape(a)[-2]
    n = np.shape(a)[-1]
    if m < n or mode == "complete" and m > n:
        return by_rule(la.qr, dy, a, mode)
    if mode == "r":
        Q, R = la.qr(a)
        return unbroadcast(qr_square_grad(Q, R, ZERO, densify(dy)), a), NO_TANGENT
    # the default mode not passed on: Dask's qr takes no mode
    Q, R = la.qr(a) if mode == "reduced" else la.qr(a, mode)
    dQ = ZERO if is_zero(dy[0]) else densify(dy[0])
    dR = ZERO if is_zero(dy[1]) else densify(dy[1])
    return unbroadcast(qr_square_grad(Q, R, dQ, dR), a), NO_TANGENT


@transformable
def _two_norm_pullback(dy, x, axes, keepdims):
    """The cotangent of the 2-norm (Frobenius for a matrix) of ``x`` over ``axes``."""
    y = np.sqrt(np.sum(np.real(x * np.conj(x)), axis=axes, keepdims=True))
    g = densify(dy)
    if not keepdims:
        g = np.expand_dims(g, axes)
    safe = np.where(y == 0, 1.0, y)  # the gradient at 0 is taken as 0
    return unbroadcast(np.where(y == 0, 0.0, g / safe) * x, x)


@transformable
def vector_norm_pullback(dy, x, axis=None, keepdims=False, ord=2):
    axes = tuple(range(np.ndim(x))) if axis is None else axis
    if ord != 2:
        if np.ndim(axes) == 0:
            axes = (axes,)
        return (p_norm_cotangent(dy, x, axes, keepdims, ord),)
    return (_two_norm_pullback(dy, x, axes, keepdims),)


@transformable
def matrix_norm_pullback(dy, x, keepdims=False, ord="fro"):
    if ord == 1 or ord == -1 or ord == np.inf or ord == -np.inf:
        return (matrix_abs_norm_cotangent(dy, x, keepdims, ord),)
    if ord != "fro" and not np.iscomplexobj(x):
        # "nuc", 2, -2: the sum, largest, smallest singular value (ties share the cotangent)
        U, s, Vh = la.svd(x, full_matrices=False)
        g = np.reshape(densify(dy), np.shape(s)[:-1] + (1,))
        if ord == "nuc":
            ds = g + np.zeros(np.shape(s))
        else:
            if ord == 2:
                pick = s == np.max(s, axis=-1, keepdims=True)
            else:
                pick = s == np.min(s, axis=-1, keepdims=True)
            ds = g * pick / np.sum(pick, axis=-1, keepdims=True)
        return (svd_grad(x, U, s, Vh, ZERO, ds, ZERO),)
    if ord != "fro":  # of a complex matrix: first derivatives only
        return by_rule(la.matrix_norm, dy, x, keepdims=keepdims, ord=ord)
    return (_two_norm_pullback(dy, x, (-2, -1), keepdims),)


@transformable
def eigvec_gauge_T(V, Vb):
    """The transpose of how LAPACK fixes each eigenvector (unit norm, largest component
    real; see linalg._eigvec_gauge_T): the cotangent of V mapped back to that of the raw
    variation ``dU = V (F * M)``."""
    if np.iscomplexobj(V):
        k = np.argmax(np.abs(V), axis=-2)[..., None, :]
        r = np.real(np.take_along_axis(V, k, axis=-2))
        t = -np.imag(np.sum(np.conj(Vb) * V, axis=-2, keepdims=True))
        rows = np.arange(np.shape(V)[-2])[:, None] == k  # the k_j-th entry of column j
        Vb = Vb + rows * (-1j * t / r)
    s = np.real(np.sum(np.conj(Vb) * V, axis=-2, keepdims=True))
    return Vb - V * s


@transformable
def from_eigenbasis(V, inner, a):
    """``V^-H inner V^H``, the cotangent of ``a`` from that of ``M = V^-1 da V``; its real
    part for a real ``a`` (the derivative of the function NumPy computes)."""
    g = la.solve(mH(V), inner @ mH(V))
    if not np.iscomplexobj(a):
        g = np.real(g)
    return unbroadcast(g, a)


@transformable
def eig_pullback(dy, a):
    w, V = la.eig(a)
    dw = dy[0]
    dV = dy[1]
    inner = np.zeros(np.shape(V), np.result_type(V, 1j))
    if not is_zero(dw):
        inner = inner + diag_matrix(densify(dw))
    if not is_zero(dV):
        inner = inner + np.conj(inverse_gap(w)) * (mH(V) @ eigvec_gauge_T(V, densify(dV)))
    return (from_eigenbasis(V, inner, a),)


@transformable
def eigvals_pullback(dy, a):
    w, V = la.eig(a)
    return (from_eigenbasis(V, diag_matrix(densify(dy)), a),)


@transformable
def lstsq_grad(dy, a, b):
    """The cotangents of ``(a, b)`` for ``(x, residuals, rank, s) = lstsq(a, b)`` of a real
    full-rank matrix ``a`` (numpy.linalg's and scipy.linalg's results alike)."""
    vector = np.ndim(b) == 1
    Bm = b[:, None] if vector else b
    X = la.pinv(a)
    xm = X @ Bm  # x = pinv(a) b for a full-rank a
    dx = dy[0]
    dres = dy[1]
    ds = dy[3]
    dA = np.zeros(np.shape(a))
    dB = np.zeros(np.shape(Bm))
    if not is_zero(dx):
        g = densify(dx)
        g = g[:, None] if vector else g
        dA = dA + pinv_grad(a, X, g @ mT(Bm))
        dB = dB + mT(X) @ g
    # residuals = |b - a x|^2 per column, given for a tall full-rank a; x is optimal, so
    # only the explicit dependence on a and b remains
    if not is_zero(dres) and np.shape(a)[0] > np.shape(a)[1]:
        r = densify(dres)
        resid = Bm - a @ xm
        dB = dB + 2.0 * resid * r
        dA = dA - 2.0 * (resid * r) @ mT(xm)
    if not is_zero(ds):
        U, s, Vh = la.svd(a, full_matrices=False)
        dA = dA + svd_grad(a, U, s, Vh, ZERO, ds, ZERO)
    return dA, dB[:, 0] if vector else dB


@transformable
def lstsq_pullback(dy, a, b, rcond=None):
    if np.ndim(a) != 2 or np.iscomplexobj(a) or np.iscomplexobj(b):
        return by_rule(la.lstsq, dy, a, b, rcond)  # its rule refuses these
    da, db = lstsq_grad(dy, a, b)
    return da, db, NO_TANGENT


def tensorsolve_order(ndim, axes):
    """The axes of ``a`` in the order tensorsolve moves them to (``axes`` to the end)."""
    order = list(range(ndim))
    for k in axes or ():
        order.remove(k)
        order.insert(ndim, k)
    return order


# Integer bookkeeping: transformed code (a second derivative) calls it as it is.
tensorsolve_order.__pullback_opaque__ = True


@transformable
def tensorsolve_pullback(dy, a, b, axes=None):
    # x solves A2 x2 = b2 with A2 the reordered a as an (size(b), size(x)) matrix
    x = la.tensorsolve(a, b, axes)
    order = tensorsolve_order(np.ndim(a), axes)
    A = np.transpose(a, order)
    A2 = np.reshape(A, (math.prod(np.shape(b)), -1))
    db2 = la.solve(mH(A2), np.ravel(densify(dy)))
    dA2 = -(db2[:, None] * np.conj(np.ravel(x))[None, :])
    dA = np.transpose(np.reshape(dA2, np.shape(A)), np.argsort(order))
    return unbroadcast(dA, a), unbroadcast(np.reshape(db2, np.shape(b)), b), NO_TANGENT


def register_pullbacks(reg):
    set_pullbacks(
        reg,
        [
            # written in transformable.py with the other NumPy pullbacks, given here: the
            # linalg family registers on its first lookup (family_domains.py)
            (la.inv, inv_pullback),
            (la.det, det_pullback),
            (la.solve, solve_pullback),
            (la.norm, norm_pullback),
            (la.slogdet, slogdet_pullback),
            (la.pinv, pinv_pullback),
            (la.matrix_power, matrix_power_pullback),
            (la.cholesky, cholesky_pullback),
            (la.eigh, eigh_pullback),
            (la.eigvalsh, eigvalsh_pullback),
            (la.svd, svd_pullback),
            (getattr(la, "svdvals", None), svdvals_pullback),
            (la.qr, qr_pullback),
            (la.eig, eig_pullback),
            (la.eigvals, eigvals_pullback),
            (la.lstsq, lstsq_pullback),
            (la.tensorsolve, tensorsolve_pullback),
            (getattr(la, "vector_norm", None), vector_norm_pullback),
            (getattr(la, "matrix_norm", None), matrix_norm_pullback),
        ],
    )
