"""The scalar arguments of a user's helper called in a ``np.where`` branch.

``np.sum(np.where(x > 0, h(x, c), 0.0))`` with ``h(v, c) = c * np.log(v)``: the helper is
proved elementwise in ``v`` at run time (``rules/_elementwise.elementwise_in_x``), and the
contributions of its call are masked where the branch was not selected
(transform/reverse_where.py). But ``c``'s cotangent is summed over the positions inside
the helper's own reverse sweep, before any mask: ``0 * log(-1)`` there made it NaN,
although the function does not depend on ``h`` at those positions.

Where such a cotangent is not finite, :func:`spread_scalar_cotangents` computes it again
exactly: the helper's vjp with that scalar spread into an array of the branch's shape
(elementwise, the helper computes the same values at each position: NumPy promotes the
array as it promoted the scalar), whose per-position cotangents are masked and summed. A
finite cotangent is left as it was, bit for bit.

>>> import numpy as np
>>> import pullback
>>> def h(v, c):
...     return c * np.log(v)
>>> x = np.array([-1.0, 2.0])
>>> with np.errstate(all="ignore"):
...     cots = spread_scalar_cotangents((np.zeros(2), np.nan), np.array([0.0, 1.0]),
...                                     np.array([False, True]), h, (x, 3.0), (0, 1))
>>> float(cots[1]) == float(np.log(2.0))
True
"""

from __future__ import annotations

import numpy as np

from .registry import ENTRY_POINTS
from .where_masks import masked
from .zero import ZERO

__all__ = ["spread_scalar_cotangents"]


def spread_scalar_cotangents(cotangents, g, mask, fn, args, positions):
    """``cotangents`` (the helper's pullback's, one per active argument at ``positions``
    of ``args``) with each non-finite cotangent of a scalar argument after the first
    recomputed per position and masked by ``mask`` (the branch's, from
    ``where_masks.branch_mask``); ``g`` the cotangent of the helper's result."""
    if mask is None or type(mask) is bool or g is ZERO:
        return cotangents
    cots = tuple(cotangents)
    fix = [
        j
        for j, k in enumerate(positions)
        if k > 0
        and isinstance(cots[j], (float, np.floating))
        and not np.isfinite(cots[j])
        and not np.ndim(args[k])
    ]
    if not fix or np.shape(g) != mask.shape:
        return cots
    spread = list(args)
    for j in fix:
        k = positions[j]
        spread[k] = np.full(mask.shape, args[k], np.result_type(args[0], args[k]))
    wrt = tuple(positions[j] for j in fix)
    with np.errstate(all="ignore"):  # (the primal computed the same values)
        _, back = ENTRY_POINTS.vjp(fn, *spread, wrt=wrt)
        per = tuple(back(g))  # (one cotangent per position of wrt, a tuple)
    out = list(cots)
    for j, p in zip(fix, per, strict=True):
        total = np.sum(masked(np.asarray(p), mask))
        out[j] = type(cots[j])(total)
    return tuple(out)
