"""Order statistics: the rules of ``np.median``, ``np.quantile`` and ``np.percentile`` and of
their NaN-skipping forms ``np.nanmedian``, ``np.nanquantile`` and ``np.nanpercentile``, by
one machinery that takes each slice's count of elements.

An order statistic is ``sum_k W[k] x[k]`` with weights ``W`` that depend on ``x`` only
through its ranks (piecewise constant): its cotangent is ``dy * W``, and its second
derivative with respect to ``x`` alone is zero. A slice along ``axis`` of ``c`` counted
elements puts the quantile ``q`` at ``pos = q (c - 1)`` among its sorted elements: ``c`` is
the slice's length for median/quantile/percentile, and its count of non-NaN elements for
the nan forms (NaNs sort last and get weight 0; a slice with none counted is NaN in NumPy
too and sends no cotangent). For the linear method the weights are ``L + (pos - seg) (U -
L)`` with the rank-only one-hot tables ``L``, ``U`` of the order statistics ``seg`` and
``seg + 1`` (:func:`order_bounds`), so ``d/dq = (c - 1) (x_(seg+1) - x_(seg))`` and the mixed
``x``-``q`` second derivative run through :func:`order_cotangents`, which the rules'
pullbacks and their transformable pullback functions (numpy_order_stats_pullbacks.py)
share. Ties are broken by a stable sort: the cotangent of a tied order statistic goes to
one of the tied elements. Call forms not covered (``out=``, ``weights=``) are refused.

>>> import numpy as np, pullback
>>> x = np.array([[1.0, np.nan, 3.0], [4.0, 2.0, np.nan]])
>>> pullback.grad(lambda x: np.sum(np.nanmedian(x, axis=1)))(x)
array([[0.5, 0. , 0.5],
       [0.5, 0.5, 0. ]])
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedCallError
from ..registry import transformable
from ..tangents import NO_TANGENT, densify, unbroadcast
from ._util import (
    ZERO,
    axes_last,
    bind,
    differentiable,
    finalize,
    normalize_axis,
    refuse_out,
    zeros_for,
)


def _rows(a, axis, skip_nan):
    """``a``'s slices along ``axis`` as rows ``(R, n)``, their stable orders (NaNs last),
    the count of each row's elements (its non-NaN ones with ``skip_nan``, else all ``n``),
    and what :func:`_to_elements` needs."""
    xa = np.asarray(a)
    axes = normalize_axis(axis, xa.ndim)
    moved, _, flat, last = axes_last(xa, axes)
    n = flat.shape[-1]
    rows = np.reshape(flat, (math.prod(flat.shape[:-1]), n))  # (also of zero size)
    order = np.argsort(rows, axis=-1, kind="stable")
    if skip_nan:
        counts = np.sum(~np.isnan(rows), axis=-1)
    else:
        counts = np.full(rows.shape[0], n)
    return order, counts, (moved.shape, last, axes)


def _to_elements(table, q_shape, layout):
    """A table ``(Q, R, n)`` of weights over the sorted rows as ``q.shape + a.shape``."""
    moved_shape, last, axes = layout
    t = np.reshape(table, q_shape + moved_shape)
    k = len(q_shape)
    return np.moveaxis(t, tuple(k + j for j in last), tuple(k + j for j in axes))


def _one_hot(order, ranks, dtype):
    """``(Q, R, n)``: 1 at the element of rank ``ranks[i, r]`` in row ``r`` (``-1``: none)."""
    q_count, r_count = ranks.shape
    n = order.shape[-1]
    table = np.zeros((q_count, r_count, n), dtype=dtype)
    if n == 0:
        return table
    picked = np.take_along_axis(order[None], np.clip(ranks, 0, n - 1)[..., None], axis=-1)
    np.put_along_axis(table, picked, (ranks >= 0)[..., None].astype(dtype), axis=-1)
    return table


def _positions(q, counts, scale):
    """``pos[i, r] = q_i scale (c_r - 1)``: where each quantile sits in each row."""
    qs = np.ravel(np.asarray(q, dtype=np.float64)) * scale
    return qs[:, None] * (counts[None, :] - 1.0)


def _method_weights(pos, lo, method):
    """``(w_lo, w_hi)``: the weights NumPy's ``method`` gives the order statistics
    ``floor(pos)`` and ``ceil(pos)``."""
    frac = pos - lo
    if method == "linear":
        return 1.0 - frac, frac
    if method == "lower":
        return np.ones_like(pos), np.zeros_like(pos)
    if method == "higher":
        return np.zeros_like(pos), np.ones_like(pos)
    if method == "midpoint":
        return np.full_like(pos, 0.5), np.full_like(pos, 0.5)
    if method == "nearest":
        wlo = (np.around(pos) == lo).astype(np.float64)
        return wlo, 1.0 - wlo
    raise UnsupportedCallError(
        f"pullback: quantile method {method!r} has no rule.\nFix: pass method= one of linear, "
        "lower, higher, midpoint or nearest."
    )


def order_weights(a, q, axis, method, scale, skip_nan):
    """``W`` of shape ``q.shape + a.shape``: each element's weight in each quantile ``q``
    (times ``scale``) of its slice along ``axis`` (of its non-NaN elements with
    ``skip_nan``). Non-differentiable: it depends on ``a`` only through ranks."""
    order, counts, layout = _rows(a, axis, skip_nan)
    dtype = np.result_type(np.asarray(a), 1.0)
    pos = _positions(q, counts, scale)
    lo, hi = np.floor(pos), np.ceil(pos)
    wlo, whi = _method_weights(pos, lo, method)
    empty = counts[None, :] == 0
    lo_rank = np.where(empty, -1, lo).astype(np.intp)
    hi_rank = np.where(empty | (lo == hi), -1, hi).astype(np.intp)
    table = _one_hot(order, lo_rank, dtype) * np.where(lo == hi, 1.0, wlo)[..., None]
    table = table + _one_hot(order, hi_rank, dtype) * whi[..., None]
    return _to_elements(table, np.shape(q), layout).astype(dtype)


def order_bounds(a, q, axis, scale, skip_nan):
    """``(L, U, seg, m)`` for the linear method: the one-hot weights (``q.shape + a.shape``)
    of the order statistics ``seg`` and ``seg + 1`` of each slice's counted elements around
    ``pos = q scale m`` (``m = c - 1``; the top segment at ``pos = m``), and ``seg``, ``m``
    shaped ``q.shape +`` the reduced shape of ``a`` with the axes kept, so that the
    quantile's weights are ``L + (q scale m - seg) (U - L)`` (non-differentiable)."""
    order, counts, layout = _rows(a, axis, skip_nan)
    dtype = np.result_type(np.asarray(a), 1.0)
    pos = _positions(q, counts, scale)
    wide = counts[None, :] >= 2
    seg = np.where(wide, np.minimum(np.floor(pos), counts[None, :] - 2.0), 0.0)
    lower_rank = np.where(counts[None, :] >= 1, seg, -1).astype(np.intp)
    upper_rank = np.where(wide, seg + 1, lower_rank).astype(np.intp)
    q_shape = np.shape(q)
    lower = _to_elements(_one_hot(order, lower_rank, dtype), q_shape, layout)
    upper = _to_elements(_one_hot(order, upper_rank, dtype), q_shape, layout)
    m = np.broadcast_to(np.maximum(counts - 1.0, 0.0)[None, :], seg.shape)
    kept = _kept_shape(np.shape(a), axis)
    return lower, upper, np.reshape(seg, q_shape + kept), np.reshape(m, q_shape + kept)


def _kept_shape(shape, axis):
    axes = normalize_axis(axis, len(shape))
    return tuple(1 if k in axes else s for k, s in enumerate(shape))


@transformable
def reduced_axes(nd, axis):
    """The axes ``axis`` names in an array of rank ``nd``, as a tuple."""
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, int):
        return (axis % nd,)
    return tuple(k % nd for k in axis)


@transformable
def order_cotangents(dy, a, q, axis, method, keepdims, scale, with_q, skip_nan):
    """``(da, dq)`` of the quantile ``q`` (times ``scale``) of ``a`` along ``axis``, of its
    non-NaN elements with ``skip_nan`` (``dq`` is ``NO_TANGENT`` unless ``with_q``)."""
    qnd = np.ndim(q)
    nd = np.ndim(a)
    axes = reduced_axes(nd, axis)  # from the rank: not a differentiated value
    g = densify(dy)
    full = g
    if not keepdims:
        full = np.expand_dims(g, tuple(qnd + k for k in axes))
    if method != "linear":  # piecewise constant in q (and in a's ranks)
        weighted = full * order_weights(a, q, axis, method, scale, skip_nan)
        da = np.sum(weighted, axis=tuple(range(qnd))) if qnd else weighted
        return unbroadcast(da, a), np.zeros(np.shape(q))
    bounds = order_bounds(a, q, axis, scale, skip_nan)
    lower, upper, seg, m = bounds[0], bounds[1], bounds[2], bounds[3]
    qx = np.reshape(np.asarray(q), np.shape(q) + (1,) * nd)
    frac = qx * (scale * m) - seg
    weighted = full * (lower + frac * (upper - lower))
    da = np.sum(weighted, axis=tuple(range(qnd))) if qnd else weighted
    if not with_q:
        return unbroadcast(da, a), NO_TANGENT
    valid = a
    if skip_nan:
        valid = np.where(np.isnan(a), 0.0, a)  # (NaN times a zero weight would be NaN)
    slope = np.sum(
        valid * ((upper - lower) * (scale * m)),
        axis=tuple(qnd + k for k in axes),
        keepdims=keepdims,
    )
    dq = np.sum(np.real(g * np.conj(slope)), axis=tuple(range(qnd, np.ndim(slope))))
    return unbroadcast(da, a), unbroadcast(dq, q)


def quantile_rule(fn, scale, has_q, skip_nan):
    """The rule of the order statistic ``fn`` (``q`` scaled by ``scale``: 0.01 for a
    percentile; ``has_q`` False for a median, at 0.5), of non-NaN elements with
    ``skip_nan``."""
    name = fn.__name__

    def quantile_rrule(a, *args, **kwargs):
        y = fn(a, *args, **kwargs)
        if has_q:
            params = ("q", "axis", "out", "overwrite_input", "method", "keepdims")
            defaults = (None, None, None, False, "linear", False)
        else:
            params = ("axis", "out", "overwrite_input", "keepdims")
            defaults = (None, None, False, False)
        p = bind(args, kwargs, params, defaults, name=f"np.{name}", known=("weights",))
        refuse_out(name, p)
        if kwargs.get("weights") is not None:
            raise UnsupportedCallError(
                f"pullback: {name}(..., weights=...) has no rule.\nFix: drop weights=, or "
                "interpolate the weighted cumulative sum of the sorted data with np.argsort, "
                "np.cumsum and np.interp, which have rules."
            )
        q = p["q"] if has_q else 0.5
        method = p.get("method", "linear")
        with_q = has_q and bool(args) and differentiable(q) and method == "linear"

        def quantile_pullback(dy):
            if dy is ZERO:
                return zeros_for((a,) + args)
            da, dq = order_cotangents(
                dy, a, q, p["axis"], method, p["keepdims"], scale, with_q, skip_nan
            )
            rest = [NO_TANGENT] * len(args)
            if has_q and args and differentiable(q):
                rest[0] = finalize(dq, q) if with_q else ZERO  # else piecewise constant in q
            return (finalize(da, a),) + tuple(rest)

        return y, quantile_pullback

    quantile_rrule.__name__ = f"{name}_rrule"
    return quantile_rrule
