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
from ..lambdas import inlinable_functions
from ..nested_factories import inline_nested_factories
from ..resolve import bindings_fixed, local_names, parameter_names, parent_map
from ..source_imports import accepted_import_names
from ..transform.closures import (
    escaping_closures_as_records,
    lambdas_as_definitions,
    rewrite_rule_calls,
    user_callee,
    what_is_there,
)
from ..tree_walk import LEAN_FIELDS, lean_nodes, walk
from . import codes
from .aliasing import AliasAnalysis
from .call_checks import CallChecks
from .call_targets import UserCall
from .free_writes import free_declarations
from .helper_writes import HelperWrites
from .mutation_checks import MutationChecks
from .nested_definitions import NestedDefinitionChecks
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


class FunctionChecker(
    MutationChecks,
    CallChecks,
    HelperWrites,
    StatementChecks,
    NestedDefinitionChecks,
    gast.NodeVisitor,
):
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
        if isinstance(self.tree, gast.FunctionDef):
            # closures that escape as values: records (transform/closure_cells.py)
            if escaping_closures_as_records(self.fs, self.tree, carries=self._carries):
                lambdas, _, factories = what_is_there(self.tree)
                self._parents = self._taint = None  # (of the tree before)
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
        for n in walk(self.tree):
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
