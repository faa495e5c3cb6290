"""Nested functions passed to user functions: ``apply(g, x)`` by specialization.

When a nested function ``g`` of the differentiated function is passed (positionally) to a
user function ``apply(fn, x)`` that only *calls* its parameter ``fn``, pullback builds a
specialized ``apply``: the parameter ``fn`` is replaced by the values ``g`` captures (and
the defaults its calls need), and each ``fn(...)`` inside calls the lifted ``g`` with
them. The call ``apply(g, x)`` becomes ``apply_g(x, <captured values>)``.

This is exact because the caller's variables cannot change while ``apply`` runs (nested
functions may not write ``nonlocal`` state), so ``g`` reads inside ``apply`` what its
captured values are at the call.
"""

from __future__ import annotations

import types

import gast

from ..resolve import parent_map
from ..tree_walk import walk
from . import nodes as N
from .closure_shared import carry_source, compile_like, plain_call
from .generators import is_generator_function

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)


def called_parameter(callee, position: int) -> str | None:
    """The name of ``callee``'s positional parameter ``position`` when ``callee`` is a user
    function that only calls it (in its own scope, never rebinding it); else None."""
    from ..source import load_source

    if not isinstance(callee, types.FunctionType) or is_generator_function(callee):
        return None
    if getattr(callee, "__pullback_source__", None) is not None:
        return None
    try:
        tree = load_source(callee).tree
    except Exception:  # noqa: BLE001 - no source: nothing to specialize
        return None
    args = tree.args
    params = [a.id for a in args.args]
    if position >= len(params) or args.vararg is not None or args.posonlyargs:
        return None
    name = params[position]
    parents = parent_map(tree)
    uses = [n for n in walk(tree) if isinstance(n, gast.Name) and n.id == name]
    for n in uses:
        if isinstance(n.ctx, gast.Param):
            continue
        if not isinstance(n.ctx, gast.Load) or not plain_call(n, parents):
            return None
        up = parents.get(n)
        while up is not None and up is not tree:
            if isinstance(up, _SCOPES):
                return None
            up = parents.get(up)
    return name


def passed_to_specializable(name_node, parents, resolve) -> bool:
    """``user_fn(..., name, ...)`` where ``user_fn`` only calls that parameter."""
    call = parents.get(name_node)
    if not (isinstance(call, gast.Call) and name_node in call.args) or resolve is None:
        return False
    if any(isinstance(a, gast.Starred) for a in call.args):
        return False
    return called_parameter(resolve(call), call.args.index(name_node)) is not None


def specialize_calls(fs, tree, lifted: dict, resolve) -> None:
    """Rewrite the calls of ``tree`` that pass a lifted function (``lifted``: name ->
    (function, record names, signature)) to a user function into calls of its
    specialization."""
    for call in [n for n in walk(tree) if isinstance(n, gast.Call)]:
        for k, arg in enumerate(call.args):
            if isinstance(arg, gast.Name) and arg.id in lifted:
                callee = resolve(call)
                param = called_parameter(callee, k)
                if param is None:
                    continue
                fn, record, sig = lifted[arg.id]
                special = specialization(callee, param, arg.id, fn, record, sig)
                name = f"_pb_{callee.__name__}_with_{arg.id}"
                fs.namespace[name] = special
                rest = call.args[:k] + call.args[k + 1 :]
                call.args = [N.located(N.load(r), arg) for r in record] + rest
                call.func = N.located(N.load(name), call.func)
                break


def specialization(callee, param, gname, lifted, record, sig):
    """``callee`` with its parameter ``param`` replaced by the record of the lifted
    function ``lifted`` (a real function carrying its source for pullback)."""
    from ..source import load_source

    fs = load_source(callee)
    tree = fs.tree
    fields = {r: f"_pb_{gname}_{r}" for r in record}
    args = tree.args
    # The record comes first, so the caller's other arguments keep their positions.
    record_params = [
        N.located(gast.Name(v, gast.Param(), None, None), tree) for v in fields.values()
    ]
    args.args = record_params + [a for a in args.args if a.id != param]
    target = f"_pb_lifted_{gname}"
    n_captured = lifted.__code__.co_argcount - len(sig.positional) - len(sig.keyword_only)
    for sub in walk(tree):
        if isinstance(sub, gast.Call) and isinstance(sub.func, gast.Name) and sub.func.id == param:
            bound = sig.bind(sub, gname)
            for i, a in enumerate(bound):
                if isinstance(a, gast.Name) and a.id in sig.variables.values():
                    bound[i] = N.located(N.load(fields[a.id]), sub)
            sub.args = bound + [N.located(N.load(fields[r]), sub) for r in record[:n_captured]]
            sub.keywords = []
            sub.func = N.located(N.load(target), sub.func)
    extra = {target: lifted}
    fn = compile_like(callee, tree, extra, f"<pullback: {callee.__name__} with {gname}>")
    carry_source(fn, fs, tree, {target: lifted})
    return fn
