"""Indexing and selection: ``x[idx]`` (``operator.getitem``), take, take_along_axis,
compress, extract, diag, diagflat, diagonal, triu, tril, sort and partition.

Selections scatter the cotangent back to the positions read, adding where a position was
read several times (written with ``np.bincount`` through :func:`._util.segment_sum`, so
the pullbacks stay differentiable). ``sort`` and ``partition`` route each output
cotangent to the element that landed there; tied values get it in the order of a stable
sort.
"""

from __future__ import annotations

import operator

import numpy as np

from ..errors import UnsupportedCallError
from ..tangents import getitem_cotangent
from ._util import (
    NO_TANGENT,
    ZERO,
    Registrar,
    as_array,
    bind,
    densify,
    differentiable,
    finalize,
    refuse_out,
    segment_sum,
    zeros_for,
)

FAMILY = "numpy_indexing"


def _rest(args):
    return (NO_TANGENT,) * len(args)


# -- x[idx] ----------------------------------------------------------------------------------
def _getitem_rrule(x, index):
    y = x[index]

    def getitem_pullback(dy):
        if dy is ZERO or dy is NO_TANGENT:
            return zeros_for((x,)) + (NO_TANGENT,)
        if isinstance(x, np.ndarray):
            if not differentiable(x):
                return NO_TANGENT, NO_TANGENT
            g = densify(dy)
            if not np.iscomplexobj(x) and np.iscomplexobj(g):
                g = np.real(g)
            return densify(getitem_cotangent(ZERO, x, index, g)), NO_TANGENT
        if isinstance(x, (list, tuple, dict, np.generic)):
            return getitem_cotangent(ZERO, x, index, dy), NO_TANGENT
        return NO_TANGENT, NO_TANGENT

    return y, getitem_pullback


# -- take and friends --------------------------------------------------------------------------
def _normalize_indices(indices, n, mode):
    idx = np.asarray(indices, dtype=np.intp)
    if mode == "clip":
        return np.clip(idx, 0, n - 1)
    return np.mod(idx, n) if n else idx


def _take_grad(g, shape, idx, axis):
    """Cotangent of ``take(a, idx, axis)`` (idx normalized, non-negative)."""
    g = as_array(densify(g))
    if axis is None:
        size = int(np.prod(shape))
        return np.reshape(segment_sum(np.ravel(g), np.ravel(idx), size), shape)
    ax = axis % len(shape)
    k = idx.ndim
    moved = np.moveaxis(g, tuple(range(ax, ax + k)), tuple(range(k)))
    rest = moved.shape[k:]
    flat = np.reshape(moved, (idx.size,) + rest)
    summed = segment_sum(flat, np.ravel(idx), shape[ax])
    return np.moveaxis(summed, 0, ax)


def _take_rrule(a, indices, *args, **kwargs):
    y = np.take(a, indices, *args, **kwargs)
    p = bind(args, kwargs, ("axis", "out", "mode"), (None, None, "raise"), name="np.take")
    refuse_out("np.take", p)
    shape = np.shape(a)
    n = int(np.prod(shape)) if p["axis"] is None else shape[p["axis"] % len(shape)]
    rest = (NO_TANGENT,) * (1 + len(args))

    def take_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,)) + rest
        idx = _normalize_indices(indices, n, p["mode"])
        return (finalize(_take_grad(dy, shape, idx, p["axis"]), a),) + rest

    return y, take_pullback


def _take_along_axis_rrule(arr, indices, *args, **kwargs):
    y = np.take_along_axis(arr, indices, *args, **kwargs)
    axis = bind(args, kwargs, ("axis",), (-1,), name="np.take_along_axis")["axis"]
    rest = (NO_TANGENT,) * (1 + len(args))
    shape = np.shape(arr)

    def take_along_axis_pullback(dy):
        if dy is ZERO:
            return zeros_for((arr,)) + rest
        g = as_array(densify(dy))
        if axis is None:
            idx = _normalize_indices(indices, int(np.prod(shape)), "wrap")
            flat = segment_sum(np.ravel(g), np.ravel(idx), int(np.prod(shape)))
            return (finalize(np.reshape(flat, shape), arr),) + rest
        nd = len(shape)
        ax = axis % nd
        idx = _normalize_indices(indices, shape[ax], "wrap")
        out_shape = g.shape
        # Position of each output element in arr (arr may broadcast on the other axes).
        coords = []
        for d in range(nd):
            if d == ax:
                coords.append(idx)
            elif shape[d] == out_shape[d]:
                view = [1] * nd
                view[d] = out_shape[d]
                coords.append(np.reshape(np.arange(out_shape[d]), view))
            else:  # arr has length 1 here and is broadcast
                coords.append(np.zeros((1,) * nd, dtype=np.intp))
        linear = np.ravel_multi_index(tuple(np.broadcast_to(c, out_shape) for c in coords), shape)
        flat = segment_sum(np.ravel(g), np.ravel(linear), int(np.prod(shape)))
        return (finalize(np.reshape(flat, shape), arr),) + rest

    return y, take_along_axis_pullback


def _compress_rrule(condition, a, *args, **kwargs):
    y = np.compress(condition, a, *args, **kwargs)
    p = bind(args, kwargs, ("axis", "out"), (None, None), name="np.compress")
    refuse_out("np.compress", p)
    axis = p["axis"]
    shape = np.shape(a)

    def compress_pullback(dy):
        if dy is ZERO:
            return (NO_TANGENT,) + zeros_for((a,)) + _rest(args)
        idx = np.nonzero(np.ravel(condition))[0]
        return (NO_TANGENT, finalize(_take_grad(dy, shape, idx, axis), a)) + _rest(args)

    return y, compress_pullback


def _ndarray_compress_rrule(a, condition, *args, **kwargs):
    """``a.compress(condition, ...)``: np.compress with the array first."""
    y, pullback = _compress_rrule(condition, a, *args, **kwargs)

    def ndarray_compress_pullback(dy):
        cotangents = pullback(dy)
        return (cotangents[1], cotangents[0]) + tuple(cotangents[2:])

    return y, ndarray_compress_pullback


def _extract_rrule(condition, arr):
    y = np.extract(condition, arr)
    shape = np.shape(arr)

    def extract_pullback(dy):
        if dy is ZERO:
            return (NO_TANGENT,) + zeros_for((arr,))
        idx = np.nonzero(np.ravel(condition))[0]
        return NO_TANGENT, finalize(_take_grad(dy, shape, idx, None), arr)

    return y, extract_pullback


# -- diagonals and triangles -------------------------------------------------------------------
def _diag_embed(g, n, m, k):
    """An array ``(..., n, m)`` holding ``g[..., i]`` on diagonal ``k``, zeros elsewhere."""
    g = as_array(densify(g))
    length = g.shape[-1]
    mask = np.eye(n, m, k=k, dtype=g.dtype if g.dtype.kind in "fc" else np.float64)
    target = n if k >= 0 else m
    if target > length:
        pad = np.zeros(g.shape[:-1] + (target - length,), dtype=g.dtype)
        g = np.concatenate([g, pad], axis=-1)
    if k >= 0:
        return mask * g[..., :, None]
    return mask * g[..., None, :]


def _diag_rrule(v, *args, **kwargs):
    y = np.diag(v, *args, **kwargs)
    k = bind(args, kwargs, ("k",), (0,), name="np.diag")["k"]
    shape = np.shape(v)

    def diag_pullback(dy):
        if dy is ZERO:
            return zeros_for((v,)) + _rest(args)
        g = densify(dy)
        if len(shape) == 1:
            return (finalize(np.diagonal(g, k), v),) + _rest(args)
        return (finalize(_diag_embed(g, shape[0], shape[1], k), v),) + _rest(args)

    return y, diag_pullback


def _diagflat_rrule(v, *args, **kwargs):
    y = np.diagflat(v, *args, **kwargs)
    k = bind(args, kwargs, ("k",), (0,), name="np.diagflat")["k"]

    def diagflat_pullback(dy):
        if dy is ZERO:
            return zeros_for((v,)) + _rest(args)
        g = np.diagonal(as_array(densify(dy)), k)
        return (finalize(np.reshape(g, np.shape(v)), v),) + _rest(args)

    return y, diagflat_pullback


def _diagonal_grad(dy, shape, offset, axis1, axis2):
    nd = len(shape)
    a1, a2 = axis1 % nd, axis2 % nd
    full = _diag_embed(dy, shape[a1], shape[a2], offset)  # rest + (n1, n2)
    return np.moveaxis(full, (-2, -1), (a1, a2))


def _diagonal_rrule(a, *args, **kwargs):
    y = np.diagonal(a, *args, **kwargs)
    p = bind(args, kwargs, ("offset", "axis1", "axis2"), (0, 0, 1), name="np.diagonal")
    shape = np.shape(a)

    def diagonal_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,)) + _rest(args)
        g = _diagonal_grad(dy, shape, p["offset"], p["axis1"], p["axis2"])
        return (finalize(g, a),) + _rest(args)

    return y, diagonal_pullback


def _linalg_diagonal_rrule(x, /, *, offset=0):
    y = np.linalg.diagonal(x, offset=offset)
    shape = np.shape(x)

    def diagonal_pullback(dy):
        if dy is ZERO:
            return zeros_for((x,))
        return (finalize(_diagonal_grad(dy, shape, offset, -2, -1), x),)

    return y, diagonal_pullback


def _triangle_rule(fn):
    def triangle_rrule(m, *args, **kwargs):
        y = fn(m, *args, **kwargs)
        k = bind(args, kwargs, ("k",), (0,), name=f"np.{fn.__name__}")["k"]

        def triangle_pullback(dy):
            if dy is ZERO:
                return zeros_for((m,)) + _rest(args)
            return (finalize(fn(densify(dy), k), m),) + _rest(args)

        return y, triangle_pullback

    triangle_rrule.__name__ = f"{fn.__name__}_rrule"
    return triangle_rrule


# -- sorting -----------------------------------------------------------------------------------
def _unpermute(dy, perm, axis, shape):
    """The cotangent of ``take_along_axis(a, perm, axis)`` for a permutation ``perm``."""
    g = as_array(densify(dy))
    inverse = np.argsort(perm, axis=-1 if axis is None else axis, kind="stable")
    if axis is None:
        return np.reshape(np.take_along_axis(g, inverse, axis=0), shape)
    return np.take_along_axis(g, inverse, axis=axis)


def _sort_rrule(a, *args, **kwargs):
    y = np.sort(a, *args, **kwargs)
    p = bind(
        args, kwargs, ("axis", "kind", "order"), (-1, None, None), name="np.sort", known=("stable",)
    )
    if p["order"] is not None:
        raise UnsupportedCallError(
            "pullback: sort(order=...) of structured arrays has no rule.\nFix: sort the "
            "fields as plain arrays: i = np.argsort(key), then index each field with i."
        )
    axis = p["axis"]
    shape = np.shape(a)
    src = np.ravel(a) if axis is None else as_array(a)
    perm = np.argsort(src, axis=0 if axis is None else axis, kind="stable")

    def sort_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,)) + _rest(args)
        return (finalize(_unpermute(dy, perm, axis, shape), a),) + _rest(args)

    return y, sort_pullback


def _partition_rrule(a, kth, *args, **kwargs):
    y = np.partition(a, kth, *args, **kwargs)
    p = bind(
        args, kwargs, ("axis", "kind", "order"), (-1, "introselect", None), name="np.partition"
    )
    if p["order"] is not None:
        raise UnsupportedCallError(
            "pullback: partition(order=...) has no rule.\nFix: partition the fields as plain "
            "arrays: i = np.argpartition(key, kth), then index each field with i."
        )
    axis = p["axis"]
    shape = np.shape(a)
    src = np.ravel(a) if axis is None else as_array(a)
    ax = 0 if axis is None else axis
    # The element of a that landed at each place of y: match ranks (stable for ties).
    by_value = np.argsort(src, axis=ax, kind="stable")
    rank_in_y = np.argsort(np.argsort(y, axis=ax, kind="stable"), axis=ax, kind="stable")
    perm = np.take_along_axis(by_value, rank_in_y, axis=ax)
    rest = (NO_TANGENT,) * (1 + len(args))

    def partition_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,)) + rest
        return (finalize(_unpermute(dy, perm, axis, shape), a),) + rest

    return y, partition_pullback


def register(reg):
    r = Registrar(reg, FAMILY)
    r.rule(operator.getitem, _getitem_rrule, name="operator.getitem")
    r.rule(np.take, _take_rrule, notes="repeated indices accumulate")
    r.rule(np.take_along_axis, _take_along_axis_rrule)
    r.rule(np.compress, _compress_rrule)
    r.rule(np.ndarray.compress, _ndarray_compress_rrule, name="numpy.ndarray.compress")
    r.rule(np.extract, _extract_rrule)
    r.rule(np.diag, _diag_rrule)
    r.rule(np.diagflat, _diagflat_rrule)
    r.rule(np.diagonal, _diagonal_rrule)
    if hasattr(np.linalg, "diagonal"):
        r.rule(np.linalg.diagonal, _linalg_diagonal_rrule)
    r.rule(np.triu, _triangle_rule(np.triu))
    r.rule(np.tril, _triangle_rule(np.tril))
    r.rule(np.sort, _sort_rrule, notes="ties: stable order")
    r.rule(np.partition, _partition_rrule, notes="ties: stable order")
    # Their pullbacks as transformable functions (second derivatives).
    from .numpy_indexing_pullbacks import register_pullbacks

    register_pullbacks(reg)
