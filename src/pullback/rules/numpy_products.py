"""Products: dot, matmul, outer."""

from __future__ import annotations

import numpy as np

from ._util import ZERO, unbroadcast

FAMILY = "numpy_products"


def _matmul_grads(dy, a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    dy = np.asarray(dy)
    if a.ndim == 1 and b.ndim == 1:
        return dy * b, dy * a
    if a.ndim == 1:
        da = np.matmul(b, dy[..., None])[..., 0] if b.ndim > 1 else dy * b
        db = a[:, None] * dy[..., None, :]
        return unbroadcast(da, a), unbroadcast(db, b)
    if b.ndim == 1:
        da = dy[..., :, None] * b
        db = np.matmul(np.swapaxes(a, -1, -2), dy[..., None])[..., 0]
        return unbroadcast(da, a), unbroadcast(db, b)
    da = np.matmul(dy, np.swapaxes(b, -1, -2))
    db = np.matmul(np.swapaxes(a, -1, -2), dy)
    return unbroadcast(da, a), unbroadcast(db, b)


def _matmul_rrule(a, b, **kwargs):
    y = np.matmul(a, b, **kwargs)

    def matmul_pullback(dy):
        if dy is ZERO:
            return ZERO, ZERO
        da, db = _matmul_grads(dy, a, b)
        return unbroadcast(da, a), unbroadcast(db, b)

    return y, matmul_pullback


def _dot_rrule(a, b, **kwargs):
    y = np.dot(a, b, **kwargs)

    def dot_pullback(dy):
        if dy is ZERO:
            return ZERO, ZERO
        an = np.asarray(a)
        bn = np.asarray(b)
        if an.ndim == 0 or bn.ndim == 0:
            return unbroadcast(dy * b, a), unbroadcast(dy * a, b)
        if bn.ndim <= 2:
            return _matmul_grads(dy, a, b)
        # N-d dot: sum over the last axis of a and the second-to-last of b.
        dyn = np.asarray(dy)
        b_moved = np.moveaxis(bn, -2, -1).reshape(-1, bn.shape[-2])  # (K, M)
        g = dyn.reshape(an.shape[:-1] + (-1,))
        da = np.dot(g, b_moved)
        a_flat = an.reshape(-1, an.shape[-1])
        g2 = dyn.reshape(a_flat.shape[0], -1)
        db = np.dot(a_flat.T, g2)
        rest = bn.shape[:-2] + bn.shape[-1:]
        db = np.moveaxis(db.reshape((bn.shape[-2],) + rest), 0, -2)
        return unbroadcast(da, a), unbroadcast(db, b)

    return y, dot_pullback


def _outer_rrule(a, b):
    y = np.outer(a, b)

    def outer_pullback(dy):
        if dy is ZERO:
            return ZERO, ZERO
        af = np.ravel(a)
        bf = np.ravel(b)
        da = np.reshape(np.dot(dy, bf), np.shape(a))
        db = np.reshape(np.dot(af, dy), np.shape(b))
        return unbroadcast(da, a), unbroadcast(db, b)

    return y, outer_pullback


def register(reg):
    def r(fn, rule):
        reg.register(fn, rule, family=FAMILY, trusted=True)

    r(np.matmul, _matmul_rrule)
    r(np.dot, _dot_rrule)
    r(np.outer, _outer_rrule)
