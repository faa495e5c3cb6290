"""Calls of helpers that write into the local arrays they are passed, as rebindings.

The check (check/helper_writes.py) accepted ``fill(buf, x)`` where ``fill`` writes into
its parameter ``out`` only if ``buf`` is a local array nobody else sees. This pass calls the
specialization of ``fill`` that owns ``out`` (transform/owned_helpers.py), which returns its
result and the final state of each owned parameter, and rebinds the caller's names::

    fill(buf, x)               ->  _pb_own1 = _pb_owned_fill(buf, x); buf = _pb_own1[1]
    buf = fill(buf, x)         ->  ...; buf = _pb_own1[1]   (fill returns out)
    r = fill(buf, x)           ->  ...; buf = _pb_own1[1]; r = _pb_own1[0]
    out = fill(np.zeros(n), x) ->  _pb_own1 = _pb_owned_fill(np.zeros(n), x); out = _pb_own1[1]

So after the call the caller's name holds the helper's writes, as in the primal, and the
sweeps see plain calls and assignments.
"""

from __future__ import annotations

import types

import gast

from ..guards import is_library_module_name
from ..resolve import SCOPES, dotted_parts, local_names, resolve_expr
from ..tree_walk import lean_nodes
from . import nodes as N
from .owned_helpers import MARK, PREFIX, RESULT_PREFIX, returned_parameter, specialization


def use_owning_helpers(fs, registry, environment=None, nodes=None, local=None) -> bool:
    """Rewrite, in place, the statements of ``fs.tree`` that call a helper writing into
    arguments the check proved local (``environment``: the check's, if it ran; ``nodes``:
    ``lean_nodes(fs.tree)`` when the caller walks it anyway, ``local``: its
    ``local_names`` then, read only). False when the tree was left
    as it was (no call of a user function: nothing was looked at), True when it may have
    been rewritten."""
    from ..check import LiveEnvironment
    from ..check.checker import FunctionChecker
    from ..registry import default_registry

    if not _calls_a_user_function(fs, nodes, local):  # no helper to own anything: no check to run
        return False
    env = environment if environment is not None else LiveEnvironment()
    checker = FunctionChecker(fs, registry or default_registry(), env)
    checker._container_analysis()  # the kinds of the caller's lists and dicts, before rewriting
    counter = [0]

    def owning(call):
        found = checker.owning_call(call) if isinstance(call, gast.Call) else None
        return found if found is not None and found[3] is not None else None

    def rewrite(stmts):
        out = []
        for stmt in stmts:
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and not isinstance(stmt, SCOPES):
                    setattr(stmt, field, rewrite(inner))
            for handler in getattr(stmt, "handlers", None) or ():
                handler.body = rewrite(handler.body)
            if isinstance(stmt, SCOPES):
                out.append(stmt)
                continue
            value = getattr(stmt, "value", None)
            whole = isinstance(stmt, (gast.Expr, gast.Return)) or (
                isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            )
            found = owning(value) if whole else None
            if found is not None:
                out.extend(_rebinding(fs, stmt, found, checker.owned_kinds(found), counter))
                continue
            hoisted = []
            calls = _Calls(fs, checker, counter, hoisted, stmt)
            for owner, field in _own_expressions(stmt):
                setattr(owner, field, calls.visit(getattr(owner, field)))
            out.extend(hoisted)
            out.append(stmt)
        return out

    fs.tree.body = rewrite(fs.tree.body)
    return True


def _calls_a_user_function(fs, nodes=None, local=None) -> bool:
    """Whether ``fs``'s function calls, by a name or attribute chain of its globals or
    closure, a Python function outside the library modules: the only calls that can be of
    a helper writing into its arguments (a method or a callee found at run time is not)."""
    if nodes is None:  # one walk for the local names and the calls
        nodes, local = lean_nodes(fs.tree), None
    if local is None:
        local = local_names(fs.tree, nodes)
    chains = {}  # each callee spelling once: a long function calls math.sin 1,000 times
    for node in nodes:
        if isinstance(node, gast.Call):
            parts = dotted_parts(node.func)
            if parts is not None and parts[0] not in local:
                chains.setdefault(tuple(parts), node.func)
    for func in chains.values():
        found, value = resolve_expr(fs, func, local)
        if found and isinstance(value, types.FunctionType):
            if not is_library_module_name(getattr(value, "__module__", None) or ""):
                return True
    return False


def _own_expressions(stmt) -> list:
    """``(node, field)`` of the expressions of ``stmt`` itself, not of the statements it
    holds (a simple statement: its fields, rewritten in place)."""
    if isinstance(stmt, (gast.If, gast.While)):
        return [(stmt, "test")]
    if isinstance(stmt, gast.For):
        return [(stmt, "iter")]
    if isinstance(stmt, gast.With):
        return [(item, "context_expr") for item in stmt.items]
    if isinstance(stmt, (gast.Try, *SCOPES)):
        return []
    fields = ("value", "test", "msg", "exc")
    return [(stmt, f) for f in fields if getattr(stmt, f, None) is not None]


class _Calls(gast.NodeTransformer):
    """Owning calls inside an expression of ``stmt``: one with a local array (a name) runs
    just before ``stmt`` (the check made sure that is the same: hoistable), its value read
    back where it was; one with only new arrays is called in place."""

    def __init__(self, fs, checker, counter, hoisted, stmt):
        self.fs, self.checker, self.counter = fs, checker, counter
        self.hoisted, self.stmt = hoisted, stmt

    def visit_FunctionDef(self, node):
        return node  # a nested scope: its own statements

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

    def visit_Call(self, node):
        self.generic_visit(node)
        found = self.checker.owning_call(node)
        if found is None or found[3] is None:
            return node
        fn, source, owned, args, _ = found
        kinds = self.checker.owned_kinds(found)
        names = [p for p in owned if isinstance(args.get(p), gast.Name)]
        call = _special_call(self.fs, fn, owned, kinds, node)
        if not names:
            return N.located(N.subscript(call, N.const(0)), node)
        self.counter[0] += 1
        result = f"{RESULT_PREFIX}{self.counter[0]}"
        self.hoisted.append(N.assign(result, call, self.stmt))
        for index, (p, kind) in enumerate(zip(owned, kinds, strict=True), start=1):
            if p in names:
                state = _state(result, index, self.stmt, kind)
                self.hoisted.append(N.assign(args[p].id, state, self.stmt))
        return N.located(N.subscript(result, N.const(0)), node)


def _special_call(fs, fn, owned, kinds, call):
    """``call`` calling the specialization of ``fn`` owning ``owned`` (bound in
    ``fs.namespace`` under a name of its own)."""
    special = specialization(fn, owned, kinds)
    name = f"{PREFIX}{fn.__name__}_{'_'.join(owned)}"
    k = 0
    while fs.namespace.get(name) not in (None, special):
        k += 1
        name = f"{PREFIX}{fn.__name__}_{'_'.join(owned)}{k}"
    fs.namespace[name] = special
    new_call = gast.Call(
        func=N.located(N.load(name), call.func), args=call.args, keywords=call.keywords
    )
    return gast.copy_location(new_call, call)


def _rebinding(fs, stmt, found, kinds, counter) -> list:
    fn, source, owned, args, _ = found
    counter[0] += 1
    result = f"{RESULT_PREFIX}{counter[0]}"
    stmts = [N.assign(result, _special_call(fs, fn, owned, kinds, stmt.value), stmt)]
    for index, (p, kind) in enumerate(zip(owned, kinds, strict=True), start=1):
        arg = args.get(p)
        if isinstance(arg, gast.Name):
            stmts.append(N.assign(arg.id, _state(result, index, stmt, kind), stmt))
    if isinstance(stmt, gast.Return):  # return fill(buf, x): the helper's result
        p = returned_parameter(source.tree, owned)
        index = 1 + owned.index(p) if p is not None and p in args else 0
        kind = kinds[index - 1] if index else None
        stmts.append(N.located(gast.Return(value=_state(result, index, stmt, kind)), stmt))
    if isinstance(stmt, gast.Assign):
        p = returned_parameter(source.tree, owned)
        arg = args.get(p) if p is not None else None
        target = stmt.targets[0]
        index = 0
        if p is not None and (
            not isinstance(arg, gast.Name)
            or isinstance(target, gast.Name) and target.id == arg.id
        ):
            index = 1 + owned.index(p)  # the same values: the copy no pullback holds
            if isinstance(arg, gast.Name):
                return stmts  # buf = fill(buf, x): buf = _pb_own1[1] already
        value = _state(result, index, stmt, kinds[index - 1] if index else None)
        stmts.append(N.located(gast.Assign(targets=[target], value=value, type_comment=None), stmt))
    return stmts


def _state(result, index, where, kind=None):
    """``result[index]``; for ``index >= 1`` marked as an owned parameter's final state
    (with its kind, "list" or "dict", for the container analysis)."""
    node = N.located(N.subscript(result, N.const(index)), where)
    if index:
        setattr(node, MARK, kind or True)
    return node
