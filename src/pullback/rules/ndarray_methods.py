"""Array methods that are not a NumPy function of the same name (``x.copy()`` and most
others reach ``np.<name>``'s rule at run time)."""

from __future__ import annotations

import numpy as np

from ..registry import transformable
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

    def tolist_pullback(dy):
        if dy is ZERO:
            return (ZERO,)
        return tolist_cotangent(dy, x)

    return y, tolist_pullback


@transformable
def nested_cotangent(c, like):
    """The cotangent of an array from that of its ``tolist()`` (nested lists, ``ZERO``
    where a part is unused), ``like`` the list of its shape."""
    if c is ZERO:
        return np.zeros(np.shape(like))
    if isinstance(c, (list, tuple)) and len(c) > 0:
        parts = ()
        for k in range(len(c)):
            parts = parts + (nested_cotangent(c[k], like[k]),)
        return np.stack(parts)
    return np.reshape(densify(c), np.shape(like))


@transformable
def tolist_cotangent(dy, x):
    g = nested_cotangent(dy, np.zeros(np.shape(x)).tolist())
    return (np.asarray(g, dtype=np.result_type(x)),)


def register(reg):
    r = Registrar(reg, FAMILY)
    r.rule(np.ndarray.item, _item_rrule)
    r.rule(np.generic.item, _item_rrule)  # x[0].item(), s.sum().item(): a NumPy scalar
    r.rule(np.ndarray.tolist, _tolist_rrule)
    reg.set_pullback_function(np.ndarray.tolist, tolist_cotangent)
    # Their pullbacks as transformable functions (second derivatives).
    from .math_pullbacks import register_methods

    register_methods(reg)
