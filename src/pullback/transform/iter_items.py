"""The items a user's object gives a loop or an unpacking, as a function of the object.

``for c in v``, ``a, b = v`` and ``list(v)`` on an object whose class defines ``__iter__``
in Python run that method. Its iterator is no value pullback can differentiate, but the
list it yields is: the *items version* of ``__iter__`` is the same method returning that
list, transformed like any method (``self`` carries the gradient back to the object's
fields, to every order and in forward mode). Two forms of ``__iter__`` have one:

* a generator (``yield self.x; yield self.y``, ``yield from self.rows``): its list
  version (:func:`pullback.transform.generators.list_version`), run eagerly, which is
  exact as the loop or the unpacking consumes the iterator whole at once;
* a method whose every ``return`` is ``return iter(E)``: the same method returning
  ``list(E)`` (``iter`` and ``list`` the builtins).

Any other ``__iter__`` (an iterator object of its own, ``__getitem__``-based iteration)
has none: :mod:`pullback.operator_dispatch` refuses it where a gradient flows through
the items, naming the fix. The run-time dispatch reaches this module through
``registry.ENTRY_POINTS.items_version``.
"""

from __future__ import annotations

import builtins
import copy
import inspect
import types
import weakref

import gast

from ..tree_walk import walk
from . import nodes as N
from .generators import is_generator_function, list_version

_ITEMS_VERSIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def items_version(cls):
    """The items version of ``cls.__iter__`` (a function of the object returning the list
    of its items), or None when ``__iter__`` is not a Python function of one of the two
    forms. Cached while the method's code is the same."""
    method = inspect.getattr_static(cls, "__iter__", None)
    if not isinstance(method, types.FunctionType):
        return None
    if is_generator_function(method):
        return list_version(method)
    cached = _ITEMS_VERSIONS.get(method)
    if cached is not None and cached[0] is method.__code__:
        return cached[1]
    fn = _returning_lists(method)
    _ITEMS_VERSIONS[method] = (method.__code__, fn)
    return fn


def _is_builtin(method, name: str) -> bool:
    space = method.__globals__
    return space.get(name, getattr(builtins, name)) is getattr(builtins, name)


def _returning_lists(method):
    """``method`` with each ``return iter(E)`` written ``return list(E)``, or None."""
    from ..source import load_source
    from .closure_records import carry_source, compile_like

    if not (_is_builtin(method, "iter") and _is_builtin(method, "list")):
        return None
    if "iter" in method.__code__.co_varnames or "list" in method.__code__.co_varnames:
        return None
    fs = load_source(method)
    tree = copy.deepcopy(fs.tree)
    returns = [n for n in walk(tree) if isinstance(n, gast.Return)]
    nested = (gast.Lambda, gast.FunctionDef, gast.AsyncFunctionDef)
    if not returns or any(isinstance(n, nested) for s in tree.body for n in walk(s)):
        return None  # (a return of a nested function is not the method's)
    for r in returns:
        v = r.value
        if not (
            isinstance(v, gast.Call)
            and isinstance(v.func, gast.Name)
            and v.func.id == "iter"
            and len(v.args) == 1
            and not v.keywords
            and not isinstance(v.args[0], gast.Starred)
        ):
            return None
        v.func = N.located(gast.Name("list", gast.Load(), None, None), v.func)
    fn = compile_like(method, tree, {}, f"<pullback: items of {method.__qualname__}>")
    carry_source(fn, fs, tree)
    return fn
