"""What the scipy.sparse rule modules share: fitting a rule's cotangents to its arguments
(a sparse argument's on its pattern), the rule made of a pullback function, and giving a
rule its transformable pullback function.

>>> import numpy as np
>>> carries([np.ones(2), 3])
True
"""

from __future__ import annotations

from ..sparse_values import is_sparse, restrict
from ..tangents import NO_TANGENT, ZERO, densify, unbroadcast
from ._util import differentiable


def fitted(c, a):
    """The cotangent ``c`` fitted to the argument ``a``: on a sparse ``a``'s pattern, else
    summed to a dense one's shape in its dtype."""
    if c is ZERO:
        return ZERO
    if is_sparse(a):
        return restrict(c, a)
    return unbroadcast(densify(c), a)


def fit(c, a):
    """The cotangent ``c`` for the argument ``a`` of a rule: ``NO_TANGENT`` where ``a``
    carries none, item by item for a list or tuple (of diagonals, of blocks, of a
    ``(data, (rows, cols))`` form); the pullback functions fit their own cotangents."""
    if c is ZERO or c is NO_TANGENT:
        return c
    if type(a) in (list, tuple):
        if not carries(a):
            return NO_TANGENT
        return type(a)(fit(ci, ai) for ci, ai in zip(c, a, strict=True))
    return c if carries(a) else NO_TANGENT


def carries(a) -> bool:
    """Whether the argument ``a`` may carry a cotangent (a float array, a sparse matrix, a
    list or tuple holding one)."""
    if type(a) in (list, tuple):
        return any(carries(v) for v in a)
    return is_sparse(a) or differentiable(a)


def sparse_rule(fn, pullback_fn):
    """A rule for ``fn`` whose pullback is ``pullback_fn(dy, *args, **kwargs)`` (which
    fits each cotangent to its argument)."""

    def sparse_rrule(*args, **kwargs):
        y = fn(*args, **kwargs)

        def sparse_pullback(dy):
            if dy is ZERO:
                return tuple(ZERO if carries(a) else NO_TANGENT for a in args)
            cots = pullback_fn(dy, *args, **kwargs)
            return tuple(fit(c, a) for c, a in zip(cots, args, strict=False))

        return y, sparse_pullback

    return sparse_rrule


def with_function(reg, fn, pullback_fn, keep_closure=False):
    """Give ``fn``'s rule its transformable pullback function (differentiated again);
    ``keep_closure``: the first derivative keeps the closure (which reuses what the
    forward computed: a factorization)."""
    if getattr(pullback_fn, "__pullback_transformable__", False):
        reg.set_pullback_function(fn, pullback_fn)
        reg.lookup(fn).extra["sweeps_keep_closure"] = keep_closure
