"""Calls of callables that are attributes but not methods of the receiver's class:
``type(obj).method(obj, x)`` (an attribute of a class, called with ``self`` explicit) and
``self.act_fn(z)`` (a callable stored on the instance), and ``functools.partial``
objects called inside a differentiated function.

The callable is looked up as Python looks it up when the call runs (``getattr``) and
called like any run-time callee (:func:`pullback.runtime.call_function`); the receiver
gets no cotangent through the lookup (the class or the instance only hold the callable).
"""

from __future__ import annotations

import functools

from .runtime import call_function, function_tangent
from .tangents import NO_TANGENT


def _lookup(obj, name):
    try:
        return getattr(obj, name)
    except AttributeError:
        raise AttributeError(f"{type(obj).__name__!r} object has no attribute {name!r}") from None


def call_attribute(site, obj, name, args, kwargs):
    """``(y, pullback)`` of ``obj.name(*args, **kwargs)``; the pullback covers ``obj``
    first, as :func:`pullback.runtime.call_method`'s does."""
    fn = _lookup(obj, name)
    y, pullback = call_function(site, fn, *args, **kwargs)

    def attribute_call_pullback(dy):
        return (NO_TANGENT, *pullback(dy))

    return y, attribute_call_pullback


def attribute_tangent(site, obj, name, args, tangents, kwargs):
    """Forward mode: ``(y, dy)`` of ``obj.name(*args, **kwargs)``."""
    return function_tangent(site, _lookup(obj, name), args, tangents, kwargs)


def partial_rrule(site, fn, args, kwargs):
    """``(y, pullback)`` of calling the ``functools.partial`` ``fn``: its function with
    the bound arguments first; the pullback gives the cotangents of the call's own
    positional arguments."""
    n = len(fn.args)
    y, pullback = call_function(site, fn.func, *fn.args, *args, **{**fn.keywords, **kwargs})

    def partial_call_pullback(dy):
        return tuple(pullback(dy))[n:]

    return y, partial_call_pullback


def is_partial(fn) -> bool:
    return isinstance(fn, functools.partial)
