"""Transformable pullbacks of median, quantile and percentile (numpy_order_stats.py), so that
second derivatives run through them (see transformable.py).

An order statistic is ``sum_k W[k] x[k]`` with weights ``W`` that depend on ``x`` only
through its ranks (piecewise constant): its cotangent is ``dy * W``, and its second
derivative with respect to ``x`` alone is zero. The weights come from
:func:`order_weights`, registered as non-differentiable. For the linear method the value
also depends on ``q``: its weights are ``L + (pos - seg) (U - L)`` with ``pos = q (n - 1)``
and the rank-only ``L``, ``U``, ``seg`` of :func:`order_bounds`, so ``d/dq = (n - 1)
(x_(seg+1) - x_(seg))`` and the mixed ``x``-``q`` second derivative run through it too.
Call forms not covered here (``out=``, ``weights=``) are refused by the rule itself.
"""

from __future__ import annotations

import numpy as np

from ..registry import transformable
from ..tangents import NO_TANGENT, densify, unbroadcast
from .numpy_order_stats import _order_stat_pullback
from .transformable import set_pullbacks


def _reduced_shape(a, axis):
    nd = np.ndim(a)
    axes = range(nd) if axis is None else np.atleast_1d(axis) % max(nd, 1)
    return tuple(1 if k in set(int(v) for v in axes) else s for k, s in enumerate(np.shape(a)))


def order_weights(a, q, axis, method, scale):
    """``W`` of shape ``q.shape + a.shape``: the weight of each element of ``a`` in each
    quantile ``q`` (times ``scale``) of its slice along ``axis`` (non-differentiable: it
    depends on ``a`` only through ranks)."""
    a = np.asarray(a)
    ones = np.ones(_reduced_shape(a, axis))
    qs = np.ravel(np.asarray(q, dtype=np.float64))
    rows = [_order_stat_pullback(a, qi, axis, True, method, ones, scale) for qi in qs]
    out = np.stack(rows) if rows else np.zeros((0,) + a.shape)
    return np.reshape(out, np.shape(q) + a.shape).astype(np.result_type(a, 1.0))


def order_bounds(a, q, axis, scale):
    """``(L, U, seg, n)`` for the linear method: the weights (shape ``q.shape + a.shape``)
    of the order statistics ``seg`` and ``seg + 1`` around ``pos = q scale (n - 1)`` in each
    slice (the top segment at ``pos = n - 1``), so that the quantile's weights are
    ``L + (pos - seg) (U - L)`` (non-differentiable: ranks only)."""
    a = np.asarray(a)
    shape = np.shape(a)
    nd = len(shape)
    axes = range(nd) if axis is None else np.atleast_1d(axis) % max(nd, 1)
    n = int(np.prod([shape[int(k)] for k in axes])) if nd else 1
    pos = np.asarray(q, dtype=np.float64) * scale * (n - 1)
    if n < 2:
        lower = order_weights(a, np.zeros(np.shape(q)), axis, "nearest", 1.0)
        return lower, lower, np.zeros(np.shape(q)), n
    seg = np.minimum(np.floor(pos), n - 2)
    upper = order_weights(a, (seg + 1) / (n - 1), axis, "nearest", 1.0)
    lower = order_weights(a, seg / (n - 1), axis, "nearest", 1.0)
    return lower, upper, seg, n


@transformable
def _axes(nd, axis):
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, int):
        return (axis % nd,)
    return tuple(k % nd for k in axis)


@transformable
def _order_cotangents(dy, a, q, axis, method, keepdims, scale, with_q):
    qnd = np.ndim(q)
    nd = np.ndim(a)
    axes = _axes(nd, axis)  # from the rank: not a differentiated value
    g = densify(dy)
    full = g
    if not keepdims:
        full = np.expand_dims(g, tuple(qnd + k for k in axes))
    if method != "linear":  # piecewise constant in q (and in a's ranks)
        weighted = full * order_weights(a, q, axis, method, scale)
        da = np.sum(weighted, axis=tuple(range(qnd))) if qnd else weighted
        return unbroadcast(da, a), np.zeros(np.shape(q))
    bounds = order_bounds(a, q, axis, scale)
    lower, upper, seg, n = bounds[0], bounds[1], bounds[2], bounds[3]
    # the weights are linear in q: L + (pos - seg) (U - L), pos = q scale (n - 1)
    frac = np.asarray(q) * (scale * (n - 1)) - seg
    frac = np.reshape(frac, np.shape(q) + (1,) * nd)
    weighted = full * (lower + frac * (upper - lower))
    da = np.sum(weighted, axis=tuple(range(qnd))) if qnd else weighted
    if not with_q:
        return unbroadcast(da, a), NO_TANGENT
    slopes = (upper - lower) * (scale * (n - 1))
    slope = np.sum(a * slopes, axis=tuple(qnd + k for k in axes), keepdims=keepdims)
    dq = np.sum(np.real(g * np.conj(slope)), axis=tuple(range(qnd, np.ndim(slope))))
    return unbroadcast(da, a), unbroadcast(dq, q)


@transformable
def median_pullback(dy, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    da = _order_cotangents(dy, a, 0.5, axis, "linear", keepdims, 1.0, False)[0]
    return da, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT


@transformable
def quantile_pullback(
    dy, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False
):
    da, dq = _order_cotangents(dy, a, q, axis, method, keepdims, 1.0, True)
    return da, dq, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT


@transformable
def percentile_pullback(
    dy, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False
):
    da, dq = _order_cotangents(dy, a, q, axis, method, keepdims, 0.01, True)
    return da, dq, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT


def register(reg, r):
    r.nondiff(order_weights, order_bounds, notes="ranks only (order statistics' helpers)")
    set_pullbacks(
        reg,
        [
            (np.median, median_pullback),
            (np.quantile, quantile_pullback),
            (np.percentile, percentile_pullback),
        ],
    )
