"""``functools.partial`` made inside the differentiated function and then only called.

``f = functools.partial(loss, data, scale=w)`` followed by calls ``f(x)`` is what the calls
compute: ``loss(data, x, scale=w)``. The partial's arguments are evaluated once, where the
partial is made (into fresh variables, as ``partial`` stores them), and each call of ``f``
becomes a call of the function with those values first and the partial's keywords merged
under the call's own (a keyword of the call wins, as in ``functools.partial``). The calls
then take the ordinary paths: a rule, an inline derivative, a user function transformed
(so gradients reach the bound values too, and second derivatives run through them).

Only a partial bound once, whose every use is a plain call in the function's own scope
(not stored, passed on, returned, or read by a nested function), is rewritten; any other
stays refused (PB301) with the rewrite as its fix.

>>> import gast
>>> tree = gast.parse('''
... def f(x, w):
...     g = functools.partial(loss, scale=w)
...     return g(x) + g(2 * x)
... ''').body[0]
>>> [name for _, name in partial_sites(tree, lambda call: functools.partial)]
['g']
"""

from __future__ import annotations

import copy
import functools

import gast

from ..resolve import bound_once, dotted_parts, local_names, own_nodes, parent_map
from ..tree_walk import walk
from . import nodes as N
from .closure_shared import in_own_scope, plain_call
from .closure_values import name_uses


def spells_partial(node) -> bool:
    """``name = partial(...)`` or ``name = <module>.partial(...)`` (cheap, no lookup)."""
    if not (
        isinstance(node, gast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], gast.Name)
        and isinstance(node.value, gast.Call)
    ):
        return False
    func = node.value.func
    return getattr(func, "id", None) == "partial" or getattr(func, "attr", None) == "partial"


def partial_sites(tree, resolve) -> list:
    """``[(assign, name)]``: ``name = functools.partial(func, ...)`` in ``tree``'s own scope,
    ``name`` bound once and only called there. ``resolve(call)`` is the object a call's
    function refers to."""
    candidates = [n for n in own_nodes(tree.body) if spells_partial(n)]
    if not candidates:
        return []
    parents = parent_map(tree)
    params = {a.id for a in walk(tree.args) if isinstance(a, gast.Name)}
    out = []
    for assign in candidates:
        call = assign.value
        name = assign.targets[0].id
        if not call.args or any(isinstance(a, gast.Starred) for a in call.args):
            continue
        if any(k.arg is None for k in call.keywords) or name in params:
            continue
        if resolve(call) is not functools.partial:
            continue
        stores, loads = name_uses(tree, name)
        if len(stores) != 1 or not loads:
            continue
        if all(_plain_own_call(n, tree, parents) for n in loads):
            out.append((assign, name))
    return out


def rewrite_local_partials(fs, resolve) -> None:
    """Rewrite the sites of :func:`partial_sites` in ``fs.tree`` (in place): the partial's
    statement binds its function and arguments to fresh variables, each call calls the
    function with them."""
    tree = fs.tree
    sites = partial_sites(tree, resolve)
    if not sites:
        return
    locals_ = local_names(tree)
    for assign, name in sites:
        call = assign.value
        func, *bound = call.args
        targets, values = [], []

        def keep(value, label):
            var = f"_pb_partial_{name}_{label}"
            targets.append(N.located(N.store(var), value))
            values.append(value)
            return var

        parts = dotted_parts(func)
        if parts is not None and parts[0] not in locals_:
            func_var = None  # a global function: spelled at each call, resolved statically
        elif spelled_at_calls(tree, func):
            func_var = None  # a nested def made once: its calls are lifted (closures.py)
        else:
            func_var = keep(func, "func")
        arg_vars = [keep(a, str(k)) for k, a in enumerate(bound)]
        keyword_vars = {k.arg: keep(k.value, k.arg) for k in call.keywords}
        if targets:
            assign.targets = [N.located(N.tuple_(targets, ctx=gast.Store()), assign)]
            assign.value = N.located(N.tuple_(values), assign)
        else:  # partial(f) alone: nothing to keep
            assign.targets = [N.located(N.store(f"_pb_partial_{name}"), assign)]
            assign.value = N.located(N.const(None), assign)
        for sub in walk(tree):
            if not (isinstance(sub, gast.Call) and getattr(sub.func, "id", None) == name):
                continue
            own = {k.arg for k in sub.keywords}
            target = N.load(func_var) if func_var is not None else copy.deepcopy(func)
            sub.func = N.located(target, sub.func)
            sub.args = [N.located(N.load(v), sub) for v in arg_vars] + sub.args
            sub.keywords = [
                gast.keyword(arg=k, value=N.located(N.load(v), sub))
                for k, v in keyword_vars.items()
                if k not in own
            ] + sub.keywords


def spelled_at_calls(tree, func) -> bool:
    """Whether the partial's function ``func`` is a nested ``def`` of ``tree``'s own scope
    that its calls may name instead of the value the partial keeps: bound once, and not
    made again in a loop with defaults (which the def evaluates where it runs). Its calls
    then read what it captures when they run, as the closure would."""
    if not isinstance(func, gast.Name) or not bound_once(tree, func.id):
        return False
    parents = parent_map(tree)
    for d in own_nodes(tree.body):
        if isinstance(d, gast.FunctionDef) and d is not tree and d.name == func.id:
            if d.decorator_list:
                return False
            if not (d.args.defaults or any(v is not None for v in d.args.kw_defaults)):
                return True
            up = parents.get(d)
            while up is not None and up is not tree:
                if isinstance(up, (gast.For, gast.While)):
                    return False
                up = parents.get(up)
            return True
    return False


def partial_of_nested_def(name_node, tree, parents, resolve) -> bool:
    """Whether ``name_node`` is the function a partial of :func:`partial_sites` binds and
    :func:`spelled_at_calls` lets its calls name (``g = partial(inner, a); g(x)``)."""
    call = parents.get(name_node)
    if resolve is None or not isinstance(call, gast.Call) or not call.args:
        return False
    if call.args[0] is not name_node or not spelled_at_calls(tree, name_node):
        return False
    return any(assign.value is call for assign, _ in partial_sites(tree, resolve))


def _plain_own_call(name_node, tree, parents) -> bool:
    """``name(...)`` without star-arguments, in ``tree``'s own scope."""
    return plain_call(name_node, parents) and in_own_scope(name_node, tree, parents)
