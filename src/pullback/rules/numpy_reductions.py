"""Reductions: sum, mean, prod, max, min with ``axis`` and ``keepdims``."""

from __future__ import annotations

import numpy as np

from ._util import ZERO, expand_reduced, normalize_axis, unbroadcast

FAMILY = "numpy_reductions"


def _sum_rrule(x, axis=None, dtype=None, keepdims=False, **kwargs):
    y = np.sum(x, axis=axis, dtype=dtype, keepdims=keepdims, **kwargs)
    shape = np.shape(x)

    def sum_pullback(dy):
        if dy is ZERO:
            return (ZERO,)
        return (unbroadcast(expand_reduced(dy, shape, axis, keepdims), x),)

    return y, sum_pullback


def _mean_rrule(x, axis=None, dtype=None, keepdims=False, **kwargs):
    y = np.mean(x, axis=axis, dtype=dtype, keepdims=keepdims, **kwargs)
    shape = np.shape(x)
    count = 1
    for a in normalize_axis(axis, len(shape)):
        count *= shape[a]

    def mean_pullback(dy):
        if dy is ZERO:
            return (ZERO,)
        g = expand_reduced(dy, shape, axis, keepdims) / count
        return (unbroadcast(g, x),)

    return y, mean_pullback


def _prod_rrule(x, axis=None, dtype=None, keepdims=False, **kwargs):
    y = np.prod(x, axis=axis, dtype=dtype, keepdims=keepdims, **kwargs)
    shape = np.shape(x)

    def prod_pullback(dy):
        if dy is ZERO:
            return (ZERO,)
        xa = np.asarray(x)
        axes = normalize_axis(axis, xa.ndim)
        # The product of all the other elements, exact even where x has zeros.
        moved = np.moveaxis(xa, axes, tuple(range(xa.ndim - len(axes), xa.ndim)))
        lead = moved.shape[: xa.ndim - len(axes)]
        flat = moved.reshape(lead + (-1,))
        n = flat.shape[-1]
        ones = np.ones(lead + (1,), dtype=flat.dtype)
        left = np.concatenate([ones, np.cumprod(flat, axis=-1)[..., :-1]], axis=-1)
        rev = flat[..., ::-1]
        right = np.concatenate([ones, np.cumprod(rev, axis=-1)[..., :-1]], axis=-1)[..., ::-1]
        others = (left * right).reshape(moved.shape) if n else flat.reshape(moved.shape)
        others = np.moveaxis(others, tuple(range(xa.ndim - len(axes), xa.ndim)), axes)
        g = expand_reduced(dy, shape, axis, keepdims) * others
        return (unbroadcast(g, x),)

    return y, prod_pullback


def _extreme_rrule(reducer):
    def extreme_rrule(x, axis=None, keepdims=False, **kwargs):
        y = reducer(x, axis=axis, keepdims=keepdims, **kwargs)
        shape = np.shape(x)

        def extreme_pullback(dy):
            if dy is ZERO:
                return (ZERO,)
            yk = expand_reduced(y, shape, axis, keepdims)
            mask = np.asarray(x) == yk
            # Ties share the cotangent equally.
            counts = np.sum(mask, axis=axis, keepdims=True)
            g = expand_reduced(dy, shape, axis, keepdims) * mask / counts
            return (unbroadcast(g, x),)

        return y, extreme_pullback

    extreme_rrule.__name__ = f"{reducer.__name__}_rrule"
    return extreme_rrule


def register(reg):
    def r(fn, rule):
        reg.register(fn, rule, family=FAMILY, trusted=True)

    r(np.sum, _sum_rrule)
    r(np.mean, _mean_rrule)
    r(np.prod, _prod_rrule)
    r(np.max, _extreme_rrule(np.max))
    r(np.min, _extreme_rrule(np.min))
    if np.amax is not np.max:
        r(np.amax, _extreme_rrule(np.amax))
        r(np.amin, _extreme_rrule(np.amin))
