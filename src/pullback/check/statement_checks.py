"""Statements and expressions with a fixed verdict: loops, ``with``, ``try``, ``raise``,
``assert``, ``global``/``nonlocal``, imports, ``match``, comprehensions, ``yield``, ``await``
and the walrus.

A mixin of :class:`~pullback.check.checker.FunctionChecker`.
"""

from __future__ import annotations

import gast

from ..source_imports import import_refusal
from ..transform.generators import (
    NEVER_ENDS,
    body_refusal,
    consumption_refusal,
    is_generator_function,
    mark_yield_statements,
)
from ..transform.with_blocks import is_general, with_problem
from ..tree_walk import walk
from . import codes
from .free_writes import free_write_refusal


class StatementChecks:
    """Visitors of :class:`~pullback.check.checker.FunctionChecker`; see the module docstring."""

    def visit_For(self, node):
        self._check_target(node.target, None)
        # `for a, b in zip(xs, ys)` and `enumerate(xs)` are rewritten into index loops.
        self._loop_iterators.add(id(node.iter))
        self.visit(node.iter)
        self.visit_all(node.body)
        self.visit_all(node.orelse)

    def visit_AsyncFor(self, node):
        self.report(
            node,
            "PB403",
            "async for cannot be differentiated",
            width=len("async for"),
            fix=f"collect the values before calling the function ({codes.see('PB403')}).",
        )
        self.visit_For(node)

    def _report_with(self, node, keyword, code):
        if code == "PB202":
            problem = with_problem(self.fs, node, self.locals, self.tainted())
            if problem is None:  # a block that always runs (with_blocks.py)
                if is_general(self.fs, node, self.locals):
                    for item in node.items:  # the manager carries no gradient: it runs
                        self._forward_only += 1
                        try:
                            self.visit(item.context_expr)
                        finally:
                            self._forward_only -= 1
                self.visit_all(node.body)
                return
            message, fix = problem
        else:
            message = f"{keyword} statement cannot be differentiated"
            fix = (
                "move the `with` block outside the differentiated function, or register a "
                "rule for a helper that contains it"
            )
        self.report(node, code, message, width=len(keyword), fix=f"{fix} ({codes.see(code)}).")
        for item in node.items:
            self._forward_only += 1  # the with is reported: its manager's call is noise
            try:
                self.visit(item.context_expr)
            finally:
                self._forward_only -= 1
            if item.optional_vars is not None:
                self._check_target(item.optional_vars, None)
        self.visit_all(node.body)

    def visit_With(self, node):
        self._report_with(node, "with", "PB202")

    def visit_AsyncWith(self, node):
        self._report_with(node, "async with", "PB403")

    def visit_Try(self, node):
        # lowered into steps whose completion is recorded like a branch (try_blocks.py)
        self._visit_try_parts(node)

    def _visit_try_parts(self, node):
        self.visit_all(node.body)
        for handler in node.handlers:
            if handler.type is not None:
                self.visit(handler.type)
            self.visit_all(handler.body)
        self.visit_all(node.orelse)
        self.visit_all(node.finalbody)

    def visit_TryStar(self, node):
        self.report(
            node,
            "PB400",
            "try/except* (exception groups) cannot be differentiated",
            why="An except* clause splits one exception group among several handlers, which "
            "the lowering of try statements (one handler per exception) does not model.",
            width=len("try"),
            fix="catch the exception group with a plain `except ExceptionGroup:` clause, or "
            "move the try statement outside the differentiated function "
            f"({codes.see('PB400')}).",
        )
        self._visit_try_parts(node)

    def visit_Raise(self, node):
        self._forward_only += 1
        try:
            self.generic_visit(node)
        finally:
            self._forward_only -= 1

    def visit_Assert(self, node):
        self.visit(node.test)
        if node.msg is not None:
            self.visit_Raise(gast.Expr(value=node.msg))

    def _visit_scope(self, node, keyword):
        if self._in_nested_function(node, keyword):
            return  # returned to the caller (transform/closure_writes.py), or refused (PB405)
        why = None
        if self._declared_here(node):
            # a counter or log: written as in the primal where no gradient reaches it
            reasons = [
                free_write_refusal(self.tree, n, self.tainted(), self._parent_map())
                for n in node.names
            ]
            why = next((r for r in reasons if r is not None), None)
            if why is None:
                return
        names = ", ".join(node.names)
        self.report(
            node,
            "PB401",
            f"'{keyword} {names}' is not supported" + (f": {why}" if why else ""),
            fix="pass the value in as an argument and return the new value, e.g. "
            f"`def step(x, state): ...; return y, new_state`; a name that only counts or "
            f"logs values that carry no gradient may be written ({codes.see('PB401')}).",
        )

    def _in_nested_function(self, node, keyword) -> bool:
        """``node`` belongs to a nested function whose ``nonlocal`` writes the transform
        lifts, or whose PB405 already names the declaration."""
        up = self._parent_map().get(node)
        while up is not None and not isinstance(up, gast.FunctionDef):
            up = self._parent_map().get(up)
        if up is None or up is self.tree:
            return False
        return id(up) in self._refused_defs or (
            keyword == "nonlocal" and id(up) in self._lifted_defs
        )

    def _declared_here(self, node) -> bool:
        """``node`` belongs to the checked function's own scope (not a nested one)."""
        return self._free_declarations().get(node.names[0]) is node

    def visit_Global(self, node):
        self._visit_scope(node, "global")

    def visit_Nonlocal(self, node):
        self._visit_scope(node, "nonlocal")

    def _visit_import(self, node):
        why = import_refusal(self.fs, node)
        if why is None:  # a binding of free names, resolved like globals (source_imports)
            return
        if why.startswith("it fails"):
            fix = "make the import work (install or fix the module it names)"
        else:
            fix = (
                f"move `{self.text(node)}` to the top of the module, or to the top of the "
                "function's body with a name the function binds nowhere else"
            )
        self.report(
            node,
            "PB408",
            f"import inside a differentiated function: {why}",
            fix=f"{fix} ({codes.see('PB408')}).",
        )

    def visit_Match(self, node):
        # what match_cases.py lowers never gets here: the pattern it did not write
        why, fix = getattr(node, "pb_refusal", None) or (
            "a pattern pullback does not lower",
            "write the cases as an if/elif chain, e.g. `if kind == 'a': ... elif kind == 'b': ...`",
        )
        self.report(
            node,
            "PB409",
            f"match statement cannot be differentiated: {why}",
            width=len("match"),
            fix=f"{fix} ({codes.see('PB409')}).",
        )
        self.visit(node.subject)
        for case in node.cases:
            if case.guard is not None:
                self.visit(case.guard)
            self.visit_all(case.body)

    def _visit_comprehension(self, node):
        # Normalized into the loop Python runs (transform/comprehensions.py).
        for comp in node.generators:
            self._check_target(comp.target, None)
            self._loop_iterators.add(id(comp.iter))
            self.visit(comp.iter)
            self.visit_all(comp.ifs)
            if comp.is_async:
                self.report(
                    comp.target,
                    "PB403",
                    "async comprehension cannot be differentiated",
                    fix=f"collect the values before calling the function ({codes.see('PB403')}).",
                )
        if isinstance(node, gast.DictComp):
            self.visit(node.key)
            self.visit(node.value)
        else:
            self.visit(node.elt)

    def visit_ListComp(self, node):
        self._visit_comprehension(node)

    def visit_SetComp(self, node):
        self._visit_comprehension(node)

    def visit_DictComp(self, node):
        self._visit_comprehension(node)

    def visit_GeneratorExp(self, node):
        self.check_kept_iterator(node, "generator expression")
        late = late_bound_names(self.tree, node, self._parent_map())
        if late:
            names = ", ".join(f"'{n}'" for n in late)
            self.report(
                node,
                "PB402",
                f"this generator expression reads {names}, which may change before it runs: "
                "Python runs a generator when it is consumed, with the values its names have "
                "then, and pullback runs it where it is written",
                why="the gradient would be that of the values at the place it is written.",
                fix="make a list where it is written (`[...]` instead of `(...)`), or pass "
                f"the value in as the first iterable ({codes.see('PB402')}).",
            )
        self._visit_comprehension(node)

    def check_kept_iterator(self, node, what: str) -> None:
        """PB402 for ``name = <node>`` (a generator expression, a ``map``/``filter``
        object) whose name is read again after the pass that uses it up."""
        kept = kept_iterator(self.tree, node, self._parent_map())
        if kept is None:
            return
        name, reads = kept
        times = reads if reads == "repeatedly" else f"{reads} times"
        self.report(
            node,
            "PB402",
            f"the {what} kept in '{name}' is read {times}: Python's iterator is used up by "
            "its first pass (later ones see no items), which pullback does not model",
            why=f"pullback reads a {what} as the list of its items, so a second pass would "
            "see them all again.",
            fix=f"build the values once as a list (`{name} = [...]`, `list(...)`) where every "
            f"pass must see them, or consume it where it is made ({codes.see('PB402')}).",
        )

    def _visit_yield(self, node):
        accepted = getattr(node, "_pb_stmt", False) and getattr(self.tree, "_pb_consumed", False)
        if accepted or getattr(node, "_pb_accepted", False):
            # a generator run as the list it yields (transform/generators.py)
            if node.value is not None:
                self.visit(node.value)
            return
        keyword = "yield from" if isinstance(node, gast.YieldFrom) else "yield"
        self.report(
            node,
            "PB402",
            f"'{keyword}' makes a generator, which cannot be differentiated",
            fix="return the values together instead, e.g. collect them with `acc = acc + (v,)` "
            f"and `return np.stack(acc)`, or consume the generator completely where it is made "
            f"(a for loop without break, list(...), sum(...)) ({codes.see('PB402')}).",
        )
        if node.value is not None:
            self.visit(node.value)

    def _check_generator_calls(self):
        """Calls of user generator functions: consumed completely where they are made, they
        run as the lists they yield and their yields are accepted; else PB402 at the call."""
        kept = []
        for uc in self.user_calls:
            if not is_generator_function(uc.key):
                kept.append(uc)
                continue
            mark_yield_statements(uc.source.tree)
            refusal = consumption_refusal(
                uc.call, self._parent_map(), self._resolved_object, generator=uc.source.tree
            ) or body_refusal(uc.source.tree)
            if refusal is None:
                uc.source.tree._pb_consumed = True
                kept.append(uc)
                continue
            name, made = self.text(uc.call.func), self.text(uc.call)
            fix = (
                f"consume `{made}` completely where it is made, e.g. `for v in {made}:` "
                f"without break, or `list({made})`"
            )
            if refusal.startswith(NEVER_ENDS):
                fix = (
                    f"give '{name}' an end: a parameter for the number of items "
                    f"(`for _ in range(n):` instead of `while True:`), called with the length "
                    f"of what it is zipped with"
                )
            self.report(
                uc.call,
                "PB402",
                f"generator function '{name}' cannot be differentiated here: {refusal}",
                fix=f"{fix} ({codes.see('PB402')}).",
            )
        self.user_calls[:] = kept

    def _resolved_object(self, call):
        callee = self._resolve(call)
        return callee.obj if callee.kind == "object" else None

    def visit_Await(self, node):
        self.report(
            node,
            "PB403",
            "await cannot be differentiated",
            fix="await the value before calling the differentiated function and pass it in "
            f"as an argument ({codes.see('PB403')}).",
        )
        self.visit(node.value)

    def visit_NamedExpr(self, node):
        # (n := value) binds a name where it is evaluated: the normalizer writes it as an
        # assignment at that point, so only its value needs checking.
        self.visit(node.value)

    visit_Import = _visit_import

    visit_ImportFrom = _visit_import

    visit_Yield = _visit_yield

    visit_YieldFrom = _visit_yield


def kept_iterator(tree, node, parents):
    """``(name, reads)`` for ``name = node`` (a generator expression, ``map(...)``) whose
    name the function reads more than once, or in a loop that does not also bind it (each
    pass after the first sees an empty iterator in Python); else None."""
    assign = parents.get(node)
    if not (
        isinstance(assign, gast.Assign)
        and assign.value is node
        and len(assign.targets) == 1
        and isinstance(assign.targets[0], gast.Name)
    ):
        return None
    name = assign.targets[0].id
    loads = [
        n
        for n in walk(tree)
        if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
    ]
    if len(loads) > 1:
        return name, len(loads)
    for use in loads:
        loop = parents.get(use)
        while loop is not None and loop is not tree:
            if isinstance(loop, (gast.For, gast.While)) and not any(
                n is assign for n in walk(loop)
            ):
                return name, "repeatedly"
            loop = parents.get(loop)
    return None


def late_bound_names(tree, node, parents) -> list:
    """The names a generator expression reads lazily (all but its first iterable, which
    Python evaluates where it is written) that are bound again before it may run: targets
    of a comprehension it is the element of (``[(v * k for v in x) for k in ks]``), or
    names assigned after ``name = (...)`` keeps it."""
    own = {n.id for g in node.generators for n in walk(g.target) if isinstance(n, gast.Name)}
    lazy = [node.elt, *node.generators[0].ifs]
    for g in node.generators[1:]:
        lazy += [g.iter, *g.ifs]
    read = {
        n.id
        for part in lazy
        for n in walk(part)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id not in own
    }
    if not read:
        return []
    rebound = set()
    child, parent = node, parents.get(node)
    # the element a comprehension keeps (not an iterable it consumes at once)
    while isinstance(parent, (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)):
        kept = (parent.key, parent.value) if isinstance(parent, gast.DictComp) else (parent.elt,)
        if not any(child is k for k in kept):
            break
        for g in parent.generators:
            rebound |= {n.id for n in walk(g.target) if isinstance(n, gast.Name)}
        child, parent = parent, parents.get(parent)
    if (
        isinstance(parent, gast.Assign)
        and parent.value is child
        and child is node
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], gast.Name)
    ):
        kept = parent.targets[0].id
        after = (parent.end_lineno or parent.lineno, parent.end_col_offset or 0)
        reads = [
            (n.lineno, n.col_offset)
            for n in walk(tree)
            if isinstance(n, gast.Name) and n.id == kept and isinstance(n.ctx, gast.Load)
        ]
        until = min((r for r in reads if r > after), default=after)
        for n in walk(tree):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                if after < (n.lineno, n.col_offset) < until:
                    rebound.add(n.id)
    return sorted(read & rebound)
