"""Step 3 of the pipeline: walk one function and collect every unsupported construct.

:class:`FunctionChecker` visits a function's tree once. Each finding becomes a
:class:`~pullback.errors.Diagnostic` with the place in the user's file, the reason and a
concrete fix. Calls are resolved with :func:`pullback.resolve.resolve_call`; the calls of user
functions are handed back so that the driver (``pullback.check``) checks them too.

The checker never runs user code: it reads the tree, looks names up and asks the rule
registry.
"""

from __future__ import annotations

import inspect
import types
from ast import AST

import gast

from ..errors import Diagnostic
from ..lambdas import (
    _higher_order_function,
    function_expression,
    inlinable_functions,
    lambda_called_in_place,
)
from ..nested_factories import inline_nested_factories
from ..resolve import bindings_fixed, local_names, parameter_names, parent_map
from ..source_imports import accepted_import_names
from ..transform.closure_records import record_sites
from ..transform.closure_values import lambda_fix, lambda_free
from ..transform.closure_writes import write_fix
from ..transform.closures import (
    is_nested_generator,
    lambdas_as_definitions,
    lifting_refusal,
    rewrite_rule_calls,
    user_callee,
    what_is_there,
)
from ..transform.generators import accept_yield_statements
from ..transform.run_time_closures import stored_lambda
from ..transform.run_time_closures import verdict as run_time_verdict
from ..tree_walk import LEAN_FIELDS, lean_nodes
from . import codes
from .aliasing import AliasAnalysis
from .call_checks import CallChecks, UserCall
from .free_writes import free_declarations
from .helper_writes import HelperWrites
from .mutation_checks import MutationChecks
from .mutation_fixes import cache_fix
from .statement_checks import StatementChecks
from .taint import reads_tainted, tainted_names

# Nodes that are supported as they are: their children are checked by the generic walk.
_PLAIN_NODES = (
    gast.Return,
    gast.If,
    gast.While,
    gast.Break,
    gast.Continue,
    gast.Pass,
    gast.Expr,
    gast.BinOp,
    gast.UnaryOp,
    gast.BoolOp,
    gast.Compare,
    gast.IfExp,
    gast.Attribute,
    gast.Subscript,
    gast.Tuple,
    gast.List,
    gast.Set,
    gast.Constant,
    gast.Name,
    gast.Slice,
    gast.JoinedStr,
    gast.FormattedValue,
)


class Opaque:
    """A value the environment cannot see (the static CLI's unknown imports and globals).

    Any attribute of it is opaque too, so ``mod.f`` resolves to an opaque callee that the
    check skips.
    """

    def __init__(self, name: str = "?"):
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Opaque(f"{self._name}.{attr}")

    def __repr__(self):
        return f"<opaque {self._name}>"


class FunctionChecker(MutationChecks, CallChecks, HelperWrites, StatementChecks, gast.NodeVisitor):
    """Collect the diagnostics of one function (see :func:`pullback.check.check_function`).

    ``env`` answers what a resolved callee is (see ``pullback.check.LiveEnvironment``):
    ``env.classify(obj)`` returns ``("user", key, source)``, ``("nosource", reason)``,
    ``("opaque",)`` or ``("foreign",)``.
    """

    def __init__(
        self, fs, registry, env, *, defer_inactive_calls=False, active=None, param_kinds=None
    ):
        self.fs = fs
        # The kinds of the call's arguments by parameter name (transform/kinds.py), or None
        # when no call is known (``check(fn)``): `n += 1` on a parameter runs where the
        # argument is not an array (check/param_rebinding.py).
        self.param_kinds = param_kinds
        # id of an `xs[t][k] = v` target -> why its array may be held elsewhere (held_arrays.py)
        self.held_unproved: dict = {}
        # The parameters differentiated values may reach (None: every one): in a callee,
        # a call with neither rule nor source is reported only if one may reach it.
        self.active = active
        self._taint = None
        # Leave calls with neither rule nor source to the transform's activity analysis.
        self.defer_inactive_calls = defer_inactive_calls
        self.registry = registry
        self.env = env
        self.tree = fs.tree
        # Names an accepted import in the body binds are free names, found like globals.
        first_walk = lean_nodes(fs.tree)
        self.locals = _visible_locals(fs.tree, first_walk) - accepted_import_names(fs)
        self._first_walk: list | None = first_walk  # for run(), before anything changes
        self._loop_iterators: set[int] = set()
        self.diagnostics: list[tuple[int, Diagnostic]] = []
        self.user_calls: list[UserCall] = []
        # parameter -> where the function writes into it (check/helper_writes.py)
        self.param_writes: dict = {}
        self._reported: set[int] = set()
        self._forward_only = 0
        self._order = 0
        self._alias: AliasAnalysis | None = None
        self._resolved: dict[int, object] = {}
        self._visitors: dict = {}  # node class -> its visit_ method (or None)
        self._lifted_defs: set[int] = set()  # nested defs the transform lifts
        self._refused_defs: set[int] = set()  # nested defs refused (PB405)

    # -- driver -----------------------------------------------------------------------------
    def run(self) -> list[Diagnostic]:
        if isinstance(self.tree, gast.AsyncFunctionDef):  # only the static CLI meets these
            self.report(
                self.tree,
                "PB403",
                f"async def '{self.tree.name}' cannot be differentiated",
                width=len("async def ") + len(self.tree.name),
                fix="differentiate a plain (synchronous) function and await results outside it "
                f"({codes.see('PB403')}).",
            )
        nodes, self._first_walk = self._first_walk, None
        if isinstance(self.tree, gast.FunctionDef) and rewrite_rule_calls(
            self.fs, self.tree, self.registry
        ):  # quad(lambda t: f(t, p)), t.logpdf(x, df=nu): as the transformation sees them
            nodes = None
        lambdas, _, factories = what_is_there(self.tree, nodes)
        if factories and isinstance(self.tree, gast.FunctionDef):
            if inline_nested_factories(self.tree):  # as the transformation sees them
                lambdas, _, factories = what_is_there(self.tree)
        if lambdas and isinstance(self.tree, gast.FunctionDef):
            # as the transformation sees them (closures.user_callee)
            lambdas_as_definitions(self.tree, user_callee(self.fs, self.tree))
        with bindings_fixed(self.fs):  # (the visit binds no name anew: one index of them)
            for stmt in self.tree.body:
                self.visit(stmt)
        self._check_generator_calls()
        self.check_owned_escapes()  # a helper's specialization keeping what it owns
        if factories:
            self._mark_closure_factories()
        ordered = sorted(self.diagnostics, key=lambda item: (item[1].line, item[1].col, item[0]))
        self.user_calls.sort(key=lambda uc: (uc.call.lineno, uc.call.col_offset))
        return [d for _, d in ordered]

    def visit(self, node):
        cls = type(node)
        try:
            method = self._visitors[cls]
        except KeyError:  # each node class looked up once per checker, not once per node
            method = self._visitors[cls] = getattr(self, "visit_" + cls.__name__, None)
        if method is not None:
            return method(node)
        if isinstance(node, _PLAIN_NODES) or not isinstance(node, (gast.stmt, gast.expr)):
            return self.generic_visit(node)
        self.report(
            node,
            "PB400",
            f"'{type(node).__name__}' is not supported in a differentiated function",
            fix="rewrite it with the supported statements (assignment, if, for, while, "
            f"return) ({codes.see('PB400')}).",
        )
        return self.generic_visit(node)

    def generic_visit(self, node):
        """``ast.NodeVisitor.generic_visit`` (the same children in the same order) without
        its generator of fields per node: the check visits every node of the function.
        Contexts and operators are not visited (no check has a visitor for them, and
        visiting one does nothing), nor the fields that hold only names and numbers."""
        for name in LEAN_FIELDS[node.__class__]:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, AST):
                        self.visit(item)
            elif isinstance(value, AST):
                self.visit(value)

    def visit_all(self, nodes):
        for node in nodes:
            if node is not None:
                self.visit(node)

    # -- reporting ----------------------------------------------------------------------------
    def report(self, node, code, message, *, fix, why=None, width=None, shift=0):
        """Record one finding at ``node`` (once per node).

        ``width`` fixes the caret length (a keyword such as ``try``); ``shift`` moves the
        start left (to include the ``*`` of ``*args``).
        """
        if id(node) in self._reported:
            return
        self._reported.add(id(node))
        filename, line, col = self.fs.location(node)
        text = self.fs.file_line(line)
        end_col = self.fs.end_col(node) if width is None else col + width
        if shift and text[col - shift : col] == "*" * shift:
            col -= shift
        self._order += 1
        self.diagnostics.append(
            (
                self._order,
                Diagnostic(
                    code=code,
                    message=message,
                    filename=filename,
                    line=line,
                    col=col,
                    end_col=end_col,
                    source_line=text,
                    why=codes.why(code) if why is None else why,
                    fix=fix,
                ),
            )
        )

    def text(self, node) -> str:
        """The user's own spelling of a node when it fits on one line."""
        lineno = getattr(node, "lineno", None)
        if lineno is not None and getattr(node, "end_lineno", lineno) == lineno:
            _, line, col = self.fs.location(node)
            end = self.fs.end_col(node)
            snippet = self.fs.file_line(line)[col:end]
            if snippet.strip():
                return snippet.strip()
        return gast.unparse(node).strip()

    # -- definitions ----------------------------------------------------------------------------
    def tainted(self) -> set:
        """The names a differentiated value may reach (check/taint.py)."""
        if self._taint is None:
            params = parameter_names(self.tree) if self.active is None else self.active
            self._taint = tainted_names(self.tree, params, self._module_names())
        return self._taint

    def _module_names(self) -> frozenset:
        """The free names of the function that are modules (``np``), for the taint."""
        found = set()
        for n in gast.walk(self.tree):
            if isinstance(n, gast.Name) and n.id not in self.locals and n.id not in found:
                locate = getattr(self.fs, "locate", None)  # (a static source has none)
                where, value = locate(n.id) if locate is not None else (None, None)
                if where is not None and isinstance(value, types.ModuleType):
                    found.add(n.id)
        return frozenset(found)

    def may_carry_gradient(self, call) -> bool:
        """Whether a differentiated value may reach ``call`` (an argument or receiver)."""
        parts = list(call.args) + [k.value for k in call.keywords]
        if isinstance(call.func, gast.Attribute):
            parts.append(call.func.value)
        return any(reads_tainted(p, self.tainted()) for p in parts)

    def _inlined(self) -> dict:
        if getattr(self, "_inlinable", None) is None:
            self._inlinable = inlinable_functions(self.tree)
        return self._inlinable

    def _parent_map(self) -> dict:
        if getattr(self, "_parents", None) is None:
            self._parents = parent_map(self.tree)
        return self._parents

    def _free_declarations(self) -> dict:
        """The names the function declares ``global``/``nonlocal`` (check/free_writes.py)."""
        if getattr(self, "_declared", None) is None:
            self._declared = free_declarations(self.tree)
        return self._declared

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
                    for n in gast.walk(self.tree)
                    if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
                ]
                defaults = list(up.args.defaults) + [d for d in up.args.kw_defaults if d]
                if any(reads_tainted(d, self.tainted()) for d in defaults):
                    uses = [None]  # a default that may carry a gradient: every parameter
                for use in uses if name is not None else [None]:
                    call = parents.get(use) if use is not None else None
                    called = isinstance(call, gast.Call) and call.func is use
                    if not called or self.may_carry_gradient(call):
                        seeds |= {a.id for a in gast.walk(up.args) if isinstance(a, gast.Name)}
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
        captured = sorted(lambda_free(lam) & local_names(self.tree)) if passed else ()
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
            self.report(
                node,
                "PB404",
                "lambda passed to a call takes a default that is not a constant",
                fix="give it constant defaults (or none, passing the value as an argument), "
                f"or define the helper with `def` at module level ({codes.see('PB404')}).",
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


# -- helpers -------------------------------------------------------------------------------------
_BINDING_NODES = (
    gast.Name,
    gast.FunctionDef,
    gast.AsyncFunctionDef,
    gast.ClassDef,
    gast.Import,
    gast.ImportFrom,
    gast.MatchAs,
    gast.MatchStar,
    gast.MatchMapping,
)


def _visible_locals(tree, nodes) -> set[str]:
    """Every name the function binds anywhere, nested scopes included (``nodes``:
    ``lean_nodes(tree)``, one walk for the local names and the others).

    Nested scopes are unsupported, but their own names must not be reported as undefined.
    """
    names = local_names(tree, nodes)
    for node in nodes:
        if not isinstance(node, _BINDING_NODES):  # most nodes: one test, not five
            continue
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Param):
            names.add(node.id)
        elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            if node is not tree:
                names.add(node.name)
        elif isinstance(node, (gast.Import, gast.ImportFrom)):
            for alias in node.names:
                names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, (gast.MatchAs, gast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, gast.MatchMapping) and node.rest:
            names.add(node.rest)
    return names


def is_coroutine(obj) -> bool:
    """Whether ``obj`` (or what it wraps) is an ``async def`` function."""
    try:
        target = inspect.unwrap(obj) if callable(obj) else obj
        return inspect.iscoroutinefunction(target) or inspect.isasyncgenfunction(target)
    except Exception:  # noqa: BLE001 - an odd object is simply not a coroutine function
        return False

