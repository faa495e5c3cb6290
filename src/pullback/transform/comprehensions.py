"""Comprehensions, generator expressions and ``append`` on lists the function builds.

A comprehension becomes the loop Python runs for it, filling a hidden accumulator::

    ys = [f(v) for v in xs if v > 0]

is normalized as::

    _acc1 = []
    for _v2 in xs:            # then the usual loop normalization
        if _v2 > 0:
            _acc1 = list_append(_acc1, f(_v2))
    ys = _acc1

so nested generators, conditions, loops over ``zip``/``enumerate`` and every operation in
the element differentiate as loops do, with no call per element. The comprehension's
variables get fresh names (they are local to it in Python). A generator expression is
evaluated eagerly, as the ``sum``/``np.stack``/``max`` it is passed to would consume it.
A set comprehension builds a list and then ``set(...)`` of it; a dict comprehension fills
a dict with ``dict_set``.

``out.append(v)`` on a list the function creates itself (every assignment to ``out`` is a
list display, a comprehension or ``list(...)``) becomes ``out = list_append(out, v)``: in
place when no earlier state of ``out`` is read again (every other read of ``out`` comes
after the appends and outside their loops), else as a new list each time
(``list_appended``), so that the reverse sweep reads each state as it was.

>>> from pullback.transform.normalize import core_source
>>> def f(x):
...     return sum([x * k for k in range(3)])
>>> print(core_source(f))
def f(x):
    _ret = None
    _returned = False
    _acc1 = []
    for _k2 in range(3):
        _t3 = x * _k2
        _acc1 = list_append(_acc1, _t3)
        pass
    _ret = sum(_acc1)
    _returned = True
    return _ret
"""

from __future__ import annotations

import builtins
import copy

import gast

from ..containers import BUILDERS
from ..lambdas import inlinable_functions
from ..resolve import Callee, parent_map, resolve_call
from ..tree_walk import walk
from . import nodes as N
from .list_mutation import ListMutations
from .side_effects import append_read_back, held_callables

COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


class Append(gast.Pass):
    """``target = list_append(target, value)`` (or ``dict_set`` with ``key``) before
    normalization of ``value``; ``in_place`` picks ``list_append`` over ``list_appended``."""

    def __init__(self, target, value, where, key=None, in_place=True):
        super().__init__()
        self.target = target
        self.value = value
        self.key = key
        self.in_place = in_place
        gast.copy_location(self, where)


class Comprehensions(ListMutations):
    """Mixin of :class:`~.normalize.Normalizer`: comprehensions, list building, and the
    lambdas and one-line nested functions that are only called (:mod:`pullback.lambdas`)."""

    def inlinable(self) -> dict:
        cached = getattr(self, "_inlinable", None)
        if cached is None:
            cached = self._inlinable = inlinable_functions(self.fs.tree)
        return cached

    def parents(self) -> dict:
        """:func:`~pullback.resolve.parent_map` of the user's function, made once."""
        cached = getattr(self, "_parents", None)
        if cached is None:
            cached = self._parents = parent_map(self.fs.tree)
        return cached

    def stmt_FunctionDef(self, s):
        # Only one-line helpers that are only called get here (the check refused others):
        # their calls are inlined, the definition itself does nothing.
        return [], False

    def inline_call(self, e, stmts):
        """The value of ``e`` when it calls an inlinable lambda or one-line def, or changes
        a local list or dict (transform/list_mutation.py), else None."""
        changed = self.container_call(e, stmts)
        if changed is not None:
            return changed
        func = e.func
        if isinstance(func, gast.Lambda):
            found = (func.args, func.body)
        elif isinstance(func, gast.Name) and func.id in self.inlinable():
            found = self.inlinable()[func.id]
        else:
            return None
        args, expression = found
        params = [a.id for a in args.posonlyargs + args.args]
        if len(params) != len(e.args) or e.keywords:
            return None  # Python raises the TypeError when the call runs
        renames = {}
        for param, arg in zip(params, e.args, strict=True):
            atom = self.atom(arg, stmts)
            name = self.fresh(param.strip("_") or "p")
            stmts.append(N.assign(name, atom, arg))
            renames[param] = name
        body = ScopedRenamer(renames).visit(copy.deepcopy(expression))
        return self.operation(body, stmts)

    def higher_order(self, e):
        """``map(f, xs, ...)`` / ``filter(f, xs)`` as the comprehension that computes the
        same list, else None."""
        if e.keywords or len(e.args) < 2 or any(isinstance(a, gast.Starred) for a in e.args):
            return None
        callee = resolve_call(self.fs, e, self.locals)
        if callee.kind != "object" or callee.obj not in (builtins.map, builtins.filter):
            return None
        f, *iterables = e.args
        if callee.obj is builtins.filter and len(iterables) != 1:
            return None
        names = [self.fresh("item") for _ in iterables]
        if len(iterables) == 1:
            target, it = N.store(names[0]), iterables[0]
        else:
            target = N.tuple_([N.store(n) for n in names], ctx=gast.Store())
            it = N.call("zip", list(iterables))
        items = [N.load(n) for n in names]
        if callee.obj is builtins.map:
            elt, ifs = N.call(copy.deepcopy(f), items), []
        else:
            test = items[0] if _is_none(f) else N.call(copy.deepcopy(f), items)
            elt, ifs = items[0], [test]
        comp = gast.comprehension(target=target, iter=it, ifs=ifs, is_async=0)
        return N.located(gast.ListComp(elt=elt, generators=[comp]), e)

    def comprehension(self, e, stmts):
        is_dict = isinstance(e, gast.DictComp)
        acc = self.fresh("acc")
        empty = gast.Dict(keys=[], values=[]) if is_dict else gast.List(elts=[], ctx=gast.Load())
        stmts.append(N.assign(acc, gast.copy_location(empty, e), e))
        renames = {}
        for comp in e.generators:
            for node in walk(comp.target):
                if isinstance(node, gast.Name):
                    renames[node.id] = self.fresh(node.id.strip("_") or "v")
        first_iter = e.generators[0].iter  # evaluated in the enclosing scope

        def renamed(node):
            if node is None:
                return None
            return ScopedRenamer(renames).visit(copy.deepcopy(node))

        if is_dict:
            inner = Append(acc, renamed(e.value), e, key=renamed(e.key))
        else:
            inner = Append(acc, renamed(e.elt), e)
        for comp in reversed(e.generators):
            for cond in reversed(comp.ifs):
                inner = N.located(gast.If(test=renamed(cond), body=[inner], orelse=[]), e)
            it = first_iter if comp is e.generators[0] else renamed(comp.iter)
            inner = N.located(
                gast.For(
                    target=renamed(comp.target),
                    iter=it,
                    body=[inner],
                    orelse=[],
                    type_comment=None,
                ),
                e,
            )
        new, _ = self.stmt(inner)
        stmts.extend(new)
        if isinstance(e, gast.SetComp):
            self.namespace["_pb_set"] = builtins.set
            return N.call("_pb_set", [N.load(acc)])
        return N.load(acc)

    def stmt_Append(self, s):
        stmts, value = self.expr(s.value)
        args = [N.load(s.target)]
        if s.key is not None:
            more, key = self.expr(s.key)
            stmts.extend(more)
            args.append(key)
            name = "dict_set"
        else:
            name = "list_append" if s.in_place else "list_appended"
        args.append(value)
        fn = BUILDERS[name]
        self.namespace[name] = fn
        call = N.call(name, args)
        call.pb_callee = Callee("internal", fn, name=name)
        stmts.append(N.assign(s.target, call, s))
        return stmts, False

    def local_append(self, s):
        """``out.append(v)`` on a list the function builds: an :class:`Append`, else None."""
        call = s.value
        if not (
            isinstance(call, gast.Call)
            and isinstance(call.func, gast.Attribute)
            and call.func.attr == "append"
            and isinstance(call.func.value, gast.Name)
            and len(call.args) == 1
            and not isinstance(call.args[0], gast.Starred)
            and not call.keywords
        ):
            return None
        name = call.func.value.id
        if name not in self.built_lists() or self.containers().refusal(name) is not None:
            return None
        # in place also when every change of the list is (list_analysis.in_place)
        in_place = self.appends_in_place(name) or self.in_place(name)
        return Append(name, call.args[0], s, in_place=in_place)

    def mark_outside_append(self, call, normalized):
        """``outside.append(v)`` (a container the function did not build) runs as written;
        mark it so the reverse sweep refuses it (PB106) only where a differentiated value
        would come back (transform/side_effects.py)."""
        func = call.func if isinstance(call, gast.Call) else None
        if not (isinstance(func, gast.Attribute) and func.attr == "append"):
            return
        normalized.pb_outside_append = func
        normalized.pb_outside_value = call.args[0] if len(call.args) == 1 else None
        parents = self.parents()
        statement = call
        while statement is not None and not isinstance(statement, gast.stmt):
            statement = parents.get(statement)
        held = held_callables(self.fs, func.value, self.locals)
        normalized.pb_read_back = append_read_back(self.fs.tree, func, statement, parents, held)

    def built_lists(self) -> set:
        """Locals whose every assignment makes a new list (display, comprehension, list())."""
        cached = getattr(self, "_built_lists", None)
        if cached is not None:
            return cached
        tree = self.fs.tree
        params = {a.id for a in tree.args.posonlyargs + tree.args.args + tree.args.kwonlyargs}
        for a in (tree.args.vararg, tree.args.kwarg):
            if a is not None:
                params.add(a.id)
        assigned = {
            id(sub)
            for node in walk(tree)
            if isinstance(node, gast.Assign)
            for target in node.targets
            for sub in walk(target)
        }
        candidates: dict[str, bool] = {}
        for node in walk(tree):
            if isinstance(node, gast.Assign):
                fresh = self.makes_new_list(node.value)
                for target in node.targets:
                    for sub in walk(target):
                        if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Store):
                            ok = fresh and isinstance(target, gast.Name)
                            candidates[sub.id] = candidates.get(sub.id, True) and ok
            elif isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                if id(node) not in assigned:
                    candidates[node.id] = False  # a loop target, augmented assignment, ...
        self._built_lists = {n for n, ok in candidates.items() if ok and n not in params}
        return self._built_lists

    def makes_new_list(self, value) -> bool:
        if isinstance(value, (gast.List, gast.ListComp)):
            return True
        if isinstance(value, gast.Call) and not value.keywords:
            callee = resolve_call(self.fs, value, self.locals)
            return callee.kind == "object" and callee.obj is builtins.list
        return False

    def appends_in_place(self, name) -> bool:
        """Whether no state of ``name`` before an append is read again: every read of it
        other than its appends comes after them all, outside the loops that append."""
        tree = self.fs.tree
        parents = self.parents()
        appends, reads = [], []
        for node in walk(tree):
            if isinstance(node, gast.Name) and node.id == name and isinstance(node.ctx, gast.Load):
                parent = parents.get(node)
                call = parents.get(parent)
                if (
                    isinstance(parent, gast.Attribute)
                    and parent.attr == "append"
                    and isinstance(call, gast.Call)
                    and call.func is parent
                ):
                    appends.append(call)
                else:
                    reads.append(node)
        if not appends:
            return True
        last = max((a.lineno, a.col_offset) for a in appends)
        loops = set()
        for a in appends:
            loops.update(id(p) for p in _ancestors(a, parents) if isinstance(p, _LOOPS))
        for r in reads:
            if (r.lineno, r.col_offset) < last:
                return False
            if any(id(p) in loops for p in _ancestors(r, parents)):
                return False
        return True


_LOOPS = (gast.For, gast.While)


class ScopedRenamer(gast.NodeTransformer):
    """Rename the comprehension's own variables (not those a nested scope rebinds)."""

    def __init__(self, renames):
        self.renames = renames

    def visit_Name(self, node):
        new = self.renames.get(node.id)
        if new is not None:
            node.id = new
        return node

    def _scoped(self, node):
        bound = {
            n.id for comp in node.generators for n in walk(comp.target) if isinstance(n, gast.Name)
        }
        inner = ScopedRenamer({k: v for k, v in self.renames.items() if k not in bound})
        node.generators[0].iter = self.visit(node.generators[0].iter)
        for k, comp in enumerate(node.generators):
            if k:
                comp.iter = inner.visit(comp.iter)
            comp.target = inner.visit(comp.target)
            comp.ifs = [inner.visit(c) for c in comp.ifs]
        for field in ("elt", "key", "value"):
            if getattr(node, field, None) is not None:
                setattr(node, field, inner.visit(getattr(node, field)))
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _scoped

    def visit_Lambda(self, node):
        params = {a.id for a in node.args.args + node.args.posonlyargs + node.args.kwonlyargs}
        node.body = ScopedRenamer({k: v for k, v in self.renames.items() if k not in params}).visit(
            node.body
        )
        return node


def _ancestors(node, parents):
    node = parents.get(node)
    while node is not None:
        yield node
        node = parents.get(node)


def _is_none(node) -> bool:
    return isinstance(node, gast.Constant) and node.value is None
