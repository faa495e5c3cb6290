"""The parameters of what pullback transforms for a callable, where a decorator's
``__wrapped__`` and a bound call's arguments make them differ from what
``inspect.signature`` shows.

``inspect.signature`` follows ``__wrapped__`` all the way; pullback transforms a wrapper
itself unless it only forwards (source.transform_target), and a callable object given a
``__wrapped__`` by ``functools.update_wrapper`` runs its class's ``__call__``. And the
arguments a bound method or a partial binds first may land in the transformed function's
``*args``: an element of ``*args`` named by ``wrt`` counts them.
"""

from __future__ import annotations

import functools
import inspect
import types

from .guards import is_library_module_name
from .signatures import signature_of


def code_signature(fn):
    """``inspect.signature`` of what pullback transforms for ``fn``: a decorator's wrapper
    that is transformed itself (see :func:`pullback.source.transform_target`) has its own
    parameters (often ``*args, **kwargs``), not those ``functools.wraps`` shows."""
    from .source import transform_target

    if type(fn) is types.FunctionType and "__wrapped__" not in fn.__dict__:
        return signature_of(fn)  # inspect.signature(fn), cached exactly (signatures.py)
    inner = _pullback_wrapped_function(fn)
    if inner is not None:
        # grad(f) of a decorated f: differentiated again, it takes the parameters of what
        # pullback transforms for f (a wrapper's *args, **kwargs), not those f shows
        return code_signature(inner)
    return inspect.signature(fn, follow_wrapped=_follows_wrapped(fn, transform_target))


def _pullback_wrapped_function(fn):
    """The Python function a pullback object (``grad(f)``) wraps, where that function is
    itself a decorator's wrapper (it has a ``__wrapped__``); None otherwise."""
    if (type(fn).__module__ or "").split(".", 1)[0] != "pullback":
        return None
    inner = getattr(fn, "__wrapped__", None)
    if type(inner) is types.FunctionType and "__wrapped__" in inner.__dict__:
        return inner
    return None


def _follows_wrapped(fn, transform_target) -> bool:
    """Whether pullback transforms what ``fn.__wrapped__`` names rather than ``fn``'s own
    code: a bound method or partial asks of its function; a callable object given a
    ``__wrapped__`` (``functools.update_wrapper(self, fn)`` in a class-based decorator)
    runs its class's ``__call__``, transformed with its own parameters."""
    for _ in range(16):
        if isinstance(fn, types.MethodType):
            fn = fn.__func__
        elif isinstance(fn, functools.partial):
            fn = fn.func
        else:
            break
    if getattr(fn, "__wrapped__", None) is None:
        return True
    if isinstance(fn, types.FunctionType):
        return transform_target(fn) is not fn
    module = type(fn).__module__ or ""
    if module.split(".", 1)[0] == "pullback" or is_library_module_name(module):
        return True  # grad(f) and library wrappers (lru_cache) show what they wrap
    return not isinstance(inspect.getattr_static(type(fn), "__call__", None), types.FunctionType)


def vararg_offset(fn) -> int:
    """How many of the arguments bound before the caller's (a bound method's object, a
    partial's arguments) land in the ``*args`` of the function pullback transforms: an
    element of ``*args`` is named as that function sees it (``args[1]`` for the caller's
    first argument of ``obj.method`` when the method is a ``def w(*args)`` wrapper), so
    that the adjoint differentiates the caller's argument, not ``obj``."""
    from .source import transform_target

    bound = 0
    for _ in range(16):
        if isinstance(fn, types.MethodType):
            bound, fn = bound + 1, fn.__func__
        elif isinstance(fn, functools.partial):
            bound, fn = bound + len(fn.args), fn.func
        elif type(fn).__module__.split(".", 1)[0] == "pullback" and hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__  # grad(f) differentiated again: f's arguments
        else:
            break
    fn = transform_target(fn)
    if not bound or not isinstance(fn, types.FunctionType):
        return 0
    params = inspect.signature(fn, follow_wrapped=False).parameters.values()
    if not any(p.kind is p.VAR_POSITIONAL for p in params):
        return 0
    named = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    return max(0, bound - named)
