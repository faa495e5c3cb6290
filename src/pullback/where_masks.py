"""The masks that keep ``np.where``'s unselected branch from putting NaN into a gradient.

``np.sum(np.where(x > 0, x * np.log(x), 0.0))`` computes 0 where ``x <= 0``, so its
derivative there is 0. ``np.where``'s pullback sends an exactly zero cotangent into the
branch at those positions, but the branch's own pullbacks multiply that zero by
``log(x)`` (NaN for ``x < 0``) and by ``1 / x`` (infinite at 0): ``0 * inf`` is NaN, and
the gradient with it. The transform (``transform/where_branches.py``) finds the
statements that only feed one branch of a ``np.where`` through elementwise operations; in
such a subgraph the cotangent of every value of the ``where``'s shape is zero at the
unselected positions, so what it sends to another value is exactly zero there, and
:func:`masked` writes that zero (before any sum over broadcast axes).

Both functions are checked at run time and fall back to today's cotangent (nothing
masked) where the shapes do not allow an exact mask: the gradient never changes where it
was finite.

>>> m = branch_mask(np.array([False, True]), np.zeros(2), np.zeros(2), False)
>>> masked(np.array([np.nan, 3.0]), m)
array([0., 3.])
>>> branch_mask(np.array([False, True]), np.zeros(2), 1.0, False) is None  # broadcast
True
>>> branch_mask(-1.0 > 0, 0.0, 0.0, False), masked(np.float32(np.inf), False)
(False, np.float32(0.0))
"""

from __future__ import annotations

import numpy as np

from .diagonal_stack import DiagonalStack, StructuredStack
from .tangents import batch_axes
from .zero import ZERO

__all__ = ["branch_mask", "inner_mask", "kept", "masked", "select_mask", "selection_mask"]

_ndarray = np.ndarray


def branch_mask(condition, result, branch, negate: bool):
    """Where the value ``branch`` was selected, as a boolean array of the shape of
    ``result`` (the value of ``np.where(condition, a, b)``, ``branch`` being ``a``, or
    ``b`` with ``negate``) -- a Python bool for a scalar ``result`` -- or ``None`` when
    masking would not be exact: a branch broadcast by the ``where`` (its cotangent sums
    over positions).

    Every value of the branch's elementwise subgraph has a shape that broadcasts to the
    branch's; one with the branch's shape keeps a zero cotangent where it was not selected,
    and :func:`masked` masks only contributions of that shape (a scalar or a row inside
    the branch gets the masked sum)."""
    if not (_numpy_value(result) and _numpy_value(branch) and _numpy_value(condition)):
        return None  # a Dask or other array: left as it is (np.asarray would compute it)
    shape = np.shape(result)
    if np.shape(branch) != shape:
        return None
    c = np.asarray(condition)
    if c.dtype != np.bool_:
        c = c.astype(np.bool_)  # np.where selects where the condition is nonzero
    if shape == ():
        if c.shape != ():
            return None
        return bool(c) is not negate
    if c.shape != shape:
        try:
            c = np.broadcast_to(c, shape)
        except ValueError:
            return None
    return ~c if negate else c


def inner_mask(mask, *members):
    """The mask of the contributions a branch's subgraph sends to its own members: none
    (``None``) when every member has the mask's shape -- a member's cotangent is then
    masked where it leaves the subgraph, and NaN inside it never sums over positions --
    else the mask itself (a scalar or a row inside the branch sums its cotangent)."""
    if mask is None or type(mask) is bool:
        return mask
    shape = mask.shape
    for v in members:
        if np.shape(v) != shape:
            return mask
    return None


def select_mask(condlist, k: int, result, branch):
    """Where ``np.select(condlist, choicelist, default)`` took choice ``k`` (its first
    condition that holds; ``k == len(condlist)``: the default), as :func:`branch_mask`
    gives it for ``np.where``, or ``None`` when masking would not be exact."""
    if not (_numpy_value(result) and _numpy_value(branch)):
        return None
    shape = np.shape(result)
    if np.shape(branch) != shape:
        return None
    taken = np.zeros(shape, np.bool_)
    try:
        for j in range(min(k + 1, len(condlist))):
            c = condlist[j]
            if not _numpy_value(c):
                return None
            pick = np.broadcast_to(np.asarray(c, np.bool_), shape) & ~taken
            if j == k:
                taken = pick
                break
            taken = taken | pick
        else:
            taken = ~taken  # the default: no condition held
    except ValueError:  # a condition that does not broadcast to the result
        return None
    return bool(taken) if shape == () else taken


def selection_mask(condition, negate, wheres, maskeds, selects=()):
    """The mask of several branches one selection picks in a block: the ``(result,
    branch)`` of ``np.where(condition, ...)``'s (or the ``(conditions, k, result,
    branch)`` of ``np.select``'s choice ``k``), and, in a generated gradient that is
    differentiated again, the ``(ct, mask)`` of its ``masked(ct, mask)`` (whose masks
    were made from that selection). ``None`` unless every one of them masks exactly, over
    the same positions."""
    mask, shape = None, None
    for result, branch in wheres:
        m = branch_mask(condition, result, branch, negate)
        if m is None or (shape is not None and np.shape(result) != shape):
            return None
        mask, shape = m, np.shape(result)
    for conditions, k, result, branch in selects:
        m = select_mask(conditions, k, result, branch)
        if m is None or (shape is not None and np.shape(result) != shape):
            return None
        mask, shape = m, np.shape(result)
    for ct, m in maskeds:
        if m is None:
            return None
        if type(m) is bool:
            here = ()
        elif type(m) is _ndarray and m.dtype == np.bool_:
            here = m.shape
        else:
            return None
        if np.shape(ct) != here or (shape is not None and here != shape):
            return None
        if mask is None:
            mask, shape = m, here
    return mask


def _numpy_value(v) -> bool:
    return isinstance(v, (_ndarray, np.generic, float, int, bool, complex))


def masked(ct, mask):
    """The cotangent ``ct`` (one contribution of the branch's subgraph to a value outside
    it, before any sum over broadcast axes) with exact zeros where the branch was not
    selected. ``ct`` has the mask's shape, or is a stack of such cotangents (the leading
    batch axes of a Jacobian); any other cotangent is returned as it is."""
    if mask is None or ct is ZERO or mask is True:
        return ct
    cls = type(ct)
    if mask is False:  # a scalar where that chose the other branch
        if cls is _ndarray:
            return np.zeros_like(ct) if ct.shape == batch_axes.axes else ct
        if isinstance(ct, StructuredStack):
            return masked(ct.dense(), mask)
        return cls(0) if isinstance(ct, (float, complex, np.number)) else ct
    shape = mask.shape
    if cls is _ndarray:
        if ct.shape != batch_axes.axes + shape:
            return ct
        return np.where(mask, ct, ct.dtype.type(0))
    if cls is DiagonalStack:
        if ct.diagonal.shape != shape:
            return ct
        d = ct.diagonal
        return DiagonalStack(np.where(mask, d, d.dtype.type(0)))
    if isinstance(ct, StructuredStack):
        return masked(ct.dense(), mask)
    return ct


def kept(value, mask):
    """``value`` itself: a member of a branch's subgraph in a loop, rebound after its
    ``np.where`` in a differentiable-again gradient (``transform/reverse_where.py``), so
    that the loop's tape saves it. Its rule masks the cotangent coming back from the
    tape, exactly: the reverse loop reads the saved value
    only in contributions masked by the same selection, so its derivative is zero where
    the branch was not selected; and a derivative of the gradient meets ``kept(v, mask)``
    as a root of that selection, which makes ``v``'s statements in the forward loop
    members there too (no ``0 * inf`` from ``log(0)`` in a Hessian)."""
    return value
