"""A list of closures built in the function and called from there takes what they capture
as arguments of each call (closure conversion at the calls).

A lambda or nested ``def`` that reads the function's variables and is stored in a list is
a closure object: Python reads what it captures when it is *called* (late binding: the
classic ``for i in range(3): fs.append(lambda t: a * t * i)`` gives three functions that
all read the ``i`` the loop left behind). When the list is bound once, only grows by
``fs.append(closure)`` (or is a display of closures, or a list comprehension of lambdas
that take the comprehension's variables as defaults, which stay lambdas made as written)
and is only read by calls
(``fs[k](x)``, ``for g in fs: g(x)``, ``len(fs)``) in the function's own scope, each
closure becomes a function of what any of them reads, and each call passes those
variables after its own arguments::

    def _pb_stored_5_18(t, a, i):
        return a * t * i
    fs = []
    for i in range(3):
        fs.append(_pb_stored_5_18)
    return fs[0](x, a, i)

which computes what Python computes: the call reads ``a`` and ``i`` when it runs, as the
closure would have read them then. The list then holds functions that capture nothing,
which pullback calls like any function value (first and second order, forward mode).
Anything else (the list stored, returned, passed on or changed otherwise, a closure with
defaults or ``*args``, calls with keywords or another number of arguments) is left as
written, and refused by the check with its fix (PB404/PB405).

>>> import gast
>>> tree = gast.parse('''
... def loss(x, a):
...     fs = []
...     for i in range(3):
...         fs.append(lambda t: a * t * i)
...     return fs[0](x)
... ''').body[0]
>>> stored_closures_as_arguments(tree)
True
>>> print(gast.unparse(tree).strip())  # doctest: +NORMALIZE_WHITESPACE
def loss(x, a):
    def _pb_stored_5_18(t, a, i):
        return a * t * i
    fs = []
    for i in range(3):
        fs.append(_pb_stored_5_18)
    return fs[0](x, a, i)
"""

from __future__ import annotations

import gast

from ..resolve import bound_once, local_names, own_nodes, parent_map
from ..tree_walk import walk
from . import nodes as N
from .closure_values import lambda_free, name_uses
from .solver_closures import (
    converted_def,
    convertible_reads,
    may_hold_a_closure,
    nested_defs,
    statement_of,
)
from .vectorize_closures import calls_may_pass


def convert_stored_closures(fs, tree) -> bool:
    """:func:`stored_closures_as_arguments` on ``tree`` (``fs``'s function)."""
    lines = getattr(fs, "lines", None)
    if lines is not None and not may_hold_a_closure(lines):
        return False
    return stored_closures_as_arguments(tree)


def stored_closures_as_arguments(tree) -> bool:
    """Rewrite (in place) each list of the module docstring in ``tree``'s own scope;
    whether any was rewritten."""
    lists = [
        n
        for n in own_nodes(tree.body)
        if isinstance(n, gast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], gast.Name)
        and (_closure_display(n.value) or _lambda_comprehension(n.value))
    ]
    if not lists:
        return False
    defs, functions = nested_defs(tree)
    parents = parent_map(tree)
    own = {id(n) for n in own_nodes(tree.body)}
    names = {a.targets[0].id for a in lists}
    uses = _reads_of(tree, names)  # one walk for all
    changed = False
    for assign in lists:
        plan = _plan(tree, assign, (defs, functions), parents, own, uses)
        if plan is not None:
            _apply(tree, assign, *plan)
            changed = True
            parents = parent_map(tree)
            own = {id(n) for n in own_nodes(tree.body)}
            uses = _reads_of(tree, names)  # (the calls now read what they pass)
    return changed


def _closure_display(value) -> bool:
    """A list display that may hold only closures (``[]``, ``[f, lambda t: ...]``)."""
    return isinstance(value, gast.List) and all(
        isinstance(e, (gast.Lambda, gast.Name)) for e in value.elts
    )


def _reads_of(tree, names) -> dict:
    """``{name: [Name nodes reading it]}`` for ``names``, in one walk of ``tree``."""
    out = {n: [] for n in names}
    for n in walk(tree):
        if n.__class__ is gast.Name and n.id in out and isinstance(n.ctx, gast.Load):
            out[n.id].append(n)
    return out


def _plan(tree, assign, functions, parents, own, uses):
    """``(slots, calls, captured)`` for a list to convert, or None: ``slots`` the
    ``(setter, function node)`` of each closure put in the list, ``calls`` the calls of
    its elements, ``captured`` the sorted names they read of the function
    (``functions``: what :func:`.solver_closures.nested_defs` found; ``uses``: what
    :func:`_reads_of` found)."""
    defs, functions = functions
    name = assign.targets[0].id
    if isinstance(assign.value, gast.ListComp):  # [lambda t, k=k: ... for k in ...]
        slots = [(("comp", assign.value), assign.value.elt)]
    else:
        slots = [(("elt", assign.value, k), e) for k, e in enumerate(assign.value.elts)]
    calls = []
    for use in uses[name]:
        if id(use) not in own:
            return None
        found = _use(tree, use, parents, own)
        if found is None:
            return None
        kind, node = found
        if kind == "append":
            slots.append((("arg", node), node.args[0]))
        elif kind == "calls":  # (two loops over the list by one name: its calls once)
            calls.extend(c for c in node if all(c is not d for d in calls))
    if not slots or not calls or not bound_once(tree, name):
        return None
    fns = []
    for where, value in slots:
        fn = value if isinstance(value, gast.Lambda) else None
        if isinstance(value, gast.Name):
            fn = defs.get(value.id)
        if where[0] == "comp":
            reads = _comprehension_reads(fn, where[1], functions)
        elif where[0] == "arg" and _kept_lambda(fn):  # fs.append(lambda t, k=k: ...)
            reads = _comprehension_reads(fn, None, functions)
        else:
            reads = None if fn is None else convertible_reads(fn, functions)
        if reads is None or name in reads:
            return None  # (one that reads the list would call its elements as they were)
        fns.append((fn, reads))
    counts = {_required(fn) for fn, _ in fns}
    captured = sorted(set().union(*(r for _, r in fns)) & local_names(tree))
    if not captured or len(counts) != 1:
        return None
    for fn, _ in fns:
        own_params = {a.id for a in fn.args.args + fn.args.posonlyargs}
        if own_params & set(captured):
            return None  # a parameter of one of them by the name another one reads
    n = counts.pop()
    if not calls_may_pass(calls, n, captured, parents, tree):
        return None
    return [(where, fn) for (where, _), (fn, _) in zip(slots, fns, strict=True)], calls, captured


def _lambda_comprehension(value) -> bool:
    """``[lambda ...: ... for ...]``: a list comprehension of lambdas."""
    return isinstance(value, gast.ListComp) and isinstance(value.elt, gast.Lambda)


def _required(fn) -> int:
    """How many positional parameters ``fn`` has without a default."""
    return len(fn.args.args) + len(fn.args.posonlyargs) - len(fn.args.defaults)


def _kept_lambda(fn) -> bool:
    """A lambda with defaults appended to the list (``fs.append(lambda t, k=k: ...)``):
    its defaults are evaluated where it is made, as the loop's value at that step, so it
    stays a lambda made as written, taking what its body reads as parameters too (a
    ``def`` made once before the loop would evaluate them once)."""
    return isinstance(fn, gast.Lambda) and bool(fn.args.defaults)


def _comprehension_reads(lam, comp, functions) -> set | None:
    """What the lambda ``lam`` made by the comprehension ``comp`` (or appended to the
    list, ``comp`` None) reads besides its
    parameters, or None when it cannot take it as parameters: it reads a variable of the
    comprehension itself (every lambda would read its last value, which no call outside
    sees: refused, with the fix of passing it as a default), has ``*args``, keyword-only
    parameters, or calls a local function."""
    args = lam.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        return None
    reads = lambda_free(lam)
    bound = set()
    if comp is not None:
        bound = {t.id for g in comp.generators for t in walk(g.target) if isinstance(t, gast.Name)}
    if reads & (bound | functions):
        return None
    return reads


def _use(tree, use, parents, own):
    """What a read of the list is: ``("append", call)``, ``("calls", [calls])`` (its
    elements called: ``fs[k](...)``, or ``for g in fs`` with ``g`` only called in the
    function's own scope, ``own``), ``("len", None)``; None for anything else."""
    up = parents.get(use)
    if isinstance(up, gast.Attribute) and up.attr == "append":
        call = parents.get(up)
        if (
            isinstance(call, gast.Call)
            and call.func is up
            and len(call.args) == 1
            and not call.keywords
            and isinstance(parents.get(call), gast.Expr)
            and isinstance(call.args[0], (gast.Lambda, gast.Name))
        ):
            return "append", call
        return None
    if isinstance(up, gast.Subscript) and up.value is use:
        call = parents.get(up)
        if isinstance(call, gast.Call) and call.func is up:
            return "calls", [call]
        return None
    if isinstance(up, gast.Call) and getattr(up.func, "id", None) == "len" and up.args == [use]:
        return "len", None
    if isinstance(up, (gast.For, gast.comprehension)) and up.iter is use:
        if not isinstance(up.target, gast.Name):
            return None
        stores, loads = name_uses(tree, up.target.id)
        if not all(_iterates(parents.get(t), t, use.id) for t in stores):
            return None  # the name may hold something else than an element of the list
        calls = [parents.get(u) for u in loads]
        if all(
            id(u) in own and isinstance(c, gast.Call) and c.func is u
            for u, c in zip(loads, calls, strict=True)
        ):
            return "calls", calls
    return None


def _iterates(loop, target, name) -> bool:
    """Whether ``target`` is the target of the loop or comprehension ``loop`` over the
    list ``name`` (``for g in fs``)."""
    return (
        isinstance(loop, (gast.For, gast.comprehension))
        and loop.target is target
        and isinstance(loop.iter, gast.Name)
        and loop.iter.id == name
    )


def _apply(tree, assign, slots, calls, captured) -> None:
    made = []
    for where, fn in slots:
        if where[0] == "comp" or (where[0] == "arg" and _kept_lambda(fn)):
            # made as written (its defaults are read there), taking more
            k = _required(fn)
            params = [N.located(gast.Name(c, gast.Param(), None, None), fn) for c in captured]
            fn.args.args[k:k] = params
            continue
        value = where[1].elts[where[2]] if where[0] == "elt" else where[1].args[0]
        name = f"_pb_stored_{value.lineno}_{value.col_offset}"
        made.append(converted_def(name, fn, captured))
        replacement = N.located(N.load(name), value)
        if where[0] == "elt":
            where[1].elts[where[2]] = replacement
        else:
            where[1].args[0] = replacement
    for call in calls:
        call.args.extend(N.located(N.load(c), call) for c in captured)
    body, k = statement_of(tree, assign)
    body[k:k] = made
