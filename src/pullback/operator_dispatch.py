"""Operators on values whose kind the transform could not prove (``a + b``, ``-a``,
``abs(a)`` with ``a`` of unknown kind), dispatched as Python dispatches them when they run.

The transform (``transform/dunder_operators.py``) writes such an operator as a call of a
*pseudo method* (``a.__pb_add__(b)``) found at run time, so that the machinery of methods
found at run time carries it: :func:`pullback.dynamic_calls.call_method` (the forward
call and its pullback), ``method_vjp`` (the reverse where the gradient is differentiated
again) and ``rule_tangents.method_tangent`` (forward mode) each hand a pseudo name to this
module first. Here it becomes what Python runs:

* the user's own Python method (``Vec.__add__``, or ``Vec.__radd__`` when the left operand
  is a number whose operator returns ``NotImplemented`` for the object, or first when the
  right operand's class is a subclass that overrides it), differentiated as any method
  found at run time is; a method returning ``NotImplemented`` falls back as Python does;
* for numbers, arrays, lists and tuples the ``operator`` module's rule (the ordinary
  arithmetic, concatenation or repetition).

Whatever else would run (a C method of a class that is not a library's computing with a
user's object, NumPy's elementwise object arrays) is refused by name.
"""

from __future__ import annotations

import inspect
import operator
import types

import numpy as np

from .backends import is_foreign_array
from .errors import UnsupportedCallError
from .guards import is_library_module_name
from .object_items import expression as items_expression
from .object_items import is_items_name, items_call, items_tangent, items_vjp, items_vjp_rrule
from .operator_functions import BY_NAME
from .registry import transformable
from .tangents import NO_TANGENT, ZERO, has_array_protocol, is_zero

# pseudo name -> (the method Python tries first, its reflected form or None, operator
# function, the operator as written)
OPERATORS = {
    "__pb_add__": ("__add__", "__radd__", operator.add, "+"),
    "__pb_sub__": ("__sub__", "__rsub__", operator.sub, "-"),
    "__pb_mul__": ("__mul__", "__rmul__", operator.mul, "*"),
    "__pb_truediv__": ("__truediv__", "__rtruediv__", operator.truediv, "/"),
    "__pb_floordiv__": ("__floordiv__", "__rfloordiv__", operator.floordiv, "//"),
    "__pb_mod__": ("__mod__", "__rmod__", operator.mod, "%"),
    "__pb_pow__": ("__pow__", "__rpow__", operator.pow, "**"),
    "__pb_matmul__": ("__matmul__", "__rmatmul__", operator.matmul, "@"),
    "__pb_neg__": ("__neg__", None, operator.neg, "-"),
    "__pb_pos__": ("__pos__", None, operator.pos, "+"),
    "__pb_abs__": ("__abs__", None, operator.abs, "abs"),
    "__pb_getitem__": ("__getitem__", None, operator.getitem, "[]"),
}
# `d[lo:hi:step]`: the pseudo method takes the bounds (names or constants), and runs as
# `d.__getitem__(slice(lo, hi, step))`; its bounds get no cotangent
SLICE = "__pb_getslice__"

# ``a op= b`` (the check proved it a rebinding): pseudo name -> (the in-place method, the
# binary operator's pseudo name, the operator module's function, which does the same)
INPLACE = {
    "__pb_i" + name[5:]: ("__i" + OPERATORS[name][0][2:], name, getattr(operator, "i" + name[5:-2]))
    for name in list(OPERATORS)[:8]
}
# the operator's pseudo name for the plain operator: an in-place one's binary form
_PLAIN = {**{name: name for name in OPERATORS}, **{k: v[1] for k, v in INPLACE.items()}}
_PLAIN[SLICE] = "__pb_getitem__"
# `d[i, j]`: the pseudo method takes the key's items (names or constants) and runs as
# `d.__getitem__((i, j))`; each item gets its part of the key's cotangent (a float key,
# `f[x, y]` of an interpolant, carries a gradient)
KEYS = "__pb_getkeys__"
_PLAIN[KEYS] = "__pb_getitem__"
_PLAIN_SENTINEL = (None, None, None, False)


def is_slice_name(name) -> bool:
    """Whether ``name`` is the pseudo method of ``d[lo:hi:step]``."""
    return name == SLICE


def is_keys_name(name) -> bool:
    """Whether ``name`` is the pseudo method of ``d[i, j]``."""
    return name == KEYS


def slice_of(bounds):
    """``slice(lo, hi, step)`` of a slice's bounds (an index: no derivative)."""
    return slice(*bounds)


def plain_function(name):
    """The operator as a Python function (:mod:`pullback.operator_functions`)."""
    return BY_NAME[_PLAIN[name]]


def is_operator_name(name) -> bool:
    """Whether ``name`` is one of the pseudo methods the transform writes for operators (or
    for the items of a value that may be a user's object: :mod:`pullback.object_items`)."""
    return name in _PLAIN or is_items_name(name)


def expression(name: str, receiver: str, args) -> str:
    """The operator as Python writes it, for the generated code's plain form:
    ``expression("__pb_add__", "a", ["b"]) == "a + b"``."""
    if is_items_name(name):
        return items_expression(name, receiver, args)
    symbol = OPERATORS[_PLAIN[name]][3]
    if symbol == "abs":
        return f"abs({receiver})"
    if name == SLICE:
        return f"{receiver}[{args[0]}:{args[1]}:{args[2]}]"
    if name == KEYS:
        return f"{receiver}[{', '.join(args)},]"
    if symbol == "[]":
        return f"{receiver}[{args[0]}]"
    if not args:
        return f"{symbol}{receiver}"
    return f"{receiver} {symbol} {args[0]}"


def own_method(obj, name) -> bool:
    """Whether Python runs a user's Python function for ``obj``'s method ``name`` (the
    class is not a library's, nor an array, and defines ``name`` as a Python function)."""
    return not isinstance(obj, type) and own_class_method(type(obj), name)


def own_class_method(t, name) -> bool:
    """:func:`own_method` for the objects of the class ``t`` (the transform's test where
    the class is known before running: transform/property_reads.py)."""
    if issubclass(t, (type, np.ndarray, np.generic)):
        return False
    if is_library_module_name(getattr(t, "__module__", None) or "builtins"):
        return False
    if has_array_protocol(t):
        return False  # an array of another library (array_api_strict, Dask): its rules
    return isinstance(inspect.getattr_static(t, name, None), types.FunctionType)



def attempts(obj, name, args):
    """``[(receiver, method, other operands, swapped)]``: the methods Python tries for the
    operator, in its order; ``None`` when none of them is a user's Python method (the
    operator's ordinary rule then computes it)."""
    if name in INPLACE:  # `a += b`: a's own __iadd__ first, then as `a + b`
        method, binary, _ = INPLACE[name]
        rest = attempts(obj, binary, args)
        if own_method(obj, method):
            return [(obj, method, tuple(args), False)] + (rest or [_PLAIN_SENTINEL])
        return rest
    first, reflected, _, _ = OPERATORS[name]
    if reflected is None:
        return [(obj, first, tuple(args), False)] if own_method(obj, first) else None
    (other,) = args
    ta, tb = type(obj), type(other)
    order = []
    right = tb is not ta and hasattr(tb, reflected)
    if right and issubclass(tb, ta) and getattr(tb, reflected) is not getattr(ta, reflected, None):
        order.append((other, reflected, (obj,), True))  # a subclass's override goes first
        right = False
    if hasattr(ta, first) and not (right and isinstance(obj, np.generic)):
        order.append((obj, first, (other,), False))
    if right:  # (a NumPy scalar on the left defers, as a Python number: item())
        left = obj.item() if isinstance(obj, np.generic) else obj
        order.append((other, reflected, (left,), True))
    if not any(own_method(r, m) for r, m, _, _ in order):
        return None
    return order


def _refused(obj, name, receiver, method):
    symbol = OPERATORS[_PLAIN[name]][3]
    cls = type(receiver).__name__
    raise UnsupportedCallError(
        f"the operator {symbol!r} with an object of a class that defines it in Python runs "
        f"{cls}.{method}, a method that is not Python code pullback can differentiate "
        f"(its value would reach {type(obj).__name__}'s own operator without a derivative).\n"
        "Fix: call the object's method by name (`b.__radd__(a)`), or compute with its fields."
    )


def _native(obj, name, receiver, method, others):
    """A C method tried before or after a user's method: a number's gives NotImplemented
    for a user's object (Python then tries the reflected method); anything it computes is
    refused (pullback cannot follow it into the object)."""
    if isinstance(receiver, np.ndarray):  # NumPy would apply the object's method elementwise
        _refused(obj, name, receiver, method)
    y = getattr(type(receiver), method)(receiver, *others)
    if y is not NotImplemented:
        _refused(obj, name, receiver, method)
    return y


def _no_operator(obj, name, args):
    symbol = OPERATORS[_PLAIN[name]][3]
    names = [type(v).__name__ for v in (obj, *args)]
    if len(names) == 1:
        raise TypeError(f"bad operand type for {symbol}: '{names[0]}'")
    raise TypeError(f"unsupported operand type(s) for {symbol}: '{names[0]}' and '{names[1]}'")


@transformable
def key_cotangents(c, n: int):
    """The cotangents of a tuple key's ``n`` items from the key's cotangent ``c``."""
    if c is ZERO or c is NO_TANGENT:
        return (ZERO,) * n
    return tuple(c)


def _keys_spread(c, n):
    """The cotangents ``(d, key)`` of ``d[key]`` as those of ``d`` and the key's items."""
    receiver, key = tuple(c)
    return (receiver, *key_cotangents(key, n))


def _swap(cotangents, swapped):
    """The cotangents of ``(receiver, other)`` in the operator's order ``(a, b)``."""
    if not swapped:
        return cotangents
    receiver, *rest = cotangents
    return (*rest, receiver)


# Values whose operators are never a user's method: numbers, arrays, lists and tuples.
_VALUE_TYPES = frozenset(
    {float, int, complex, bool, np.ndarray, np.float64, np.float32, np.int64, list, tuple}
)


def _plain_call(site, obj, name, args):
    """The operator's rule, for numbers, arrays, lists and tuples."""
    name = _PLAIN[name]
    if any(is_zero(v) or is_foreign_array(v) for v in (obj, *args)):  # a symbolic zero (a
        # gradient's own arithmetic, differentiated again) or a Dask or array-API array:
        # the operator's inline code, as generated code runs it
        return site.adjoint_of(BY_NAME[name], None).__call__(obj, *args)
    return site.registry.lookup(OPERATORS[name][2]).rrule(obj, *args)


def operator_call(site, call_method, obj, name, args):
    """``(y, pullback)`` of the operator ``name`` on ``obj`` and ``args``; the pullback
    gives the cotangents of ``obj`` then ``args``. ``call_method`` is
    :func:`pullback.dynamic_calls.call_method` (passed in: it imports this module)."""
    if is_items_name(name):
        return items_call(site, obj, name, args)
    if name == KEYS:
        y, pullback = operator_call(site, call_method, obj, "__pb_getitem__", (tuple(args),))
        return y, lambda dy: _keys_spread(pullback(dy), len(args))
    if name == SLICE:
        y, pullback = operator_call(site, call_method, obj, "__pb_getitem__", (slice(*args),))
        return y, lambda dy: (pullback(dy)[0], NO_TANGENT, NO_TANGENT, NO_TANGENT)
    if type(obj) in _VALUE_TYPES and (not args or type(args[0]) in _VALUE_TYPES):
        return _plain_call(site, obj, name, args)  # (the common case, without a lookup)
    order = attempts(obj, name, args)
    for receiver, method, others, swapped in order or [_PLAIN_SENTINEL]:
        if receiver is None:
            return _plain_call(site, obj, name, args)
        if not own_method(receiver, method):
            _native(obj, name, receiver, method, others)
            continue
        y, pullback = call_method(site, receiver, method, *others)
        if y is NotImplemented:
            continue
        if not swapped:
            return y, pullback
        return y, lambda dy: _swap(pullback(dy), True)
    _no_operator(obj, name, args)


def chosen(obj, name, args):
    """``(receiver, method, others, swapped)`` of the user's method that computes the
    operator (found by running the methods as Python does), or None for the operator's
    ordinary rule: what :func:`operator_call` ran, for a reverse or a tangent computed
    apart from it."""
    if type(obj) in _VALUE_TYPES and (not args or type(args[0]) in _VALUE_TYPES):
        return None
    order = attempts(obj, name, args)
    for receiver, method, others, swapped in order or [_PLAIN_SENTINEL]:
        if receiver is None:
            return None
        if not own_method(receiver, method):
            _native(obj, name, receiver, method, others)
            continue
        if getattr(type(receiver), method)(receiver, *others) is not NotImplemented:
            return receiver, method, others, swapped
    _no_operator(obj, name, args)


def chosen_method(obj, name, args):
    """``(method, swapped)`` of :func:`chosen` (the receiver is ``obj``, or the right
    operand when swapped), or None: what a transformable reverse branches on, its values
    taken from its own arguments."""
    found = chosen(obj, name, args)
    return None if found is None else (found[1], found[3])


def operator_vjp(site, method_vjp, function_vjp, g, obj, name, args):
    """``method_vjp`` of the operator: the cotangents of ``obj`` then ``args`` (for
    numbers and arrays the generated vjp of the operator as a Python function,
    :mod:`pullback.operator_functions`, so that it is differentiated again in turn)."""
    if is_items_name(name):
        return items_vjp(site, function_vjp, g, obj, name, args)
    if name == KEYS:
        key = (tuple(args),)
        c = operator_vjp(site, method_vjp, function_vjp, g, obj, "__pb_getitem__", key)
        return _keys_spread(c, len(args))
    if name == SLICE:
        c = operator_vjp(site, method_vjp, function_vjp, g, obj, "__pb_getitem__", (slice(*args),))
        return (c[0], NO_TANGENT, NO_TANGENT, NO_TANGENT)
    found = chosen(obj, name, args)
    if found is None:
        return tuple(function_vjp(site, g, plain_function(name), obj, *args))
    receiver, method, others, swapped = found
    return _swap(tuple(method_vjp(site, g, receiver, method, *others)), swapped)


def operator_vjp_rrule(method_rrule, function_rrule, site, g, obj, name, *args):
    """The rule of ``method_vjp`` for an operator (a derivative differentiated again):
    that of the method :func:`chosen` finds, or of ``function_vjp`` of the operator as a
    Python function, its cotangents laid out as ``method_vjp``'s own (site, g, obj, the
    name, each argument)."""
    if is_items_name(name):
        return items_vjp_rrule(function_rrule, site, g, obj, name, *args)
    if name == KEYS:
        n = len(args)
        y, inner = operator_vjp_rrule(
            method_rrule, function_rrule, site, g, obj, "__pb_getitem__", tuple(args)
        )

        def keys_pullback(dy):
            if not is_zero(dy):
                dy = tuple(dy)
                dy = (dy[0], dy[1:])
            c = tuple(inner(dy))  # site, g, obj, the name, the key
            return (*c[:3], NO_TANGENT, *key_cotangents(c[4], n))

        return _keys_spread(y, n), keys_pullback
    if name == SLICE:
        y, inner = operator_vjp_rrule(
            method_rrule, function_rrule, site, g, obj, "__pb_getitem__", slice(*args)
        )

        def slice_pullback(dy):
            if not is_zero(dy):
                dy = (dy[0], NO_TANGENT)
            c = tuple(inner(dy))  # site, g, obj, the name, the slice
            return (*c[:3], NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT)

        return (tuple(y)[0], NO_TANGENT, NO_TANGENT, NO_TANGENT), slice_pullback
    found = chosen(obj, name, args)
    if found is None:
        y, inner = function_rrule(site, g, plain_function(name), obj, *args)

        def plain_operator_pullback(dy):
            c = tuple(inner(dy))  # site, g, the function, each operand
            return (c[0], c[1], c[3], NO_TANGENT, *c[4:])

        return y, plain_operator_pullback
    receiver, method, others, swapped = found
    y, inner = method_rrule(site, g, receiver, method, *others)
    if not swapped:
        return y, inner  # (the method's name gets NO_TANGENT there too)

    def reflected_operator_pullback(dy):
        if not is_zero(dy):
            dy = _swap(tuple(dy), True)
        c = tuple(inner(dy))  # site, g, the right operand, its name, the left operand
        return (c[0], c[1], c[4], NO_TANGENT, c[2])

    return _swap(tuple(y), True), reflected_operator_pullback


def operator_tangent(site, method_tangent, function_tangent, obj, dobj, name, args, tangents):
    """``(y, dy)`` of the operator in forward mode (``rule_tangents.method_tangent``)."""
    if is_items_name(name):
        return items_tangent(site, function_tangent, obj, dobj, name, args)
    if name == SLICE:
        name, args, tangents = "__pb_getitem__", (slice(*args),), (NO_TANGENT,)
    if name == KEYS:
        key_tangent = ZERO if all(is_zero(t) for t in tangents) else tuple(tangents)
        name, args, tangents = "__pb_getitem__", (tuple(args),), (key_tangent,)
    found = chosen(obj, name, args)
    if found is None:
        fn = OPERATORS[_PLAIN[name]][2]
        if any(is_zero(v) for v in (obj, *args)):  # a gradient's own symbolic zero
            fn = plain_function(name)
        return function_tangent(site, fn, (obj, *args), (dobj, *tangents), {})
    receiver, method, others, swapped = found
    if swapped:
        return method_tangent(site, receiver, tangents[0], method, (obj,), (dobj,), {})
    return method_tangent(site, receiver, dobj, method, others, tuple(tangents), {})
