"""``ufunc.accumulate`` beyond ``add`` and ``multiply`` (which are ``np.cumsum`` and
``np.cumprod``): ``maximum``, ``minimum``, ``logaddexp``, ``subtract`` and ``divide``;
and ``ufunc.reduce`` of ``logaddexp``/``logaddexp2`` (``np.logaddexp.reduce`` is a
log-sum-exp; ``add``/``multiply``/``maximum``/``minimum`` are NumPy's reductions), and
``np.add.reduceat`` (sums of segments, linear). The
normalizer writes ``np.maximum.accumulate(a, axis)`` as a call of
:func:`pullback.ufunc_methods.maximum_accumulate` (and so on), whose rules are here. Each
pullback is a transformable function (the rule's closure calls it too), so second
derivatives run through it.

Ties of a running maximum or minimum follow the ``np.maximum`` rule, step by step: the
accumulation is ``y[i] = maximum(y[i - 1], a[i])``, and where ``a[i]`` equals ``y[i - 1]``
each side gets half of the cotangent (exactly what differentiating that loop gives).
"""

from __future__ import annotations

import numpy as np

from .. import ufunc_methods as um
from ..registry import transformable
from ..tangents import densify, unbroadcast
from ._util import NO_TANGENT, Registrar
from .family_domains import DOMAINS
from .transformable import rule_from_pullback

FAMILY = "numpy_accumulate"
# Registered on the first lookup of one of its functions (family_domains.py).
DOMAIN = DOMAINS["numpy_accumulate"]


@transformable
def _reverse_cumsum(g):
    """``out[i] = sum(g[i:])`` along the first axis."""
    return np.flip(np.cumsum(np.flip(g, 0), 0), 0)


@transformable
def _first_steps(a, y):
    """The values before each step: ``a[0]`` (a step against itself), then ``y[:-1]``."""
    return np.concatenate([a[:1], y[:-1]], 0)


def _owners(takes):
    """For each position along the first axis, the next position after it that ``takes``
    (its own value), or the length: where a run of the running extreme ends."""
    n = np.shape(takes)[0]
    index = np.reshape(np.arange(n), (n,) + (1,) * (np.ndim(takes) - 1))
    starts = np.where(takes, index, n)
    after = np.concatenate([starts[1:], np.full((1,) + np.shape(takes)[1:], n)], 0)
    return np.flip(np.minimum.accumulate(np.flip(after, 0), 0), 0)


# Integer bookkeeping: transformed code (a second derivative) calls it as it is.
_owners.__pullback_opaque__ = True


@transformable
def extreme_cotangent(g, share):
    """The cotangent of ``a`` in ``y[i] = op(y[i - 1], a[i])`` (op a maximum or a minimum)
    along the first axis, where ``share[i]`` is the part of step ``i``'s cotangent that
    goes to ``a[i]`` (1 where it wins, 0.5 on a tie, 0 where it loses; 1 at ``i = 0``)."""
    if np.all(share != 0.5):
        # no ties: each position's running extreme is the last position that won
        takes = share == 1.0
        total = np.concatenate([_reverse_cumsum(g), np.zeros((1,) + np.shape(g)[1:])], 0)
        nxt = _owners(takes)
        ends = np.take_along_axis(total, nxt, 0)
        return np.where(takes, total[:-1] - ends, 0.0)
    # ties: step by step, as the loop y = maximum(y, a[i]) differentiates
    n = np.shape(g)[0]
    carry = 0.0 * g[0]
    parts = ()
    for k in range(n):
        i = n - 1 - k
        total = g[i] + carry
        parts = (total * share[i],) + parts
        carry = total * (1.0 - share[i])
    return np.stack(parts, 0)


@transformable
def _extreme_pullback(dy, array, axis, larger):
    a = np.moveaxis(array, axis, 0)
    if larger:
        y = np.maximum.accumulate(a, 0)
    else:
        y = np.minimum.accumulate(a, 0)
    before = _first_steps(a, y)
    wins = a > before if larger else a < before
    share = np.where(wins, 1.0, np.where(a == before, 0.5, 0.0))
    share = np.concatenate([np.ones(np.shape(a[:1])), share[1:]], 0)
    da = extreme_cotangent(np.moveaxis(densify(dy), axis, 0), share)
    return unbroadcast(np.moveaxis(da, 0, axis), array)


@transformable
def maximum_accumulate_pullback(dy, array, axis=0, dtype=None):
    return _extreme_pullback(dy, array, axis, True), NO_TANGENT, NO_TANGENT


@transformable
def minimum_accumulate_pullback(dy, array, axis=0, dtype=None):
    return _extreme_pullback(dy, array, axis, False), NO_TANGENT, NO_TANGENT


@transformable
def logaddexp_accumulate_pullback(dy, array, axis=0, dtype=None):
    # y[i] = log(sum(exp(a[:i + 1]))): da[k] = exp(a[k]) sum_{i >= k} g[i] exp(-y[i]),
    # shifted by the last (largest) y; where the values span more than the exponent's range
    # step by step: c[k] = g[k] + exp(y[k] - y[k + 1]) c[k + 1], da[k] = exp(a[k] - y[k]) c[k]
    a = np.moveaxis(array, axis, 0)
    g = np.moveaxis(densify(dy), axis, 0)
    y = np.logaddexp.accumulate(a, 0)
    n = np.shape(a)[0]
    if n == 0:
        return unbroadcast(0.0 * array, array), NO_TANGENT, NO_TANGENT
    top = y[n - 1 : n]
    if np.all(top - y[:1] < 600.0):
        da = np.exp(a - top) * _reverse_cumsum(g * np.exp(top - y))
    else:
        carry = g[n - 1]
        parts = (np.exp(a[n - 1] - y[n - 1]) * carry,)
        for k in range(1, n):
            i = n - 1 - k
            carry = g[i] + np.exp(y[i] - y[i + 1]) * carry
            parts = (np.exp(a[i] - y[i]) * carry,) + parts
        da = np.stack(parts, 0)
    return unbroadcast(np.moveaxis(da, 0, axis), array), NO_TANGENT, NO_TANGENT


@transformable
def subtract_accumulate_pullback(dy, array, axis=0, dtype=None):
    # y[i] = a[0] - a[1] - ... - a[i]: da[0] = sum(g), da[k] = -sum(g[k:])
    total = _reverse_cumsum(np.moveaxis(densify(dy), axis, 0))
    da = np.concatenate([total[:1], -total[1:]], 0)
    return unbroadcast(np.moveaxis(da, 0, axis), array), NO_TANGENT, NO_TANGENT


@transformable
def divide_accumulate_pullback(dy, array, axis=0, dtype=None):
    # y[i] = a[0] / (a[1] ... a[i]): da[0] = sum(g y) / a[0], da[k] = -sum(g[k:] y[k:]) / a[k]
    a = np.moveaxis(array, axis, 0)
    y = np.divide.accumulate(a, 0)
    total = _reverse_cumsum(np.moveaxis(densify(dy), axis, 0) * np.conj(y))
    da = np.concatenate([total[:1], -total[1:]], 0) / np.conj(a)
    return unbroadcast(np.moveaxis(da, 0, axis), array), NO_TANGENT, NO_TANGENT


@transformable
def _log_sum_exp_pullback(dy, array, axis, dtype, keepdims, initial, where, base2):
    # y = log(sum(exp(a))): da = g exp(a - y), the softmax along the axis (zero where
    # where= leaves an element out; initial= only changes y); in base 2 (logaddexp2),
    # y = log2(sum(2**a)): da = g 2**(a - y)
    if base2:
        y = um.logaddexp2_reduce(array, axis, dtype, True, initial, where)
        share = np.exp2(array - y)
    else:
        y = um.logaddexp_reduce(array, axis, dtype, True, initial, where)
        share = np.exp(array - y)
    g = densify(dy)
    if not keepdims and axis is not None:
        g = np.expand_dims(g, axis)
    da = g * share
    if where is not True:
        da = np.where(where, da, 0.0 * da)
    return unbroadcast(da, array), NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT


@transformable
def logaddexp_reduce_pullback(
    dy, array, axis=0, dtype=None, keepdims=False, initial=None, where=True
):
    return _log_sum_exp_pullback(dy, array, axis, dtype, keepdims, initial, where, False)


@transformable
def logaddexp2_reduce_pullback(
    dy, array, axis=0, dtype=None, keepdims=False, initial=None, where=True
):
    return _log_sum_exp_pullback(dy, array, axis, dtype, keepdims, initial, where, True)


# -- np.add.reduceat ------------------------------------------------------------------------
# The sums of segments are linear in ``a``: ``y = L a`` along the axis, where row ``i`` of
# ``L`` marks segment ``i`` (ufunc_methods.reduceat_segments). The pullback spreads each
# segment's cotangent over its elements (``L^T g``), itself a primitive whose pullback is
# ``add_reduceat`` again, so second derivatives and forward mode run through the two.
# (multiply, maximum and minimum need no rule: their functions are written with
# np.prod/np.max/np.min per segment and differentiated from their source.)


def spread_segments(g, indices, axis, n):
    """``L^T g``: element ``j`` of the result (length ``n`` along ``axis``) is the sum of
    the cotangents of the segments of ``indices`` that hold it; zero outside them."""
    g = np.moveaxis(np.asarray(g), axis, 0)
    starts, ends = um.reduceat_segments(indices, n)
    out = np.zeros((n,) + g.shape[1:], dtype=np.result_type(g, np.float32))
    if all(e == s1 for e, s1 in zip(ends[:-1], starts[1:], strict=True)):
        # increasing indices (the usual call): the segments tile a[starts[0]:], exactly
        lengths = np.subtract(ends, starts)
        out[starts[0] :] = np.repeat(g, lengths, axis=0)
    else:
        for i, (s, e) in enumerate(zip(starts, ends, strict=True)):
            out[s:e] += g[i]
    return np.moveaxis(out, 0, axis)


@transformable
def add_reduceat_pullback(dy, array, indices, axis=0, dtype=None):
    if dtype is not None and not np.issubdtype(np.dtype(dtype), np.inexact):
        return 0.0 * array, NO_TANGENT, NO_TANGENT, NO_TANGENT  # integer sums: constant
    n = np.shape(array)[axis]
    da = spread_segments(densify(dy), indices, axis, n)
    return da, NO_TANGENT, NO_TANGENT, NO_TANGENT


@transformable
def spread_segments_pullback(dy, g, indices, axis, n):
    dg = um.add_reduceat(densify(dy), indices, axis)
    return dg, NO_TANGENT, NO_TANGENT, NO_TANGENT


def register(reg):
    r = Registrar(reg, FAMILY)
    for fn, pullback_fn, notes in (
        (um.add_reduceat, add_reduceat_pullback, "linear: sums of segments"),
        (spread_segments, spread_segments_pullback, "the transpose of add.reduceat"),
        (um.logaddexp_reduce, logaddexp_reduce_pullback, "a log-sum-exp"),
        (um.logaddexp2_reduce, logaddexp2_reduce_pullback, ""),
        (um.maximum_accumulate, maximum_accumulate_pullback, "ties: half each, step by step"),
        (um.minimum_accumulate, minimum_accumulate_pullback, "ties: half each, step by step"),
        (um.logaddexp_accumulate, logaddexp_accumulate_pullback, ""),
        (um.subtract_accumulate, subtract_accumulate_pullback, ""),
        (um.divide_accumulate, divide_accumulate_pullback, ""),
    ):
        r.rule(fn, rule_from_pullback(fn, pullback_fn), notes=notes)
        reg.set_pullback_function(fn, pullback_fn)
