"""Transformable pullbacks of the indexing family (numpy_indexing.py), written in the
differentiable subset so that second derivatives run through them (see transformable.py).

A selection's pullback scatters the cotangent back to the positions read, through
``getitem_cotangent`` (which adds where a position was read twice and whose own pullback
is the selection again); sorting routes each cotangent back through the inverse
permutation.
"""

from __future__ import annotations

import math

import numpy as np

from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO, densify, getitem_cotangent, unbroadcast
from .transformable import set_pullbacks


@transformable
def scatter(g, x, index):
    """The dense cotangent of ``x`` for the cotangent ``g`` of ``x[index]``."""
    if not np.iscomplexobj(x):
        g = np.real(g)
    return densify(getitem_cotangent(ZERO, x, index, g))


@transformable
def getitem_pullback(dy, x, index):
    if isinstance(x, np.ndarray):
        return scatter(densify(dy), x, index), NO_TANGENT
    return getitem_cotangent(ZERO, x, index, dy), NO_TANGENT


@transformable
def wrapped(indices, n, mode):
    """Indices as ``take`` reads them (``mode`` "clip" or "wrap"; "raise" checked them)."""
    idx = np.asarray(indices, dtype=np.intp)
    if mode == "clip":
        return np.clip(idx, 0, n - 1)
    if n == 0:
        return idx
    return np.mod(idx, n)


@transformable
def take_grad(dy, a, idx, axis):
    """The cotangent of ``take(a, idx, axis)`` for normalized indices ``idx``."""
    g = densify(dy)
    if axis is None:
        flat = scatter(np.ravel(g), np.ravel(a), np.ravel(idx))
        return np.reshape(flat, np.shape(a))
    ax = axis % np.ndim(a)
    return scatter(g, a, (slice(None),) * ax + (idx,))


@transformable
def take_pullback(dy, a, indices, axis=None, out=None, mode="raise"):
    shape = np.shape(a)
    n = math.prod(shape) if axis is None else shape[axis % len(shape)]
    g = take_grad(dy, a, wrapped(indices, n, mode), axis)
    return unbroadcast(g, a), NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT



@transformable
def take_along_axis_pullback(dy, arr, indices, axis=-1):
    g = densify(dy)
    shape = np.shape(arr)
    if axis is None:
        flat = scatter(
            np.ravel(g), np.ravel(arr), np.ravel(wrapped(indices, math.prod(shape), "wrap"))
        )
        return unbroadcast(np.reshape(flat, shape), arr), NO_TANGENT, NO_TANGENT
    nd = len(shape)
    ax = axis % nd
    out_shape = np.shape(g)
    # The position in arr of each output element (arr may broadcast on the other axes).
    index = ()
    for d in range(nd):
        if d == ax:
            index = index + (wrapped(indices, shape[ax], "wrap"),)
        elif shape[d] == out_shape[d]:
            view = (1,) * d + (out_shape[d],) + (1,) * (nd - d - 1)
            index = index + (np.reshape(np.arange(out_shape[d]), view),)
        else:  # length 1 in arr, broadcast
            index = index + (np.zeros((1,) * nd, dtype=np.intp),)
    return unbroadcast(scatter(g, arr, index), arr), NO_TANGENT, NO_TANGENT


@transformable
def compress_pullback(dy, condition, a, axis=None, out=None):
    idx = np.nonzero(np.ravel(condition))[0]
    return NO_TANGENT, unbroadcast(take_grad(dy, a, idx, axis), a), NO_TANGENT, NO_TANGENT


@transformable
def ndarray_compress_pullback(dy, a, condition, axis=None, out=None):
    idx = np.nonzero(np.ravel(condition))[0]
    return unbroadcast(take_grad(dy, a, idx, axis), a), NO_TANGENT, NO_TANGENT, NO_TANGENT


@transformable
def extract_pullback(dy, condition, arr):
    idx = np.nonzero(np.ravel(condition))[0]
    return NO_TANGENT, unbroadcast(take_grad(dy, arr, idx, None), arr)


@transformable
def diag_embed(g, n, m, k):
    """An array ``(..., n, m)`` holding ``g[..., i]`` on diagonal ``k``, zeros elsewhere."""
    length = np.shape(g)[-1]
    target = n if k >= 0 else m
    if target > length:
        pad = np.zeros(np.shape(g)[:-1] + (target - length,), dtype=np.result_type(g))
        g = np.concatenate([g, pad], axis=-1)
    mask = np.eye(n, m, k=k)
    if k >= 0:
        return mask * g[..., :, None]
    return mask * g[..., None, :]


@transformable
def diag_pullback(dy, v, k=0):
    g = densify(dy)
    if np.ndim(v) == 1:
        return unbroadcast(np.diagonal(g, k), v), NO_TANGENT
    return unbroadcast(diag_embed(g, np.shape(v)[0], np.shape(v)[1], k), v), NO_TANGENT


@transformable
def diagflat_pullback(dy, v, k=0):
    g = np.diagonal(densify(dy), k)
    return unbroadcast(np.reshape(g, np.shape(v)), v), NO_TANGENT


@transformable
def diagonal_grad(dy, shape, offset, axis1, axis2):
    nd = len(shape)
    a1 = axis1 % nd
    a2 = axis2 % nd
    full = diag_embed(densify(dy), shape[a1], shape[a2], offset)  # rest + (n1, n2)
    return np.moveaxis(full, (-2, -1), (a1, a2))


@transformable
def diagonal_pullback(dy, a, offset=0, axis1=0, axis2=1):
    g = diagonal_grad(dy, np.shape(a), offset, axis1, axis2)
    return unbroadcast(g, a), NO_TANGENT, NO_TANGENT, NO_TANGENT


@transformable
def linalg_diagonal_pullback(dy, x, offset=0):
    return (unbroadcast(diagonal_grad(dy, np.shape(x), offset, -2, -1), x),)


@transformable
def triu_pullback(dy, m, k=0):
    return unbroadcast(np.triu(densify(dy), k), m), NO_TANGENT


@transformable
def tril_pullback(dy, m, k=0):
    return unbroadcast(np.tril(densify(dy), k), m), NO_TANGENT


@transformable
def unpermute(dy, perm, axis, a):
    """The cotangent of ``take_along_axis(a, perm, axis)`` for a permutation ``perm``."""
    g = densify(dy)
    if axis is None:
        inverse = np.argsort(perm, axis=-1, kind="stable")
        return np.reshape(np.take_along_axis(g, inverse, axis=0), np.shape(a))
    inverse = np.argsort(perm, axis=axis, kind="stable")
    return np.take_along_axis(g, inverse, axis=axis)


@transformable
def sort_pullback(dy, a, axis=-1, kind=None, order=None):
    if axis is None:
        perm = np.argsort(np.ravel(a), axis=0, kind="stable")
    else:
        perm = np.argsort(a, axis=axis, kind="stable")
    return unbroadcast(unpermute(dy, perm, axis, a), a), NO_TANGENT, NO_TANGENT, NO_TANGENT


@transformable
def partition_pullback(dy, a, kth, axis=-1, kind="introselect", order=None):
    src = np.ravel(a) if axis is None else a
    ax = 0 if axis is None else axis
    y = np.partition(src, kth, axis=ax)
    # The element of a that landed at each place of y: match ranks (stable for ties).
    by_value = np.argsort(src, axis=ax, kind="stable")
    rank_in_y = np.argsort(np.argsort(y, axis=ax, kind="stable"), axis=ax, kind="stable")
    perm = np.take_along_axis(by_value, rank_in_y, axis=ax)
    g = unbroadcast(unpermute(dy, perm, axis, a), a)
    return g, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT


# Dask has neither sort nor partition: NumPy's fallback would compute the array. On Dask
# arguments (also inside containers: transform/kinds.py) the adjoint calls the rule's own
# rrule in the forward sweep instead of np.sort, and the compute guard refuses it by name
# before anything runs.
sort_pullback.__pullback_numpy_only__ = True
partition_pullback.__pullback_numpy_only__ = True


def register_pullbacks(reg):
    import operator

    set_pullbacks(
        reg,
        [
            (operator.getitem, getitem_pullback),
            (np.take, take_pullback),
            (np.take_along_axis, take_along_axis_pullback),
            (np.compress, compress_pullback),
            (np.ndarray.compress, ndarray_compress_pullback),
            (np.extract, extract_pullback),
            (np.diag, diag_pullback),
            (np.diagflat, diagflat_pullback),
            (np.diagonal, diagonal_pullback),
            (getattr(np.linalg, "diagonal", None), linalg_diagonal_pullback),
            (np.triu, triu_pullback),
            (np.tril, tril_pullback),
            (np.sort, sort_pullback),
            (np.partition, partition_pullback),
        ],
    )
