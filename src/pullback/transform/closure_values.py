"""Nested functions and lambdas handed around as values, and nested functions with
star-parameters (a part of the lifting in :mod:`.closures`).

* A nested function or lambda that reads no variable of the enclosing function (only its
  parameters, globals and constants; constant defaults) is the same function wherever it
  runs: it is lifted as it is written, a real function with its own signature and source,
  and may be stored in a list or dict, passed on or returned (:func:`captures_nothing`;
  lambdas in displays become such ``def`` statements first, :func:`stored_lambdas`).
* A nested function given to ``map``/``filter``/``functools.reduce`` or as the ``key=`` of
  ``sorted``/``max``/``min`` is called through a lambda (:func:`call_through_lambdas`),
  which those builtins already take.
* A nested function with ``*args``/``**kwargs`` keeps the form of its calls, what it
  captures passed first (:func:`star_refusal` says when it cannot).
"""

from __future__ import annotations

import gast

from ..lambdas import _higher_order_function, nested_definitions
from ..resolve import local_names, own_nodes, parent_map
from ..tree_walk import walk
from . import nodes as N


def stored_lambdas(stmt, tree, user_call=None) -> list:
    """``[(name, lambda)]`` for the lambdas that ``stmt`` puts in a list, tuple, set or dict
    display (``basis = [lambda t: 1.0, lambda t: t]``) or passes to a call other than
    ``map``/``filter``/``reduce``/``key=`` (``np.apply_along_axis(lambda r: ..., 0, x)``),
    and that capture no variable of
    ``tree``: each is replaced (in place) by the name of an equivalent ``def``, which is
    then a function value like any global one (see :func:`captures_nothing`).

    When the check and the transform ask (they pass ``user_call``, so they see the same
    tree), a lambda passed to a call becomes such a ``def`` even when it reads variables
    of ``tree``: ``simpson(lambda x: cos(w * x), a, b)`` is then ``f`` of ``def f(x): ...``
    passed to a function that only calls it, lifted like a nested ``def``; and
    ``solve_ivp(lambda t, y: -k * y, ...)`` is a nested ``def`` passed to library code,
    which the check accepts when what it reads carries no gradient (``k`` not
    differentiated), as it does for the ``def`` written out. Its ``_pb_passed`` tells the
    check to refuse it in the words of a passed lambda. A lambda passed to library code
    with a default that is not a constant stays a lambda (the check refuses it)."""
    found = []

    def replace(slots, k, lam, call=None):
        if not isinstance(lam, gast.Lambda):
            return
        if captures_nothing(lam, tree) or (
            call is not None
            and user_call is not None
            and (user_call(call) or constant_defaults(lam))
        ):
            name = f"_pb_lambda_{lam.lineno}_{lam.col_offset}"
            slots[k] = N.located(N.load(name), lam)
            lam._pb_passed = call is not None
            found.append((name, lam))

    for node in own_nodes([stmt]):
        if isinstance(node, (gast.List, gast.Tuple, gast.Set, gast.Dict)):
            slots = node.values if isinstance(node, gast.Dict) else node.elts
            for k, lam in enumerate(slots):
                replace(slots, k, lam)
        elif isinstance(node, gast.Call):
            # f(lambda t: ...) for a callee that is not map/filter/reduce/key= (those
            # call it in place, lambdas.py): np.apply_along_axis, quad, a user function
            parents = {kw: node for kw in node.keywords}
            parents.update({kw.value: kw for kw in node.keywords})
            parents.update({a: node for a in node.args})
            for k, lam in enumerate(node.args):
                if not _higher_order_function(lam, node, parents):
                    replace(node.args, k, lam, node)
            for kw in node.keywords:
                if not _higher_order_function(kw.value, kw, parents):
                    slots = [kw.value]
                    replace(slots, 0, kw.value, node)
                    kw.value = slots[0]
        elif isinstance(node, gast.IfExp):  # act = (lambda v: v) if flag else g
            slots = [node.body, node.orelse]
            for k in (0, 1):
                replace(slots, k, slots[k])
            node.body, node.orelse = slots
        elif isinstance(node, gast.BoolOp):  # act = act or (lambda z: z)
            for k, lam in enumerate(node.values):
                replace(node.values, k, lam)
    return found


def constant_defaults(node) -> bool:
    """Whether every default of the function or lambda ``node`` is a constant."""
    args = node.args
    defaults = list(args.defaults) + [d for d in args.kw_defaults if d is not None]
    return all(isinstance(d, gast.Constant) for d in defaults)


def captures_nothing(node, tree) -> bool:
    """Whether the nested function or lambda ``node`` reads no variable of ``tree`` (its
    parameters, its locals, its other nested functions) and takes only constant defaults:
    then it is the same function wherever it is called, and can be handed around as a
    value (stored in a list or dict, returned, passed on) like a global function."""
    if isinstance(node, gast.FunctionDef) and node.decorator_list:
        return False
    if not constant_defaults(node):
        return False
    if any(
        isinstance(n, (gast.Nonlocal, gast.Global, gast.Yield, gast.YieldFrom)) for n in walk(node)
    ):
        return False
    outer = local_names(tree) | {d.name for d in nested_definitions(tree)}
    free = free_names(node) if isinstance(node, gast.FunctionDef) else lambda_free(node)
    return not (free & outer)


def lambda_free(lam) -> set:
    params = {a.id for a in walk(lam.args) if isinstance(a, gast.Name)}
    loads = {
        n.id for n in walk(lam.body) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    }
    stores = {
        n.id
        for n in walk(lam.body)
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)
    }
    return loads - params - stores


def star_refusal(node, returned) -> str | None:
    """Why a nested function with ``*args``/``**kwargs`` cannot be lifted, or None. Its
    calls keep their form (Python binds the arguments when the call runs), with what it
    captures passed first, so its defaults must be constants (evaluated once, anywhere)."""
    if returned:
        return "it takes or is called with *args or **kwargs and may be returned"
    args = node.args
    defaults = list(args.defaults) + [d for d in args.kw_defaults if d is not None]
    if not all(isinstance(d, gast.Constant) for d in defaults):
        return (
            "it takes or is called with *args or **kwargs and has a default that is not a constant"
        )
    return None


def used_as_values(tree, defs) -> set:
    """The lifted functions of ``tree`` named other than in a call (stored, returned,
    passed on): those that capture nothing (:func:`captures_nothing`)."""
    parents = parent_map(tree)
    out = set()
    for sub in walk(tree):
        if isinstance(sub, gast.Name) and sub.id in defs and isinstance(sub.ctx, gast.Load):
            if not _called(sub, parents) and not _higher_order_function(
                sub, parents.get(sub), parents
            ):
                out.add(sub.id)
    return out


def call_through_lambdas(tree, defs) -> None:
    """``map(g, xs)``, ``functools.reduce(g, xs)``, ``sorted(xs, key=g)`` of a lifted
    ``g``: ``g`` becomes ``lambda t: g(t)`` (its parameters without defaults), whose call
    of ``g`` is rewritten like any other to pass what ``g`` captures; the builtins take
    lambdas already (lambdas.py, higher_order_builtins.py, comprehensions.py)."""
    parents = None
    for sub in list(walk(tree)):
        if not (isinstance(sub, gast.Name) and sub.id in defs and isinstance(sub.ctx, gast.Load)):
            continue
        parents = parent_map(tree) if parents is None else parents
        parent = parents.get(sub)
        if not _higher_order_function(sub, parent, parents):
            continue
        args = defs[sub.id].args
        positional = args.posonlyargs + args.args
        required = positional[: len(positional) - len(args.defaults)]
        names = [f"_pb_{sub.id}_{a.id}" for a in required]
        call = N.located(N.call(N.load(sub.id), [N.load(n) for n in names]), sub)
        lam = gast.Lambda(
            args=gast.arguments(
                args=[gast.Name(n, gast.Param(), None, None) for n in names],
                posonlyargs=[],
                vararg=None,
                kwonlyargs=[],
                kw_defaults=[],
                kwarg=None,
                defaults=[],
            ),
            body=call,
        )
        lam = N.located(lam, sub)
        if isinstance(parent, gast.keyword):
            parent.value = lam
        else:
            parent.args = [lam if a is sub else a for a in parent.args]


def free_names(node) -> set:
    """Names ``node`` (a def) reads that it does not bind itself."""
    bound = set()
    loads = set()
    for sub in walk(node):
        if isinstance(sub, gast.Name):
            if isinstance(sub.ctx, gast.Load):
                loads.add(sub.id)
            else:
                bound.add(sub.id)
        elif isinstance(sub, (gast.FunctionDef, gast.ClassDef)) and sub is not node:
            bound.add(sub.name)
    return loads - bound


def _called(name_node, parents) -> bool:
    """``name(...)``, with star-arguments or not."""
    call = parents.get(name_node)
    return isinstance(call, gast.Call) and call.func is name_node


def name_uses(tree, name) -> tuple[list, list]:
    """``(bindings, reads)``: the ``Name`` nodes of ``tree`` that bind ``name`` and those
    that read it."""
    stores, loads = [], []
    for n in walk(tree):
        if isinstance(n, gast.Name) and n.id == name:
            (loads if isinstance(n.ctx, gast.Load) else stores).append(n)
    return stores, loads


def lambda_fix(lam) -> str:
    """The fix for a lambda the check refuses as it is written: one whose defaults are
    computed (from a differentiated value, or it would have been made as the primal makes
    it) keeps that value in the function object, where no gradient follows it; read in
    its body, the value is what a list of lambdas only called takes at each call
    (stored_closures.py)."""
    args = lam.args
    if any(not isinstance(d, gast.Constant) for d in args.defaults + args.kw_defaults if d):
        return (
            "compute in the lambda's body what its default computes (`lambda t, k=k: p[k] * t`"
            ", not `lambda t, w=p[k]: w * t`): lambdas kept in a list that is only called take"
            " what their bodies read at each call; or define the helper with `def` at module "
            "level and call it by name"
        )
    return (
        "define the helper with `def` at module level and call it by name, "
        "e.g. `def scale(v): return 2.0 * v`"
    )
