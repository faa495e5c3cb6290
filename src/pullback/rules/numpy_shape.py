"""Shape and layout: transpose, reshape, ravel, squeeze, expand_dims, concatenate, stack."""

from __future__ import annotations

import numpy as np

from ._util import NO_TANGENT, ZERO, densify, unbroadcast

FAMILY = "numpy_shape"


def _transpose_rrule(x, axes=None):
    y = np.transpose(x, axes)

    def transpose_pullback(dy):
        if dy is ZERO:
            return ZERO, NO_TANGENT
        inverse = None if axes is None else tuple(np.argsort(axes))
        return unbroadcast(np.transpose(densify(dy), inverse), x), NO_TANGENT

    return y, transpose_pullback


def _reshape_rrule(x, *shape, **kwargs):
    y = np.reshape(x, *shape, **kwargs)
    in_shape = np.shape(x)

    def reshape_pullback(dy):
        if dy is ZERO:
            return (ZERO,) + (NO_TANGENT,) * len(shape)
        return (unbroadcast(np.reshape(densify(dy), in_shape), x),) + (NO_TANGENT,) * len(shape)

    return y, reshape_pullback


def _ravel_rrule(x, *args, **kwargs):
    y = np.ravel(x, *args, **kwargs)
    in_shape = np.shape(x)

    def ravel_pullback(dy):
        if dy is ZERO:
            return (ZERO,) + (NO_TANGENT,) * len(args)
        return (unbroadcast(np.reshape(densify(dy), in_shape), x),) + (NO_TANGENT,) * len(args)

    return y, ravel_pullback


def _same_size_rrule(fn):
    """A rule for functions that only change the shape (squeeze, expand_dims, ...)."""

    def shape_rrule(x, *args, **kwargs):
        y = fn(x, *args, **kwargs)
        in_shape = np.shape(x)

        def shape_pullback(dy):
            if dy is ZERO:
                return (ZERO,) + (NO_TANGENT,) * len(args)
            g = np.reshape(densify(dy), in_shape)
            return (unbroadcast(g, x),) + (NO_TANGENT,) * len(args)

        return y, shape_pullback

    shape_rrule.__name__ = f"{fn.__name__}_rrule"
    return shape_rrule


def _split_along(dy, parts, axis):
    sizes = [np.shape(p)[axis] for p in parts]
    cuts = np.cumsum(sizes)[:-1]
    return np.split(dy, cuts, axis=axis)


def _concatenate_rrule(arrays, axis=0, **kwargs):
    y = np.concatenate(arrays, axis=axis, **kwargs)

    def concatenate_pullback(dy):
        if dy is ZERO:
            return ZERO, NO_TANGENT
        if axis is None:
            sizes = np.cumsum([np.size(a) for a in arrays])[:-1]
            pieces = np.split(densify(dy), sizes)
            pieces = [np.reshape(p, np.shape(a)) for p, a in zip(pieces, arrays, strict=True)]
        else:
            ax = axis % np.ndim(y)
            pieces = _split_along(densify(dy), [np.atleast_1d(a) for a in arrays], ax)
        out = [unbroadcast(p, a) for p, a in zip(pieces, arrays, strict=True)]
        return type(arrays)(out) if isinstance(arrays, (list, tuple)) else out, NO_TANGENT

    return y, concatenate_pullback


def _stack_rrule(arrays, axis=0, **kwargs):
    y = np.stack(arrays, axis=axis, **kwargs)

    def stack_pullback(dy):
        if dy is ZERO:
            return ZERO, NO_TANGENT
        ax = axis % np.ndim(y)
        g = densify(dy)
        out = [unbroadcast(np.take(g, k, axis=ax), a) for k, a in enumerate(arrays)]
        return type(arrays)(out) if isinstance(arrays, (list, tuple)) else out, NO_TANGENT

    return y, stack_pullback


def register(reg):
    def r(fn, rule):
        reg.register(fn, rule, family=FAMILY, trusted=True)

    r(np.transpose, _transpose_rrule)
    r(np.reshape, _reshape_rrule)
    r(np.ravel, _ravel_rrule)
    r(np.squeeze, _same_size_rrule(np.squeeze))
    r(np.expand_dims, _same_size_rrule(np.expand_dims))
    r(np.atleast_1d, _same_size_rrule(np.atleast_1d))
    r(np.atleast_2d, _same_size_rrule(np.atleast_2d))
    r(np.concatenate, _concatenate_rrule)
    r(np.stack, _stack_rrule)
