"""Objects called like functions in a star-call (``obj(x, s=v)``, keywords present).

A star-call ``fn(*args, **kwargs)`` differentiates its arguments; the callee itself gets
no cotangent. An object of a user's class whose ``__call__`` is a Python function may hold
differentiated values (a closure record of :mod:`pullback.closure_cells`, a callable
model), whose cotangent is its receiver's: such a call is the star method call of
``__call__`` (star_runtime.py), whose cotangents these helpers lay out as the star-call's.

>>> class Scale:
...     def __call__(self, t):
...         return 2.0 * t
>>> Scale.__module__ = "model"  # a user's module (a doctest's is pullback's)
>>> called_object(Scale()), called_object(abs), called_object(lambda t: t)
(True, False, False)
>>> object_method_as_call(("obj", "name", ("x",), {"s": 1.0}))
('obj', ('x',), {'s': 1.0})
"""

from __future__ import annotations

import types

from .guards import is_library_module_name
from .zero import NO_TANGENT, ZERO, is_zero


def called_object(fn) -> bool:
    """Whether ``fn`` is an object of a user's class whose ``__call__`` is a Python
    function: the object may hold differentiated values (a closure record,
    closure_cells.py), whose cotangent the call gives as its receiver's. Its star-call is
    the star method call of ``__call__`` (star_runtime.star_method_rrule), which gives it;
    the function path would drop it (a silently wrong gradient)."""
    cls = type(fn)
    return (
        type(cls.__dict__.get("__call__") or _inherited_call(cls)) is types.FunctionType
        and not isinstance(fn, (type, types.FunctionType, types.MethodType))
        and not is_library_module_name(getattr(cls, "__module__", None) or "builtins")
    )


def _inherited_call(cls):
    """The ``__call__`` a class has from its bases (None: none)."""
    for base in cls.__mro__[1:]:
        if "__call__" in base.__dict__:
            return base.__dict__["__call__"]
    return None


def call_as_object_method(dy):
    """A star-call's cotangents ``(fn's, args', *dicts)`` of an object called
    (:func:`called_object`) as those of the star method call of its ``__call__``:
    ``(obj's, NO_TANGENT (the name), args', *dicts)``. Linear; its transpose is
    :func:`object_method_as_call`."""
    if is_zero(dy):
        return ZERO
    dy = tuple(dy)
    return (dy[0], NO_TANGENT, *dy[1:])


def object_method_as_call(c):
    """A star method call's cotangents ``(obj's, name's, args', *dicts)`` as those of the
    star-call of the object itself ``(fn's, args', *dicts)``: the name's place dropped.
    The transpose of :func:`call_as_object_method`."""
    if is_zero(c):
        return ZERO
    c = tuple(c)
    return (c[0], *c[2:])
