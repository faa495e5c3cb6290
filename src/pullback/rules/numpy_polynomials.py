"""Polynomials: ``np.polyfit``, ``np.polyder``, ``np.polyint`` and ``np.roots``
(``np.polyval`` is in numpy_misc; ``numpy.polynomial.polynomial``'s ``polyfit`` and
``polyval`` in numpy_polynomials_npp.py, registered once a program imports that module).
Each pullback is a transformable function (the rule's closure calls it too), so second
derivatives run through it.

Choices and limits:

* ``polyfit`` is the least-squares fit ``c = argmin ||W (V(x) c - y)||``: its derivative is
  that of the full-rank solution (``(A^T A)^-1 A^T b``, ``A = W V``, ``b = W y``), with
  respect to ``y``, ``x`` and the weights ``w=``. A rank-deficient fit (NumPy warns
  ``RankWarning``) has no unique solution to differentiate and is refused, and so are
  ``full=True`` and ``cov=True`` (what they add is not differentiated).
* ``roots``: a simple root ``r`` of ``p`` moves by ``-dp(r) / p'(r)``; at a repeated root
  ``p'(r) = 0`` and the derivative is infinite. A leading zero coefficient (which
  ``np.roots`` strips, changing the degree) is refused.
* The polynomials are 1-d (one polynomial, not a stack of them).
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedCallError
from ..list_operands import dense_operand
from ..registry import transformable
from ..tangents import NO_TANGENT, densify, unbroadcast
from ._util import Registrar
from .family_domains import DOMAINS
from .transformable import rule_from_pullback

FAMILY = "numpy_polynomials"
# Registered on the first lookup of one of its functions (family_domains.py).
DOMAIN = DOMAINS["numpy_polynomials"]


def _refuse(name, what, fix):
    raise UnsupportedCallError(f"pullback: {name}({what}) has no rule.\nFix: {fix}")


def _one_dimensional(name, p):
    if np.ndim(p) != 1:
        _refuse(name, "a polynomial of ndim != 1", "call it once per polynomial (a 1-d array)")


@transformable
def ascending_powers(x, n):
    """``x ** (0, 1, ..., n - 1)`` along a new last axis, by products (``x ** 0`` by the
    power rule would differentiate to ``0 * x ** -1``, NaN at ``x = 0``)."""
    column = np.ones(np.shape(x), np.result_type(dense_operand(x), 1.0))
    columns = ()
    for _ in range(n):
        columns = columns + (column,)
        column = column * x
    return np.stack(columns, axis=-1)


# -- polyder and polyint: linear in the coefficients --------------------------------------
@transformable
def polyder_pullback(dy, p, m=1):
    _one_dimensional("numpy.polyder", p)
    # one step: q[i] = p[i] (n - 1 - i) for i < n - 1, so dp = (dq * (n - 1 - i), 0)
    n = np.shape(p)[0]
    g = densify(dy)
    if m >= n:  # the derivative is empty: every coefficient has gone
        return np.zeros(np.shape(p), np.result_type(dense_operand(p), 1.0)), NO_TANGENT
    for k in range(m - 1, -1, -1):
        length = n - k  # the length of the polynomial differentiated at step k
        g = np.concatenate([g * np.arange(length - 1, 0, -1), np.zeros(1, np.result_type(g))])
    return unbroadcast(g, p), NO_TANGENT


@transformable
def polyint_pullback(dy, p, m=1, k=None):
    _one_dimensional("numpy.polyint", p)
    # one step: q = (p / (n, n - 1, ..., 1), k_j): dp = dq[:-1] / (n, ..., 1), dk_j = dq[-1]
    n = np.shape(p)[0]
    g = densify(dy)
    dks = ()
    for step in range(m - 1, -1, -1):
        length = n + step  # the length of the polynomial integrated at this step
        dks = dks + (g[length],)
        g = g[:length] / np.arange(length, 0, -1)
    dk = NO_TANGENT
    if k is not None:
        # k[j] is the constant of the j-th integration (a scalar k serves every step)
        dks = dks[::-1]
        dk = unbroadcast(np.stack(dks), k) if np.ndim(k) > 0 else sum(dks)
    return unbroadcast(g, p), NO_TANGENT, dk


def _polyder_checked(p, m=1):
    _one_dimensional("numpy.polyder", p)
    return np.polyder(p, m)


def _polyint_checked(p, m=1, k=None):
    _one_dimensional("numpy.polyint", p)
    return np.polyint(p, m, k)


# -- polyfit ---------------------------------------------------------------------------
def _check_fit(name, x, y, deg, rcond, full, w, cov=False):
    if full or cov is not False:
        _refuse(
            name,
            "full=True" if full else "cov=...",
            "call it without full=/cov= in the differentiated function (the covariance "
            "of the fit is not differentiated); compute it outside, from its residuals",
        )
    if np.ndim(deg) != 0:
        _refuse(name, "a list of degrees", "pass one integer degree")
    if np.ndim(x) != 1:
        _refuse(name, "an x of ndim != 1", "pass the sample points as a 1-d array")
    _, _, rank, _, _ = np.polyfit(x, y, deg, rcond, True, w)
    if rank < deg + 1:
        _refuse(
            name,
            "a rank-deficient fit",
            f"the fit of degree {deg} to these points has rank {rank} (NumPy's RankWarning): "
            "lower the degree or use more distinct points",
        )


# Checks only (no value to differentiate): transformed code calls them as they are.
_check_fit.__pullback_opaque__ = True


def _polyfit_checked(x, y, deg, rcond=None, full=False, w=None, cov=False):
    _check_fit("numpy.polyfit", x, y, deg, rcond, full, w, cov)
    return np.polyfit(x, y, deg, rcond, full, w, cov)


@transformable
def fit_cotangents(dc, x, y, deg, w):
    """``(dx, dy, dw)`` of the least-squares fit ``c`` (highest power first) of ``y`` at
    ``x`` with weights ``w`` (or None) whose cotangent is ``dc``."""
    g = densify(dc)
    powers = np.arange(deg, -1, -1)
    V = np.flip(ascending_powers(x, deg + 1), -1)  # (n, deg + 1): x ** powers
    y2 = y if np.ndim(y) == 2 else np.expand_dims(y, -1)  # (n, k)
    g2 = g if np.ndim(g) == 2 else np.expand_dims(g, -1)  # (deg + 1, k)
    if w is None:
        A = V
        b = y2
    else:
        A = V * np.expand_dims(w, -1)
        b = y2 * np.expand_dims(w, -1)
    c = np.polyfit(x, y2, deg, None, False, w)
    # z = (A^T A)^-1 g, with the columns of A scaled to unit length (as polyfit scales them)
    scale = np.sqrt(np.sum(A * A, axis=0))
    As = A / scale
    z = np.linalg.solve(As.T @ As, g2 / np.expand_dims(scale, -1)) / np.expand_dims(scale, -1)
    Az = A @ z  # the cotangent of b
    r = b - A @ c  # the residuals
    dA = r @ z.T - Az @ c.T
    # dV/dx: the column of x^j is j x^(j-1), the next column times j (0 for the constant)
    slope = np.concatenate([V[:, 1:] * powers[:-1], np.zeros((np.shape(V)[0], 1))], axis=1)
    if w is None:
        dV = dA
        d_y = Az
        d_w = NO_TANGENT
    else:
        dV = dA * np.expand_dims(w, -1)
        d_y = Az * np.expand_dims(w, -1)
        d_w = unbroadcast(np.sum(dA * V, axis=1) + np.sum(Az * y2, axis=1), w)
    d_x = unbroadcast(np.sum(dV * slope, axis=1), x)
    if np.ndim(y) != 2:
        d_y = d_y[:, 0]
    return d_x, unbroadcast(d_y, y), d_w


@transformable
def polyfit_pullback(dy, x, y, deg, rcond=None, full=False, w=None, cov=False):
    _check_fit("numpy.polyfit", x, y, deg, rcond, full, w, cov)
    d_x, d_y, d_w = fit_cotangents(dy, x, y, deg, w)
    return d_x, d_y, NO_TANGENT, NO_TANGENT, NO_TANGENT, d_w, NO_TANGENT


# -- roots --------------------------------------------------------------------------------
def _check_roots(p):
    _one_dimensional("numpy.roots", p)
    if np.shape(p)[0] > 0 and p[0] == 0:
        _refuse(
            "numpy.roots",
            "a leading zero coefficient",
            "drop the leading zeros before the call (np.roots strips them: the degree, and "
            "so the number of roots, would change with them)",
        )


_check_roots.__pullback_opaque__ = True
_one_dimensional.__pullback_opaque__ = True


def _roots_checked(p):
    _check_roots(p)
    return np.roots(p)


@transformable
def roots_pullback(dy, p):
    # p(r) = sum_k p[k] r^(n-k) = 0 at each root r: dr = -sum_k dp[k] r^(n-k) / p'(r)
    _check_roots(p)
    n = np.shape(p)[0] - 1
    r = np.roots(p)
    if np.shape(r)[0] == 0:
        return (np.zeros(np.shape(p), np.result_type(dense_operand(p), 1.0)),)
    vander = np.flip(ascending_powers(r, n + 1), -1)  # r ** (n, ..., 0)
    slope = np.polyval(np.polyder(p), r)
    weights = densify(dy) / np.conj(slope)
    dp = -(np.conj(vander).T @ weights)
    if not np.iscomplexobj(p):
        dp = np.real(dp)
    return (dp,)


def register_table(reg, table):
    """Register ``(fn, checked, pullback_fn, keywords, notes)`` rows: a rule whose closure
    runs ``checked`` (``fn`` with this module's refusals) and ``pullback_fn``, which is also
    its second-order path; ``keywords``: the keywords it differentiates."""
    r = Registrar(reg, FAMILY)
    for fn, checked, pullback_fn, keywords, notes in table:
        rule = r.rule(fn, rule_from_pullback(checked, pullback_fn, keywords), notes=notes)
        if keywords:
            rule.extra["keyword_cotangents"] = keywords
        reg.set_pullback_function(fn, pullback_fn)


def register(reg):
    register_table(
        reg,
        (
            (np.polyfit, _polyfit_checked, polyfit_pullback, ("w",), "full rank; no full=/cov="),
            (np.polyder, _polyder_checked, polyder_pullback, (), ""),
            (np.polyint, _polyint_checked, polyint_pullback, (), ""),
            (np.roots, _roots_checked, roots_pullback, (), "simple roots"),
        ),
    )
