"""The check of what a differentiated function defines inside itself: nested ``def``
(lifted into a function of its own, inlined where it is only called, kept as the primal
makes it where nothing differentiated reaches what it captures, else PB405), lambdas
(inlined, lifted, or PB404 with the fix for the way it is used), ``async def`` (PB403)
and ``class`` (PB406).

Apart from checker.py because these visits are one family that asks the closure analyses
of transform/ (closures, closure_values, run_time_closures) the same questions the
transform will; checker.py drives the walk and reports.
"""

from __future__ import annotations

import gast

from ..lambdas import _higher_order_function, function_expression, lambda_called_in_place
from ..resolve import local_names
from ..transform.closure_records import record_sites
from ..transform.closure_values import lambda_fix, lambda_free
from ..transform.closure_writes import write_fix
from ..transform.closures import is_nested_generator, lifting_refusal
from ..transform.generators import accept_yield_statements
from ..transform.run_time_closures import stored_lambda
from ..transform.run_time_closures import verdict as run_time_verdict
from ..tree_walk import walk
from . import codes
from .mutation_fixes import cache_fix
from .taint import reads_tainted, tainted_names


class NestedDefinitionChecks:
    """:class:`~.checker.FunctionChecker`: ``def``, ``lambda``, ``async def`` and
    ``class`` inside the function (reads the checker's tree, parent map, taint and
    resolved calls; fills ``_lifted_defs`` and ``_refused_defs``)."""

    def visit_FunctionDef(self, node):
        found = self._inlined().get(node.name)
        if found is not None and function_expression(node) is not None:
            self.visit(found[1])  # only called: inlined (pullback/lambdas.py)
            return
        refusal = self._lifting_refusal(node) or self._captured_gradient(node)
        if getattr(node, "_pb_lambda", None) is not None:
            self._visit_bound_lambda(node, refusal)
            return
        if refusal is None:  # lifted into a function of its own (transform/closures.py)
            self._lifted_defs.add(id(node))  # its `nonlocal` writes are returned
            self._check_defaults(node)
            if is_nested_generator(node):  # run as the list it yields
                accept_yield_statements(node)
            self.visit_all(node.body)
            return
        fix = (
            f"call '{node.name}' only by name where it is visible (a nested function that "
            "is only called is differentiated), or define it at module level and pass what it "
            "uses as arguments"
        )
        if "of the enclosing function" in refusal:
            fix = (
                f"make what '{node.name}' reads parameters of it (and pass them at each call), "
                "so that the gradient reaches them: a nested function that reads no variable "
                "of the function may be stored, returned and passed on; or call it only by name"
            )
        if "declares 'global" in refusal:
            fix = (
                "declare it `global` in the differentiated function and write it there (a "
                "counter or a log that carries no gradient is written as in the primal), or "
                f"pass the value to '{node.name}' and return the new one"
            )
        fix = write_fix(node.name, refusal) or fix  # nonlocal writes (closure_writes.py)
        made = run_time_verdict(self.tree, node, self._parent_map())
        if made is not None and made.fix is not None:
            fix = made.fix  # a captured variable bound again (run_time_closures.py)
        if refusal == "it is decorated":
            fix = cache_fix(node) or fix  # @functools.cache on a recursion
        if "not a constant" in refusal:
            fix = (
                "give that parameter a constant default (`=None`) and compute its value in "
                "the body (`if s is None: s = ...`), or pass it at each call"
            )
        self._refused_defs.add(id(node))
        self.report(
            node,
            "PB405",
            f"nested function definition '{node.name}': {refusal}",
            width=len("def ") + len(node.name),
            fix=f"{fix} ({codes.see('PB405')}).",
        )
        # (its *args/**kwargs are no reason of their own: lifted functions take them)
        self.visit_all(node.body)

    def _lifting_refusal(self, node):
        returned = getattr(self.tree, "_pb_record", False)
        return lifting_refusal(self.tree, node, self._parent_map(), self._resolved_object, returned)

    def _captured_gradient(self, node):
        """Why the closure ``node``, made as the primal makes it (run_time_closures.py),
        cannot be: a differentiated value may reach what it captures (or its defaults),
        and the gradient through the cell would be lost. None when none may."""
        parents = self._parent_map()
        if isinstance(node, gast.FunctionDef) and not getattr(node, "_pb_run_time", False):
            return None  # lifted, inlined or a record (lifting_refusal said which)
        made = run_time_verdict(self.tree, node, parents)
        if made is None or made.refusal is not None:
            return None
        tainted = self._closure_taint(node)
        read = [c for c in made.parameters if c in tainted]
        if not read:
            return None
        name = getattr(node, "name", "the lambda")
        return (
            f"'{name}' is used as a value (returned, stored or passed on) and reads "
            f"{', '.join(repr(r) for r in read)} of the enclosing function"
        )

    def _carries(self, node, names) -> bool:
        """Whether a differentiated value may reach what the closure (or partial) ``node``
        reads of ``names``: it is then a record of its cells (transform/closure_cells.py),
        else made as the primal makes it."""
        return bool(set(names) & self._closure_taint(node))

    def _closure_taint(self, node):
        """The tainted names, with the parameters of each nested function around ``node``
        that a call may pass a differentiated value to (or that is used other than by
        calls) taken as differentiated."""
        parents = self._parent_map()
        seeds = set()
        up = parents.get(node)
        while up is not None and up is not self.tree:
            if isinstance(up, (gast.FunctionDef, gast.Lambda)):
                name = getattr(up, "name", None)
                uses = [
                    n
                    for n in walk(self.tree)
                    if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
                ]
                defaults = list(up.args.defaults) + [d for d in up.args.kw_defaults if d]
                if any(reads_tainted(d, self.tainted()) for d in defaults):
                    uses = [None]  # a default that may carry a gradient: every parameter
                for use in uses if name is not None else [None]:
                    call = parents.get(use) if use is not None else None
                    called = isinstance(call, gast.Call) and call.func is use
                    if not called or self.may_carry_gradient(call):
                        seeds |= {a.id for a in walk(up.args) if isinstance(a, gast.Name)}
            up = parents.get(up)
        if not seeds:
            return self.tainted()
        return tainted_names(self.tree, self.tainted() | seeds, self._module_names())

    def _mark_closure_factories(self):
        """A user factory whose closure is only called here returns a record of what the
        closure captures (transform/closure_records.py): its `return closure` is fine."""
        found = record_sites(self.tree, self._resolved_object)
        sites = {id(assign.value) for assign, _, _ in found}
        for uc in self.user_calls:
            if id(uc.call) in sites:
                uc.source.tree._pb_record = True

    def _check_defaults(self, node):
        self.visit_all(node.args.defaults)
        self.visit_all([d for d in node.args.kw_defaults if d is not None])

    def visit_AsyncFunctionDef(self, node):
        self.report(
            node,
            "PB403",
            f"async def '{node.name}' cannot be differentiated",
            width=len("async def ") + len(node.name),
            fix="differentiate a plain (synchronous) function and await results outside it "
            f"({codes.see('PB403')}).",
        )
        self.visit_all(node.body)

    def visit_ClassDef(self, node):
        self.report(
            node,
            "PB406",
            f"class definition '{node.name}' inside a differentiated function",
            width=len("class ") + len(node.name),
            fix=f"define the class at module level ({codes.see('PB406')}).",
        )
        self.visit_all(node.body)

    def _visit_bound_lambda(self, node, refusal):
        """``name = lambda ...`` that is not only called, or a lambda passed to a call:
        lifted like a nested def (closure_values.stored_lambdas)."""
        lam = node._pb_lambda
        passed = refusal is not None and getattr(lam, "_pb_passed", False)
        free = sorted(lambda_free(lam) & local_names(self.tree))
        if refusal is not None and free and not self._carries(lam, free):
            refusal = None  # no differentiated value reaches what it reads: made as written
        captured = free if passed and refusal is not None else ()
        if captured:
            self._refuse_passed_lambda(lam, captured)
        elif refusal is not None:
            self.report(
                node._pb_lambda,
                "PB404",
                f"lambda '{node.name}': {refusal}"
                if not node.name.startswith("_pb_lambda_")
                else f"returned lambda: {refusal.replace(repr(node.name) + ' ', 'it ')}",
                fix=(
                    f"call '{node.name}' only by name, or pass it to a function that only "
                    "calls it; or define the helper with `def` at module level"
                    if not node.name.startswith("_pb_lambda_")
                    else "differentiate a function that calls the factory and only calls "
                    "what it returns, e.g. `g = make(w); return g(x)`"
                )
                + f" ({codes.see('PB404')}).",
            )
        else:
            self._check_defaults(node)
        self.visit_all(node.body)

    def _refuse_passed_lambda(self, node, captured):
        names = ", ".join(captured)
        self.report(
            node,
            "PB404",
            f"lambda passed to a call reads {names!r} of the differentiated function",
            fix=f"make what it reads parameters of the lambda (`lambda t, {names}: ...`) "
            f"and pass {names} as arguments where the callee takes them (SciPy's "
            f"`args=`: `quad(lambda t, {names}: ..., lo, hi, args=({names},))`), or "
            f"pass a nested `def` to a user function; a lambda that reads no variable "
            f"of the function may be passed anywhere ({codes.see('PB404')}).",
        )

    def visit_Lambda(self, node):
        parent = self._parent_map().get(node)
        bound = (
            isinstance(parent, gast.Assign)
            and isinstance(parent.targets[0], gast.Name)
            and parent.targets[0].id in self._inlined()
        )
        if bound or lambda_called_in_place(node, self._parent_map()):
            self.visit(node.body)  # only called: inlined (pullback/lambdas.py)
            return
        if stored_lambda(node, self._parent_map()):
            made = run_time_verdict(self.tree, node, self._parent_map())
            if made is not None and made.refusal is not None:
                self.report(
                    node,
                    "PB404",
                    f"lambda stored or returned: {made.refusal}",
                    fix=f"{made.fix} ({codes.see('PB404')}).",
                )
                self.visit(node.body)
                return
            if made is not None and self._captured_gradient(node) is None:
                self._check_defaults(node)  # made as the primal makes it
                self.visit(node.body)
                return
        captured = sorted(lambda_free(node) & local_names(self.tree))
        passed = (
            isinstance(parent, gast.keyword)
            or (isinstance(parent, gast.Call) and parent.func is not node)
        ) and not _higher_order_function(node, parent, self._parent_map())  # map/key=: inlined
        # f(lambda t: ...) that reads no variable of the function and takes only constant
        # defaults became a def before this check (closure_values.stored_lambdas): one
        # still here reads a variable, or takes a default computed when it is made
        if passed and captured:
            self._refuse_passed_lambda(node, captured)
            self.visit(node.body)
            return
        if passed:
            fix = (
                "give it constant defaults (or none, passing the value as an argument), "
                "or define the helper with `def` at module level"
            )
            if stored_lambda(node, self._parent_map()):  # fs.append(lambda t, w=p[k]: ...)
                fix = lambda_fix(node)
            self.report(
                node,
                "PB404",
                "lambda passed to a call takes a default that is not a constant",
                fix=f"{fix} ({codes.see('PB404')}).",
            )
            self.visit(node.body)
            return
        if isinstance(parent, (gast.List, gast.Tuple, gast.Set, gast.Dict)) and captured:
            names = ", ".join(captured)
            self.report(
                node,
                "PB404",
                f"lambda stored in a container reads {names!r} of the differentiated function",
                fix=f"make what it reads parameters (`lambda t, {names}: ...`, called with "
                f"{names} as arguments), so that the gradient reaches them; a lambda that reads "
                f"no variable of the function may be stored and called anywhere "
                f"({codes.see('PB404')}).",
            )
            self.visit(node.body)
            return
        self.report(
            node,
            "PB404",
            "lambda inside a differentiated function",
            fix=f"{lambda_fix(node)} ({codes.see('PB404')}).",
        )
        self.visit(node.body)
