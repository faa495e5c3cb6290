"""Transformable pullbacks of the ``math`` rules that are not elementwise (math_rules.py):
written in the differentiable subset so that second derivatives run through them (see
transformable.py). Sequences of floats get lists (or tuples) of cotangents, as the rules'
closures give them, and an array its cotangent as an array (``as_argument``): generated
code adds the cotangents of an array argument with ``+``."""

from __future__ import annotations

import math

import numpy as np

from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO, densify, unbroadcast
from .numpy_indexing_pullbacks import scatter
from .transformable import set_pullbacks


@transformable
def hypot_pullback(dy, a, b=None, c=None):
    # Up to three coordinates (parameters, not *coordinates: no star-parameters here).
    y = math.hypot(a) if b is None else (math.hypot(a, b) if c is None else math.hypot(a, b, c))
    if y == 0.0:
        return (
            0.0 * a,
            NO_TANGENT if b is None else 0.0 * b,
            NO_TANGENT if c is None else 0.0 * c,
        )
    return (
        dy * a / y,
        NO_TANGENT if b is None else dy * b / y,
        NO_TANGENT if c is None else dy * c / y,
    )


@transformable
def same_kind(values, like):
    return tuple(values) if isinstance(like, tuple) else values


@transformable
def dist_pullback(dy, p, q):
    y = math.dist(p, q)
    dp = []
    dq = []
    for k in range(len(p)):
        d = 0.0 if y == 0.0 else dy * (p[k] - q[k]) / y
        dp = dp + [d]
        dq = dq + [-d]
    return as_argument(dp, p), as_argument(dq, q)


@transformable
def sumprod_pullback(dy, p, q):
    # (Python 3.12+) sum(p[k] * q[k]): each factor's cotangent is dy times the other one
    dp = []
    dq = []
    for k in range(len(p)):
        dp = dp + [dy * q[k]]
        dq = dq + [dy * p[k]]
    return as_argument(dp, p), as_argument(dq, q)


@transformable
def as_argument(values, like):
    """Cotangents ``values`` (a list) in the kind of the argument ``like``: a list, a tuple
    or a 1-d array."""
    if isinstance(like, np.ndarray):
        return np.reshape(np.asarray(values, dtype=np.result_type(like, 1.0)), np.shape(like))
    return same_kind(values, like)


@transformable
def fsum_pullback(dy, iterable):
    grads = []
    for _ in range(len(iterable)):
        grads = grads + [dy]
    return (as_argument(grads, iterable),)


@transformable
def prod_pullback(dy, iterable, start=1):
    # The product of the others, exact where an item is 0: prefix * suffix.
    n = len(iterable)
    prefix = [start]
    for k in range(n):
        prefix = prefix + [prefix[k] * iterable[k]]
    suffix = [1]
    for k in range(n):
        suffix = [suffix[0] * iterable[n - 1 - k]] + suffix
    grads = []
    for k in range(n):
        grads = grads + [dy * prefix[k] * suffix[k + 1]]
    return (as_argument(grads, iterable),)


@transformable
def modf_pullback(dy, x):
    d_frac = dy[0]
    return (ZERO if d_frac is ZERO or d_frac is NO_TANGENT else d_frac + 0.0 * x,)


@transformable
def frexp_pullback(dy, x):
    d_mantissa = dy[0]
    if d_mantissa is ZERO or d_mantissa is NO_TANGENT:
        return (ZERO,)
    return (d_mantissa * math.ldexp(1.0, -math.frexp(x)[1]),)


# -- ndarray methods and casts ---------------------------------------------------------
@transformable
def item_pullback(dy, x, index=None):
    if index is None:  # a size-1 array
        return (np.reshape(dy + np.zeros(np.shape(x)), np.shape(x)),)
    if isinstance(index, tuple):
        return scatter(dy, x, index), NO_TANGENT
    flat = scatter(dy, np.ravel(x), index)
    return np.reshape(flat, np.shape(x)), NO_TANGENT


@transformable
def real_if_close_pullback(dy, a, tol=100):
    return unbroadcast(densify(dy), a), NO_TANGENT


def register_methods(reg):
    set_pullbacks(
        reg,
        [
            (np.ndarray.item, item_pullback),
            (np.generic.item, item_pullback),
            # np.real_if_close's (real_if_close_pullback) is given by numpy_casts
        ],
    )


def register_pullbacks(reg):
    set_pullbacks(
        reg,
        [
            (math.hypot, hypot_pullback),
            (math.dist, dist_pullback),
            (math.fsum, fsum_pullback),
            (math.prod, prod_pullback),
            (math.modf, modf_pullback),
            (math.frexp, frexp_pullback),
            (getattr(math, "sumprod", None), sumprod_pullback),
        ],
    )
