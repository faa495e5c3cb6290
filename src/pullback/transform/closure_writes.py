"""Nested functions that write ``nonlocal`` variables (a part of the lifting in :mod:`.closures`).

``def add(v): nonlocal total; total = total + v * w`` inside ``f``, only called, is lifted
like any nested function, with one more step: the lifted ``add`` takes ``total`` as a
parameter (as it takes what it reads) and returns ``(result, total)``, and each call
``r = add(a)`` in ``f`` becomes ``r, total = add(a, w, total)``. A nested function that
calls ``add`` changes ``total`` too, and is rewritten the same way
(:func:`pullback.lambdas.nonlocal_writers` finds them all).

Why this is exact: after each call, ``f``'s ``total`` holds the value the call left in
the closure cell, which is what Python would read there; ``add`` reads ``total`` when it
runs, and is given the value at the call. Gradients flow through the returned value like
through any user function's result.

A call inside a larger expression is made a statement of its own first, in Python's order
of evaluation: what the expression evaluates before the call (other calls, reads of the
variables the call changes) is computed into temporaries before it (:class:`_Hoister`);
a ``while`` loop whose test calls it becomes ``while True:`` that calls it first, and a
list or dict comprehension (or a generator expression that ``sum``, ``list``, ... consume
where it is written) that calls it becomes ``for`` loops. Where
that cannot be exact the check refuses (PB405, :func:`write_refusal`, with a fix from
:func:`write_fix`): a call in a part of an expression that may not run (``and``, ``or``,
``x if c else y``, a chained comparison), in a lambda, in a set comprehension, in a
comprehension inside another or a generator expression consumed later, in the test of
a ``while`` loop with an ``else``, in an augmented assignment whose target reads what
the call changes (``total += add(v)``); the function stored, returned or passed on (its
cell would outlive the call); a generator; a ``nonlocal`` of a function further out than
the one it is lifted from; a call from a function nested in another nested function.

>>> import gast
>>> tree = gast.parse('''
... def f(x):
...     n = 0
...     def tick(v):
...         nonlocal n
...         n = n + 1
...         return v
...     return x * tick(x) + n
... ''').body[0]
>>> [d.name for d in nested_definitions(tree) if write_refusal(tree, d) is None]
['tick']
"""

from __future__ import annotations

import re

import gast

from ..lambdas import declared_nonlocal, nested_definitions, nonlocal_writers
from ..resolve import SCOPES, own_nodes, parent_map
from ..tree_walk import statements, walk
from . import nodes as N
from .side_effects import _replace as replace_child

_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)
# statements whose expression (the field named) runs once, before anything else they do
_HEADS = {
    gast.Expr: "value",
    gast.Assign: "value",
    gast.AnnAssign: "value",
    gast.AugAssign: "value",
    gast.Return: "value",
    gast.If: "test",
    gast.For: "iter",
}


def write_refusal(tree, node, parents=None) -> str | None:
    """Why the nested ``def`` ``node`` of ``tree``, which changes variables of ``tree``
    (or ``nonlocal`` ones of a function inside it), cannot be lifted, or None."""
    if not any(isinstance(s, gast.Nonlocal) for s in statements(tree)):
        return None  # the common case, found by a walk of the statements only
    parents = parent_map(tree) if parents is None else parents
    why = _deeper_refusal(node, parents)
    if why is not None:
        return why
    if not any(d is node for d in nested_definitions(tree)):
        return None  # lifted with the function around it, and then from that one
    writes = nonlocal_writers(tree).get(node.name)
    if not writes:
        return None
    own = _own_bindings(tree)
    outside = sorted(n for n in declared_nonlocal(node) if n not in own)
    if outside:
        return (
            f"it writes 'nonlocal {', '.join(outside)}' of a function around "
            f"'{tree.name}', which lifting it out of '{tree.name}' cannot reach"
        )
    spelled = f"'nonlocal {', '.join(sorted(writes))}'"
    hidden = sorted((writes - set(declared_nonlocal(node))) & _own_bindings(node))
    if hidden:  # it calls a sibling that writes f's 'total' and has a 'total' of its own
        return (
            f"it calls a nested function that writes 'nonlocal {hidden[0]}' and has a "
            f"variable '{hidden[0]}' of its own, which is not the one the call changes"
        )
    scopes = {id(tree)} | {id(d) for d in nested_definitions(tree)}
    if any(isinstance(s, (gast.Yield, gast.YieldFrom)) for s in own_nodes(node.body)):
        return f"a generator that writes {spelled}: its calls return no value to assign it back"
    for sub in walk(tree):
        if isinstance(sub, gast.Name) and sub.id == node.name and isinstance(sub.ctx, gast.Load):
            call = parents.get(sub)
            if not (isinstance(call, gast.Call) and call.func is sub):
                return (
                    f"it writes {spelled} and '{node.name}' is used as a value (returned, "
                    "stored or passed on): its closure cell would outlive the call"
                )
            if id(_scope_of(call, parents)) not in scopes:
                return (
                    f"it writes {spelled} and is called by a function nested in another "
                    f"nested function, whose call of '{node.name}' lifting cannot reach"
                )
            why = _site_refusal(call, parents, writes)
            if why is not None:
                return f"it writes {spelled} and is called {why}"
    return None


def _own_bindings(fn) -> set:
    """Parameters of ``fn`` and names its own scope binds (not those it declares
    ``global``/``nonlocal``)."""
    args = fn.args
    names = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
    names |= {a.id for a in (args.vararg, args.kwarg) if a is not None}
    declared = set()
    for n in own_nodes(fn.body):
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            names.add(n.id)
        elif isinstance(n, (gast.FunctionDef, gast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, (gast.Global, gast.Nonlocal)):
            declared.update(n.names)
    return names - declared


def _deeper_refusal(node, parents) -> str | None:
    """A function nested in ``node`` that writes ``nonlocal`` variables must find them in
    ``node`` or in a function between: lifting ``node`` reaches no further."""
    for sub in walk(node):
        if not isinstance(sub, gast.Nonlocal) or _scope_of(sub, parents) is node:
            continue
        for name in sub.names:
            scope = parents.get(_scope_of(sub, parents))
            while scope is not None and scope is not node:
                if isinstance(scope, gast.FunctionDef) and name in _own_bindings(scope):
                    break
                scope = parents.get(scope)
            if scope is node and name not in _own_bindings(node):
                if name in declared_nonlocal(node):
                    continue  # node writes it too: lifted with it
                return (
                    f"a function nested in it writes 'nonlocal {name}' of a function two "
                    "or more levels up, which lifting cannot reach"
                )
    return None


# builtins that consume a generator expression whole, where it is written
_CONSUMERS = frozenset({"sum", "list", "tuple", "sorted", "min", "max"})


def _eager_comprehension(node, parents) -> bool:
    """A list or dict comprehension, or a generator expression that is the one positional
    argument of ``sum``/``list``/``tuple``/``sorted``/``min``/``max``: its elements are all
    computed, in order, where it is written, so a ``for`` loop computes the same
    (:meth:`_Hoister.unroll`)."""
    if isinstance(node, (gast.ListComp, gast.DictComp)):
        return True
    call = parents.get(node)
    return (
        isinstance(node, gast.GeneratorExp)
        and isinstance(call, gast.Call)
        and isinstance(call.func, gast.Name)
        and call.func.id in _CONSUMERS
        and len(call.args) == 1
        and call.args[0] is node
    )


def _scope_of(node, parents):
    up = parents.get(node)
    while up is not None and not isinstance(up, gast.FunctionDef):
        up = parents.get(up)
    return up


def _site_refusal(call, parents, writes) -> str | None:
    """Why the call ``call`` of a function that changes ``writes`` cannot be made a
    statement of its own without changing what runs (and in which order), or None."""
    child, up = call, parents.get(call)
    loops = 0  # comprehensions around the call, each made a loop
    while up is not None and not isinstance(up, gast.stmt):
        loops += isinstance(up, _COMPREHENSIONS)
        if loops > 1:
            return "in a comprehension inside another comprehension"
        if isinstance(up, gast.Lambda) or (
            isinstance(up, _COMPREHENSIONS) and not _eager_comprehension(up, parents)
        ):
            return (
                "in a lambda, a set comprehension or a generator expression that is not "
                "consumed where it is written, where the call cannot be a statement of its own"
            )
        if (
            (isinstance(up, gast.BoolOp) and child is not up.values[0])
            or (isinstance(up, gast.IfExp) and child is not up.test)
            or (isinstance(up, gast.Compare) and child in up.comparators[1:])
        ):
            return (
                "in a part of an expression that may not run (`and`, `or`, `x if c else y`, "
                "a chained comparison)"
            )
        if isinstance(up, gast.NamedExpr):
            return "inside `:=`"
        child, up = up, parents.get(up)
    if up is None:
        return "outside a statement"  # pragma: no cover - a call is in some statement
    field = _HEADS.get(type(up))
    if field is None or getattr(up, field) is not child:
        if isinstance(up, gast.While) and up.test is child:
            if not up.orelse:
                return None  # `while True:` that calls it first (_Hoister.loop_test)
            return "in the test of a `while` loop with an `else`"
        return "where the call cannot be made a statement of its own"
    if isinstance(up, gast.AugAssign):  # its target is read before the call
        read = sorted({n.id for n in walk(up.target) if isinstance(n, gast.Name)} & writes)
        if read:
            return f"in an augmented assignment of '{read[0]}', which the call also changes"
    return None


_FIXES = (  # (what the refusal says, the fix for it)
    (
        "which lifting",
        "make '{var}' a parameter of '{fn}' and return its new value with the "
        "result: `r, {var} = {fn}(..., {var})`",
    ),
    (
        "a generator that writes",
        "collect what it yields in a list and return that (`out.append(...)`, "
        "`return out`): a nested function that returns is lifted with its nonlocal writes",
    ),
    (
        "used as a value",
        "call '{fn}' only by name (`r = {fn}(...)`), or make '{var}' a "
        "parameter and return its new value (`r, {var} = {fn}(..., {var})`) and pass that on",
    ),
    (
        "inside another comprehension",
        "write the comprehensions as `for` loops that append what '{fn}' returns to one "
        "list, and reshape it after the loops (`np.reshape(values, (n, m))`)",
    ),
    (
        "comprehension",
        "write it as a `for` loop (and a lambda as a `def`) that calls '{fn}' in a statement "
        "of its own (`r = {fn}(v)`)",
    ),
    ("may not run", "call '{fn}' in an `if` statement: `if c: r = {fn}(...)`"),
    (
        "`while` loop",
        "write the loop without `else`: set a flag before each `break` and test it after the loop",
    ),
    (
        "augmented",
        "call '{fn}' in a statement of its own first (`r = {fn}(...)`), then write the "
        "augmented assignment with `r`: it then reads '{var}' after the call, where Python "
        "reads it before; write whichever is meant",
    ),
    (
        "of its own, which",
        "rename the variable '{var}' of '{fn}', or declare it `nonlocal {var}` in '{fn}' if "
        "it is meant to be the same",
    ),
    (
        "nested in another",
        "call '{fn}' from the enclosing function or from a function defined directly in it",
    ),
    ("", "call '{fn}' in a statement of its own: `r = {fn}(...)`"),
)


def write_fix(fn: str, why: str) -> str | None:
    """The fix for a refusal of :func:`write_refusal` (None for any other refusal)."""
    found = re.search(r"'nonlocal ([\w, ]+)'", why)
    if found is None:
        return None
    var = found.group(1).split(",")[0]
    for phrase, fix in _FIXES:
        if phrase in why:
            return fix.format(fn=fn, var=var)
    return None  # pragma: no cover - the last phrase matches every refusal


# -- the rewriting -----------------------------------------------------------------------------
def return_written(lifted, writes) -> None:
    """The lifted function ``lifted`` declares nothing ``nonlocal`` and returns
    ``(result, *writes)`` wherever it returns (``None`` for the result at its end)."""

    def names():
        return [N.load(w) for w in writes]

    for sub in list(own_nodes(lifted.body)):
        if isinstance(sub, gast.Return):
            value = sub.value if sub.value is not None else N.const(None)
            sub.value = N.located(N.tuple_([value] + names()), sub)
    _drop_nonlocal(lifted, set(writes))
    end = N.located(gast.Return(value=N.tuple_([N.const(None)] + names())), lifted.body[-1])
    lifted.body.append(end)


def _drop_nonlocal(fn, writes) -> None:
    """No ``nonlocal`` statements; ``total += v`` of a written name becomes
    ``total = total + v``: the enclosing function's check found no other name that holds
    its value (PB105), so the two leave the same values, and in the lifted function
    ``total`` is a parameter, which may not be changed in place."""

    def visit(stmts):
        out = []
        for s in stmts:
            if isinstance(s, gast.Nonlocal):
                continue
            if (
                isinstance(s, gast.AugAssign)
                and isinstance(s.target, gast.Name)
                and s.target.id in writes
            ):
                name = s.target.id
                value = N.located(gast.BinOp(left=N.load(name), op=s.op, right=s.value), s)
                s = N.assign(name, value, s)
            if not isinstance(s, SCOPES):
                for field in ("body", "orelse", "finalbody"):
                    if getattr(s, field, None):
                        setattr(s, field, visit(getattr(s, field)) or [N.located(gast.Pass(), s)])
                for handler in getattr(s, "handlers", None) or []:
                    handler.body = visit(handler.body) or [N.located(gast.Pass(), handler)]
            out.append(s)
        return out

    fn.body = visit(fn.body) or [N.located(gast.Pass(), fn)]


class _Hoister:
    """Calls of writing functions in one function's own scope become statements
    ``r, total = add(...)``, after what their expression evaluates before them."""

    def __init__(self, writes):
        self.writes = writes  # {name: [variables]}
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        return f"_pb_nl{self.count}"

    def block(self, stmts) -> list:
        out = []
        for s in stmts:
            if isinstance(s, SCOPES):
                out.append(s)
                continue
            field = _HEADS.get(type(s))
            if field is not None and getattr(s, field, None) is not None:
                out += self.head(s, field)
            for f in ("body", "orelse", "finalbody"):
                if getattr(s, f, None):
                    setattr(s, f, self.block(getattr(s, f)))
            for handler in getattr(s, "handlers", None) or []:
                handler.body = self.block(handler.body)
            if isinstance(s, gast.While) and any(self.writing(n) for n in walk(s.test)):
                self.loop_test(s)  # (after its body: what it adds there is done)
            out.append(s)
        return out

    def loop_test(self, loop) -> None:
        """``while c: body`` (no ``else``: the check made sure) becomes ``while True:``,
        then ``c``'s statements, ``if not c: break`` and ``body``: the test runs before
        each iteration as before (``continue`` goes back to it), its calls now statements."""
        test = gast.If(
            test=N.located(gast.UnaryOp(op=gast.Not(), operand=loop.test), loop.test),
            body=[N.located(gast.Break(), loop)],
            orelse=[],
        )
        test = N.located(test, loop)
        loop.test = N.located(N.const(True), loop.test)
        loop.body = [*self.head(test, "test"), test, *loop.body]

    def writing(self, node) -> bool:
        return (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Name)
            and node.func.id in self.writes
        )

    def head(self, stmt, field) -> list:
        """The statements that go before ``stmt``, whose ``field`` they leave with no
        writing call."""
        pre = []
        holder = [getattr(stmt, field)]
        while True:
            order = list(_evaluation_order(holder[0]))
            parents = parent_map(holder[0])
            call = next((n for n in order if self.writing(n) or self.loop(n, parents)), None)
            if call is None:
                break
            inside = {id(n) for n in walk(call)}
            ancestors = set()
            up = parents.get(call)
            while up is not None:
                ancestors.add(id(up))
                up = parents.get(up)
            changed = {w for n in walk(call) if self.writing(n) for w in self.writes[n.func.id]}
            before = [n for n in order[: order.index(call)] if id(n) not in inside]
            calls = [n for n in before if isinstance(n, gast.Call) and id(n) not in ancestors]
            within = {id(m) for c in calls for m in walk(c) if m is not c}
            for n in before:  # in the order Python evaluates them
                if id(n) in within:
                    continue  # part of a call hoisted whole, which reads it first
                if isinstance(n, gast.Call) and id(n) not in ancestors:
                    pre.append(self.bind(n, parents, holder))  # it still runs first
                elif isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in changed:
                    pre.append(self.bind(n, parents, holder))  # the value before the call
            if not self.writing(call):  # a comprehension: a loop of statements
                statements_, result = self.unroll(call)
                pre += statements_
                _replace(call, N.located(N.load(result), call), parents, holder)
                continue
            result = self.fresh()
            targets = [N.store(result)] + [N.store(w) for w in self.writes[call.func.id]]
            _replace(call, N.located(N.load(result), call), parents, holder)
            pre.append(N.assign(N.located(N.tuple_(targets, gast.Store()), call), call, call))
        setattr(stmt, field, holder[0])
        return pre

    def loop(self, node, parents) -> bool:
        """A comprehension that calls a writing function and computes all its elements
        where it is written (the check refused the others)."""
        return _eager_comprehension(node, parents) and any(self.writing(n) for n in walk(node))

    def unroll(self, comp) -> tuple[list, str]:
        """The statements of the ``for`` loops that compute the comprehension ``comp``
        (its variables renamed, as they are not the function's), and the name of the list
        or dict they fill. A dict's key is computed before its value, as Python does."""
        first = {id(n) for n in walk(comp.generators[0].iter)}  # read outside it
        bound = sorted(
            {n.id for g in comp.generators for n in walk(g.target) if isinstance(n, gast.Name)}
        )
        fresh = {name: self.fresh() for name in bound}
        for n in walk(comp):
            if isinstance(n, gast.Name) and n.id in fresh and id(n) not in first:
                n.id = fresh[n.id]
        result = self.fresh()
        if isinstance(comp, gast.DictComp):
            key = self.fresh()
            start = gast.Dict(keys=[], values=[])
            body = [
                N.assign(key, comp.key, comp.key),
                N.assign(N.subscript(result, N.load(key)), comp.value, comp.value),
            ]
            body[1].targets[0].ctx = gast.Store()
        else:
            start = gast.List(elts=[], ctx=gast.Load())
            body = [N.expr_stmt(N.call(N.attr(result, "append"), [comp.elt]), comp.elt)]
        for g in reversed(comp.generators):
            for test in reversed(g.ifs):
                body = [N.located(gast.If(test=test, body=body, orelse=[]), test)]
            loop = gast.For(target=g.target, iter=g.iter, body=body, orelse=[], type_comment=None)
            body = [N.located(loop, g.iter)]
        return [N.assign(result, N.located(start, comp), comp), *self.block(body)], result

    def bind(self, node, parents, holder):
        """``_pb_nlK = node`` (to go first); ``node`` becomes ``_pb_nlK`` where it was."""
        name = self.fresh()
        _replace(node, N.located(N.load(name), node), parents, holder)
        return N.assign(name, node, node)


def _replace(old, new, parents, holder) -> None:
    if parents.get(old) is None:  # the whole expression
        holder[0] = gast.copy_location(new, old)
    else:
        replace_child(parents, old, new)


def _evaluation_order(node):
    """The nodes of the expression ``node``, each after what Python evaluates before it
    (its operands, the operands to its left): a post-order walk."""
    if isinstance(node, gast.Dict):
        children = []
        for k, v in zip(node.keys, node.values, strict=True):
            children += [k, v] if k is not None else [v]
    elif isinstance(node, _COMPREHENSIONS + (gast.Lambda,)):
        children = []  # left whole (made a loop, or a writing call inside is refused)
    else:
        children = list(gast.iter_child_nodes(node))
    for child in children:
        yield from _evaluation_order(child)
    yield node


def lift_writes(tree, writers, lifted_trees) -> dict:
    """Rewrite the calls of the lifted functions that change variables of ``tree``
    (``writers``, :func:`pullback.lambdas.nonlocal_writers` of ``tree`` before lifting)
    in ``tree`` and in the lifted functions, and the returns of the writing ones.
    Returns ``{name: [variables it changes]}`` (sorted)."""
    writes = {n: sorted(w) for n, w in writers.items() if n in lifted_trees}
    if not writes:
        return {}
    for lifted in [tree, *lifted_trees.values()]:
        lifted.body = _Hoister(writes).block(lifted.body)
    for name, variables in writes.items():
        return_written(lifted_trees[name], variables)
    return writes
