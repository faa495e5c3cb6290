"""Transformable pullbacks of the helpers that generated adjoints call (the rules of
pullback_runtime.py), so that a derivative of a generated gradient is itself
differentiable (third derivatives, Hessians of gradients).

The helpers are linear in the cotangent they move, or bilinear (the matrix-product
cotangents): each pullback is another such helper, or a NumPy product.
"""

from __future__ import annotations

import numpy as np

from .. import read_folds, runtime, tangents, unpacking, where_masks
from ..list_operands import cotangent_like, stacked_like
from ..registry import transformable
from ..runtime import matmul_lhs_cotangent, matmul_rhs_cotangent
from ..tangents import (
    NO_TANGENT,
    ZERO,
    broadcast_cotangent,
    densify,
    read_cotangent,
    unbroadcast,
)
from ..zero_safe import zero_safe_product
from .transformable import set_pullbacks


@transformable
def identity_pullback(dy, x):
    return (dy,)


@transformable
def bounded_pullback(dy, x, limit):
    # zip_bounded: the identity on what carries a gradient (a sequence, which it returns)
    return dy, NO_TANGENT


@transformable
def masked_pullback(dy, ct, mask):
    # linear in ct, masked by the same (non-differentiable) mask
    return where_masks.masked(dy, mask), NO_TANGENT


@transformable
def sequence_cotangent_pullback(dy, g, iterable):
    return dy, NO_TANGENT


@transformable
def add_pullback(dy, a, b):
    # (each operand's in its own form: a list's and an array's may be added)
    return cotangent_like(dy, a), cotangent_like(dy, b)


@transformable
def unbroadcast_pullback(dy, g, x):
    shape = np.shape(densify(g))
    if shape:
        return broadcast_cotangent(dy, shape), NO_TANGENT
    return dy, NO_TANGENT


@transformable
def getitem_cotangent_pullback(dy, acc, x, index, g):
    if g is ZERO or g is NO_TANGENT:
        return dy, NO_TANGENT, NO_TANGENT, ZERO
    return dy, NO_TANGENT, NO_TANGENT, read_cotangent(dy, x, index, g)


@transformable
def tuple_item_pullback(dy, g, k):
    if g is ZERO or g is NO_TANGENT:
        return ZERO, NO_TANGENT
    parts = [ZERO] * k + [dy] + [ZERO] * (len(g) - k - 1)
    if type(g) is np.ndarray:  # an array's cotangent is an array (list_operands.py)
        return stacked_like(parts, g), NO_TANGENT
    return tuple(parts), NO_TANGENT


@transformable
def dict_item_pullback(dy, g, key):
    if g is ZERO or g is NO_TANGENT:
        return ZERO, NO_TANGENT
    return {key: dy}, NO_TANGENT


@transformable
def plus_cotangents_pullback(dy, g, a, b):
    da = dy[0]
    db = dy[1]
    if isinstance(a, (tuple, list)):  # concatenated sequences: put the parts back together
        if (da is ZERO or da is NO_TANGENT) and (db is ZERO or db is NO_TANGENT):
            return ZERO, NO_TANGENT, NO_TANGENT
        left = [ZERO] * len(a) if da is ZERO or da is NO_TANGENT else list(da)
        right = [ZERO] * len(b) if db is ZERO or db is NO_TANGENT else list(db)
        return tuple(left + right), NO_TANGENT, NO_TANGENT
    shape = np.shape(densify(g))
    total = ZERO
    if not (da is ZERO or da is NO_TANGENT):
        total = np.broadcast_to(densify(da), shape) if shape else da
    if not (db is ZERO or db is NO_TANGENT):
        part = np.broadcast_to(densify(db), shape) if shape else db
        total = part if total is ZERO else total + part
    return total, NO_TANGENT, NO_TANGENT


@transformable
def repeat_cotangent_pullback(dy, g, seq, n):
    # repeat_cotangent is linear in g: its adjoint hands each copy the sequence's cotangent.
    if dy is ZERO or dy is NO_TANGENT or g is ZERO or g is NO_TANGENT:
        return ZERO, NO_TANGENT, NO_TANGENT
    parts = list(dy) * max(int(n), 0)
    if isinstance(g, tuple):
        return tuple(parts), NO_TANGENT, NO_TANGENT
    return parts, NO_TANGENT, NO_TANGENT


@transformable
def fold_reads_pullback(dy, acc, x, chain):
    g = densify(dy)
    entries = []
    while chain is not None:
        index, value, chain = chain
        entries = entries + [(index, value)]
    cot = ZERO  # the cotangent of the chain: the same nesting, one value per read
    for k in range(len(entries)):
        index, value = entries[len(entries) - 1 - k]
        if value is ZERO or value is NO_TANGENT:
            dv = ZERO
        else:
            dv = read_cotangent(g, x, index, value)
        cot = (NO_TANGENT, dv, cot)
    return (ZERO if acc is ZERO or acc is NO_TANGENT else dy), NO_TANGENT, cot


@transformable
def matmul_lhs_pullback(dy, g, a, b):
    # matmul_lhs_cotangent(g, a, b) is the adjoint of a -> a @ b applied to g: its own
    # adjoint in g is that product again, and in b the cotangent of b in dy @ b.
    if g is ZERO:  # (the helper was given a symbolic zero: it returned one)
        return ZERO, NO_TANGENT, ZERO
    return unbroadcast(dy @ b, g), NO_TANGENT, matmul_rhs_cotangent(g, dy, b)


@transformable
def matmul_rhs_pullback(dy, g, a, b):
    # The adjoint of b -> a @ b: in g, a @ dy again; in a, the cotangent of a in a @ dy.
    if g is ZERO:
        return ZERO, ZERO, NO_TANGENT
    return unbroadcast(a @ dy, g), matmul_lhs_cotangent(g, a, dy), NO_TANGENT


@transformable
def pow_exponent_pullback(dy, g, base, result):
    if g is ZERO:
        return ZERO, ZERO, ZERO
    b = np.real(base)
    positive = b > 0
    safe = np.where(positive, b, 1.0)
    log = np.log(safe)
    dg = dy * np.where(positive, result * log, 0.0)
    dbase = dy * np.where(positive, g * result / safe, 0.0)
    dresult = dy * np.where(positive, g * log, 0.0)
    return unbroadcast(dg, g), unbroadcast(dbase, base), unbroadcast(dresult, result)


@transformable
def zero_safe_product_pullback(dy, g, d):
    # bilinear in (g, d), and zero-safe both ways: where g is 0 an infinite d still gives
    # d nothing, and where dy is 0 nothing flows back (a third derivative sees the same)
    dg = zero_safe_product(dy, runtime.conjugate(d))
    dd = zero_safe_product(dy, runtime.conjugate(g))
    return unbroadcast(dg, g), unbroadcast(dd, d)


def register_pullbacks(reg):
    pairs = [
        (tangents.densify, identity_pullback),
        (runtime.as_sequence, identity_pullback),
        (unpacking.zip_bounded, bounded_pullback),
        (runtime.sequence_cotangent, sequence_cotangent_pullback),
        (tangents.add, add_pullback),
        (tangents.unbroadcast, unbroadcast_pullback),
        (tangents.getitem_cotangent, getitem_cotangent_pullback),
        (runtime.tuple_item, tuple_item_pullback),
        (runtime.dict_item, dict_item_pullback),
        (runtime.plus_cotangents, plus_cotangents_pullback),
        (runtime.repeat_cotangent, repeat_cotangent_pullback),
        (read_folds.fold_reads, fold_reads_pullback),
        (runtime.matmul_lhs_cotangent, matmul_lhs_pullback),
        (runtime.matmul_rhs_cotangent, matmul_rhs_pullback),
        (runtime.pow_exponent_cotangent, pow_exponent_pullback),
        (where_masks.masked, masked_pullback),
        (where_masks.kept, masked_pullback),
        (zero_safe_product, zero_safe_product_pullback),
    ]
    set_pullbacks(reg, pairs)
