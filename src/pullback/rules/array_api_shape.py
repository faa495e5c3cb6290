"""Transformable pullbacks of ``array_api_strict``'s products, shape, joining, selection
and sorting functions (see ``array_api_pullbacks.py`` for how they are used).

Imported only once the user has imported ``array_api_strict``.
"""

from __future__ import annotations

import array_api_strict as xp

from ..registry import transformable
from ..tangents import NO_TANGENT
from .array_api_pullbacks import inverse_permutation, mul, negated, sum_to


@transformable
def matmul_pullback(dy, a, b):
    a = xp.conj(a)  # the cotangent of a holomorphic product takes the other factor's conj
    b = xp.conj(b)
    if a.ndim == 1 and b.ndim == 1:
        return mul(dy, b), mul(dy, a)
    if a.ndim == 1:  # (n,) @ (..., n, m): dy is (..., m)
        da = xp.matmul(xp.expand_dims(dy, axis=-2), xp.matrix_transpose(b))
        db = mul(xp.expand_dims(a, axis=1), xp.expand_dims(dy, axis=-2))
        return sum_to(xp.squeeze(da, axis=-2), a), db
    if b.ndim == 1:  # (..., k, n) @ (n,): dy is (..., k)
        db = xp.squeeze(xp.matmul(xp.expand_dims(dy, axis=-2), a), axis=-2)
        return mul(xp.expand_dims(dy, axis=-1), b), sum_to(db, b)
    da = xp.matmul(dy, xp.matrix_transpose(b))
    return sum_to(da, a), sum_to(xp.matmul(xp.matrix_transpose(a), dy), b)


@transformable
def matrix_transpose_pullback(dy, x):
    return (xp.matrix_transpose(dy),)


@transformable
def reshape_pullback(dy, x, shape, copy=None):
    return xp.reshape(dy, x.shape), NO_TANGENT


@transformable
def broadcast_to_pullback(dy, x, shape):
    return sum_to(dy, x), NO_TANGENT


@transformable
def expand_dims_pullback(dy, x, axis=0):
    return (xp.reshape(dy, x.shape),)


@transformable
def squeeze_pullback(dy, x, axis):
    return xp.reshape(dy, x.shape), NO_TANGENT


@transformable
def permute_dims_pullback(dy, x, axes):
    return xp.permute_dims(dy, inverse_permutation(axes)), NO_TANGENT


@transformable
def astype_pullback(dy, x, dtype, copy=True, device=None):
    if xp.isdtype(dy.dtype, "complex floating") and not xp.isdtype(x.dtype, "complex floating"):
        dy = xp.real(dy)  # a real array made complex: the real part of its cotangent
    return xp.astype(dy, x.dtype), NO_TANGENT


@transformable
def where_pullback(dy, condition, x1, x2):
    zero = xp.zeros_like(dy)
    return (
        NO_TANGENT,
        sum_to(xp.where(condition, dy, zero), x1),
        sum_to(xp.where(condition, zero, dy), x2),
    )


@transformable
def clip_pullback(dy, x, min=None, max=None):
    zero = xp.zeros_like(dy)
    inside = xp.ones_like(dy) > 0
    dmin = NO_TANGENT
    dmax = NO_TANGENT
    if min is not None:
        below = x < min
        inside = xp.logical_and(inside, xp.logical_not(below))
        dmin = sum_to(xp.where(below, dy, zero), min)
    if max is not None:
        above = x > max
        inside = xp.logical_and(inside, xp.logical_not(above))
        dmax = sum_to(xp.where(above, dy, zero), max)
    return sum_to(xp.where(inside, dy, zero), x), dmin, dmax


@transformable
def concat_pullback(dy, arrays, axis=0):
    ax = 0 if axis is None else axis % dy.ndim
    lead = (slice(None),) * ax
    parts = ()
    start = 0
    for a in arrays:
        stop = start + (a.size if axis is None else a.shape[ax])
        part = dy[lead + (slice(start, stop), ...)]
        parts = parts + ((xp.reshape(part, a.shape) if axis is None else part),)
        start = stop
    return (parts,)


@transformable
def stack_pullback(dy, arrays, axis=0):
    ax = axis % dy.ndim
    lead = (slice(None),) * ax
    parts = ()
    for k in range(len(arrays)):
        parts = parts + (dy[lead + (k, ...)],)
    return (parts,)


@transformable
def flip_pullback(dy, x, axis=None):
    return (xp.flip(dy, axis=axis),)


@transformable
def roll_pullback(dy, x, shift, axis=None):
    return xp.roll(dy, negated(shift), axis=axis), NO_TANGENT


@transformable
def take_pullback(dy, x, indices, axis=None):
    # A scatter-add written as a product with a one-hot matrix (the standard has no
    # scatter-add): onehot[k, i] = 1 where indices[k] == i.
    ax = 0 if axis is None else axis % x.ndim
    n = x.shape[ax]
    onehot = xp.astype(
        xp.expand_dims(indices, axis=1) == xp.expand_dims(xp.arange(n), axis=0), dy.dtype
    )
    moved = xp.moveaxis(dy, ax, -1)  # (..., k)
    return xp.moveaxis(moved @ onehot, -1, ax), NO_TANGENT


@transformable
def sort_pullback(dy, x, axis=-1, descending=False, stable=True):
    order = xp.argsort(x, axis=axis, descending=descending, stable=stable)
    inverse = xp.argsort(order, axis=axis)
    return (xp.take_along_axis(dy, inverse, axis=axis),)


@transformable
def tril_pullback(dy, x, k=0):
    return (xp.tril(dy, k=k),)


@transformable
def triu_pullback(dy, x, k=0):
    return (xp.triu(dy, k=k),)
