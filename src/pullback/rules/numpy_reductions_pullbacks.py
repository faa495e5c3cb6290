"""Transformable pullbacks of the reductions and scans (numpy_reductions.py), written in
the differentiable subset so that second derivatives run through them (see
transformable.py). Each agrees with its rule's closure pullback."""

from __future__ import annotations

import math

import numpy as np

from ..backends import is_dask
from ..list_operands import dense_operand
from ..registry import transformable
from ..tangents import NO_TANGENT, densify, unbroadcast
from .transformable import ddof_cotangent, extreme_reduction_pullback, set_pullbacks


@transformable
def normalize_axis(axis, ndim):
    """``axis`` as a tuple of non-negative ints (``None``: every axis); written in the
    differentiable subset (the pullbacks below call it)."""
    if axis is None:
        return tuple(range(ndim))
    if np.ndim(axis) == 0:
        axis = (axis,)
    out = []
    for a in axis:
        out = out + [a % ndim if ndim else 0]
    return tuple(out)


@transformable
def spread(dy, shape, axis, keepdims):
    """The cotangent of a reduction broadcast back over the reduced axes of ``shape``."""
    g = densify(dy)
    if not keepdims:
        g = np.expand_dims(g, normalize_axis(axis, len(shape)))
    return np.broadcast_to(g, shape)


@transformable
def others_product(x, axis):
    """For each element, the product of the other elements along ``axis`` (exact where
    ``x`` has zeros): prefix products times suffix products."""
    nd = np.ndim(x)
    axes = normalize_axis(axis, nd)
    last = tuple(range(nd - len(axes), nd))
    moved = np.moveaxis(x, axes, last)
    lead = np.shape(moved)[: nd - len(axes)]
    n = math.prod(np.shape(moved)[nd - len(axes) :])
    if n == 0 or math.prod(lead) == 0:
        return np.zeros_like(x)
    flat = np.reshape(moved, lead + (n,))
    ones = np.ones(lead + (1,), dtype=flat.dtype)
    left = np.concatenate([ones, np.cumprod(flat, axis=-1)[..., : n - 1]], axis=-1)
    rev = np.flip(flat, axis=-1)
    right = np.concatenate([ones, np.cumprod(rev, axis=-1)[..., : n - 1]], axis=-1)
    others = np.reshape(left * np.flip(right, axis=-1), np.shape(moved))
    return np.moveaxis(others, last, axes)


@transformable
def initial_cotangent(dy, initial, data):
    """The cotangent of a sum or product's ``initial`` (``data``: d y / d initial)."""
    if initial is None:
        return NO_TANGENT
    return unbroadcast(densify(dy) * np.conj(data), initial)


@transformable
def prod_pullback(
    dy, x, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True
):
    kept = np.where(where, x, np.ones_like(x))  # the masked elements count as 1
    others = others_product(kept, axis)
    if initial is not None:
        others = others * initial
    g = spread(dy, np.shape(x), axis, keepdims) * np.conj(others)
    data = np.prod(kept, axis=axis, keepdims=keepdims)
    dx = unbroadcast(np.where(where, g, np.zeros_like(g)), x)
    return (dx,) + (NO_TANGENT,) * 4 + (initial_cotangent(dy, initial, data), NO_TANGENT)


@transformable
def nanprod_pullback(
    dy, x, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True
):
    skip = np.logical_or(np.isnan(x), np.logical_not(where))  # left out
    filled = np.where(skip, np.ones_like(x), x)
    others = others_product(filled, axis)
    if initial is not None:
        others = others * initial
    g = spread(dy, np.shape(x), axis, keepdims) * np.conj(others)
    if where is True:  # (no where= for backends whose nanprod has none: Dask)
        data = np.nanprod(x, axis=axis, keepdims=keepdims)
    else:
        data = np.nanprod(x, axis=axis, keepdims=keepdims, where=where)
    dx = unbroadcast(np.where(skip, np.zeros_like(g), g), x)
    return (dx,) + (NO_TANGENT,) * 4 + (initial_cotangent(dy, initial, data), NO_TANGENT)


@transformable
def nansum_pullback(
    dy, x, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True
):
    g = spread(dy, np.shape(x), axis, keepdims)
    skip = np.logical_or(np.isnan(x), np.logical_not(where))  # left out
    dx = unbroadcast(np.where(skip, np.zeros_like(g), g), x)
    return (dx,) + (NO_TANGENT,) * 4 + (initial_cotangent(dy, initial, 1.0), NO_TANGENT)


@transformable
def nanmean_pullback(dy, x, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    skip = np.logical_or(np.isnan(x), np.logical_not(where))  # left out
    g = spread(dy, np.shape(x), axis, keepdims) / np.sum(~skip, axis=axis, keepdims=True)
    return (unbroadcast(np.where(skip, np.zeros_like(g), g), x),) + (NO_TANGENT,) * 4


@transformable
def extreme_weights(x, y, axis, keepdims, valid):
    """1/k on the k elements equal to the reduced extreme ``y``, 0 elsewhere."""
    mask = (x == spread(y, np.shape(x), axis, keepdims)) & valid
    return mask / np.maximum(np.sum(mask, axis=axis, keepdims=True), 1)


@transformable
def nanmax_pullback(dy, x, axis=None, out=None, keepdims=False, initial=None, where=True):
    # the elements np.nanmax reduces (over them alone, with initial, it has its value)
    kept = np.logical_and(np.logical_not(np.isnan(x)), where)
    dx, d_initial = extreme_reduction_pullback(dy, np.nanmax, x, axis, keepdims, initial, kept)
    return dx, NO_TANGENT, NO_TANGENT, NO_TANGENT, d_initial


@transformable
def nanmin_pullback(dy, x, axis=None, out=None, keepdims=False, initial=None, where=True):
    kept = np.logical_and(np.logical_not(np.isnan(x)), where)
    dx, d_initial = extreme_reduction_pullback(dy, np.nanmin, x, axis, keepdims, initial, kept)
    return dx, NO_TANGENT, NO_TANGENT, NO_TANGENT, d_initial


@transformable
def ptp_pullback(dy, x, axis=None, out=None, keepdims=False):
    every = np.ones(np.shape(x), bool)
    hi = extreme_weights(x, np.max(x, axis=axis, keepdims=True), axis, True, every)
    lo = extreme_weights(x, np.min(x, axis=axis, keepdims=True), axis, True, every)
    g = spread(dy, np.shape(x), axis, keepdims) * (hi - lo)
    return unbroadcast(g, x), NO_TANGENT, NO_TANGENT


@transformable
def nan_moment(dy, x, axis, ddof, keepdims, is_std):
    """The cotangent of nanvar (``is_std`` false) or nanstd."""
    if math.prod(np.shape(x)) == 0:
        return np.zeros(np.shape(x), np.result_type(dense_operand(x), 1.0))
    valid = ~np.isnan(x)
    n = np.sum(valid, axis=axis, keepdims=True)
    xz = np.where(valid, x, np.zeros_like(x))
    centered = np.where(valid, x - np.sum(xz, axis=axis, keepdims=True) / n, 0.0)
    factor = 2.0 / (n - ddof)
    if is_std:
        # nanstd written out (ddof in arithmetic, not a keyword: see std_pullback)
        s = np.sqrt(np.sum(np.abs(centered) ** 2, axis=axis, keepdims=True) / (n - ddof))
        factor = np.where(s == 0, 0.0, factor / (2.0 * np.where(s == 0, 1.0, s)))
    return unbroadcast(spread(dy, np.shape(x), axis, keepdims) * factor * centered, x)


@transformable
def nanvar_pullback(dy, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    d_ddof = ddof_cotangent(dy, x, axis, ddof, keepdims, np.nanvar)
    dx = nan_moment(dy, x, axis, ddof, keepdims, False)
    return (dx, NO_TANGENT, NO_TANGENT, NO_TANGENT, d_ddof, NO_TANGENT)


@transformable
def nanstd_pullback(dy, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    d_ddof = ddof_cotangent(dy, x, axis, ddof, keepdims, np.nanstd)
    dx = nan_moment(dy, x, axis, ddof, keepdims, True)
    return (dx, NO_TANGENT, NO_TANGENT, NO_TANGENT, d_ddof, NO_TANGENT)


@transformable
def reverse_cumsum(g, axis):
    return np.flip(np.cumsum(np.flip(g, axis=axis), axis=axis), axis=axis)


@transformable
def nancumsum_pullback(dy, x, axis=None, dtype=None, out=None):
    g = densify(dy)
    if axis is None:
        g = np.reshape(reverse_cumsum(g, 0), np.shape(x))
    else:
        g = reverse_cumsum(g, axis)
    return unbroadcast(np.where(np.isnan(x), np.zeros_like(g), g), x), NO_TANGENT, NO_TANGENT


def has_no_zero(x) -> bool:
    """Whether every element of ``x`` is nonzero, so that cumprod's quotient formula
    applies; ``False`` for a Dask array without looking (the branch would compute it: the
    zero-safe formula, exact everywhere, runs instead). Non-differentiable."""
    return not is_dask(x) and bool(np.all(x != 0))


@transformable
def cumprod_grad(x, y, g, axis):
    """The cotangent of ``y = cumprod(x, axis)`` for the cotangent ``g``."""
    if has_no_zero(x):
        return reverse_cumsum(g * np.conj(y), axis) / np.conj(x)
    # With zeros: dx_i = sum_{j >= i} g_j prod_{k <= j, k != i} x_k = L_i sum_j C_ij g_j,
    # with L_i = prod_{k < i} x_k and C_ij = prod_{i < k <= j} x_k.
    xm = np.moveaxis(x, axis, -1)
    gm = np.moveaxis(g, axis, -1)
    n = np.shape(xm)[-1]
    ones = np.ones(np.shape(xm)[:-1] + (1,), dtype=xm.dtype)
    left = np.concatenate([ones, np.cumprod(xm, axis=-1)[..., : n - 1]], axis=-1)
    i = np.arange(n)[:, None]
    k = np.arange(n)[None, :]
    xs = np.where(k > i, xm[..., None, :], np.ones_like(xm[..., None, :]))
    c = np.cumprod(xs, axis=-1)
    c = np.where(k >= i, c, np.zeros_like(c))
    dx = np.conj(left) * np.sum(np.conj(c) * gm[..., None, :], axis=-1)
    return np.moveaxis(dx, -1, axis)


@transformable
def cumprod_pullback(dy, x, axis=None, dtype=None, out=None):
    g = densify(dy)
    if axis is None:
        flat = np.ravel(x)
        gx = np.reshape(cumprod_grad(flat, np.cumprod(flat), g, 0), np.shape(x))
    else:
        gx = cumprod_grad(x, np.cumprod(x, axis=axis), g, axis % max(np.ndim(x), 1))
    return unbroadcast(gx, x), NO_TANGENT, NO_TANGENT


@transformable
def cumulative_sum_pullback(dy, x, axis=None, dtype=None, out=None, include_initial=False):
    g = densify(dy)
    ax = 0 if axis is None else axis
    if include_initial:  # the initial element is a constant
        g = np.take(g, np.arange(1, np.shape(g)[ax]), axis=ax)
    return (unbroadcast(reverse_cumsum(g, ax), x),)


@transformable
def cumulative_prod_pullback(dy, x, axis=None, dtype=None, out=None, include_initial=False):
    g = densify(dy)
    ax = 0 if axis is None else axis
    if include_initial:
        g = np.take(g, np.arange(1, np.shape(g)[ax]), axis=ax)
    gx = cumprod_grad(x, np.cumprod(x, axis=ax), g, ax % max(np.ndim(x), 1))
    return (unbroadcast(gx, x),)


@transformable
def average_pullback(dy, a, axis=None, weights=None):
    shape = np.shape(a)
    if weights is None:
        n = 1
        for k in normalize_axis(axis, len(shape)):
            n = n * shape[k]
        return unbroadcast(spread(dy, shape, axis, False) / n, a), NO_TANGENT, NO_TANGENT
    if np.shape(weights) != shape:  # 1-d weights along one axis
        bshape = ()
        for k in range(len(shape)):
            bshape = bshape + ((np.shape(weights)[0] if k == axis % len(shape) else 1),)
        wb = np.reshape(weights, bshape)
    else:
        wb = weights
    scl = np.sum(np.broadcast_to(wb, shape), axis=axis, keepdims=True)
    g = spread(dy, shape, axis, False) / scl
    # (ufuncs, not operators: a and the weights may be lists, np.average(xs, weights=ws))
    avg = np.sum(np.multiply(a, wb), axis=axis, keepdims=True) / scl
    dwb = g * np.conj(np.subtract(a, avg))  # d avg / d w_j = (a_j - avg) / sum(w)
    if np.shape(weights) != shape:
        others = ()
        for k in range(len(shape)):
            if k != axis % len(shape):
                others = others + (k,)
        dw = np.sum(dwb, axis=others)
    else:
        dw = dwb
    return unbroadcast(g * np.conj(wb), a), NO_TANGENT, unbroadcast(dw, weights)


def register_pullbacks(reg):
    reg.non_differentiable(
        has_no_zero, family="numpy_reductions", trusted=True, notes="a branch condition"
    )
    pairs = [
        (np.prod, prod_pullback),
        (np.nanprod, nanprod_pullback),
        (np.nansum, nansum_pullback),
        (np.nanmean, nanmean_pullback),
        (np.nanmax, nanmax_pullback),
        (np.nanmin, nanmin_pullback),
        (np.ptp, ptp_pullback),
        (np.nanvar, nanvar_pullback),
        (np.nanstd, nanstd_pullback),
        (np.nancumsum, nancumsum_pullback),
        (np.cumprod, cumprod_pullback),
        (getattr(np, "cumulative_sum", None), cumulative_sum_pullback),
        (getattr(np, "cumulative_prod", None), cumulative_prod_pullback),
        (np.average, average_pullback),
    ]
    set_pullbacks(reg, pairs)
