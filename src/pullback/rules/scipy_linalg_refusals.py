"""The refusals of scipy.linalg's factorizations and the pieces of their derivatives that
their rules (scipy_linalg_decomp.py) and their transformable pullbacks
(scipy_linalg_pullbacks.py) both call: each factorization's checks (complex matrices,
repeated eigenvalues or singular values with vectors, a rank-deficient QR, a singular LU
factor), Murray's Cholesky cotangent, LAPACK's row order and the split of a packed LU.
Neither of those modules is imported here, so the family imports its pullbacks module.

>>> import numpy as np
>>> row_order(np.array([2, 2, 2]), 3)
array([2, 0, 1])
"""

from __future__ import annotations

import functools

import numpy as np

from ..registry import transformable
from . import scipy_linalg as base
from .scipy_linalg import mT, on_triangle, real_only, refuse


def tolerance(x, scale):
    """How close two singular values or eigenvalues may be before they count as equal."""
    return 100 * np.finfo(np.result_type(x, np.float32)).eps * max(float(scale), 1e-300)


def distinct(name, values, what, fix):
    """Refuse values (sorted along the last axis) that repeat."""
    v = np.sort(np.asarray(values), axis=-1)
    if v.shape[-1] > 1:
        gap = np.min(np.diff(v, axis=-1))
        if gap <= tolerance(v, np.max(np.abs(v))):
            refuse(name, f"{what} repeat, so the vectors are not unique", fix)


@transformable
def cholesky_cotangent(c, dc, lower):
    """The cotangent of a symmetric matrix (read from one triangle) from its Cholesky factor
    ``c`` (L with A = L L^T, or R = L^T) and the factor's cotangent (Murray 2016)."""
    L = c if lower else mT(c)
    Lbar = dc if lower else mT(dc)
    m = mT(L) @ Lbar
    p = np.tril(m) - 0.5 * base.diag_part(m)
    y = base.sl.solve_triangular(L, mT(p), lower=True, trans=1)  # L^-T P^T
    s = base.sl.solve_triangular(L, mT(y), lower=True, trans=1)  # L^-T P L^-1
    return on_triangle(s, lower)


@functools.cache
def cho_factor_keeps_other_triangle() -> bool:
    """Whether this SciPy's cho_factor leaves the other triangle of ``a`` in ``c`` (before
    SciPy 1.18) or zeroes it (1.18 on): asked of SciPy once, on a 2x2 matrix."""
    c, _ = base.sl.cho_factor(np.array([[4.0, 1.0], [1.0, 3.0]]))
    return bool(c[1, 0] == 1.0)


def nonsingular_u(name, U):
    d = np.abs(np.diagonal(U, axis1=-2, axis2=-1))
    if d.size and np.min(d) <= tolerance(U, np.max(d)):
        refuse(
            name,
            "the factor U is singular, and the LU factors are not differentiable there",
            "differentiate a full-rank matrix (or use lstsq / pinv)",
        )


def lu_refusals(name, a):
    """Refuse what lu's and lu_factor's rules do not differentiate: complex matrices, a
    stack (lu_factor), a singular factor U."""
    real_only(name, a)
    if name == "lu_factor" and np.ndim(a) != 2:
        refuse("lu_factor", "its rule is for one matrix", "call it once per matrix of the stack")
    nonsingular_u(name, np.triu(base.sl.lu_factor(a)[0]) if np.ndim(a) == 2 else base.sl.lu(a)[2])


def row_order(piv, m):
    """The rows of A in the order LAPACK's pivots ``piv`` put them: ``A[order] = L U``."""
    order = np.arange(m)
    for i, j in enumerate(piv):
        order[i], order[j] = order[j], order[i]
    return order


# Integer bookkeeping: transformed code (a second derivative) calls it as it is.
row_order.__pullback_opaque__ = True


@transformable
def lu_parts(lu, k):
    L = np.tril(lu[..., :, :k], -1) + np.eye(lu.shape[-2], k, dtype=lu.dtype)
    return L, np.triu(lu[..., :k, :])


def qr_refusals(a, mode, pivoting, R=None):
    """Refuse what qr's rule does not differentiate (``R``: the factor, if computed)."""
    real_only("qr", a)
    if pivoting or mode not in ("full", "economic", "r"):
        refuse("qr", f"mode={mode!r}, pivoting={pivoting} has no rule",
               "use mode='full', 'economic' or 'r' without pivoting")  # fmt: skip
    m, n = np.shape(a)[-2:]
    if mode == "full" and m > n:
        refuse(
            "qr",
            "mode='full' of a tall matrix: the last m - n columns of Q are not unique",
            "use mode='economic' (or 'r')",
        )
    R = base.sl.qr(a, mode="economic")[1] if R is None else R
    d = np.abs(np.diagonal(R[..., : min(m, n), :], axis1=-2, axis2=-1))
    if d.size and np.min(d) <= tolerance(R, np.max(d)):
        refuse("qr", "a is rank deficient: Q and R are not differentiable there",
               "differentiate a matrix of full rank")  # fmt: skip


def svd_refusals(a, full_matrices, compute_uv, s=None):
    """Refuse what svd's rule does not differentiate (``s``: the singular values, if
    computed)."""
    real_only("svd", a)
    m, n = np.shape(a)[-2:]
    if compute_uv and full_matrices and m != n:
        refuse(
            "svd",
            "full_matrices=True of a non-square matrix: the extra singular vectors are not unique",
            "pass full_matrices=False",
        )
    if compute_uv:
        s = base.sl.svd(a, compute_uv=False) if s is None else s
        distinct("svd", s, "singular values", "use compute_uv=False (the values alone)")
        if m != n and s.size and np.min(s) <= tolerance(s, np.max(s)):
            refuse("svd", "a zero singular value of a non-square matrix leaves its singular "
                   "vectors undetermined", "differentiate a matrix of full rank")  # fmt: skip


EIGH_UNSUPPORTED = ("subset_by_index", "subset_by_value")


def eigh_refusals(a, b, eigvals_only, subset_by_index, subset_by_value, w=None):
    """Refuse what eigh's rule does not differentiate (``w``: the eigenvalues, if
    computed)."""
    real_only("eigh", a)
    if b is not None or subset_by_index is not None or subset_by_value is not None:
        refuse("eigh", "the generalized problem (b) and subsets have no rule",
               "for b = L L^T (cholesky) solve the standard problem of L^-1 a L^-T")  # fmt: skip
    if not eigvals_only:
        w = base.sl.eigh(a, eigvals_only=True) if w is None else w
        distinct("eigh", w, "eigenvalues", "use eigvals_only=True (the values alone)")
