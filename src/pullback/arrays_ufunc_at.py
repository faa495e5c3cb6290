"""``np.multiply.at``, ``np.divide.at``, ``np.maximum.at``, ``np.minimum.at`` on arrays the
function created itself (issue 11), with exact gradients for repeated indices.

``ufunc.at`` is *unbuffered*: an index that repeats applies the ufunc again to the value
the previous application left, in the order NumPy iterates the selection (C order). The
normalizer (:mod:`pullback.transform.inplace_calls`) writes ``np.multiply.at(a, idx, v)``
as ``a = array_ufunc_at_copy(a, "multiply", idx, v)``: NumPy computes the value, and the
pullback replays the writes in *rounds* — round ``r`` holds the ``r``-th occurrence of
each position, so within a round the positions are distinct and the round is one buffered
step ``a[p] = f(a[p], v_r)`` — then sends the cotangent back through the rounds in
reverse, each with the partial derivatives of ``f`` at the values it saw. Ties of
``maximum`` / ``minimum`` split the cotangent in halves, as the rules of ``np.maximum`` /
``np.minimum`` do, step by step in NumPy's order.

The pullback needs the array as it was before the call, so the call always makes a new
array (``a`` is left as it was): one copy of ``a`` per call.

>>> a = np.array([1.0, 2.0, 3.0])
>>> b = array_ufunc_at_copy(a, "multiply", [0, 0, 2], np.array([2.0, 3.0, 0.5]))
>>> b, a
(array([6. , 2. , 1.5]), array([1., 2., 3.]))
>>> at_plan(a, [0, 0, 2], 1.0)[1]
[array([0, 2]), array([1])]
"""

from __future__ import annotations

import math

import numpy as np

from .arrays_inplace import array_set_copy
from .errors import UnsupportedCallError
from .registry import transformable
from .tangents import NO_TANGENT, densify, unbroadcast

# The ufuncs whose .at the normalizer rewrites into array_ufunc_at_copy.
AT_UFUNCS = {
    "multiply": np.multiply,
    "divide": np.divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
}


def _ufunc(name):
    try:
        return AT_UFUNCS[name]
    except KeyError:
        raise UnsupportedCallError(
            f"np.{name}.at: pullback differentiates ufunc.at of {', '.join(sorted(AT_UFUNCS))} "
            "and add/subtract. Fix: compute the new values with the ufunc and write them with "
            "`a[idx] = ...` (buffered) or a loop."
        ) from None


def array_ufunc_at_copy(a, name, index, value):
    """A new array: ``a`` after ``np.<name>.at(a, index, value)`` (``a`` is left as it was)."""
    if not isinstance(a, np.ndarray):
        raise UnsupportedCallError(
            f"np.{name}.at on a {type(a).__name__}: pullback differentiates it only on NumPy "
            "arrays the function created (issue 11). Fix: use a NumPy array."
        )
    out = np.array(a, copy=True)
    _ufunc(name).at(out, index, value)
    return out


def at_plan(a, index, value):
    """``(positions, rounds, shape)``: the flat position in ``a`` of each selected entry
    (C order of the selection ``a[index]``, whose shape is ``shape``), and the rounds —
    for each ``r``, the entry numbers of the ``r``-th occurrence of their position."""
    size = math.prod(np.shape(a))
    selected = np.arange(size).reshape(np.shape(a))[index]
    shape = np.broadcast_shapes(np.shape(selected), np.shape(value))
    if shape != np.shape(selected):
        raise ValueError(
            f"ufunc.at: values of shape {np.shape(value)} do not broadcast to the selection's "
            f"shape {np.shape(selected)}"
        )
    positions = np.ravel(selected)
    order = np.argsort(positions, kind="stable")
    ranked = positions[order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]]) if ranked.size else ranked
    first = np.repeat(starts, np.diff(np.r_[starts, ranked.size])) if ranked.size else ranked
    occurrence = np.empty(ranked.size, dtype=np.intp)
    occurrence[order] = np.arange(ranked.size) - first
    count = int(occurrence.max()) + 1 if occurrence.size else 0
    rounds = [np.flatnonzero(occurrence == r) for r in range(count)]
    return positions, rounds, shape


@transformable
def array_ufunc_at_pullback(dy, a, name, index, value):
    positions, rounds, shape = at_plan(a, index, value)
    flat = np.ravel(a)
    v = np.ravel(np.broadcast_to(value, shape))
    # Replay the rounds forward for the value each step saw (a new array each round).
    # (The steps are written out here, not in helper functions, so that pullback can
    # differentiate this function for second derivatives.)
    befores = []
    for sel in rounds:
        p = positions[sel]
        before = flat[p]
        befores.append(before)
        w = v[sel]
        if name == "multiply":
            after = before * w
        elif name == "divide":
            after = before / w
        elif name == "maximum":
            after = np.maximum(before, w)
        else:
            after = np.minimum(before, w)
        flat = array_set_copy(flat, p, after)
    g = np.ravel(densify(dy))
    dv = np.zeros(np.size(v), dtype=g.dtype)
    for r in range(len(rounds) - 1, -1, -1):
        sel = rounds[r]
        p = positions[sel]
        before = befores[r]
        w = v[sel]
        gp = g[p]
        if name == "multiply":
            da_part = gp * w
            dv_part = gp * before
        elif name == "divide":
            da_part = gp / w
            dv_part = -gp * before / (w * w)
        else:
            # the winner takes the cotangent, a tie splits it (np.maximum's rule)
            wins = before > w if name == "maximum" else before < w
            weight = np.where(wins, 1.0, np.where(before == w, 0.5, 0.0))
            da_part = gp * weight
            dv_part = gp * (1.0 - weight)
        dv = array_set_copy(dv, sel, dv_part)
        g = array_set_copy(g, p, da_part)
    dvalue = np.reshape(dv, shape)
    if np.shape(value) != shape:
        dvalue = unbroadcast(dvalue, value)
    return np.reshape(g, np.shape(a)), NO_TANGENT, NO_TANGENT, dvalue
