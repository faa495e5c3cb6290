"""``inspect.signature`` of the functions the generated code calls back into, cached.

Building a third derivative asks for the signatures of the same user functions and vjp
functions tens of thousands of times (``dynamic_vjps.vjp_function`` binds each call found
at run time; ``adjoints.VJPRef`` derives its signature from its function's), and
``inspect.signature`` rebuilds the Signature every time.

The cache can never change an answer: an entry is kept weakly on the function object
and reused only while everything ``inspect.signature`` reads from a Python function is
the same object as when it was computed (``__code__``, ``__defaults__``,
``__kwdefaults__``, ``__annotations__`` and the items of those two dicts); a function
carrying its own ``__signature__`` or ``__wrapped__`` (``inspect.signature`` follows
them elsewhere) is never cached, nor is anything that is not a plain Python function (a
bound method, a partial, a callable object: they go to ``inspect.signature`` each time).
An object with a ``__pullback_signature__()`` method (``VJPRef``) derives its own, from this cache.

The cache in use is :data:`CACHE` through :func:`signature_of`; tests swap it with
:func:`use_signature_cache`.
"""

from __future__ import annotations

import _thread
import contextlib
import inspect
import types
import weakref


def _fingerprint(fn) -> tuple | None:
    """What ``inspect.signature(fn)`` depends on, for a cacheable ``fn``: the objects it
    reads and the items of the two dicts among them (a dict changed in place is the same
    object); None when ``fn`` is not cacheable."""
    if type(fn) is not types.FunctionType:
        return None
    attributes = fn.__dict__
    if "__signature__" in attributes or "__wrapped__" in attributes:
        return None
    kwdefaults = fn.__kwdefaults__
    annotations = fn.__annotations__
    items = tuple(kwdefaults.items()) if kwdefaults else ()
    return (fn.__code__, fn.__defaults__, kwdefaults, annotations), (
        items + (None,) + tuple(annotations.items())
    )


def _same(a: tuple, b: tuple) -> bool:
    """Both fingerprints hold the same objects (identity: an array default compares by
    identity, never elementwise)."""
    if any(x is not y for x, y in zip(a[0], b[0], strict=True)):
        return False
    items_a, items_b = a[1], b[1]
    return len(items_a) == len(items_b) and all(
        x is y or (type(x) is tuple and type(y) is tuple and x[0] is y[0] and x[1] is y[1])
        for x, y in zip(items_a, items_b, strict=True)
    )


class SignatureCache:
    """Signatures of Python functions, each kept while its function lives and reused only
    while its fingerprint holds (see the module docstring)."""

    def __init__(self):
        self._entries = weakref.WeakKeyDictionary()
        self._lock = _thread.allocate_lock()  # threading.Lock, without importing threading
        self.hits = 0
        self.misses = 0

    def signature(self, fn) -> inspect.Signature:
        derive = getattr(type(fn), "__pullback_signature__", None)
        if derive is not None:
            return derive(fn)
        fingerprint = _fingerprint(fn)
        if fingerprint is None:
            return inspect.signature(fn)
        with self._lock:
            entry = self._entries.get(fn)
        if entry is not None and _same(entry[0], fingerprint):
            self.hits += 1
            return entry[1]
        self.misses += 1
        sig = inspect.signature(fn)
        with self._lock:
            self._entries[fn] = (fingerprint, sig)
        return sig

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


CACHE = SignatureCache()


def signature_of(fn) -> inspect.Signature:
    """``inspect.signature(fn)``, through the cache in use."""
    return CACHE.signature(fn)


@contextlib.contextmanager
def use_signature_cache(cache: SignatureCache):
    """Run with ``cache`` as the cache in use (tests: a fresh one, to count its hits)."""
    global CACHE
    previous, CACHE = CACHE, cache
    try:
        yield cache
    finally:
        CACHE = previous
