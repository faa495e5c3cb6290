"""Lambdas and one-line nested functions that a differentiated function only calls.

``sq = lambda t: t * t`` (or ``def sq(t): return t * t``) inside the function, used only
as ``sq(...)``, as the function of ``map``/``filter``, or called where it is written
(``(lambda t: ...)(x)``), is *inlined*: each call becomes the lambda's expression with
its parameters bound to the call's arguments. A closure reads the variables it captures
when it is called, and so does the inlined expression, so the result is what Python
computes, and gradients flow to the captured values like to any other operand.

The check (PB404/PB405) and the normalizer ask this module the same question.

>>> import gast
>>> tree = gast.parse('''
... def f(x):
...     sq = lambda t: t * t
...     return sq(x) + sum(map(sq, [x, 2 * x]))
... ''').body[0]
>>> sorted(inlinable_functions(tree))
['sq']
"""

from __future__ import annotations

import gast

from .resolve import own_nodes, parent_map
from .tree_walk import walk

# Higher-order builtins whose function argument may be a lambda (rewritten as a
# comprehension by the normalizer).
HIGHER_ORDER = ("map", "filter")
# Builtins whose ``key=`` may be a lambda: the key only chooses (higher_order_builtins.py).
KEYED = ("sorted", "max", "min")


def function_expression(node):
    """``(args, expression)`` of a lambda or of a ``def`` whose body is one ``return``
    (after an optional docstring); None for anything else."""
    if isinstance(node, gast.Lambda):
        return node.args, node.body
    if isinstance(node, gast.FunctionDef) and not node.decorator_list:
        body = list(node.body)
        if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
            body = body[1:]
        if len(body) == 1 and isinstance(body[0], gast.Return) and body[0].value is not None:
            return node.args, body[0].value
    return None


def simple_parameters(args) -> bool:
    """Positional parameters only: no defaults, ``*args``, ``**kwargs`` or keyword-only."""
    return not (args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.kw_defaults)


def inlinable_functions(tree) -> dict:
    """``{name: (args, expression)}`` for the local lambdas and one-line defs of ``tree``
    (a function) that are bound once and only ever called (directly or through
    ``map``/``filter``), never stored, passed elsewhere or rebound."""
    parents = parent_map(tree)
    bound: dict[str, list] = {}
    declares_nonlocal = False
    for node in walk(tree):
        if node is tree:
            continue
        if isinstance(node, gast.Nonlocal):
            declares_nonlocal = True
        elif isinstance(node, gast.FunctionDef):
            bound.setdefault(node.name, []).append(node)
        elif isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            parent = parents.get(node)
            if (
                isinstance(parent, gast.Assign)
                and len(parent.targets) == 1
                and parent.targets[0] is node
                and isinstance(parent.value, gast.Lambda)
            ):
                bound.setdefault(node.id, []).append(parent.value)
            else:
                bound.setdefault(node.id, []).append(None)  # any other binding
    out = {}
    writers = nonlocal_writers(tree) if declares_nonlocal else {}
    for name, definitions in bound.items():
        if len(definitions) != 1 or definitions[0] is None:
            continue
        if writers and (name in writers or _calls_any(definitions[0], writers)):
            continue  # it changes the caller's variables: lifted (transform/closure_writes.py)
        found = function_expression(definitions[0])
        if found is None or not simple_parameters(found[0]):
            continue
        if any(_calls(found[1], name) for _ in [0]):
            continue  # recursive: not inlinable
        arity = len(found[0].posonlyargs) + len(found[0].args)
        if all(_only_called(use, parents, arity) for use in _loads(tree, name)):
            out[name] = found
    return out


def nested_definitions(tree) -> list:
    """The ``def`` statements of ``tree``'s own scope (inside its branches and loops, not
    inside other nested functions)."""
    found = []

    def visit(stmts):
        for s in stmts:
            if isinstance(s, gast.FunctionDef):
                found.append(s)
                continue
            if isinstance(s, (gast.AsyncFunctionDef, gast.ClassDef)):
                continue
            for field in ("body", "orelse", "finalbody"):
                visit(getattr(s, field, None) or [])
            for handler in getattr(s, "handlers", None) or []:
                visit(handler.body)

    visit(tree.body)
    return found


def declared_nonlocal(node) -> list:
    """The names the ``def`` ``node`` declares ``nonlocal`` in its own scope, in order."""
    names = []
    for sub in own_nodes(node.body):
        if isinstance(sub, gast.Nonlocal):
            names += [n for n in sub.names if n not in names]
    return names


def nonlocal_writers(tree) -> dict:
    """``{name: set of variables}``: the nested functions of ``tree``'s own scope that
    change variables of ``tree`` when called, those they declare ``nonlocal`` and, through
    the sibling nested functions they call, those their callees change. The check, the
    inlining above and the lifting (transform/closure_writes.py) ask this one question."""
    defs = nested_definitions(tree)
    writes = {d.name: set(declared_nonlocal(d)) for d in defs}
    if not any(writes.values()):
        return {}
    calls = {
        d.name: {
            n.func.id
            for n in walk(d)
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in writes
        }
        for d in defs
    }
    changed = True
    while changed:  # a call of a sibling that writes writes too
        changed = False
        for name, callees in calls.items():
            for callee in callees:
                if not writes[callee] <= writes[name]:
                    writes[name] |= writes[callee]
                    changed = True
    return {name: w for name, w in writes.items() if w}


def _calls_any(node, names) -> bool:
    return any(
        isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in names
        for n in walk(node)
    )


def lambda_called_in_place(node, parents) -> bool:
    """``(lambda t: ...)(x)`` or ``map(lambda t: ..., xs)``: used where it is written."""
    parent = parents.get(node)
    if isinstance(parent, gast.Call) and parent.func is node:
        return simple_parameters(node.args)
    return _higher_order_function(node, parent, parents) and simple_parameters(node.args)


def _higher_order_function(node, parent, parents=None) -> bool:
    """``map(f, ...)``, ``filter(f, ...)``, ``reduce(f, ...)`` or ``key=f`` of
    ``sorted``/``max``/``min``, with ``node`` as that ``f``."""
    if isinstance(parent, gast.keyword) and parent.arg == "key" and parents is not None:
        call = parents.get(parent)
        if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute):
            return call.func.attr == "sort"  # l.sort(key=k): sorted() (list_mutation.py)
        return isinstance(call, gast.Call) and _called_name(call) in KEYED
    return (
        isinstance(parent, gast.Call)
        and _called_name(parent) in HIGHER_ORDER + ("reduce",)
        and len(parent.args) >= 2
        and parent.args[0] is node
        and not parent.keywords
    )


def _called_name(call) -> str | None:
    """``map`` for ``map(...)``, ``reduce`` for ``functools.reduce(...)``."""
    func = call.func
    if isinstance(func, gast.Name):
        return func.id
    if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name):
        if func.value.id == "functools" and func.attr == "reduce":
            return "reduce"
    return None


def _loads(tree, name):
    for node in walk(tree):
        if isinstance(node, gast.Name) and node.id == name and isinstance(node.ctx, gast.Load):
            yield node


def _only_called(use, parents, arity) -> bool:
    """Called with ``arity`` plain positional arguments, or handed to map/filter/...: a
    call Python would refuse is left to the lifted function, which raises as Python does."""
    parent = parents.get(use)
    if isinstance(parent, gast.Call) and parent.func is use:
        if any(isinstance(a, gast.Starred) for a in parent.args) or parent.keywords:
            return False
        return len(parent.args) == arity
    return _higher_order_function(use, parent, parents)


def _calls(expression, name) -> bool:
    return any(
        isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id == name
        for n in walk(expression)
    )
