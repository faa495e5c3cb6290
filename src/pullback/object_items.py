"""A loop, an unpacking or ``list(v)`` over a value that may be a user's object, as Python
runs it: through the class's own ``__iter__``.

The transform (``transform/dunder_operators.py``) writes ``_seq = as_sequence(v)`` (a
loop's sequence), ``_items = unpack_items(v, 2)`` (``a, b = v``), ``t = list(v)`` and
``t = tuple(v)``, where ``v`` may hold an object of a user's class (one a call made, a
parameter, a field or an item of those) and a gradient flows through the items, as the
pseudo methods ``v.__pb_iter__()``, ``v.__pb_iter__(2, False)``, ``v.__pb_list__()`` and
``v.__pb_tuple__()`` (the list made a tuple), which the operators' run-time dispatch
(:mod:`pullback.operator_dispatch`) hands here. An object whose class defines
``__iter__`` in Python gives the list its *items version* returns
(``transform/iter_items.py``, reached through ``ENTRY_POINTS.items_version``): a
function of the object differentiated as any method is, so the items' cotangents reach
the object's fields, to second order and in forward mode. Any other value is what it was:
``as_sequence`` (a sequence as it is, anything else read once into a list) or ``list``.
"""

from __future__ import annotations

import inspect
import types

from .errors import UnsupportedCallError
from .guards import is_library_module_name
from .registry import ENTRY_POINTS
from .runtime import as_sequence, checked_count, sequence_cotangent, sequence_tangent
from .tangents import NO_TANGENT, ZERO, has_array_protocol

ITER = "__pb_iter__"  # args: () for a loop's sequence, (count, at_least) to unpack
LIST = "__pb_list__"
TUPLE = "__pb_tuple__"  # tuple(v): the items version's list, made a tuple
NAMES = (ITER, LIST, TUPLE)
_MAKERS = {LIST: list, TUPLE: tuple}


def items(a):
    """A loop's items as a list (the plain form that a derivative of the reverse
    differentiates)."""
    return [c for c in a]


def listed(a):
    return list(a)


def tupled(a):
    return tuple(a)


def is_items_name(name) -> bool:
    return name in NAMES


def expression(name: str, receiver: str, args) -> str:
    """The plain Python of the pseudo method, for generated code."""
    if name in _MAKERS:
        return f"{_MAKERS[name].__name__}({receiver})"
    if args:
        return f"_pb_unpack_items({receiver}, {args[0]}, {args[1]})"
    return f"as_sequence({receiver})"


def _own_iter(obj):
    """The items version of ``obj``'s ``__iter__`` when it is a user's Python method; None
    for values pullback iterates itself (numbers, arrays, containers, a library's)."""
    t = type(obj)
    if isinstance(obj, type) or is_library_module_name(getattr(t, "__module__", None) or ""):
        return None
    method = inspect.getattr_static(t, "__iter__", None)
    if not isinstance(method, types.FunctionType) or has_array_protocol(t):
        return None
    fn = ENTRY_POINTS.items_version(t)
    if fn is None:
        raise UnsupportedCallError(
            f"a loop or an unpacking goes over an object of class {t.__name__}, whose "
            f"__iter__ pullback cannot read as the list of its items (it returns an "
            "iterator object of its own), and a gradient flows through those items.\n"
            f"Fix: write {t.__name__}.__iter__ as a generator (`yield self.x` for each "
            "item) or as `return iter((self.x, self.y))`, or read the items by index."
        )
    return fn


def _made(items, name):
    """The items version's list as ``tuple(v)`` gives it (a tuple): the items of a loop,
    an unpacking or ``list(v)`` as they are (a zero tangent as well)."""
    return tuple(items) if name == TUPLE and isinstance(items, list) else items


def _counted(y, args):
    if args:
        checked_count(y, *args)
    return y


def items_call(site, obj, name, args):
    """``(y, pullback)``; the pullback gives the cotangents of ``obj`` then ``args``."""
    fn = _own_iter(obj)
    rest = (NO_TANGENT,) * len(args)
    if fn is not None:
        y, inner = site.adjoint_of(fn, None).__call__(obj)
        return _made(_counted(y, args), name), lambda dy: (tuple(inner(dy))[0], *rest)
    if name in _MAKERS:
        y, inner = site.registry.lookup(_MAKERS[name]).rrule(obj)
        return y, lambda dy: (tuple(inner(dy))[0], *rest)
    y = _counted(as_sequence(obj), args)
    return y, lambda dy: (sequence_cotangent(dy, obj), *rest)


def items_function(obj, name):
    """The Python function whose vjp gives ``obj`` its cotangent where the reverse is
    differentiated again: the items version, or the plain form of the pseudo method."""
    return _own_iter(obj) or {LIST: listed, TUPLE: tupled}.get(name, items)


def items_vjp(site, function_vjp, g, obj, name, args):
    """The cotangents of ``obj`` then ``args`` by a vjp function (differentiated again)."""
    fn = items_function(obj, name)
    return (tuple(function_vjp(site, g, fn, obj))[0], *(NO_TANGENT,) * len(args))


def items_vjp_rrule(function_rrule, site, g, obj, name, *args):
    """The rule of :func:`items_vjp`, laid out as ``method_vjp``'s (site, g, obj, the
    name, each argument)."""
    fn = items_function(obj, name)
    y, inner = function_rrule(site, g, fn, obj)
    rest = (NO_TANGENT,) * len(args)

    def items_vjp_pullback(dy):
        if dy is not ZERO and dy is not NO_TANGENT:
            dy = (tuple(dy)[0],)
        c = tuple(inner(dy))  # site, g, the function, obj
        return (c[0], c[1], c[3], NO_TANGENT, *rest)

    return (tuple(y)[0], *rest), items_vjp_pullback


def items_tangent(site, function_tangent, obj, dobj, name, args):
    """``(y, dy)`` in forward mode."""
    fn = _own_iter(obj)
    if fn is not None:
        y, dy = function_tangent(site, fn, (obj,), (dobj,), {})
        return _made(_counted(y, args), name), _made(dy, name)
    if name in _MAKERS:
        return function_tangent(site, _MAKERS[name], (obj,), (dobj,), {})
    return _counted(as_sequence(obj), args), sequence_tangent(dobj, obj)
