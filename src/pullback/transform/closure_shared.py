"""The pieces the closure passes share (closures, closure_records, closure_arguments,
generators, local_partials): the shape of a call site, the resolver of a tree's calls, and
the compilation of a rewritten function that keeps what the original sees and lets
pullback read it back. It imports none of those passes, which all import it.

>>> import gast
>>> from pullback.resolve import parent_map
>>> calls = [gast.parse(text).body[0].value for text in ("g(x, k=1)", "g(*xs)")]
>>> [plain_call(call.func, parent_map(call)) for call in calls]
[True, False]
"""

from __future__ import annotations

import copy
import types

import gast

from ..resolve import local_names, resolve_call
from ..source import factory_code, with_source
from . import nodes as N


def plain_call(name_node, parents) -> bool:
    """``name(...)`` with no star-arguments nor ``**`` keywords: a call whose arguments
    bind to the callee's parameters as they are written."""
    call = parents.get(name_node)
    return (
        isinstance(call, gast.Call)
        and call.func is name_node
        and not any(isinstance(a, gast.Starred) for a in call.args)
        and all(kw.arg is not None for kw in call.keywords)
    )


def in_own_scope(node, tree, parents) -> bool:
    """Whether ``node`` belongs to ``tree``'s own scope (not to a function inside it)."""
    up = parents.get(node)
    while up is not None and up is not tree:
        if isinstance(up, (gast.FunctionDef, gast.Lambda)):
            return False
        up = parents.get(up)
    return True


def call_resolver(fs, tree):
    """``resolve(call)``: the object a call of ``tree`` (``fs``'s function) reaches before
    it runs, or None (a method, a local callee, ...)."""
    names = []  # the tree's local names, found on the first call

    def resolve(call):
        if not names:
            names.append(local_names(tree))
        callee = resolve_call(fs, call, names[0])
        return callee.obj if callee.kind == "object" else None

    return resolve


def carry_source(fn, fs, tree, namespace=None) -> None:
    """Let pullback read ``fn`` (compiled from ``tree``, a rewrite of ``fs``'s function) as
    ``tree`` at ``fs``'s place in the user's file, seeing ``namespace`` besides its globals
    (source.with_source)."""
    with_source(fn, fs, tree, namespace)


def compile_like(original, tree, extra: dict, filename: str):
    """A real function for ``tree`` that sees what ``original`` sees (its globals, its
    closure cells, its defaults) and the ``extra`` objects by name."""
    tree = copy.deepcopy(tree)
    args = tree.args
    args.defaults, args.kw_defaults = [], [None] * len(args.kwonlyargs)
    freevars = list(original.__code__.co_freevars)
    names = freevars + [n for n in extra if n not in freevars]
    body = [tree, gast.Return(N.load(tree.name))]
    factory = factory_code("_pb_factory", names, body, filename)
    inner = next(c for c in factory.co_consts if isinstance(c, types.CodeType))
    cells = dict(zip(freevars, original.__closure__ or (), strict=True))
    for n, value in extra.items():
        cells.setdefault(n, types.CellType(value))
    closure = tuple(cells[v] for v in inner.co_freevars) or None
    fn = types.FunctionType(
        inner, original.__globals__, original.__name__, original.__defaults__, closure
    )
    fn.__kwdefaults__ = original.__kwdefaults__
    fn.__qualname__ = original.__qualname__
    fn.__module__ = original.__module__
    return fn
