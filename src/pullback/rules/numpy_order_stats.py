"""Order statistics: the rules of median, percentile and quantile (registered by
numpy_reductions.py). Ties are broken by a stable sort, so the cotangent of a tied order
statistic goes to one of the tied elements."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedCallError
from ._util import (
    ZERO,
    axes_last,
    bind,
    conj,
    densify,
    differentiable,
    finalize,
    no_tangents,
    normalize_axis,
    refuse_out,
    zeros_for,
)


def _quantile_weights(q, n, method):
    """Weights ``W[..., k]`` of the sorted elements ``k`` for each quantile in ``q``."""
    q = np.asarray(q, dtype=np.float64)
    pos = q * (n - 1)
    k = np.arange(n)
    lo = np.floor(pos)
    hi = np.ceil(pos)
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
        near = np.around(pos)
        wlo = (near == lo).astype(np.float64)
        whi = 1.0 - wlo
    else:
        raise UnsupportedCallError(
            f"pullback: quantile method {method!r} has no rule (use linear, lower, higher, "
            "midpoint or nearest)"
        )
    same = lo == hi
    wlo = np.where(same, 1.0, wlo)
    whi = np.where(same, 0.0, whi)
    ke = k.reshape((1,) * q.ndim + (n,))
    return (ke == lo[..., None]) * wlo[..., None] + (ke == hi[..., None]) * whi[..., None]


def _order_stat_pullback(x, q, axis, keepdims, method, dy, scale=1.0):
    """The cotangent of x for ``quantile(x, q, axis, method)`` given its cotangent dy."""
    xa = np.asarray(x)
    nd = xa.ndim
    axes = normalize_axis(axis, nd)
    moved, lead, flat, last = axes_last(xa, axes)
    n = flat.shape[-1]
    order = np.argsort(flat, axis=-1, kind="stable")
    inverse = np.argsort(order, axis=-1, kind="stable")
    W = _quantile_weights(np.asarray(q, dtype=np.float64) * scale, n, method)  # q.shape+(n,)
    g = np.asarray(densify(dy))
    qnd = np.ndim(q)
    if keepdims:
        # the reduced axes are kept as size-1 axes after the q axes
        g = np.reshape(g, g.shape[:qnd] + lead)
    # g: q.shape + lead ; W: q.shape + (n,)
    gq = np.reshape(g, g.shape[:qnd] + lead + (1,))
    Wq = np.reshape(W, W.shape[:qnd] + (1,) * len(lead) + (n,))
    sorted_grad = np.sum(gq * Wq, axis=tuple(range(qnd))) if qnd else gq * Wq
    flat_grad = np.take_along_axis(sorted_grad, inverse, axis=-1)
    return np.moveaxis(np.reshape(flat_grad, moved.shape), last, axes)


def _quantile_q_cotangent(x, q, axis, keepdims, dy, scale):
    """The cotangent of ``q`` for the linear method: the slope between the two order
    statistics around ``q * (n - 1)`` (the segment to the right at an exact order
    statistic, to the left at the top one)."""
    xa = np.asarray(x)
    _, lead, flat, _ = axes_last(xa, normalize_axis(axis, xa.ndim))
    srt = np.sort(flat, axis=-1)
    n = srt.shape[-1]
    if n < 2:
        return np.zeros(np.shape(q))
    qa = np.asarray(q, dtype=np.float64) * scale
    seg = np.minimum(np.floor(qa * (n - 1)), n - 2).astype(np.intp)
    slope = (np.take(srt, seg + 1, axis=-1) - np.take(srt, seg, axis=-1)) * ((n - 1) * scale)
    # slope: lead + q.shape -> q.shape + lead
    slope = np.moveaxis(slope, tuple(range(len(lead))), tuple(range(qa.ndim, qa.ndim + len(lead))))
    g = np.asarray(densify(dy))
    g = np.reshape(g, g.shape[: qa.ndim] + lead)
    return np.sum(np.real(g * conj(slope)), axis=tuple(range(qa.ndim, qa.ndim + len(lead))))


def _quantile_rule(fn, scale, has_q):
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
            raise UnsupportedCallError(f"pullback: {name}(..., weights=...) has no rule")
        q = p["q"] if has_q else 0.5
        method = p.get("method", "linear")

        def quantile_pullback(dy):
            if dy is ZERO:
                return zeros_for((a,) + args)
            g = _order_stat_pullback(a, q, p["axis"], p["keepdims"], method, dy, scale)
            rest = list(no_tangents(len(args)))
            if has_q and args and differentiable(q):
                if method == "linear":
                    dq = _quantile_q_cotangent(a, q, p["axis"], p["keepdims"], dy, scale)
                    rest[0] = finalize(dq, q)
                else:  # piecewise constant in q
                    rest[0] = ZERO
            return (finalize(g, a),) + tuple(rest)

        return y, quantile_pullback

    quantile_rrule.__name__ = f"{name}_rrule"
    return quantile_rrule
