"""``np.ediff1d`` and ``np.unwrap`` (registered by numpy_misc.py in its family). Each
pullback is a transformable function (the rule's closure calls it too), so second
derivatives run through it.

* ``ediff1d`` is linear: the differences of the flattened array, with ``to_begin`` and
  ``to_end`` (flattened) before and after them.
* ``unwrap`` adds to ``p`` integer multiples ``k`` of ``period`` that change only where a
  jump crosses ``discont``: the gradient with respect to ``p`` passes through (as
  ``np.round``'s is 0 almost everywhere), and ``d/d period = k``. ``discont`` has none.
"""

from __future__ import annotations

import numpy as np

from ..registry import transformable
from ..tangents import NO_TANGENT, densify, unbroadcast
from .transformable import rule_from_pullback


@transformable
def ediff1d_pullback(dy, ary, to_end=None, to_begin=None):
    g = densify(dy)
    n_begin = 0 if to_begin is None else int(np.size(to_begin))
    n_end = 0 if to_end is None else int(np.size(to_end))
    n_diff = np.shape(g)[0] - n_begin - n_end
    diffs = g[n_begin : n_begin + n_diff]
    zero = np.zeros(1, np.result_type(g))
    if np.size(ary) == 0:
        d_ary = np.zeros(np.shape(ary), np.result_type(g))
    else:
        # the adjoint of a[1:] - a[:-1]: -diff of the cotangent padded with a zero each end
        d_ary = np.reshape(-np.diff(np.concatenate([zero, diffs, zero])), np.shape(ary))
    d_end = NO_TANGENT
    if to_end is not None:
        d_end = np.reshape(g[n_begin + n_diff :], np.shape(to_end))
    d_begin = NO_TANGENT
    if to_begin is not None:
        d_begin = np.reshape(g[:n_begin], np.shape(to_begin))
    return d_ary, d_end, d_begin


@transformable
def unwrap_pullback(dy, p, discont=None, axis=-1, period=2 * np.pi):
    # (period by position here: its cotangent is at its place, see runtime.parameter_places)
    g = densify(dy)
    # y - p = k period, k integers: dy/dp = 1 and dy/d period = k
    k = np.round((np.unwrap(p, discont, axis, period=period) - p) / period)
    return unbroadcast(g, p), NO_TANGENT, NO_TANGENT, unbroadcast(np.sum(g * k), period)


def register(r, reg):
    """Register the rules with the Registrar ``r`` of numpy_misc's family."""
    ends = ("to_end", "to_begin")
    r.rule(np.ediff1d, rule_from_pullback(np.ediff1d, ediff1d_pullback, ends)).extra[
        "keyword_cotangents"
    ] = ends
    r.rule(
        np.unwrap,
        rule_from_pullback(np.unwrap, unwrap_pullback, ("period",)),
        notes="passes the gradient of p through",
    ).extra["keyword_cotangents"] = ("period",)
    reg.set_pullback_function(np.ediff1d, ediff1d_pullback)
    reg.set_pullback_function(np.unwrap, unwrap_pullback)
