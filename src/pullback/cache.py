"""Where generated code is kept: on the function it was generated for.

>>> def f(x):
...     return x
>>> entries = function_entries(f)
>>> entries.owner is f, function_entries(f) is entries
(True, True)
"""

from __future__ import annotations

import itertools

from .registry import RuleRegistry


class FunctionEntries(dict):
    """Generated code of one function, kept on the function object itself, so it lives
    exactly as long as the function (a cycle the garbage collector frees with it)."""

    __slots__ = ("owner",)

    def __init__(self, owner):
        super().__init__()
        self.owner = owner


_ENTRIES = "__pullback_generated__"


def function_entries(fn) -> FunctionEntries | None:
    """The store of generated code on ``fn`` (``None`` for objects without ``__dict__``).

    ``functools.wraps`` copies a wrapped function's ``__dict__`` onto its wrapper: the
    owner check keeps a wrapper from ever reusing the code generated for what it wraps.
    """
    try:
        attrs = fn.__dict__
    except AttributeError:
        return None
    if not isinstance(attrs, dict):
        return None
    entries = attrs.get(_ENTRIES)
    if entries is None or (entries.owner is not fn and attrs.get(TWIN) is not entries.owner):
        entries = attrs[_ENTRIES] = FunctionEntries(fn)
    return entries


#: A function that computes what another does, call for call (a closure made again with
#: equal immutable captures and defaults, transform/run_time_closures.py) names it here and
#: is given its entries: the code generated for one serves the other.
TWIN = "__pullback_twin__"


def share_entries(fn, twin) -> None:
    """Give ``fn`` the generated code of ``twin`` (see :data:`TWIN`)."""
    fn.__dict__[TWIN] = twin
    fn.__dict__[_ENTRIES] = function_entries(twin)


_registry_ids = itertools.count(1)


def registry_token(registry: RuleRegistry):
    """A number naming ``registry`` for cache keys, never reused by another registry."""
    token = getattr(registry, "_pullback_token", None)
    if token is None:
        token = registry._pullback_token = next(_registry_ids)
    return token
