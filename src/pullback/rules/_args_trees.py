"""Trees in a SciPy solver's ``args``: dicts, tuples, lists and named tuples, nested, whose
leaves are real floats or float arrays (the parameters) or anything else (constants).

A solver's rule works with the flat vector of its parameters (an adjoint or implicit
solve): an ``args`` entry that is a tree gives its float leaves to that vector in order
(a dict's values in its own order), and the cotangent of the vector comes back as a tree
of the same form (``NO_TANGENT`` at the constants), as pullback gives the cotangent of a
dict or tuple argument. :func:`tree_vector` and :func:`tree_from_vector` are linear maps
and each other's transposes: their rules make the transformable pullbacks of the solvers
(second derivatives, forward mode) go through a tree as through a flat tuple of floats.
"""

from __future__ import annotations

import numpy as np

from ..registry import transformable
from ..tangents import densify, is_differentiable_value
from ._util import NO_TANGENT, ZERO, finalize_like

__all__ = [
    "is_float_tree",
    "real_tree",
    "tree_size",
    "tree_upcast",
    "tree_vector",
    "tree_from_vector",
    "register_tree_rules",
]

_NODES = (tuple, list, dict)


def _is_leaf(v) -> bool:
    """A float parameter: a real float or float array (complex values are refused)."""
    return is_differentiable_value(v) and not np.iscomplexobj(v)


def _children(x):
    return list(x.values()) if isinstance(x, dict) else list(x)


def _leaves(x, out):
    if isinstance(x, _NODES):
        for v in _children(x):
            _leaves(v, out)
    elif _is_leaf(x):
        out.append(x)
    return out


def is_float_tree(x) -> bool:
    """Whether ``x`` is a dict, tuple or list (of any nesting) holding a float."""
    return isinstance(x, _NODES) and bool(_leaves(x, []))


def real_tree(x) -> bool:
    """Whether every differentiable value in the tree ``x`` is real (complex parameters in
    a tree are not taken apart)."""
    if isinstance(x, _NODES):
        return all(real_tree(v) for v in _children(x))
    return not (is_differentiable_value(x) and np.iscomplexobj(x))


def tree_size(x) -> int:
    """The number of floats in the tree ``x``."""
    return sum(int(np.size(v)) for v in _leaves(x, []))


def _rebuild(x, values):
    """A container like ``x`` holding ``values`` (a named tuple by its fields)."""
    if isinstance(x, dict):
        return dict(zip(x.keys(), values, strict=True))
    if hasattr(x, "_fields"):
        return type(x)(*values)
    return type(x)(values)


def tree_upcast(x):
    """The tree ``x`` with its float32 leaves in float64 (the user's function runs on
    float64 parameters, as for a flat ``args``)."""
    if isinstance(x, _NODES):
        return _rebuild(x, [tree_upcast(v) for v in _children(x)])
    if isinstance(x, np.ndarray) and x.dtype == np.float32:
        return x.astype(np.float64)
    return np.float64(x) if isinstance(x, np.float32) else x


def _absent(c) -> bool:
    return c is ZERO or c is NO_TANGENT or c is None


def _flatten(c, x, out):
    if isinstance(x, _NODES):
        if _absent(c):
            parts = [None] * len(x)
        else:
            parts = [c.get(k) for k in x] if isinstance(x, dict) else list(c)
        for ck, xk in zip(parts, _children(x), strict=True):
            _flatten(ck, xk, out)
    elif _is_leaf(x):
        n = int(np.size(x))
        out.append(np.zeros(n) if _absent(c) else np.ravel(np.asarray(c, dtype=np.float64)))
    return out


def tree_vector(c, x):
    """The cotangent ``c`` of the tree ``x`` (a tree like it, ``ZERO``/``NO_TANGENT``/
    ``None`` for parts with none) as the float64 vector of its leaves' cotangents."""
    parts = _flatten(c, x, [])
    return np.concatenate(parts) if parts else np.zeros(0)


def _unflatten(d, x, start):
    if isinstance(x, _NODES):
        values = []
        for v in _children(x):
            value, start = _unflatten(d, v, start)
            values.append(value)
        return _rebuild(x, values), start
    if not _is_leaf(x):
        return NO_TANGENT, start
    n = int(np.size(x))
    piece = d[start : start + n]
    if type(x) is float:  # what finalize_like gives a Python float
        return np.float64(piece[0]), start + n
    return finalize_like(np.reshape(piece, np.shape(x)), x), start + n


def tree_from_vector(d, x):
    """The cotangent of the tree ``x`` from the vector ``d`` of its leaves' cotangents: a
    tree like ``x``, each leaf's part in its shape and dtype, ``NO_TANGENT`` at the
    constants."""
    d = np.asarray(d)
    out, _ = _unflatten(d, x, 0)
    return out


def _tree_vector_rrule(c, x):
    def tree_vector_pullback(dy):
        if dy is ZERO:
            return ZERO, NO_TANGENT
        return tree_from_vector(np.asarray(dy, dtype=np.float64), x), NO_TANGENT

    return tree_vector(c, x), tree_vector_pullback


def _tree_from_vector_rrule(d, x):
    def tree_from_vector_pullback(dy):
        if dy is ZERO:
            return ZERO, NO_TANGENT
        return tree_vector(dy, x), NO_TANGENT

    return tree_from_vector(d, x), tree_from_vector_pullback


@transformable
def tree_vector_pullback(dy, c, x):
    return tree_from_vector(densify(dy), x), NO_TANGENT


@transformable
def tree_from_vector_pullback(dy, d, x):
    return tree_vector(dy, x), NO_TANGENT


def register_tree_rules(reg, family):
    """The two linear maps (each one's pullback is the other) and the tree predicates."""
    reg.register(tree_vector, _tree_vector_rrule, family=family, trusted=True)
    reg.set_pullback_function(tree_vector, tree_vector_pullback)
    reg.register(tree_from_vector, _tree_from_vector_rrule, family=family, trusted=True)
    reg.set_pullback_function(tree_from_vector, tree_from_vector_pullback)
    reg.non_differentiable(is_float_tree, real_tree, tree_size, family=family, trusted=True)
