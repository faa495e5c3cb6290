"""Rules of :mod:`pullback.sparse_values`' primitives, so that the sparse rules' pullback
functions (scipy_sparse*.py), written with them, are differentiated again.

Each is linear in the values it moves and reads the pattern only:

* ``gather(G, rows, cols)`` (entries of a cotangent at places): its adjoint puts a vector
  back at the places (``scatter``), summing repeated places;
* ``with_pattern(S, values, rows, cols)`` (a sparse matrix of values at places): its
  adjoint is ``gather``;
* ``restrict(G, S)`` (a cotangent on ``S``'s pattern) is a projection, its own adjoint;
* ``pattern(S)`` and ``is_sparse(x)`` are integers and flags (no derivative).

>>> import numpy as np, scipy.sparse as sp
>>> from pullback.sparse_values import gather
>>> y, back = _gather_rrule(np.arange(4.0).reshape(2, 2), np.array([0, 1]), np.array([1, 1]))
>>> back(np.array([1.0, 2.0]))[0]
array([[0., 1.],
       [0., 2.]])
"""

from __future__ import annotations

import numpy as np

from .. import sparse_values as sv
from ..tangents import NO_TANGENT, ZERO, densify
from .scipy_sparse_common import fitted


def scatter(like, values, rows, cols):
    """``values`` put at ``(rows, cols)`` (repeated places summed), in a matrix of
    ``like``'s shape: sparse for a sparse ``like``, dense otherwise."""
    values = densify(values)
    if sv.is_sparse(like):
        return sv.sparse_module().csr_array((values, (rows, cols)), shape=like.shape)
    out = np.zeros(np.shape(like), dtype=np.result_type(values, float))
    np.add.at(out, (rows, cols), values)
    return out


def _gather_rrule(G, rows, cols):
    def gather_pullback(dy):
        if dy is ZERO:
            return ZERO, NO_TANGENT, NO_TANGENT
        return scatter(G, dy, rows, cols), NO_TANGENT, NO_TANGENT

    return sv.gather(G, rows, cols), gather_pullback


def _with_pattern_rrule(S, values, rows, cols):
    def with_pattern_pullback(dy):
        if dy is ZERO:
            return NO_TANGENT, ZERO, NO_TANGENT, NO_TANGENT
        return NO_TANGENT, sv.gather(densify(dy), rows, cols), NO_TANGENT, NO_TANGENT

    return sv.with_pattern(S, values, rows, cols), with_pattern_pullback


def _restrict_rrule(G, S):
    def restrict_pullback(dy):
        if dy is ZERO:
            return ZERO, NO_TANGENT
        r = sv.restrict(densify(dy), S)
        return (r if sv.is_sparse(G) or G is ZERO else r.toarray()), NO_TANGENT

    return sv.restrict(G, S), restrict_pullback


def _transposed_rrule(x):
    def transposed_pullback(dy):
        return (ZERO if dy is ZERO else sv.transposed(densify(dy)),)

    return sv.transposed(x), transposed_pullback


def _adjoint_rrule(x):
    def adjoint_pullback(dy):
        if dy is ZERO:
            return (ZERO,)
        return (
            sv.restrict(sv.adjoint(densify(dy)), x) if sv.is_sparse(x) else sv.adjoint(densify(dy)),
        )

    return sv.adjoint(x), adjoint_pullback


def _fitted_rrule(c, a):
    def fitted_pullback(dy):
        if dy is ZERO:
            return ZERO, NO_TANGENT
        d = densify(dy)
        if sv.is_sparse(a):  # a projection: its own adjoint
            return sv.restrict(d, a), NO_TANGENT
        if sv.is_sparse(c):  # (a broadcast view read on c's pattern: never dense)
            return sv.restrict(np.broadcast_to(d, c.shape), c), NO_TANGENT
        return np.broadcast_to(d, np.shape(c)), NO_TANGENT

    return fitted(c, a), fitted_pullback


def _dense_rrule(x):
    def dense_pullback(dy):
        if dy is ZERO:
            return (ZERO,)
        return (sv.restrict(densify(dy), x) if sv.is_sparse(x) else densify(dy),)

    return sv.dense(x), dense_pullback


def register_values(r):
    r.rule(sv.dense, _dense_rrule, name="pullback.sparse_values.dense")
    r.rule(sv.transposed, _transposed_rrule, name="pullback.sparse_values.transposed")
    r.rule(sv.adjoint, _adjoint_rrule, name="pullback.sparse_values.adjoint")
    r.rule(fitted, _fitted_rrule, name="pullback.rules.scipy_sparse_common.fitted")
    r.rule(sv.gather, _gather_rrule, name="pullback.sparse_values.gather")
    r.rule(sv.with_pattern, _with_pattern_rrule, name="pullback.sparse_values.with_pattern")
    r.rule(sv.restrict, _restrict_rrule, name="pullback.sparse_values.restrict")
    r.nondiff(
        sv.pattern,
        sv.is_sparse,
        names=["pullback.sparse_values.pattern", "pullback.sparse_values.is_sparse"],
    )
