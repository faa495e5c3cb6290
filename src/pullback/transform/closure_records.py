"""Closures made by a user factory and called inside a differentiated function.

``g = make_scaler(w); y = g(x)``, where ``make_scaler`` is a user function whose every
``return`` returns the same nested function ``s``, is differentiated by representing the
closure as a *record*: the tuple of the values ``s`` captures (and of the defaults it was
given). The factory's record version returns that tuple instead of the closure; ``s`` is
lifted (see :mod:`.closures`) into a function that takes the record's values as extra
arguments; each call ``g(x)`` becomes ``s_lifted(x, g[0], g[1], ...)``. Gradients flow
from the call through the record to what the factory computed it from.

This is exact because the factory has returned when the closure is called: the variables
``s`` captured no longer change, so their values at the return are the values every call
reads. pullback requires ``g`` to be bound once and only called (a record is not a
function: ``g`` stored, returned or passed on keeps the closure refused, PB405).
"""

from __future__ import annotations

import types

import gast

from ..lambdas import nested_definitions
from ..resolve import parent_map
from ..tree_walk import walk
from . import nodes as N
from .closure_shared import call_resolver, carry_source, compile_like, plain_call
from .closure_values import name_uses
from .generators import is_generator_function
from .lambda_definitions import lambdas_as_definitions

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)


def returned_closure(tree) -> str | None:
    """The nested function every ``return`` of ``tree`` returns, or None."""
    names = {d.name for d in nested_definitions(tree)}
    returned = set()
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, gast.Return):
            if not (isinstance(node.value, gast.Name) and node.value.id in names):
                return None
            returned.add(node.value.id)
        if not isinstance(node, _SCOPES):
            stack.extend(gast.iter_child_nodes(node))
    return returned.pop() if len(returned) == 1 else None


def record_sites(tree, resolve) -> list:
    """``[(assign, name, factory)]``: ``name = factory(...)`` bound once in ``tree`` and
    only called, where ``factory`` is a user function returning a nested function.
    ``resolve(call)`` is the object a call's function refers to."""
    parents = None
    out = []
    for node in walk(tree):
        if not (
            isinstance(node, gast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], gast.Name)
            and isinstance(node.value, gast.Call)
        ):
            continue
        if not isinstance(node.value.func, gast.Name):
            continue  # factories are called by name
        name = node.targets[0].id
        factory = resolve(node.value)
        if not _is_factory(factory):
            continue
        stores, loads = name_uses(tree, name)
        parents = parent_map(tree) if parents is None else parents
        if len(stores) == 1 and loads and all(plain_call(n, parents) for n in loads):
            out.append((node, name, factory))
    return out


def _is_factory(obj) -> bool:
    if not isinstance(obj, types.FunctionType) or getattr(obj, "__pullback_source__", None):
        return False
    from ..source_cache import kept_with_source

    if is_generator_function(obj):
        return False
    if not any(isinstance(c, types.CodeType) for c in obj.__code__.co_consts):
        return False  # defines no nested function: not a factory (and no source to read)
    # a fact of the source, kept with it (every assignment of a call of obj asks again)
    return kept_with_source(obj, "factory", _returns_a_closure)


def _returns_a_closure(obj) -> bool:
    from ..source import load_source

    try:
        tree = load_source(obj).tree
        lambdas_as_definitions(tree)  # `return lambda ...` too
        return returned_closure(tree) is not None
    except Exception:  # noqa: BLE001 - no source: not a factory pullback can read
        return False


def use_closure_records(fs, lift) -> None:
    """Rewrite the record sites of ``fs.tree`` (see the module docstring), in place.
    ``lift``: :func:`.closures.lift_nested_functions`, which lifts the closure a factory
    returns (the lifting itself rewrites record sites: passed in, not imported back)."""
    sites = record_sites(fs.tree, call_resolver(fs, fs.tree))
    for assign, name, factory in sites:
        made = record_version(factory, lift)
        if made is None:
            continue  # pragma: no cover - refused by the check
        record_fn, lifted, record, n_captured, sig = made
        fs.lookup(assign.value.func.id)  # guarded: a redefined factory rebuilds the gradient
        factory_name = f"_pb_record_{assign.value.func.id}"
        lifted_name = f"_pb_closure_{name}"
        fs.namespace[factory_name] = record_fn
        fs.namespace[lifted_name] = lifted
        assign.value.func = N.located(N.load(factory_name), assign.value.func)
        _call_through_record(fs.tree, name, lifted_name, record, n_captured, sig)


def _call_through_record(tree, name, lifted_name, record, n_captured, sig) -> None:
    """``name(args)`` becomes ``lifted(args, name[0], ..., name[n_captured - 1])``, the
    defaults kept in the record read from it."""
    index = {v: k for k, v in enumerate(record)}
    for sub in walk(tree):
        if isinstance(sub, gast.Call) and isinstance(sub.func, gast.Name) and sub.func.id == name:
            args = sig.bind(sub, name)
            for k, a in enumerate(args):  # a non-constant default: kept in the record
                if isinstance(a, gast.Name) and a.id in sig.variables.values():
                    args[k] = _field(name, index[a.id], sub)
            sub.args = args + [_field(name, k, sub) for k in range(n_captured)]
            sub.keywords = []
            sub.func = N.located(N.load(lifted_name), sub.func)


def _field(name, k, where):
    return N.located(N.subscript(N.load(name), N.const(k)), where)


def record_version(factory, lift):
    """``(record function, lifted closure, record names, signature)`` for ``factory``
    (``lift``: see :func:`use_closure_records`)."""
    from ..source import load_source

    fs = load_source(factory)
    lambdas_as_definitions(fs.tree)
    returned = returned_closure(fs.tree)
    if returned is None:
        return None
    made = lift(fs, returned=returned)
    if returned not in made:
        return None
    lifted, record, sig = made[returned]
    tree = fs.tree
    label = f"<pullback: record of {factory.__name__}>"
    fn = compile_like(factory, tree, dict(fs.namespace), label)
    carry_source(fn, fs, tree, fs.namespace)
    n_captured = lifted.__code__.co_argcount - len(sig.positional) - len(sig.keyword_only)
    return fn, lifted, record, n_captured, sig
