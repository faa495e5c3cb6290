"""``np.nanmedian``, ``np.nanquantile`` and ``np.nanpercentile``: order statistics of the
elements that are not NaN, each slice along ``axis`` with its own count.

As for median and quantile (numpy_order_stats_pullbacks.py), the value is ``sum_k W[k]
x[k]`` with weights that depend on ``x`` only through its ranks and on which elements are
NaN; NaN elements get weight 0. A slice of ``c`` valid elements puts the quantile ``q`` at
``pos = q (c - 1)`` among them, so ``c`` differs from slice to slice. For the linear method
the weights are ``L + (pos - seg) (U - L)`` with the rank-only one-hot tables ``L`` and
``U`` of the order statistics ``seg`` and ``seg + 1`` of each slice
(:func:`nan_order_bounds`), so the cotangent of ``q`` (``(c - 1) (x_(seg+1) - x_(seg))``)
and the mixed ``x``-``q`` second derivative run through the transformable pullback. A
slice with no valid element is NaN in NumPy too: it sends no cotangent.

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
from .numpy_order_stats_pullbacks import _axes
from .transformable import set_pullbacks


def _rows(a, axis):
    """``a``'s slices along ``axis`` as rows ``(R, n)``, their stable orders (NaNs last),
    the count of valid elements in each row, and what :func:`_to_elements` needs."""
    xa = np.asarray(a)
    axes = normalize_axis(axis, xa.ndim)
    moved, _, flat, last = axes_last(xa, axes)
    n = flat.shape[-1]
    rows = np.reshape(flat, (math.prod(flat.shape[:-1]), n))  # (also of zero size)
    order = np.argsort(rows, axis=-1, kind="stable")
    counts = np.sum(~np.isnan(rows), axis=-1)
    return rows, order, counts, (moved.shape, last, axes)


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


def nan_order_weights(a, q, axis, method, scale):
    """``W`` of shape ``q.shape + a.shape``: each element's weight in each quantile (times
    ``scale``) of the valid elements of its slice (non-differentiable: ranks only)."""
    rows, order, counts, layout = _rows(a, axis)
    dtype = np.result_type(np.asarray(a), 1.0)
    pos = _positions(q, counts, scale)
    lo, hi = np.floor(pos), np.ceil(pos)
    frac = pos - lo
    if method == "linear":
        wlo, whi = 1.0 - frac, frac
    elif method == "lower":
        wlo, whi = np.ones_like(pos), np.zeros_like(pos)
    elif method == "higher":
        wlo, whi = np.zeros_like(pos), np.ones_like(pos)
    elif method == "midpoint":
        wlo, whi = np.full_like(pos, 0.5), np.full_like(pos, 0.5)
    elif method == "nearest":
        wlo = (np.around(pos) == lo).astype(np.float64)
        whi = 1.0 - wlo
    else:
        raise UnsupportedCallError(
            f"pullback: quantile method {method!r} has no rule (use linear, lower, higher, "
            "midpoint or nearest)"
        )
    empty = counts[None, :] == 0
    lo_rank = np.where(empty, -1, lo).astype(np.intp)
    hi_rank = np.where(empty | (lo == hi), -1, hi).astype(np.intp)
    table = _one_hot(order, lo_rank, dtype) * np.where(lo == hi, 1.0, wlo)[..., None]
    table = table + _one_hot(order, hi_rank, dtype) * whi[..., None]
    return _to_elements(table, np.shape(q), layout).astype(dtype)


def nan_order_bounds(a, q, axis, scale):
    """``(L, U, seg, m)`` for the linear method: the one-hot weights (``q.shape + a.shape``)
    of the order statistics ``seg`` and ``seg + 1`` of each slice's valid elements around
    ``pos = q scale m`` (``m = c - 1``; the top segment at ``pos = m``), and ``seg``, ``m``
    shaped ``q.shape + `` the reduced shape of ``a`` with the axes kept, so that the
    quantile's weights are ``L + (q scale m - seg) (U - L)`` (non-differentiable)."""
    rows, order, counts, layout = _rows(a, axis)
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
def _nan_order_cotangents(dy, a, q, axis, method, keepdims, scale, with_q):
    qnd = np.ndim(q)
    nd = np.ndim(a)
    axes = _axes(nd, axis)  # from the rank: not a differentiated value
    g = densify(dy)
    full = g
    if not keepdims:
        full = np.expand_dims(g, tuple(qnd + k for k in axes))
    if method != "linear":  # piecewise constant in q (and in a's ranks)
        weighted = full * nan_order_weights(a, q, axis, method, scale)
        da = np.sum(weighted, axis=tuple(range(qnd))) if qnd else weighted
        return unbroadcast(da, a), np.zeros(np.shape(q))
    bounds = nan_order_bounds(a, q, axis, scale)
    lower, upper, seg, m = bounds[0], bounds[1], bounds[2], bounds[3]
    qx = np.reshape(np.asarray(q), np.shape(q) + (1,) * nd)
    frac = qx * (scale * m) - seg
    weighted = full * (lower + frac * (upper - lower))
    da = np.sum(weighted, axis=tuple(range(qnd))) if qnd else weighted
    if not with_q:
        return unbroadcast(da, a), NO_TANGENT
    valid = np.where(np.isnan(a), 0.0, a)  # (NaN times a zero weight would be NaN)
    slope = np.sum(
        valid * ((upper - lower) * (scale * m)),
        axis=tuple(qnd + k for k in axes),
        keepdims=keepdims,
    )
    dq = np.sum(np.real(g * np.conj(slope)), axis=tuple(range(qnd, np.ndim(slope))))
    return unbroadcast(da, a), unbroadcast(dq, q)


@transformable
def nanmedian_pullback(dy, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    da = _nan_order_cotangents(dy, a, 0.5, axis, "linear", keepdims, 1.0, False)[0]
    return da, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT


@transformable
def nanquantile_pullback(
    dy, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False
):
    da, dq = _nan_order_cotangents(dy, a, q, axis, method, keepdims, 1.0, True)
    return da, dq, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT


@transformable
def nanpercentile_pullback(
    dy, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False
):
    da, dq = _nan_order_cotangents(dy, a, q, axis, method, keepdims, 0.01, True)
    return da, dq, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT


def _nan_quantile_rule(fn, scale, has_q):
    name = fn.__name__

    def nan_quantile_rrule(a, *args, **kwargs):
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
            raise UnsupportedCallError(f"pullback: {name}(..., weights=...) has no rule")
        q = p["q"] if has_q else 0.5
        method = p.get("method", "linear")
        with_q = has_q and bool(args) and differentiable(q) and method == "linear"

        def nan_quantile_pullback(dy):
            if dy is ZERO:
                return zeros_for((a,) + args)
            da, dq = _nan_order_cotangents(
                dy, a, q, p["axis"], method, p["keepdims"], scale, with_q
            )
            rest = [NO_TANGENT] * len(args)
            if has_q and args and differentiable(q):
                rest[0] = finalize(dq, q) if with_q else ZERO
            return (finalize(da, a),) + tuple(rest)

        return y, nan_quantile_pullback

    nan_quantile_rrule.__name__ = f"{name}_rrule"
    return nan_quantile_rrule


def register(reg, r):
    """The rules (family of ``r``) and their transformable pullbacks."""
    r.nondiff(nan_order_weights, nan_order_bounds, notes="ranks only (nan order statistics)")
    note = "NaNs left out, ties: stable sort"
    r.rule(np.nanmedian, _nan_quantile_rule(np.nanmedian, 1.0, has_q=False), notes=note)
    r.rule(np.nanquantile, _nan_quantile_rule(np.nanquantile, 1.0, has_q=True), notes=note)
    r.rule(np.nanpercentile, _nan_quantile_rule(np.nanpercentile, 0.01, has_q=True), notes=note)
    set_pullbacks(
        reg,
        [
            (np.nanmedian, nanmedian_pullback),
            (np.nanquantile, nanquantile_pullback),
            (np.nanpercentile, nanpercentile_pullback),
        ],
    )
