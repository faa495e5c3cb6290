"""numpy.linalg: inv, pinv, solve, det, slogdet, cholesky, eigh, eigvalsh, eig/eigvals,
svd, svdvals, qr, lstsq, norm, vector_norm, matrix_norm,
matrix_power and tensorsolve. Stacks of matrices are supported wherever NumPy supports
them.

Conventions and choices:

* ``inv``, ``solve``, ``det``, ``slogdet``, ``pinv``, ``matrix_power``, ``tensorsolve`` and
  the norms accept complex matrices, and so do ``eig``/``eigvals``; the other
  factorizations (``cholesky``, ``eigh``, ``svd``, ``qr``, ``lstsq``) have rules for
  real matrices only.
* ``eig``/``eigvals`` of a real matrix may have complex eigenvalues and eigenvectors: the
  cotangent of the real matrix is the real part of the complex one (the derivative of
  the function NumPy computes). Eigenvectors follow LAPACK's normalization (unit norm,
  largest component real), so the rule differentiates exactly that choice of phase.
* ``cholesky``, ``eigh`` and ``eigvalsh`` read one triangle of their argument (the lower
  one by default). Their cotangent is the derivative of the function NumPy computes: it
  lives on that triangle (``tril(S + S^T) - diag(S)`` for the symmetric gradient ``S``).
  For a symmetric argument built from other values the result is the same as with a
  symmetrized cotangent.
* Repeated eigenvalues or singular values make eigenvectors and singular vectors
  non-unique; where two are exactly equal their coupling term is dropped (0).
* ``svd(full_matrices=True)`` of a non-square matrix: the extra columns of U (or rows of
  Vh) are not unique; their cotangent must be zero.
* ``pinv``/``lstsq`` across a change of rank and ``det``/``slogdet``/``inv`` of singular
  matrices have no derivative.
* ``norm`` at 0 gives 0; for max/min-type norms (``inf``, ``1``, ``2`` of a matrix...) ties
  split the cotangent equally.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedCallError
from ._linalg_util import _diag, _diag_embed, _h, _inverse_gap, _on_triangle, _real_only, _t
from ._util import (
    NO_TANGENT,
    ZERO,
    Registrar,
    bind,
    conj,
    densify,
    dy_parts,
    finalize,
    zeros_for,
)
from .family_domains import DOMAINS
from .linalg_norms import _matrix_norm_rrule, _norm_rrule, _vector_norm_rrule

FAMILY = "linalg"
# Registered on the first lookup of one of its functions (family_domains.py).
DOMAIN = DOMAINS["linalg"]
la = np.linalg


# -- inverses and solves -------------------------------------------------------------------
def _inv_rrule(a):
    y = la.inv(a)

    def inv_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,))
        g = densify(dy)
        yh = _h(y)
        return (finalize(-np.matmul(np.matmul(yh, g), yh), a),)

    return y, inv_pullback


def _solve_rrule(a, b):
    x = la.solve(a, b)
    vector = np.ndim(b) == 1

    def solve_pullback(dy):
        if dy is ZERO:
            return zeros_for((a, b))
        g = np.asarray(densify(dy))
        if vector:
            db = la.solve(_h(a), g[..., None])[..., 0]
            da = -db[..., :, None] * conj(x)[..., None, :]
        else:
            db = la.solve(_h(a), g)
            da = -np.matmul(db, _h(x))
        return finalize(da, a), finalize(db, b)

    return x, solve_pullback


def _det_rrule(a):
    y = la.det(a)

    def det_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,))
        g = np.asarray(densify(dy))
        # d det = det * tr(A^-1 dA): cotangent dy * conj(det) * A^-H.
        scale = g * conj(y)
        return (finalize(scale[..., None, None] * _h(la.inv(a)), a),)

    return y, det_pullback


def _slogdet_rrule(a):
    y = la.slogdet(a)
    sign = y[0]

    def slogdet_pullback(dy):
        d_sign, d_log = dy_parts(dy, 2)
        if d_log is ZERO and (d_sign is ZERO or not np.iscomplexobj(a)):
            return zeros_for((a,))
        inv_h = _h(la.inv(a))
        coeff = 0.0
        if d_log is not ZERO:
            coeff = np.real(np.asarray(densify(d_log)))
        if d_sign is not ZERO and np.iscomplexobj(a):
            # sign varies as i * sign * Im(tr(A^-1 dA)).
            coeff = coeff + 1j * np.imag(np.conj(sign) * np.asarray(densify(d_sign)))
        coeff = np.asarray(coeff)
        return (finalize(coeff[..., None, None] * inv_h, a),)

    return y, slogdet_pullback


def _pinv_rrule(a, *args, **kwargs):
    X = la.pinv(a, *args, **kwargs)
    if bind(
        args, kwargs, ("rcond", "hermitian"), (None, False), name="np.linalg.pinv", known=("rtol",)
    )["hermitian"]:
        raise UnsupportedCallError(
            "pullback: pinv(hermitian=True) has no rule.\nFix: drop hermitian=True (the same "
            "pseudo-inverse, differentiated)."
        )
    A = np.asarray(a)

    def pinv_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,)) + (NO_TANGENT,) * len(args)
        G = np.asarray(densify(dy))
        return (finalize(_pinv_grad(A, X, G), a),) + (NO_TANGENT,) * len(args)

    return X, pinv_pullback


def _pinv_grad(A, X, G):
    """Cotangent of A for X = pinv(A) (constant rank), given dX = G."""
    Xh = _h(X)
    m, n = A.shape[-2], A.shape[-1]
    eye_m = np.eye(m, dtype=X.dtype)
    eye_n = np.eye(n, dtype=X.dtype)
    term1 = -np.matmul(np.matmul(Xh, G), Xh)
    term2 = np.matmul(np.matmul(eye_m - np.matmul(A, X), _h(G)), np.matmul(X, Xh))
    term3 = np.matmul(np.matmul(Xh, X), np.matmul(_h(G), eye_n - np.matmul(X, A)))
    return term1 + term2 + term3


def _matrix_power_rrule(a, n):
    y = la.matrix_power(a, n)
    A = np.asarray(a)

    def matrix_power_pullback(dy):
        if dy is ZERO or n == 0:
            return zeros_for((a,)) + (NO_TANGENT,)
        g = np.asarray(densify(dy))
        base = A if n > 0 else la.inv(A)
        k = abs(n)
        powers = [np.broadcast_to(np.eye(A.shape[-1], dtype=A.dtype), A.shape)]
        for _ in range(k - 1):
            powers.append(np.matmul(powers[-1], base))
        # d(B^k) = sum_j B^j dB B^(k-1-j):  dB = sum_j (B^j)^H g (B^(k-1-j))^H
        db = None
        for j in range(k):
            term = np.matmul(np.matmul(_h(powers[j]), g), _h(powers[k - 1 - j]))
            db = term if db is None else db + term
        if n < 0:  # B = inv(A): dA = -B^H dB B^H
            bh = _h(base)
            db = -np.matmul(np.matmul(bh, db), bh)
        return finalize(db, a), NO_TANGENT

    return y, matrix_power_pullback


def _tensorsolve_rrule(a, b, *args, **kwargs):
    x = la.tensorsolve(a, b, *args, **kwargs)
    axes = bind(args, kwargs, ("axes",), (None,), name="np.linalg.tensorsolve")["axes"]
    A = np.asarray(a)
    if axes is not None:
        allaxes = list(range(A.ndim))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(A.ndim, k)
        A = np.transpose(A, allaxes)
    else:
        allaxes = list(range(A.ndim))
    nb = int(np.prod(np.shape(b)))
    A2 = np.reshape(A, (nb, -1))
    x2 = np.ravel(x)

    def tensorsolve_pullback(dy):
        if dy is ZERO:
            return zeros_for((a, b)) + (NO_TANGENT,) * len(args)
        g = np.ravel(np.asarray(densify(dy)))
        db2 = la.solve(_h(A2), g)
        dA2 = -db2[:, None] * conj(x2)[None, :]
        dA = np.transpose(np.reshape(dA2, A.shape), np.argsort(allaxes))
        db = np.reshape(db2, np.shape(b))
        return (finalize(dA, a), finalize(db, b)) + (NO_TANGENT,) * len(args)

    return x, tensorsolve_pullback


# -- factorizations ------------------------------------------------------------------------
def _cholesky_rrule(a, /, **kwargs):
    y = la.cholesky(a, **kwargs)
    upper = kwargs.get("upper", False)
    L = _t(y) if upper else y

    def cholesky_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,))
        _real_only("cholesky", a)
        g = np.asarray(densify(dy))
        Lbar = _t(g) if upper else g
        P = np.matmul(_t(L), Lbar)
        P = np.tril(P) - 0.5 * _diag_embed(_diag(P))
        # S = L^-T P L^-1
        Z = la.solve(_t(L), P)
        S = _t(la.solve(_t(L), _t(Z)))
        return (finalize(_on_triangle(S, lower=not upper), a),)

    return y, cholesky_pullback


def _uplo(args, kwargs, name):
    return bind(args, kwargs, ("UPLO",), ("L",), name=name)["UPLO"].upper() == "L"


def _eigh_rrule(a, *args, **kwargs):
    y = la.eigh(a, *args, **kwargs)
    w, V = y
    lower = _uplo(args, kwargs, "np.linalg.eigh")

    def eigh_pullback(dy):
        dw, dV = dy_parts(dy, 2)
        if dw is ZERO and dV is ZERO:
            return zeros_for((a,)) + (NO_TANGENT,) * len(args)
        _real_only("eigh", a)
        inner = 0.0
        if dw is not ZERO:
            inner = _diag_embed(np.asarray(densify(dw)))
        if dV is not ZERO:
            inner = inner + _inverse_gap(w) * np.matmul(_t(V), np.asarray(densify(dV)))
        X = np.matmul(np.matmul(V, inner), _t(V))
        return (finalize(_on_triangle(X, lower), a),) + (NO_TANGENT,) * len(args)

    return y, eigh_pullback


def _eigvalsh_rrule(a, *args, **kwargs):
    w, V = la.eigh(a, *args, **kwargs)
    lower = _uplo(args, kwargs, "np.linalg.eigvalsh")

    def eigvalsh_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,)) + (NO_TANGENT,) * len(args)
        _real_only("eigvalsh", a)
        g = np.asarray(densify(dy))
        X = np.matmul(V * g[..., None, :], _t(V))
        return (finalize(_on_triangle(X, lower), a),) + (NO_TANGENT,) * len(args)

    return w, eigvalsh_pullback


def _eig_rrule(a):
    y = la.eig(a)
    w, V = y

    def eig_pullback(dy):
        dw, dV = dy_parts(dy, 2)
        if dw is ZERO and dV is ZERO:
            return zeros_for((a,))
        inner = 0.0
        if dw is not ZERO:
            inner = _diag_embed(np.asarray(densify(dw)))
        if dV is not ZERO:
            inner = inner + conj(_inverse_gap(w)) * np.matmul(_h(V), _eigvec_gauge_T(V, dV))
        return (finalize(_from_eigenbasis(V, inner), a),)

    return y, eig_pullback


def _from_eigenbasis(V, inner):
    """``V^-H inner V^H``: the cotangent of ``a`` from that of ``M = V^-1 da V``."""
    return la.solve(_h(V), np.matmul(inner, _h(V)))


def _eigvec_gauge_T(V, dV):
    """The transpose of how LAPACK fixes each eigenvector: unit norm, and its largest
    component real. Forward, a raw variation ``dU = V (F * M)`` becomes
    ``dV1 = dU - V Re(diag(V^H dU))`` (unit norm) and then ``dV = dV1 + i V c`` with
    ``c_j = -Im(dV1[k_j, j]) / V[k_j, j]`` (``k_j`` the largest component). This maps
    the cotangent of ``V`` back to that of ``dU``. For real eigenvectors ``c`` is 0."""
    Vb = np.asarray(densify(dV))
    if np.iscomplexobj(V):
        k = np.argmax(np.abs(V), axis=-2)[..., None, :]
        r = np.real(np.take_along_axis(V, k, axis=-2))
        t = -np.imag(np.sum(conj(Vb) * V, axis=-2, keepdims=True))
        rows = np.arange(V.shape[-2])[:, None] == k  # the k_j-th entry of column j
        Vb = Vb + rows * (-1j * t / r)
    s = np.real(np.sum(conj(Vb) * V, axis=-2, keepdims=True))
    return Vb - V * s


def _eigvals_rrule(a):
    w, V = la.eig(a)

    def eigvals_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,))
        g = np.asarray(densify(dy))
        return (finalize(_from_eigenbasis(V, _diag_embed(g)), a),)

    return w, eigvals_pullback


def _svd_grad(A, U, s, Vh, dU, ds, dVh):
    """Cotangent of A = U diag(s) Vh (reduced, real) from the cotangents of U, s, Vh."""
    V = _t(Vh)
    k = s.shape[-1]
    m, n = A.shape[-2], A.shape[-1]
    inner = 0.0
    if ds is not ZERO:
        inner = _diag_embed(np.asarray(densify(ds)))
    F = _inverse_gap(s * s)  # F_ij = 1 / (s_j^2 - s_i^2)
    S = _diag_embed(s)
    s_inv = np.where(s == 0, 0.0, 1.0 / np.where(s == 0, 1.0, s))
    out = None
    if dU is not ZERO:
        dU = np.asarray(densify(dU))
        UtdU = np.matmul(_t(U), dU)
        J = F * (UtdU - _t(UtdU))
        inner = inner + np.matmul(J, S)
        if m > k:
            proj = dU - np.matmul(U, UtdU)  # (I - U U^T) dU
            out = np.matmul(proj * s_inv[..., None, :], Vh)
    if dVh is not ZERO:
        dV = _t(np.asarray(densify(dVh)))
        VtdV = np.matmul(_t(V), dV)
        K = F * (VtdV - _t(VtdV))
        inner = inner + np.matmul(S, K)
        if n > k:
            proj = dV - np.matmul(V, VtdV)  # (I - V V^T) dV
            term = np.matmul(U * s_inv[..., None, :], _t(proj))
            out = term if out is None else out + term
    core = np.matmul(np.matmul(U, inner), Vh) if not isinstance(inner, float) else 0.0
    if out is None:
        return core
    return core + out


def _svd_rrule(a, *args, **kwargs):
    y = la.svd(a, *args, **kwargs)
    p = bind(
        args,
        kwargs,
        ("full_matrices", "compute_uv", "hermitian"),
        (True, True, False),
        name="np.linalg.svd",
    )
    if p["hermitian"]:
        raise UnsupportedCallError(
            "pullback: svd(hermitian=True) has no rule.\nFix: drop hermitian=True (the same "
            "singular values; np.linalg.eigh differentiates a Hermitian matrix's eigenvectors)."
        )
    A = np.asarray(a)
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    if p["compute_uv"]:
        U, s, Vh = y
        U, Vh = U[..., :, :k], Vh[..., :k, :]
    else:
        U, s, Vh = la.svd(A, full_matrices=False)
    rest = (NO_TANGENT,) * len(args)

    def svd_pullback(dy):
        if not p["compute_uv"]:
            if dy is ZERO:
                return zeros_for((a,)) + rest
            _real_only("svd", a)
            return (finalize(_svd_grad(A, U, s, Vh, ZERO, dy, ZERO), a),) + rest
        dU, ds, dVh = dy_parts(dy, 3)
        if dU is ZERO and ds is ZERO and dVh is ZERO:
            return zeros_for((a,)) + rest
        _real_only("svd", a)
        if p["full_matrices"]:
            if dU is not ZERO:
                dU = np.asarray(densify(dU))
                _no_extra(dU[..., :, k:], "U")
                dU = dU[..., :, :k]
            if dVh is not ZERO:
                dVh = np.asarray(densify(dVh))
                _no_extra(dVh[..., k:, :], "Vh")
                dVh = dVh[..., :k, :]
        return (finalize(_svd_grad(A, U, s, Vh, dU, ds, dVh), a),) + rest

    return y, svd_pullback


def _no_extra(block, name):
    if block.size and np.any(block != 0):
        raise UnsupportedCallError(
            f"pullback: svd(full_matrices=True) of a non-square matrix: the extra columns "
            f"of {name} are not unique and cannot be differentiated.\n"
            "Fix: pass full_matrices=False."
        )


def _svdvals_rrule(x, /):
    y = la.svdvals(x)
    U, s, Vh = la.svd(x, full_matrices=False)
    A = np.asarray(x)

    def svdvals_pullback(dy):
        if dy is ZERO:
            return zeros_for((x,))
        _real_only("svdvals", x)
        return (finalize(_svd_grad(A, U, s, Vh, ZERO, dy, ZERO), x),)

    return y, svdvals_pullback


def _qr_square_grad(Q, R, dQ, dR):
    """Cotangent of A = Q R for square R (A is m x n with m >= n, reduced)."""
    M = 0.0
    if dR is not ZERO:
        M = np.matmul(R, _t(dR))
    if dQ is not ZERO:
        M = M - np.matmul(_t(dQ), Q)
    M = np.asarray(M)
    low = np.tril(M, -1)
    copyltu = low + _t(low) + _diag_embed(_diag(M))
    b = np.matmul(Q, copyltu)
    if dQ is not ZERO:
        b = b + dQ
    # A-bar = b R^-T  (solve R X^T = b^T)
    return _t(la.solve(R, _t(b)))


def _qr_rrule(a, *args, **kwargs):
    y = la.qr(a, *args, **kwargs)
    mode = bind(args, kwargs, ("mode",), ("reduced",), name="np.linalg.qr")["mode"]
    if mode not in ("reduced", "complete", "r"):
        raise UnsupportedCallError(
            f"pullback: qr(mode={mode!r}) has no rule.\nFix: use mode='reduced' (or "
            "'complete', 'r')."
        )
    A = np.asarray(a)
    m, n = A.shape[-2], A.shape[-1]
    if mode == "r":
        Q, R = la.qr(A)
    else:
        Q, R = y
    rest = (NO_TANGENT,) * len(args)

    def qr_pullback(dy):
        if mode == "r":
            dQ, dR = ZERO, dy
        else:
            dQ, dR = dy_parts(dy, 2)
        if dQ is ZERO and dR is ZERO:
            return zeros_for((a,)) + rest
        _real_only("qr", a)
        dQ = ZERO if dQ is ZERO else np.asarray(densify(dQ))
        dR = ZERO if dR is ZERO else np.asarray(densify(dR))
        k = min(m, n)
        if mode == "complete" and m > n:
            if dQ is not ZERO:
                if np.any(dQ[..., :, k:] != 0):
                    raise UnsupportedCallError(
                        "pullback: qr(mode='complete') of a tall matrix: the extra columns "
                        "of Q are not unique.\nFix: use mode='reduced'."
                    )
                dQ = dQ[..., :, :k]
            if dR is not ZERO:
                dR = dR[..., :k, :]
        Qk, Rk = Q[..., :, :k], R[..., :k, :]
        if m >= n:
            return (finalize(_qr_square_grad(Qk, Rk, dQ, dR), a),) + rest
        # Wide: A = [X | Y] with X = Q R1 square and R2 = Q^T Y.
        R1, Y = Rk[..., :, :m], A[..., :, m:]
        dR1 = ZERO if dR is ZERO else dR[..., :, :m]
        dR2 = ZERO if dR is ZERO else dR[..., :, m:]
        dY = ZERO
        if dR2 is not ZERO:
            dY = np.matmul(Qk, dR2)
            extra = np.matmul(Y, _t(dR2))
            dQ = extra if dQ is ZERO else dQ + extra
        dX = _qr_square_grad(Qk, R1, dQ, dR1)
        if dY is ZERO:
            dY = np.zeros_like(Y)
        return (finalize(np.concatenate([dX, dY], axis=-1), a),) + rest

    return y, qr_pullback


def _lstsq_rrule(a, b, *args, **kwargs):
    y = la.lstsq(a, b, *args, **kwargs)
    x, residuals, rank, s = y
    A = np.asarray(a)
    B = np.asarray(b)
    vector = B.ndim == 1
    X = la.pinv(A)
    U, _, Vh = la.svd(A, full_matrices=False)
    rest = (NO_TANGENT,) * len(args)

    def lstsq_pullback(dy):
        dx, dres, _, ds = dy_parts(dy, 4)
        if dx is ZERO and dres is ZERO and ds is ZERO:
            return zeros_for((a, b)) + rest
        _real_only("lstsq", a, b)
        xm = x[:, None] if vector else x
        Bm = B[:, None] if vector else B
        dA = np.zeros_like(A, dtype=np.result_type(A, np.float64))
        dB = np.zeros_like(Bm, dtype=np.result_type(B, np.float64))
        if dx is not ZERO:
            g = np.asarray(densify(dx))
            g = g[:, None] if vector else g
            # x = pinv(A) b
            dA = dA + _pinv_grad(A, X, np.matmul(g, _t(Bm)))
            dB = dB + np.matmul(_t(X), g)
        if dres is not ZERO and np.size(residuals):
            r = np.asarray(densify(dres))
            resid = Bm - np.matmul(A, xm)  # x is optimal: only the explicit terms remain
            dB = dB + 2.0 * resid * r
            dA = dA - 2.0 * np.matmul(resid * r, _t(xm))
        if ds is not ZERO:
            dA = dA + _svd_grad(A, U, s, Vh, ZERO, ds, ZERO)
        dB = dB[:, 0] if vector else dB
        return (finalize(dA, a), finalize(dB, b)) + rest

    return y, lstsq_pullback


def register(reg):
    r = Registrar(reg, FAMILY)
    r.rule(la.inv, _inv_rrule)
    r.rule(la.solve, _solve_rrule)
    r.rule(la.det, _det_rrule)
    r.rule(la.slogdet, _slogdet_rrule)
    r.rule(la.pinv, _pinv_rrule, notes="constant rank")
    r.rule(la.matrix_power, _matrix_power_rrule)
    r.rule(la.tensorsolve, _tensorsolve_rrule)
    r.rule(la.cholesky, _cholesky_rrule, notes="real; reads one triangle")
    r.rule(la.eigh, _eigh_rrule, notes="real symmetric; reads one triangle")
    r.rule(la.eigvalsh, _eigvalsh_rrule, notes="real symmetric; reads one triangle")
    r.rule(la.eig, _eig_rrule, notes="distinct eigenvalues; LAPACK's phase")
    r.rule(la.eigvals, _eigvals_rrule, notes="distinct eigenvalues; real or complex")
    r.rule(la.svd, _svd_rrule, notes="real")
    r.rule(la.qr, _qr_rrule, notes="real; modes reduced, complete (m <= n), r")
    r.rule(la.lstsq, _lstsq_rrule, notes="real, full rank")
    r.rule(la.norm, _norm_rrule, notes="ties split equally; 0 at 0")
    if hasattr(la, "svdvals"):
        r.rule(la.svdvals, _svdvals_rrule)
    if hasattr(la, "vector_norm"):
        r.rule(la.vector_norm, _vector_norm_rrule)
    if hasattr(la, "matrix_norm"):
        r.rule(la.matrix_norm, _matrix_norm_rrule)
    r.nondiff(la.matrix_rank, names=["numpy.linalg.matrix_rank"], notes="integer valued")
    # Their pullbacks as transformable functions (second derivatives).
    from .linalg_pullbacks import register_pullbacks

    register_pullbacks(reg)
