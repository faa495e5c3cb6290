"""The rules of numpy.linalg.norm, vector_norm and matrix_norm (registered by linalg.py):
``norm`` at 0 gives 0; for max/min-type norms (``inf``, ``1``, ``2`` of a matrix...) ties
split the cotangent equally."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedCallError
from ._linalg_util import _real_only
from ._util import (
    NO_TANGENT,
    ZERO,
    bind,
    conj,
    densify,
    expand_reduced,
    finalize,
    normalize_axis,
    zeros_for,
)

la = np.linalg


def _phase(x):
    """``x / |x|`` (``sign`` for reals), 0 at 0."""
    return np.sign(x)


def _vector_norm_grad(v, ord, y):
    """d ||v||_ord / dv along the last axis; ``y`` is the norm with a kept last axis."""
    absv = np.abs(v)
    if ord is None or ord == 2:
        return np.where(y == 0, 0.0, conj(v) / np.where(y == 0, 1.0, y))
    if ord == 1:
        return conj(_phase(v))
    if ord == 0:
        return np.zeros(v.shape)
    if ord == np.inf or ord == -np.inf:
        mask = absv == y
        return conj(_phase(v)) * mask / np.maximum(np.sum(mask, axis=-1, keepdims=True), 1)
    p = float(ord)
    # (sum |v|^p)^(1/p): derivative |v|^(p-1) phase(v) / y^(p-1)
    safe_y = np.where(y == 0, 1.0, y)
    return np.where(y == 0, 0.0, conj(_phase(v)) * (absv / safe_y) ** (p - 1))


def _matrix_norm_grad(X, ord, y):
    """d ||X||_ord / dX over the last two axes; ``y`` has two kept axes."""
    if ord is None or ord == "fro":
        return np.where(y == 0, 0.0, conj(X) / np.where(y == 0, 1.0, y))
    if ord in ("nuc", 2, -2):
        _real_only(f"norm(ord={ord!r})", X)
        U, s, Vh = la.svd(X, full_matrices=False)
        if ord == "nuc":
            w = np.ones_like(s)
        else:
            target = (
                np.max(s, axis=-1, keepdims=True) if ord == 2 else np.min(s, axis=-1, keepdims=True)
            )
            mask = s == target
            w = mask / np.sum(mask, axis=-1, keepdims=True)
        return np.matmul(U * w[..., None, :], Vh)
    if ord in (1, -1, np.inf, -np.inf):
        axis = -2 if ord in (1, -1) else -1  # 1: column sums (over rows)
        sums = np.sum(np.abs(X), axis=axis, keepdims=True)
        target = (
            np.max(sums, axis=-1 if axis == -2 else -2, keepdims=True)
            if ord
            in (
                1,
                np.inf,
            )
            else np.min(sums, axis=-1 if axis == -2 else -2, keepdims=True)
        )
        mask = sums == target
        count = np.sum(mask, axis=-1 if axis == -2 else -2, keepdims=True)
        return conj(_phase(X)) * (mask / count)
    raise UnsupportedCallError(f"pullback: norm(ord={ord!r}) has no rule")


def _norm_pullback_factory(x, y, ord, axes, keepdims, matrix):
    xa = np.asarray(x)
    nd = xa.ndim

    def norm_pullback_value(dy):
        g = np.asarray(densify(dy))
        if matrix:
            a1, a2 = axes
            Xm = np.moveaxis(xa, (a1, a2), (-2, -1))
            yk = expand_reduced(y, xa.shape, (a1, a2), keepdims)
            yk = np.moveaxis(np.asarray(yk), (a1, a2), (-2, -1))[..., :1, :1]
            grad = _matrix_norm_grad(Xm, ord, yk)
            gk = np.moveaxis(
                np.asarray(expand_reduced(g, xa.shape, (a1, a2), keepdims)), (a1, a2), (-2, -1)
            )
            return np.moveaxis(gk * conj(grad), (-2, -1), (a1, a2))
        # vector norm over ``axes`` (flattened together)
        last = tuple(range(nd - len(axes), nd))
        moved = np.moveaxis(xa, axes, last)
        lead = moved.shape[: nd - len(axes)]
        v = np.reshape(moved, lead + (-1,))
        yk = np.reshape(np.asarray(y), lead + (1,)) if np.size(y) else np.asarray(y)
        grad = _vector_norm_grad(v, ord, yk)
        gk = np.reshape(g, lead + (1,))
        full = np.reshape(gk * conj(grad), moved.shape)
        return np.moveaxis(full, last, axes)

    return norm_pullback_value


def _norm_rrule(x, *args, **kwargs):
    y = la.norm(x, *args, **kwargs)
    p = bind(args, kwargs, ("ord", "axis", "keepdims"), (None, None, False), name="np.linalg.norm")
    ord, axis, keepdims = p["ord"], p["axis"], p["keepdims"]
    nd = np.ndim(x)
    if axis is None:
        if ord is None:
            axes, matrix = tuple(range(nd)), False
        elif nd == 1:
            axes, matrix = (0,), False
        else:
            axes, matrix = (0, 1), True
    else:
        axes = (axis % nd,) if np.ndim(axis) == 0 else tuple(a % nd for a in axis)
        matrix = len(axes) == 2
    value = _norm_pullback_factory(x, y, ord, axes, keepdims, matrix)
    rest = (NO_TANGENT,) * len(args)

    def norm_pullback(dy):
        if dy is ZERO:
            return zeros_for((x,)) + rest
        return (finalize(value(dy), x),) + rest

    return y, norm_pullback


def _vector_norm_rrule(x, /, *, axis=None, keepdims=False, ord=2):
    y = la.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)
    nd = np.ndim(x)
    axes = tuple(range(nd)) if axis is None else normalize_axis(axis, nd)
    value = _norm_pullback_factory(x, y, ord, axes, keepdims, False)

    def vector_norm_pullback(dy):
        if dy is ZERO:
            return zeros_for((x,))
        return (finalize(value(dy), x),)

    return y, vector_norm_pullback


def _matrix_norm_rrule(x, /, *, keepdims=False, ord="fro"):
    y = la.matrix_norm(x, keepdims=keepdims, ord=ord)
    nd = np.ndim(x)
    value = _norm_pullback_factory(x, y, ord, (nd - 2, nd - 1), keepdims, True)

    def matrix_norm_pullback(dy):
        if dy is ZERO:
            return zeros_for((x,))
        return (finalize(value(dy), x),)

    return y, matrix_norm_pullback
