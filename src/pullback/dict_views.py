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

from .registry import transformable
from .tangents import NO_TANGENT, ZERO, is_zero

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
        return (view_cotangent_dict(dy, keys, name),)

    return y, dict_view_pullback


def view_cotangent_dict(g, d, name: str):
    """The dict's cotangent from the cotangent ``g`` of its view's list (linear in ``g``):
    each key of ``d`` (a dict, or its keys) gets its value's cotangent; ZERO for none."""
    if name == "keys" or is_zero(g) or g is NO_TANGENT:
        return ZERO
    cot = {}
    for k, c in zip(d, g, strict=True):
        c = c[1] if name == "items" and not is_zero(c) and c is not NO_TANGENT else c
        if not is_zero(c) and c is not NO_TANGENT:
            cot[k] = c
    return cot if cot else ZERO


def dict_cotangent_view(dd, d, name: str):
    """The transpose of :func:`view_cotangent_dict`: the view list's cotangent from the
    dict's cotangent ``dd``, in ``d``'s order (a pair ``(ZERO, value)`` per item)."""
    if name == "keys" or is_zero(dd) or dd is NO_TANGENT:
        return ZERO
    values = [dd.get(k, ZERO) for k in d]
    return [(ZERO, v) for v in values] if name == "items" else values


@transformable
def view_cotangent_dict_pullback(dy, g, d, name):
    return dict_cotangent_view(dy, d, name), NO_TANGENT, NO_TANGENT


@transformable
def dict_cotangent_view_pullback(dy, dd, d, name):
    return view_cotangent_dict(dy, d, name), NO_TANGENT, NO_TANGENT


# The vjp functions of d.values(), d.items() and d.keys() that a gradient differentiated
# again calls (dynamic_vjps.vjp_function): written in the differentiable subset, the
# receiver's cotangent first as a rule's pullback function gives it.
@transformable
def dict_values_vjp(g, d):
    return (view_cotangent_dict(g, d, "values"),)


@transformable
def dict_items_vjp(g, d):
    return (view_cotangent_dict(g, d, "items"),)


@transformable
def dict_keys_vjp(g, d):
    return (view_cotangent_dict(g, d, "keys"),)


DICT_VIEW_VJPS = {"values": dict_values_vjp, "items": dict_items_vjp, "keys": dict_keys_vjp}
for _vjp in DICT_VIEW_VJPS.values():
    _vjp.__pullback_receiver_cotangent__ = True


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
