"""Transformable pullbacks of numpy_misc.py's rules that are linear or polynomial in their
inputs (full, full_like, linspace, diff, polyval, trapezoid, convolve, correlate, meshgrid
of up to three vectors, bincount's weights, cov of one 2-d array): written in the
differentiable subset, so that second derivatives run through them (see transformable.py).
Call forms they do not cover (``diff`` with ``prepend``/``append``, ``linspace(retstep=True)``,
``trapezoid`` with an n-d ``x``, ``cov`` with ``y``/weights) use the rule's
closure (first derivatives only).
"""

from __future__ import annotations

import numpy as np

from ..list_operands import dense_operand
from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO, densify, unbroadcast
from .numpy_polynomials import ascending_powers
from .transformable import by_rule, set_pullbacks


@transformable
def full_pullback(dy, shape, fill_value, dtype=None, order="C", like=None):
    return (NO_TANGENT, unbroadcast(densify(dy), fill_value)) + (NO_TANGENT,) * 3


@transformable
def full_like_pullback(
    dy, a, fill_value, dtype=None, order="K", subok=True, shape=None, device=None
):
    # the values of ``a`` do not matter, only its shape and dtype
    da = np.zeros(np.shape(a), np.result_type(dense_operand(a), 1.0))
    return (da, unbroadcast(densify(dy), fill_value)) + (NO_TANGENT,) * 6


@transformable
def linspace_pullback(
    dy, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, device=None
):
    div = num - 1 if endpoint else num
    samples = dy
    if retstep:  # (samples, step) with step = (stop - start) / div
        samples = dy[0]
    if samples is ZERO or samples is NO_TANGENT:
        d_start = np.zeros(np.shape(np.asarray(start) - np.asarray(stop)))
        d_stop = d_start
    else:
        g = np.moveaxis(densify(samples), axis, 0)
        t = np.arange(num) / max(div, 1)
        t = np.reshape(t, (num,) + (1,) * (np.ndim(g) - 1))  # against the samples' axis
        d_start = np.sum(g * (1.0 - t), axis=0)
        d_stop = np.sum(g * t, axis=0)
    if retstep and not (dy[1] is ZERO or dy[1] is NO_TANGENT) and num > 1:
        # (one sample, or none: NumPy's step is NaN, whose derivative is not taken)
        d_start = d_start - densify(dy[1]) / div
        d_stop = d_stop + densify(dy[1]) / div
    # one cotangent per parameter (none for num, endpoint, ...)
    return (unbroadcast(d_start, start), unbroadcast(d_stop, stop)) + (NO_TANGENT,) * 7


@transformable
def _padded_diff_transpose(g, ax):
    """The adjoint of ``np.diff`` along ``ax``: ``-diff`` of ``g`` with a zero each end."""
    shape = np.shape(g)
    z = np.zeros(shape[:ax] + (1,) + shape[ax + 1 :], np.result_type(g))
    return -np.diff(np.concatenate([z, g, z], axis=ax), axis=ax)


@transformable
def _edge_length(v, ax, nd):
    """How many places ``prepend``/``append`` ``v`` adds along ``ax`` (a scalar adds one)."""
    if v is None:
        return 0
    if np.ndim(v) == nd:
        return np.shape(v)[ax]
    return 1


@transformable
def diff_pullback(dy, a, n=1, axis=-1, prepend=None, append=None):
    g = densify(dy)
    nd = np.ndim(a)
    ax = axis % nd
    for _ in range(n):
        g = _padded_diff_transpose(g, ax)
    if prepend is None and append is None:
        return (unbroadcast(g, a),) + (NO_TANGENT,) * 4
    # the cotangent of the joined array [prepend, a, append], cut into its three parts
    n_pre = _edge_length(prepend, ax, nd)
    n_app = _edge_length(append, ax, nd)
    total = np.shape(g)[ax]
    moved = np.moveaxis(g, ax, -1)
    da = np.moveaxis(moved[..., n_pre : total - n_app], -1, ax)
    dpre = NO_TANGENT
    if prepend is not None:
        dpre = unbroadcast(np.moveaxis(moved[..., :n_pre], -1, ax), prepend)
    dapp = NO_TANGENT
    if append is not None:
        dapp = unbroadcast(np.moveaxis(moved[..., total - n_app :], -1, ax), append)
    return unbroadcast(da, a), NO_TANGENT, NO_TANGENT, dpre, dapp


@transformable
def polyval_pullback(dy, p, x):
    n = np.shape(p)[0]
    g = densify(dy)
    if n == 0:  # the empty polynomial is 0 everywhere
        return np.zeros(np.shape(p), np.result_type(dense_operand(p), 1.0)), unbroadcast(0.0 * g, x)
    # x ** (n - 1, ..., 0) by products: x ** 0 by the power rule would differentiate to
    # 0 * x ** -1, NaN at x = 0 in a second derivative
    vander = np.flip(ascending_powers(x, n), -1)  # x's shape + (n,)
    rest = np.ndim(p) - 1
    if rest == 0:
        dp = np.sum(np.reshape(np.expand_dims(g, -1) * np.conj(vander), (-1, n)), axis=0)
    else:  # coefficient rows that broadcast against x: each row summed to its own shape
        rows = []
        for k in range(n):
            rows = rows + [unbroadcast(g * np.conj(vander[..., k]), p[k])]
        dp = np.stack(rows)
    if n > 1:
        scale = np.reshape(np.arange(n - 1, 0, -1), (n - 1,) + (1,) * rest)
        dx = g * np.conj(np.polyval(p[:-1] * scale, x))
    else:
        dx = np.zeros(np.shape(g), np.result_type(g, dense_operand(x)))
    return unbroadcast(dp, p), unbroadcast(dx, x)


@transformable
def trapezoid_pullback(dy, y, x=None, dx=1.0, axis=-1):
    ax = axis % np.ndim(y)
    yl = np.moveaxis(y, ax, -1)
    n = np.shape(yl)[-1]
    full = x is not None and np.ndim(x) != 1  # x with y's dimensions: steps per row
    if x is None:
        steps = dx * np.ones(max(n - 1, 0))
    elif full:
        steps = np.diff(np.moveaxis(x, ax, -1), axis=-1)
    else:
        steps = np.diff(x)
    edge = np.zeros(np.shape(steps)[:-1] + (1,), np.result_type(steps))
    w = np.concatenate([edge, steps], axis=-1) + np.concatenate([steps, edge], axis=-1)
    g = np.expand_dims(densify(dy), -1)
    d_y = np.moveaxis(g * (w / 2.0), -1, axis)
    mids = (yl[..., :-1] + yl[..., 1:]) / 2.0
    if x is None:
        d_dx = np.sum(densify(dy) * np.conj(np.sum(mids, axis=-1)))
        return unbroadcast(d_y, y), NO_TANGENT, unbroadcast(d_dx, dx), NO_TANGENT
    zero = np.zeros(np.shape(mids)[:-1] + (1,), np.result_type(mids))
    dmid = np.concatenate([zero, mids], axis=-1) - np.concatenate([mids, zero], axis=-1)
    if full:
        d_x = np.moveaxis(g * np.conj(dmid), -1, ax)
    else:
        d_x = np.sum(np.reshape(g * np.conj(dmid), (-1, n)), axis=0)
    return unbroadcast(d_y, y), unbroadcast(d_x, x), NO_TANGENT, NO_TANGENT


@transformable
def _full_from(dy, n, m, mode, correlating):
    """The cotangent of the "full" result, from that of the ``mode`` part of it (zeros
    where the mode cut it)."""
    k = min(n, m)
    offset = (k - 1) // 2
    if mode == "full":
        offset = 0
    elif mode == "valid":
        offset = k - 1
    elif correlating and n < m:
        offset = (k - 1) - (k - 1) // 2
    g = densify(dy)
    before = np.zeros(offset, np.result_type(g))
    after = np.zeros(n + m - 1 - offset - np.shape(g)[0], np.result_type(g))
    return np.concatenate([before, g, after])


@transformable
def convolve_pullback(dy, a, v, mode="full"):
    n, m = np.shape(a)[0], np.shape(v)[0]
    g = _full_from(dy, n, m, mode, False)
    # full[k] = sum_i a[i] v[k - i]; np.correlate conjugates its second argument
    return unbroadcast(np.correlate(g, v, "valid"), a), unbroadcast(
        np.correlate(g, a, "valid"), v
    ), NO_TANGENT


@transformable
def correlate_pullback(dy, a, v, mode="valid"):
    n, m = np.shape(a)[0], np.shape(v)[0]
    g = _full_from(dy, n, m, mode, True)
    # correlate(a, v) = convolve(a, w) with w = conj(v[::-1])
    da = np.correlate(g, np.conj(np.flip(v)), "valid")
    dv = np.conj(np.flip(np.correlate(g, a, "valid")))
    return unbroadcast(da, a), unbroadcast(dv, v), NO_TANGENT


@transformable
def meshgrid_pullback(dy, x1, x2=None, x3=None, copy=True, sparse=False, indexing="xy"):
    xi = (x1,) if x2 is None else ((x1, x2) if x3 is None else (x1, x2, x3))
    n = len(xi)
    parts = ()
    for k in range(n):
        # grid k varies along axis k (the first two swapped for "xy" indexing)
        keep = k
        if indexing == "xy" and n >= 2 and k < 2:
            keep = 1 - k
        g = densify(dy[k])
        if g is ZERO:
            parts = parts + (np.zeros(np.shape(xi[k]), np.result_type(dense_operand(xi[k]), 1.0)),)
        else:
            others = tuple(d for d in range(np.ndim(g)) if d != keep)
            summed = np.reshape(np.sum(g, axis=others), np.shape(xi[k]))
            parts = parts + (unbroadcast(summed, xi[k]),)
    return parts


@transformable
def bincount_pullback(dy, x, weights=None, minlength=0):
    if weights is None:
        return NO_TANGENT, NO_TANGENT, NO_TANGENT
    return NO_TANGENT, unbroadcast(np.take(densify(dy), x), weights), NO_TANGENT


@transformable
def _cov_rows(v, rowvar):
    """``v`` as NumPy's cov reads it: 2-D, variables in rows; and whether it was transposed."""
    X = np.reshape(v, (1, -1)) if np.ndim(v) == 1 else v
    if not rowvar and np.shape(X)[0] != 1:
        return np.transpose(X), True
    return X, False


@transformable
def _cov_back(dX, v, transposed):
    """The cotangent of ``v`` from that of its rows ``dX`` (see _cov_rows)."""
    if transposed:
        dX = np.transpose(dX)
    return unbroadcast(np.reshape(dX, np.shape(v)), v)


@transformable
def cov_pullback(
    dy, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None
):
    # C = Xc diag(w) Xc^H / fact (numpy_misc_covariance's docstring has the derivation)
    X, tm = _cov_rows(m, rowvar)
    n_m = np.shape(X)[0]
    if y is not None:
        Y, ty = _cov_rows(y, rowvar)
        X = np.concatenate([X, Y], axis=0)
    dd = ddof
    if dd is None:
        dd = 0 if bias else 1
    G = np.reshape(densify(dy), (np.shape(X)[0], np.shape(X)[0]))  # one variable: 0-d
    if fweights is None and aweights is None:
        # the rows of Xc sum to 0, so the centring adds nothing
        Xc = X - np.mean(X, axis=1, keepdims=True)
        dX = ((G + np.conj(np.transpose(G))) @ Xc) / (np.shape(X)[1] - dd)
        da = NO_TANGENT
    else:
        if aweights is not None and (np.iscomplexobj(X) or np.iscomplexobj(G)):
            return by_rule(np.cov, dy, m, y, rowvar, bias, ddof, fweights, aweights)  # refused
        f = np.ones(1) if fweights is None else fweights * 1.0
        a = np.ones(1) if aweights is None else aweights * 1.0
        w = f * a
        v1 = np.sum(w)
        if dd == 0:
            fact = v1
        elif aweights is None:
            fact = v1 - dd
        else:
            fact = v1 - dd * np.sum(w * a) / v1
        Xc = X - np.expand_dims((X @ w) / v1, 1)  # the weighted centring adds nothing: Xc w = 0
        dX = ((G + np.conj(np.transpose(G))) @ (Xc * w)) / fact
        da = NO_TANGENT
        if aweights is not None:  # real data: fact and the weighted products move with a
            C = ((Xc * w) @ np.transpose(Xc)) / fact
            q = np.sum(Xc * (G @ Xc), axis=0)
            fb = f + np.zeros(np.shape(w))
            dfact = fb
            if dd != 0:
                dfact = fb - dd * (2.0 * fb * a / v1 - np.sum(w * a) * fb / (v1 * v1))
            da = unbroadcast((fb * q - np.sum(G * C) * dfact) / fact, aweights)
    dm = _cov_back(dX[:n_m], m, tm)
    dyv = NO_TANGENT
    if y is not None:
        dyv = _cov_back(dX[n_m:], y, ty)
    return dm, dyv, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT, da, NO_TANGENT


def interp_segments(x, xp):
    """The segment ``[xp[j], xp[j + 1]]`` of each ``x`` (the last one at the right end)."""
    return np.clip(np.searchsorted(xp, x, side="right") - 1, 0, np.shape(xp)[0] - 2)


# Integer bookkeeping: transformed code (a second derivative) calls it as it is.
interp_segments.__pullback_opaque__ = True


@transformable
def _interp_real_cotangents(g, x, xp, fp, left, right):
    """The cotangents of ``(x, xp, fp, left, right)`` of ``np.interp`` of real values."""
    n = np.shape(xp)[0]
    below = x < xp[0]
    above = x > xp[n - 1]
    gi = np.where(np.logical_or(below, above), 0.0, g)
    if n < 2:  # one knot: fp[0] at x == xp[0] (and outside, where left / right are None)
        dx = 0.0 * gi
        dxp = np.zeros(n)
        dfp = (np.arange(n) == 0) * np.sum(gi)
    else:
        j = interp_segments(x, xp)
        width = xp[j + 1] - xp[j]
        slope = (fp[j + 1] - fp[j]) / width
        t = (x - xp[j]) / width
        jr = np.ravel(j)
        # y = fp[j] (1 - t) + fp[j + 1] t with t = (x - xp[j]) / (xp[j + 1] - xp[j])
        dfp = np.bincount(jr, np.ravel(gi * (1.0 - t)), n)
        dfp = dfp + np.bincount(jr + 1, np.ravel(gi * t), n)
        dxp = np.bincount(jr, np.ravel(gi * slope * (t - 1.0)), n) + np.bincount(
            jr + 1, np.ravel(-(gi * slope * t)), n
        )
        dx = gi * slope
    g_below = np.sum(np.where(below, g, 0.0))
    g_above = np.sum(np.where(above, g, 0.0))
    d_left = NO_TANGENT
    d_right = NO_TANGENT
    if left is None:  # below xp[0] the value is fp[0]
        dfp = dfp + (np.arange(n) == 0) * g_below
    else:
        d_left = g_below
    if right is None:
        dfp = dfp + (np.arange(n) == n - 1) * g_above
    else:
        d_right = g_above
    return dx, dxp, dfp, d_left, d_right


@transformable
def _imag_or_none(v):
    if v is None:
        return None
    return np.imag(v)


@transformable
def _real_or_none(v):
    if v is None:
        return None
    return np.real(v)


@transformable
def _joined(re, im, like):
    """``re + 1j * im`` as the cotangent of ``like`` (real where ``like`` is real)."""
    if re is NO_TANGENT:
        return NO_TANGENT
    if np.iscomplexobj(like):
        return re + 1j * im
    return re


@transformable
def interp_pullback(dy, x, xp, fp, left=None, right=None, period=None):
    if period is not None:  # the rule refuses period= (first derivatives too)
        return by_rule(np.interp, dy, x, xp, fp, left, right, period)
    g = densify(dy)
    if not np.iscomplexobj(fp):
        dx, dxp, dfp, d_left, d_right = _interp_real_cotangents(g, x, xp, fp, left, right)
        return unbroadcast(dx, x), dxp, dfp, d_left, d_right, NO_TANGENT
    # complex fp: NumPy interpolates the real and the imaginary parts apart (xp and x real)
    dx, dxp, dfp, d_left, d_right = _interp_real_cotangents(
        np.real(g), x, xp, np.real(fp), _real_or_none(left), _real_or_none(right)
    )
    ix, ixp, ifp, i_left, i_right = _interp_real_cotangents(
        np.imag(g), x, xp, np.imag(fp), _imag_or_none(left), _imag_or_none(right)
    )
    return (
        unbroadcast(dx + ix, x),
        dxp + ixp,
        dfp + 1j * ifp,
        _joined(d_left, i_left, left),
        _joined(d_right, i_right, right),
        NO_TANGENT,
    )


# Dask indexes with 1-d integer arrays only (x[j] of a 2-d j): on Dask the adjoint calls the
# rule's closure pullback.
interp_pullback.__pullback_numpy_only__ = True


@transformable
def corrcoef_pullback(dy, x, y=None, rowvar=True, bias=None, ddof=None, dtype=None):
    # R_ij = C_ij / sqrt(C_ii C_jj) with C = cov(x, y) (its ddof cancels in R)
    C = np.cov(x, y, rowvar)
    if np.ndim(C) == 0:  # one variable: R is the constant 1
        dx = np.zeros(np.shape(x), np.result_type(dense_operand(x), 1.0))
        dyv = NO_TANGENT
        if y is not None:
            dyv = np.zeros(np.shape(y), np.result_type(dense_operand(y), 1.0))
        return dx, dyv, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT
    d = np.real(np.diagonal(C))
    s = np.sqrt(d[:, None] * d[None, :])
    G = densify(dy)
    GR = np.real(np.conj(G) * (C / s))
    diag_term = (np.sum(GR, axis=1) + np.sum(GR, axis=0)) / (2.0 * d)
    dC = G / s - np.eye(np.shape(C)[0]) * diag_term[None, :]
    dx, dyv = cov_pullback(dC, x, y, rowvar)[:2]
    return dx, dyv, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT


def register(reg):
    set_pullbacks(
        reg,
        [
            (np.full, full_pullback),
            (np.full_like, full_like_pullback),
            (np.linspace, linspace_pullback),
            (np.diff, diff_pullback),
            (np.polyval, polyval_pullback),
            (getattr(np, "trapezoid", None), trapezoid_pullback),
            (getattr(np, "trapz", None), trapezoid_pullback),  # its old name (NumPy < 2.4)
            (np.convolve, convolve_pullback),
            (np.correlate, correlate_pullback),
            (np.meshgrid, meshgrid_pullback),
            (np.bincount, bincount_pullback),
            (np.cov, cov_pullback),
            (np.corrcoef, corrcoef_pullback),
            (np.interp, interp_pullback),
        ],
    )
