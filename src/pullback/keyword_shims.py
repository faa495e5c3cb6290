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

from .dynamic_attrs import method_receiver
from .dynamic_calls import _found_without_receiver
from .guards import is_library_module_name

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
    if type(fn) is not types.FunctionType:
        return False
    if is_library_module_name(getattr(fn, "__module__", None) or "pullback"):
        return False
    if getattr(fn, "gradient_function", None) is not None:
        return False
    return all(k.isidentifier() and not keyword.iskeyword(k) for k in keys)


@functools.lru_cache(maxsize=256)
def _shim(fn, npositional: int, keys: tuple):
    params = [f"a{k}" for k in range(npositional)]
    named = [f"k{k}" for k in range(len(keys))]
    passed = params + [f"{key}={n}" for key, n in zip(keys, named, strict=True)]
    source = f"def star_shim({', '.join(params + named)}):\n    return FN({', '.join(passed)})\n"
    return compiled_with_source(source, "star_shim", {"FN": fn})


def keyword_shim(fn, npositional: int, keys: tuple):
    """The shim calling ``fn`` with ``npositional`` positional arguments, then the keyword
    arguments ``keys``, all taken by position (one per ``fn`` and call shape)."""
    try:
        return _shim(fn, npositional, tuple(keys))
    except TypeError:  # an unhashable callable: a shim per call
        return _shim.__wrapped__(fn, npositional, tuple(keys))


def method_function(site, obj, name: str, keys):
    """``type(obj).name`` when ``obj.name(...)`` runs that Python function of the user's
    with ``obj`` first (a method of the class, no rule, Python passes the receiver) and
    the keywords ``keys`` can go through its shim; else None (a callable held on the
    instance, a static or class method, a record's bound method: their own paths)."""
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
