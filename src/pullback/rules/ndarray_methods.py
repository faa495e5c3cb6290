"""Array methods that are not a NumPy function of the same name (``x.copy()`` and most
others reach ``np.<name>``'s rule at run time)."""

from __future__ import annotations

import numpy as np

from ._util import ZERO, Registrar, densify

FAMILY = "ndarray_methods"


def _item_rrule(x, *args):
    y = x.item(*args)
    shape = np.shape(x)
    if len(args) == 1 and isinstance(args[0], tuple):
        index = args[0]
    elif len(args) == 1:
        index = np.unravel_index(args[0], shape)
    else:
        index = args

    def item_pullback(dy):
        if dy is ZERO:
            return (ZERO,) + (ZERO,) * len(args)
        g = np.zeros(shape, dtype=np.result_type(x) if np.result_type(x).kind in "fc" else float)
        if not args:
            g = g + dy  # a size-1 array
        else:
            g[index] = dy
        return (g,) + (ZERO,) * len(args)

    return y, item_pullback


def _tolist_rrule(x):
    y = x.tolist()
    shape = np.shape(x)
    dtype = np.result_type(x)

    def tolist_pullback(dy):
        if dy is ZERO:
            return (ZERO,)
        return (np.reshape(np.asarray(_zeros_filled(dy, y), dtype=dtype), shape),)

    return y, tolist_pullback


def _zeros_filled(c, like):
    """A nested list cotangent with its symbolic zeros written as zeros shaped like the
    matching part of ``like``."""
    if c is ZERO:
        return np.zeros(np.shape(like))
    if isinstance(c, (list, tuple)):
        return [_zeros_filled(v, w) for v, w in zip(c, like, strict=True)]
    return densify(c)


def register(reg):
    r = Registrar(reg, FAMILY)
    r.rule(np.ndarray.item, _item_rrule)
    r.rule(np.ndarray.tolist, _tolist_rrule)
    # Their pullbacks as transformable functions (second derivatives).
    from .math_pullbacks import register_methods

    register_methods(reg)
