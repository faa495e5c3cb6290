"""Small helpers shared by rule families."""

from __future__ import annotations

import numpy as np

from ..tangents import NO_TANGENT, ZERO, densify, unbroadcast

__all__ = ["NO_TANGENT", "ZERO", "densify", "unbroadcast", "normalize_axis", "expand_reduced"]


def normalize_axis(axis, ndim):
    """``axis`` as a sorted tuple of non-negative ints (``None`` means every axis)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    return tuple(sorted(a % ndim if ndim else 0 for a in axis))


def expand_reduced(g, shape, axis, keepdims):
    """Broadcast the cotangent of a reduction back to the shape of its input."""
    g = np.asarray(densify(g))
    if not keepdims:
        for a in normalize_axis(axis, len(shape)):
            g = np.expand_dims(g, a)
    return np.broadcast_to(g, shape)
