"""Keyword arguments found at run time, passed by position: the call ``fn(a, **opts)``
of a user's Python function, with ``opts`` known only when it runs, goes through a small
generated function that takes every argument by position and makes the call as written::

    def star_shim(a0, k0, k1):
        return FN(a0, scale=k0, shift=k1)

Pullback reads the shim's source (registered in ``linecache``) and transforms it like a
user's function: its call of ``FN`` with keywords written out is one pullback already
differentiates at every order and in forward mode (a keyword-only parameter, an entry of
``**kwargs``, a parameter after one left at its default). The star-call machinery
(star_runtime.py) then treats each keyword as a positional argument of the shim, so its
cotangent or tangent goes back to the dict it came from like any other.

A shim calls ``FN`` (the function itself, never a copy) with the same arguments, so it
computes what the call computes; its generated code is guarded on ``FN`` like any
global a function reads.

>>> def f(x, *, scale=1.0):
...     return x * scale
>>> shim = keyword_shim(f, 1, ("scale",))
>>> shim(2.0, 3.0)
6.0
"""

from __future__ import annotations

import functools
import inspect
import itertools
import keyword
import linecache
import types

from .callables import call_method_of
from .dynamic_attrs import held_method, method_receiver
from .dynamic_calls import _found_without_receiver, record_field_object
from .guards import is_library_module_name
from .records_named import is_named_tuple, record_replace

_SHIMS = itertools.count()


def compiled_with_source(source: str, name: str, scope: dict):
    """The function ``name`` that ``source`` (our own small template) defines, compiled in
    ``scope`` under a file name of its own whose text is registered in ``linecache``, so
    that pullback reads its source and transforms it like user code."""
    called = getattr(scope.get("FN"), "__name__", "a callable")
    filename = f"<pullback {name}: call of {called} {next(_SHIMS)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), scope)  # noqa: S102 - our own template
    return scope[name]


def can_shim(fn, keys) -> bool:
    """Whether ``fn(..., **{k: v for k in keys})`` may go through a shim: ``fn`` a user's
    Python function (not the standard library's, NumPy's, SciPy's or pullback's own,
    which are only used through rules; the caller has found it has no rule) and each key
    a name a call can write."""
    if not _user_function(_called_function(fn)):
        return False
    return all(k.isidentifier() and not keyword.iskeyword(k) for k in keys)


def _called_function(fn):
    """The Python function a call of ``fn`` runs: ``fn`` itself, the function of a
    ``functools.partial`` (its bound arguments first), or the ``__call__`` of a callable
    object of the user's class (``model(x, scale=p)``); a shim's call ``FN(..., k=v)``
    of those is one the transformation follows like a call written in user code."""
    if isinstance(fn, functools.partial):
        return fn.func
    if _plain_bound_method(fn):  # MODEL.apply handed to a helper: apply, MODEL first
        return fn.__func__
    if isinstance(fn, (types.FunctionType, types.MethodType, type)):
        return fn
    method = call_method_of(fn)
    return method.__func__ if isinstance(method, types.MethodType) else None


def _plain_bound_method(fn) -> bool:
    """A bound method of an object that is no differentiated record (whose methods carry
    the record's cotangent: dynamic_attrs.method_receiver), nor a class (a classmethod):
    a call of it is its function's with the object first, which gets no cotangent (as
    dynamic_calls.call_function gives it none)."""
    return (
        type(fn) is types.MethodType
        and not isinstance(fn.__self__, type)
        and method_receiver(fn, "__call__") is None
    )


def _user_function(fn) -> bool:
    if type(fn) is not types.FunctionType:
        return False
    if is_library_module_name(getattr(fn, "__module__", None) or "pullback"):
        return False
    return getattr(fn, "gradient_function", None) is None


@functools.lru_cache(maxsize=256)
def _shim(fn, npositional: int, keys: tuple):
    params = [f"a{k}" for k in range(npositional)]
    named = [f"k{k}" for k in range(len(keys))]
    scope, head, fixed = _callee_spelled(fn, keys)
    passed = head + params + fixed + [f"{key}={n}" for key, n in zip(keys, named, strict=True)]
    source = f"def star_shim({', '.join(params + named)}):\n    return FN({', '.join(passed)})\n"
    return compiled_with_source(source, "star_shim", scope)


def _callee_spelled(fn, keys):
    """``(globals, arguments first, keywords after)`` of the shim's call of ``fn`` as
    Python runs it: a callable object's ``__call__`` with the object first (``SELF``), a
    ``functools.partial``'s function with its bound arguments first and its keywords
    (a keyword of the call wins, as in ``partial``); the function itself otherwise."""
    if isinstance(fn, functools.partial):
        scope = {"FN": fn.func}
        head = []
        for k, value in enumerate(fn.args):
            scope[f"BOUND{k}"] = value
            head.append(f"BOUND{k}")
        fixed = []
        for k, (key, value) in enumerate(fn.keywords.items()):
            if key not in keys:
                scope[f"KEPT{k}"] = value
                fixed.append(f"{key}=KEPT{k}")
        return scope, head, fixed
    if _plain_bound_method(fn):
        return {"FN": fn.__func__, "SELF": fn.__self__}, ["SELF"], []
    method = call_method_of(fn)
    if isinstance(method, types.MethodType) and method.__self__ is fn:
        return {"FN": method.__func__, "SELF": fn}, ["SELF"], []
    return {"FN": fn}, [], []


def keyword_shim(fn, npositional: int, keys: tuple):
    """The shim calling ``fn`` with ``npositional`` positional arguments, then the keyword
    arguments ``keys``, all taken by position (one per ``fn`` and call shape)."""
    return _one_per_callee(_shim, fn, npositional, tuple(keys))


def _one_per_callee(make, fn, npositional: int, keys: tuple):
    """``make(fn, npositional, keys)``, one per callee and call shape (``make`` is cached
    on its arguments) where ``fn`` is hashed by identity, else a new one."""
    if not isinstance(fn, types.FunctionType) and type(fn).__hash__ is not object.__hash__:
        # an object equal to another one may differ from it: a shim holds the very object
        return make.__wrapped__(fn, npositional, keys)
    try:
        return make(fn, npositional, keys)
    except TypeError:  # an unhashable callable: a shim per call
        return make.__wrapped__(fn, npositional, keys)


def method_function(site, obj, name: str, keys):
    """``type(obj).name`` when ``obj.name(...)`` runs that Python function of the user's
    with ``obj`` first (a method of the class, no rule, Python passes the receiver) and
    the keywords ``keys`` can go through its shim; else None (a callable held on the
    instance, a static or class method, a record's bound method: their own paths)."""
    if name == "_replace" and is_named_tuple(obj) and keys:
        if all(k in type(obj)._fields for k in keys):
            return _replace_shim(tuple(keys))  # p._replace(w=v) (records_named.py)
    if isinstance(obj, (type, types.ModuleType)) or method_receiver(obj, name) is not None:
        return None
    raw = inspect.getattr_static(type(obj), name, None)
    if not isinstance(raw, types.FunctionType):
        return None
    if _found_without_receiver(site, obj, name) is not None:
        return None
    if not can_shim(raw, keys) or site.registry.lookup(raw) is not None:
        return None
    return raw


def held_callable_function(site, obj, name: str, npositional: int, keys):
    """``obj.name(...)`` with ``obj.name`` a callable held on the instance (``self.layer =
    Dense(...)``, ``self.act = swish``, a ``functools.partial``) called with keywords
    ``keys`` no position of it takes: a shim taking ``obj`` first, then the positional
    arguments, then one parameter per keyword, that makes the call as Python does (no
    receiver passed)::

        def held_call_shim(_pb_receiver, _pb_a0, alpha):
            return FN(_pb_a0, alpha=alpha)

    The star method call is then the star-call of that shim with ``(obj, *args)``, at every
    order (star_runtime.as_function_call); ``obj`` gets no cotangent from it, as from the
    same call without keywords (dynamic_calls._call_without_receiver). None where the
    callable is found otherwise (a method of the class, a record's field or bound method,
    whose cotangent the object's field receives: their own paths) or is no user code."""
    if isinstance(obj, (type, types.ModuleType)) or not isinstance(name, str):
        return None
    own = getattr(obj, "__dict__", None)
    if not isinstance(own, dict) or name not in own:
        return None
    callee = own[name]
    if held_method(obj, name, callee) or record_field_object(obj, name, callee) is not None:
        return None
    if not can_shim(callee, keys) or site.registry.lookup(callee) is not None:
        return None
    if any(
        k.startswith("_pb_") or k in ("FN", "SELF") or k.startswith(("BOUND", "KEPT")) for k in keys
    ):
        return None  # a keyword spelled like the shim's own names
    return _one_per_callee(_held_shim, callee, npositional, tuple(keys))


@functools.lru_cache(maxsize=256)
def _held_shim(fn, npositional: int, keys: tuple):
    params = [f"_pb_a{k}" for k in range(npositional)]
    scope, head, fixed = _callee_spelled(fn, keys)
    passed = head + params + fixed + [f"{key}={key}" for key in keys]
    signature = ", ".join(["_pb_receiver", *params, *keys])
    source = f"def held_call_shim({signature}):\n    return FN({', '.join(passed)})\n"
    return compiled_with_source(source, "held_call_shim", scope)


@functools.lru_cache(maxsize=64)
def _replace_shim(keys: tuple):
    """``def shim(_record, w, b): return record_replace(_record, ("w", "b"), w, b)``:
    a named tuple's ``_replace`` (library code, made anew for each class) as a function of
    the keywords by name, which the star-call passes by position; its call is the rule's
    (records_named.record_replace), at every order and in forward mode. (A field's name
    never starts with an underscore.)"""
    names = ", ".join(keys)
    source = (
        f"def record_replace_shim(_record, {names}):\n    return FN(_record, {keys!r}, {names})\n"
    )
    return compiled_with_source(source, "record_replace_shim", {"FN": record_replace})
