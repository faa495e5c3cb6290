"""Transformable pullbacks of the order statistics (numpy_order_stats.py): median, quantile,
percentile and their nan forms, each ``order_cotangents`` with its ``q`` scale and whether
NaNs are left out, so that second derivatives run through them (see transformable.py).

Each is a plain function of its primal's signature (one cotangent per positional
argument), which is why there are six of them and not a factory: a second derivative
transforms their source. The rank-only tables (``order_weights``, ``order_bounds``) are
registered here as non-differentiable.
"""

from __future__ import annotations

import numpy as np

from ..registry import transformable
from ..tangents import NO_TANGENT
from .numpy_order_stats import order_bounds, order_cotangents, order_weights, quantile_rule
from .transformable import set_pullbacks


@transformable
def median_pullback(dy, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    da = order_cotangents(dy, a, 0.5, axis, "linear", keepdims, 1.0, False, False)[0]
    return da, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT


@transformable
def quantile_pullback(
    dy, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False
):
    da, dq = order_cotangents(dy, a, q, axis, method, keepdims, 1.0, True, False)
    return da, dq, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT


@transformable
def percentile_pullback(
    dy, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False
):
    da, dq = order_cotangents(dy, a, q, axis, method, keepdims, 0.01, True, False)
    return da, dq, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT


@transformable
def nanmedian_pullback(dy, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    da = order_cotangents(dy, a, 0.5, axis, "linear", keepdims, 1.0, False, True)[0]
    return da, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT


@transformable
def nanquantile_pullback(
    dy, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False
):
    da, dq = order_cotangents(dy, a, q, axis, method, keepdims, 1.0, True, True)
    return da, dq, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT


@transformable
def nanpercentile_pullback(
    dy, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False
):
    da, dq = order_cotangents(dy, a, q, axis, method, keepdims, 0.01, True, True)
    return da, dq, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT


# (function, q scale, takes q, NaNs left out, transformable pullback)
_ORDER_STATISTICS = (
    (np.median, 1.0, False, False, median_pullback),
    (np.quantile, 1.0, True, False, quantile_pullback),
    (np.percentile, 0.01, True, False, percentile_pullback),
    (np.nanmedian, 1.0, False, True, nanmedian_pullback),
    (np.nanquantile, 1.0, True, True, nanquantile_pullback),
    (np.nanpercentile, 0.01, True, True, nanpercentile_pullback),
)


def register(reg, r):
    """The six rules (family of ``r``) and their transformable pullbacks."""
    r.nondiff(order_weights, order_bounds, notes="ranks only (order statistics' helpers)")
    for fn, scale, has_q, skip_nan, _ in _ORDER_STATISTICS:
        note = "NaNs left out, ties: stable sort" if skip_nan else "ties: stable sort"
        r.rule(fn, quantile_rule(fn, scale, has_q, skip_nan), notes=note)
    set_pullbacks(reg, [(fn, pullback) for fn, *_, pullback in _ORDER_STATISTICS])
