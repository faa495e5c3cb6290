"""``d.values()``, ``d.items()`` and ``d.keys()`` of a dict of differentiated values (a
parameter dict iterated over), as calls found at run time make them: the list the view
iterates, in the dict's order, and its reverse and forward mode.

>>> y, pullback = dict_view_rrule({"w": 1.0, "b": 2.0}, "items")
>>> y
[('w', 1.0), ('b', 2.0)]
>>> pullback([(None, 3.0), (None, 4.0)])
({'w': 3.0, 'b': 4.0},)
"""

from __future__ import annotations

from .tangents import ZERO, is_zero

_DICT_VIEWS = ("values", "items", "keys")


def dict_view_rrule(d: dict, name: str):
    """``d.values()``, ``d.items()``, ``d.keys()`` of a dict of differentiated values (a
    parameter dict iterated over): the list the view iterates, in the dict's order; the
    pullback gives each key the cotangent of its value."""
    keys = list(d)
    if name == "values":
        y = [d[k] for k in keys]
    elif name == "items":
        y = [(k, d[k]) for k in keys]
    else:
        y = keys

    def dict_view_pullback(dy):
        if name == "keys" or is_zero(dy):
            return (ZERO,)
        cot = {}
        for k, c in zip(keys, dy, strict=True):
            c = c[1] if name == "items" and not is_zero(c) else c
            if not is_zero(c):
                cot[k] = c
        return (cot if cot else ZERO,)

    return y, dict_view_pullback


def is_dict_view_call(obj, name, args, kwargs) -> bool:
    """``d.values()``, ``d.items()`` or ``d.keys()`` on a dict."""
    return isinstance(obj, dict) and name in _DICT_VIEWS and not args and not kwargs


def dict_view_tangent(d: dict, dd, name: str):
    """Forward mode of :func:`dict_view_rrule`: ``(y, dy)``, each value's tangent taken
    from the dict's (``dd``, a dict or ZERO)."""
    y, _ = dict_view_rrule(d, name)
    if name == "keys" or is_zero(dd) or dd is None:
        return y, ZERO
    tangents = [dd.get(k, ZERO) for k in d]
    if name == "items":
        tangents = [(ZERO, t) for t in tangents]
    return y, tangents
