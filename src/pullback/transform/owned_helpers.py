"""Helpers that write into a parameter, specialized for callers that pass their own arrays.

``def fill(out, x): out[i] = ...`` writes into the array its caller passes. When every call
the analysis reaches passes a *local* array (one the caller created and no other name
sees), pullback differentiates the helper as this specialization, where the written
parameters are the helper's own::

    def fill(out, x):                    # the specialization of fill owning `out`
        out = out.copy()
        ...                              # the body as written: writes into a local array
        return (result, out.copy())      # every return: the result, then out's final state

(a list is copied as ``list(out)``, a dict as ``{**out}``, which the container analysis
knows), and the caller's call as a rebinding of the array it passed
(transform/helper_calls.py):
``fill(buf, x)`` becomes ``_t = _pb_owned_fill(buf, x); buf = _t[1]``. The values are
those of the primal (the caller's array holds the helper's writes afterwards, under the
same name); no state of an array that a pullback may hold is ever written, because the
helper works on a copy and hands back another. So the specialization's adjoint takes the
cotangent of each owned parameter's final state and returns that of its initial state.

This module only builds the specialization; the check (check/helper_writes.py) decides
which parameters a helper writes and refuses calls that pass anything but a local array.
"""

from __future__ import annotations

import copy
import weakref

import gast

from ..resolve import own_nodes
from . import nodes as N

#: The attribute that marks a specialization: the names of the parameters it owns.
OWNED = "__pullback_owned__"
#: The prefix of the names callers call specializations by, and of their result tuples.
PREFIX = "_pb_owned_"
RESULT_PREFIX = "_pb_own"
#: The attribute marking the reads of a final state in the caller's tree.
MARK = "pb_owned_state"
#: The attribute marking, in a specialization, the read of a parameter its first line copies
#: (no pullback holds it: the writes that follow may run in place, transform/mutation.py).
ENTRY = "pb_owned_entry"

_SPECIALIZATIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def copy_of(name: str, kind, entry: bool = False) -> gast.Call:
    """``list(name)``, ``{**name}`` (the caller passes a list or a dict: the copy is one
    the container analysis knows) or ``name.copy()`` (an array); ``entry``: the copy the
    specialization starts with (its read of ``name`` marked)."""
    read = N.load(name)
    if entry:
        setattr(read, ENTRY, True)
    if kind == "list":
        return N.call("list", [read])
    if kind == "dict":
        return gast.Dict(keys=[None], values=[read])
    return N.call(N.attr(read, "copy"))


def owning_tree(tree: gast.FunctionDef, owned, kinds=()) -> gast.FunctionDef:
    """A copy of ``tree`` that copies each parameter of ``owned`` first and returns
    ``(result, final state of each owned parameter, ...)`` wherever it returns
    (``kinds``: "list", "dict" or None for each, what the caller passes)."""
    tree = copy.deepcopy(tree)
    where = tree
    kinds = tuple(kinds) or (None,) * len(owned)

    def finals(at):
        return [N.located(copy_of(p, k), at) for p, k in zip(owned, kinds, strict=True)]

    returns = [n for n in own_nodes(tree.body) if isinstance(n, gast.Return)]
    for ret in returns:
        value = ret.value if ret.value is not None else N.const(None)
        ret.value = N.located(N.tuple_([value] + finals(ret)), ret)
    if any(not _atom(r.value.elts[0]) for r in returns):
        _name_returned_values(tree)  # return g(out, x): a call of its own (helper_calls.py)
    body = list(tree.body)
    if not body or not isinstance(body[-1], gast.Return):
        last = body[-1] if body else where
        body.append(N.located(gast.Return(value=N.tuple_([N.const(None)] + finals(last))), last))
    first = body[0]
    if (
        isinstance(first, gast.Expr)
        and isinstance(first.value, gast.Constant)
        and isinstance(first.value.value, str)
    ):
        first = body[1] if len(body) > 1 else first  # after a docstring
    copies = [
        N.assign(p, copy_of(p, k, entry=True), first) for p, k in zip(owned, kinds, strict=True)
    ]
    k = body.index(first) if first in body else 0
    tree.body = body[:k] + copies + body[k:]
    return tree


def _atom(node) -> bool:
    return isinstance(node, (gast.Name, gast.Constant))


def _name_returned_values(tree) -> None:
    """``return (e, finals)`` becomes ``_pb_returned = e`` and the return of
    ``(_pb_returned, finals)``, in every block of ``tree``'s own scope: ``e`` is computed
    before the final states are copied, as the helper computes it before returning."""

    def visit(stmts):
        out = []
        for stmt in stmts:
            if not isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
                for field in ("body", "orelse", "finalbody"):
                    inner = getattr(stmt, field, None)
                    if isinstance(inner, list):
                        setattr(stmt, field, visit(inner))
                for handler in getattr(stmt, "handlers", None) or ():
                    handler.body = visit(handler.body)
            if isinstance(stmt, gast.Return) and not _atom(stmt.value.elts[0]):
                out.append(N.assign("_pb_returned", stmt.value.elts[0], stmt))
                stmt.value.elts[0] = N.located(N.load("_pb_returned"), stmt)
            out.append(stmt)
        return out

    tree.body = visit(tree.body)


def returned_parameter(tree: gast.FunctionDef, owned) -> str | None:
    """The owned parameter every ``return`` of ``tree`` returns by name (and the body
    never falls off its end), else None: then the helper's result is that array."""
    returns = [n for n in own_nodes(tree.body) if isinstance(n, gast.Return)]
    if not returns or not tree.body or not isinstance(tree.body[-1], gast.Return):
        return None
    names = {r.value.id for r in returns if isinstance(r.value, gast.Name)}
    if len(names) != 1 or len(returns) != sum(isinstance(r.value, gast.Name) for r in returns):
        return None
    (name,) = names
    return name if name in owned else None


def is_owned_result(node) -> bool:
    """``_pb_ownN[k]`` that transform/helper_calls.py wrote for the final state of an owned
    parameter (it marks the node): a copy that nothing else holds."""
    return bool(getattr(node, MARK, False))


def owned_result_kind(node):
    """"list" or "dict" for the final state of an owned list or dict, else None."""
    kind = getattr(node, MARK, None)
    return kind if kind in ("list", "dict") else None


def specialization(fn, owned: tuple, kinds: tuple = ()):
    """The specialization of the user function ``fn`` owning the parameters ``owned`` (a
    real function carrying its source for pullback), cached while ``fn``'s code is the
    same (a redefined helper is a new function object: its callers' guards see it)."""
    from ..source import load_source
    from .closure_records import carry_source, compile_like

    cached = _SPECIALIZATIONS.setdefault(fn, {})
    key = (owned, tuple(kinds))
    hit = cached.get(key)
    if hit is not None and hit[0] is fn.__code__:
        return hit[1]
    fs = load_source(fn)
    tree = owning_tree(fs.tree, owned, kinds)
    # compiled under another name: inside compile_like's factory, a call of the helper
    # by its own name (recursion) must still reach the global, not the factory's local
    compiled = copy.copy(tree)
    compiled.name = f"{PREFIX}{tree.name}"
    made = compile_like(fn, compiled, {}, f"<pullback: {fn.__name__} owning {', '.join(owned)}>")
    setattr(made, OWNED, owned)
    carry_source(made, fs, tree)
    cached[key] = (fn.__code__, made)
    return made
