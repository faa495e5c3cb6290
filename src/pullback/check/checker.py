"""Step 3 of the pipeline: walk one function and collect every unsupported construct.

:class:`FunctionChecker` visits a function's tree once. Each finding becomes a
:class:`~pullback.errors.Diagnostic` with the place in the user's file, the reason and a
concrete fix. Calls are resolved with :func:`pullback.resolve.resolve_call`; the calls of user
functions are handed back so that the driver (``pullback.check``) checks them too.

The checker never runs user code: it reads the tree, looks names up and asks the rule
registry.
"""

from __future__ import annotations

import builtins
import difflib
import inspect
import types
from dataclasses import dataclass

import gast
import numpy as np

from ..errors import Diagnostic
from ..lambdas import function_expression, inlinable_functions, lambda_called_in_place
from ..registry import qualified_name
from ..resolve import (
    ARRAY_ATTRIBUTES,
    ARRAY_INPLACE_METHODS,
    ARRAY_METHODS,
    ARRAY_VARARG_METHODS,
    CONTAINER_INPLACE_METHODS,
    local_names,
    parent_map,
    resolve_call,
    resolve_expr,
)
from . import codes
from .aliasing import (
    FRESH_BUILTINS,
    FRESH_FUNCTIONS,
    FRESH_METHODS,
    AliasAnalysis,
    is_math_function,
)

# NumPy functions that write into one of their arguments.
INPLACE_NUMPY_FUNCTIONS = tuple(
    f
    for f in (
        getattr(np, "copyto", None),
        getattr(np, "put", None),
        getattr(np, "place", None),
        getattr(np, "putmask", None),
        getattr(np, "fill_diagonal", None),
        getattr(np, "put_along_axis", None),
        getattr(np.random, "shuffle", None),
    )
    if f is not None
)

_OPERATORS = {
    gast.Add: "+",
    gast.Sub: "-",
    gast.Mult: "*",
    gast.MatMult: "@",
    gast.Div: "/",
    gast.FloorDiv: "//",
    gast.Mod: "%",
    gast.Pow: "**",
    gast.LShift: "<<",
    gast.RShift: ">>",
    gast.BitOr: "|",
    gast.BitXor: "^",
    gast.BitAnd: "&",
}
# Binding strength of binary operators (higher binds tighter), for parenthesizing fixes.
_PRECEDENCE = {
    gast.BitOr: 1,
    gast.BitXor: 2,
    gast.BitAnd: 3,
    gast.LShift: 4,
    gast.RShift: 4,
    gast.Add: 5,
    gast.Sub: 5,
    gast.Mult: 6,
    gast.MatMult: 6,
    gast.Div: 6,
    gast.FloorDiv: 6,
    gast.Mod: 6,
    gast.Pow: 8,
}

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


@dataclass
class UserCall:
    """A call of a user function with source: the driver checks ``source`` next."""

    call: gast.Call
    key: object
    source: object


class FunctionChecker(gast.NodeVisitor):
    """Collect the diagnostics of one function (see :func:`pullback.check.check_function`).

    ``env`` answers what a resolved callee is (see ``pullback.check.LiveEnvironment``):
    ``env.classify(obj)`` returns ``("user", key, source)``, ``("nosource", reason)``,
    ``("opaque",)`` or ``("foreign",)``.
    """

    def __init__(self, fs, registry, env):
        self.fs = fs
        self.registry = registry
        self.env = env
        self.tree = fs.tree
        self.locals = _visible_locals(fs.tree)
        self._loop_iterators: set[int] = set()
        self.diagnostics: list[tuple[int, Diagnostic]] = []
        self.user_calls: list[UserCall] = []
        self._reported: set[int] = set()
        self._forward_only = 0
        self._order = 0
        self._alias: AliasAnalysis | None = None
        self._resolved: dict[int, object] = {}

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
        self._check_arguments(self.tree.args, "the definition", self.tree.name)
        for stmt in self.tree.body:
            self.visit(stmt)
        ordered = sorted(self.diagnostics, key=lambda item: (item[1].line, item[1].col, item[0]))
        self.user_calls.sort(key=lambda uc: (uc.call.lineno, uc.call.col_offset))
        return [d for _, d in ordered]

    def visit(self, node):
        method = getattr(self, "visit_" + type(node).__name__, None)
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
    def _check_arguments(self, args, where, fname="f"):
        if args.vararg is not None:
            name = args.vararg.id
            before = [a.id for a in args.posonlyargs + args.args]
            params = ", ".join(before + [name])
            call = ", ".join(before + ["(a, b)"])
            self.report(
                args.vararg,
                "PB410",
                f"star-arguments: '*{name}' in {where}",
                shift=1,
                fix=f"list the parameters one by one, or take a tuple: `def {fname}({params}):` "
                f"called as `{fname}({call})` ({codes.see('PB410')}).",
            )
        if args.kwarg is not None:
            name = args.kwarg.id
            self.report(
                args.kwarg,
                "PB410",
                f"star-arguments: '**{name}' in {where}",
                shift=2,
                fix="list the keyword parameters one by one with defaults, "
                f"e.g. `def f(x, *, scale=1.0):` ({codes.see('PB410')}).",
            )

    def _inlined(self) -> dict:
        if getattr(self, "_inlinable", None) is None:
            self._inlinable = inlinable_functions(self.tree)
        return self._inlinable

    def _parent_map(self) -> dict:
        if getattr(self, "_parents", None) is None:
            self._parents = parent_map(self.tree)
        return self._parents

    def visit_FunctionDef(self, node):
        found = self._inlined().get(node.name)
        if found is not None and function_expression(node) is not None:
            self.visit(found[1])  # only called: inlined (pullback/lambdas.py)
            return
        self.report(
            node,
            "PB405",
            f"nested function definition '{node.name}'",
            width=len("def ") + len(node.name),
            fix=f"define '{node.name}' at module level and pass what it uses as arguments; "
            f"pullback then checks and transforms it as a call ({codes.see('PB405')}).",
        )
        self._check_arguments(node.args, f"'{node.name}'", node.name)
        self.visit_all(node.body)

    def visit_AsyncFunctionDef(self, node):
        self.report(
            node,
            "PB403",
            f"async def '{node.name}' cannot be differentiated",
            width=len("async def ") + len(node.name),
            fix="differentiate a plain (synchronous) function and await results outside it "
            f"({codes.see('PB403')}).",
        )
        self._check_arguments(node.args, f"'{node.name}'", node.name)
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
        self.report(
            node,
            "PB404",
            "lambda inside a differentiated function",
            fix="define the helper with `def` at module level and call it by name, "
            f"e.g. `def scale(v): return 2.0 * v` ({codes.see('PB404')}).",
        )
        self._check_arguments(node.args, "a lambda")
        self.visit(node.body)

    # -- statements -----------------------------------------------------------------------------
    def visit_Assign(self, node):
        for target in node.targets:
            self._check_target(target, node.value)
        self.visit(node.value)

    def visit_AnnAssign(self, node):
        if node.value is None:
            name = self.text(node.target)
            self.report(
                node,
                "PB109",
                f"annotation without a value: '{self.text(node)}'",
                fix=f"give '{name}' a value (`{name}: float = 0.0`) or remove the line "
                f"({codes.see('PB109')}).",
            )
            if not isinstance(node.target, gast.Name):
                self.visit(node.target)
            return
        self._check_target(node.target, node.value)
        self.visit(node.value)

    def visit_AugAssign(self, node):
        target = node.target
        op = _OPERATORS.get(type(node.op), "?")
        if isinstance(target, gast.Name):
            self._check_augassign_name(node, op)
        elif isinstance(target, gast.Subscript):
            self._report_subscript_store(target, node.value, op)
            self.visit(target.value)
            self.visit(target.slice)
        elif isinstance(target, gast.Attribute):
            # Runs as in the primal when no gradient flows into it (a counter on self);
            # a differentiated value stored there is refused by the transformation (PB107).
            self.visit(target.value)
        else:  # pragma: no cover - Python's grammar allows no other target
            self.visit(target)
        self.visit(node.value)

    def visit_Delete(self, node):
        for target in node.targets:
            self._check_delete(target)

    def _check_delete(self, target):
        if isinstance(target, (gast.Tuple, gast.List)):
            for elt in target.elts:
                self._check_delete(elt)
        elif isinstance(target, gast.Name):
            self.report(
                target,
                "PB108",
                f"'del {target.id}' is not supported",
                fix=f"remove the `del`; '{target.id}' is released when the function returns "
                f"({codes.see('PB108')}).",
            )
        elif isinstance(target, gast.Subscript):
            base = self.text(target.value)
            index = target.slice
            if isinstance(index, gast.Constant) and isinstance(index.value, str):
                fix = (
                    "build a new dict without the key: write the remaining entries out, "
                    f"e.g. `{base} = {{'other': {base}['other']}}`"
                )
            else:
                after = _plus_one(self.text(index))
                fix = (
                    "build a new list without the element, e.g. "
                    f"`{base} = {base}[:{self.text(index)}] + {base}[{after}:]`"
                )
            self.report(
                target,
                "PB106",
                f"container mutation: 'del {self.text(target)}' changes '{base}' in place",
                fix=f"{fix} ({codes.see('PB106')}).",
            )
            self.visit(target.value)
            self.visit(target.slice)
        elif isinstance(target, gast.Attribute):
            self._report_attribute_store(target, deleting=True)
            self.visit(target.value)
        else:  # pragma: no cover
            self.visit(target)

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
        self.report(
            node,
            code,
            f"{keyword} statement cannot be differentiated",
            width=len(keyword),
            fix="move the `with` block outside the differentiated function (open files or "
            "set `np.errstate` in the caller), or register a rule for a helper that "
            f"contains it ({codes.see(code)}).",
        )
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

    def _visit_try(self, node):
        parts = ["try"]
        if node.handlers:
            parts.append("except")
        if node.finalbody:
            parts.append("finally")
        what = "/".join(parts)
        self.report(
            node,
            "PB201",
            f"{what} cannot be differentiated",
            width=len("try"),
            fix=f"move the {what} outside the differentiated function, or register a rule "
            f"for a helper that contains it ({codes.see('PB201')}).",
        )
        self.visit_all(node.body)
        for handler in node.handlers:
            if handler.type is not None:
                self.visit(handler.type)
            self.visit_all(handler.body)
        self.visit_all(node.orelse)
        self.visit_all(node.finalbody)

    visit_Try = _visit_try
    visit_TryStar = _visit_try

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
        names = ", ".join(node.names)
        self.report(
            node,
            "PB401",
            f"'{keyword} {names}' is not supported",
            fix="pass the value in as an argument and return the new value, e.g. "
            f"`def step(x, state): ...; return y, new_state` ({codes.see('PB401')}).",
        )

    def visit_Global(self, node):
        self._visit_scope(node, "global")

    def visit_Nonlocal(self, node):
        self._visit_scope(node, "nonlocal")

    def _visit_import(self, node):
        self.report(
            node,
            "PB408",
            "import inside a differentiated function",
            fix=f"move `{self.text(node)}` to the top of the module ({codes.see('PB408')}).",
        )

    visit_Import = _visit_import
    visit_ImportFrom = _visit_import

    def visit_Match(self, node):
        self.report(
            node,
            "PB409",
            "match statement cannot be differentiated",
            width=len("match"),
            fix="write the cases as an if/elif chain, e.g. "
            f"`if kind == 'a': ... elif kind == 'b': ...` ({codes.see('PB409')}).",
        )
        self.visit(node.subject)
        for case in node.cases:
            if case.guard is not None:
                self.visit(case.guard)
            self.visit_all(case.body)

    # -- targets --------------------------------------------------------------------------------
    def _check_target(self, target, value):
        """Check an assignment target (Name, nested Tuple/List of Names are fine)."""
        if isinstance(target, gast.Name):
            return
        if isinstance(target, (gast.Tuple, gast.List)):
            for elt in target.elts:
                self._check_target(elt, None)
            return
        if isinstance(target, gast.Subscript):
            self._report_subscript_store(target, value, None)
            self.visit(target.value)
            self.visit(target.slice)
            return
        if isinstance(target, gast.Attribute):
            self.visit(target.value)  # activity-aware: see the AugAssign case
            return
        if isinstance(target, gast.Starred):
            self.report(
                target,
                "PB410",
                f"starred assignment target '{self.text(target)}'",
                fix=f"unpack by index instead, e.g. `first = t[0]` and `rest = t[1:]` "
                f"({codes.see('PB410')}).",
            )
            self._check_target(target.value, None)
            return
        self.visit(target)  # pragma: no cover - not a valid target

    def _report_attribute_store(self, target, *, augmented=False, deleting=False):
        obj = self.text(target.value)
        attr = target.attr
        if deleting:
            message = f"attribute deletion: 'del {obj}.{attr}' changes '{obj}' in place"
        elif augmented:
            message = f"attribute assignment: augmented assignment to '{obj}.{attr}'"
        else:
            message = f"attribute assignment: '{obj}.{attr} = ...' changes '{obj}' in place"
        self.report(
            target,
            "PB107",
            message,
            fix=f"keep the value in a local variable (`{attr} = ...`) and return it instead of "
            f"storing it on '{obj}' ({codes.see('PB107')}).",
        )

    def _report_subscript_store(self, target, value, op):
        base = self.text(target.value)
        index = target.slice
        value_text = self.text(value) if value is not None else "v"
        if op is not None:
            code = "PB102"
            what = f"augmented assignment ({op}=) to"
        else:
            code = "PB101"
            what = "assignment to"
        if isinstance(index, gast.Constant) and index.value is Ellipsis:
            part = f"every element of '{base}'"
        elif isinstance(index, gast.Slice):
            part = f"a slice of '{base}'"
        elif isinstance(index, gast.Tuple) and any(isinstance(e, gast.Slice) for e in index.elts):
            part = f"a slice of '{base}'"
        else:
            part = f"an element of '{base}'"
        fix = self._subscript_fix(base, index, value, value_text, op)
        self.report(
            target,
            code,
            f"array mutation: {what} {part}",
            fix=f"build a new array, e.g. {fix} ({codes.see(code)}).",
        )

    def _subscript_fix(self, base, index, value, value_text, op):
        """A concrete rewrite of ``base[index] (op)= value`` that makes a new array (quoted)."""
        return _quote_first(self._subscript_rewrite(base, index, value, value_text, op))

    def _subscript_rewrite(self, base, index, value, value_text, op):

        def combined(current):
            if op is None:
                return value_text
            return f"{current} {op} {_parenthesize(value, value_text, op)}"

        if _is_whole(index):
            if op is None:
                return f"{base} = {value_text} * np.ones_like({base})"
            return f"{base} = {combined(base)}"
        if isinstance(index, gast.Slice) and index.step is None:
            lower = self.text(index.lower) if index.lower is not None else None
            upper = self.text(index.upper) if index.upper is not None else None
            positions = f"np.arange({base}.size)"
            if not _is_scalar_literal(value):
                middle = f"{base}[{lower or ''}:{upper or ''}]"
                pieces = []
                if lower is not None:
                    pieces.append(f"{base}[:{lower}]")
                pieces.append(combined(middle))
                if upper is not None:
                    pieces.append(f"{base}[{upper}:]")
                return f"{base} = np.concatenate([{', '.join(pieces)}])"
            conditions = []
            if lower is not None:
                conditions.append(f"({positions} >= {lower})")
            if upper is not None:
                conditions.append(f"({positions} < {upper})")
            mask = " & ".join(conditions) if len(conditions) > 1 else conditions[0][1:-1]
            return f"{base} = np.where({mask}, {combined(base)}, {base})"
        if isinstance(index, (gast.Slice, gast.Tuple)):
            return (f"{base} = np.where(mask, {combined(base)}, {base})", " with a boolean `mask`")
        return (
            f"{base} = np.where(np.arange({base}.size) == {self.text(index)}, "
            f"{combined(base)}, {base})"
        )

    # -- augmented assignment to a name (PB105) ----------------------------------------------
    def _check_augassign_name(self, node, op):
        if self._alias is None:
            self._alias = AliasAnalysis(self.tree, self._returns_fresh)
        if self._alias.is_rebinding(node):
            return
        name = node.target.id
        reason = self._alias.reason(node)
        if reason is not None and reason.kind == "parameter":
            why = (
                f"'{name}' may be the caller's array (it comes from a parameter), and "
                f"`{op}=` would change that array in place."
            )
        elif reason is not None and reason.kind == "shared" and reason.node is not None:
            _, line, _ = self.fs.location(reason.node)
            why = (
                f"'{name}' is also used on line {line} in a way that may let another name "
                f"refer to its array, and `{op}=` would change that array in place."
            )
        else:
            why = (
                f"pullback cannot prove that '{name}' is a new array no other name refers to, "
                f"and `{op}=` would change a shared array in place."
            )
        value_text = _parenthesize(node.value, self.text(node.value), op)
        self.report(
            node,
            "PB105",
            f"augmented assignment '{name} {op}= ...' may change an array that another name "
            "also refers to",
            why=why,
            fix=f"write `{name} = {name} {op} {value_text}` (a new array), which leaves other "
            f"references unchanged ({codes.see('PB105')}).",
        )

    def _returns_fresh(self, call) -> bool:
        """Whether a call returns a new object that keeps no reference to its arguments."""
        callee = self._resolve(call)
        if callee.kind == "array_method":
            return callee.name in FRESH_METHODS
        if callee.kind == "method":
            return callee.name in FRESH_METHODS
        if callee.kind != "object":
            return False
        obj = callee.obj
        if isinstance(obj, np.ufunc):
            return not any(kw.arg == "out" for kw in call.keywords)
        if obj is np.array:
            return not any(kw.arg == "copy" for kw in call.keywords)
        if any(obj is f for f in FRESH_FUNCTIONS) or any(obj is f for f in FRESH_BUILTINS):
            return True
        return is_math_function(obj)

    def _resolve(self, call):
        key = id(call)
        if key not in self._resolved:
            self._resolved[key] = resolve_call(self.fs, call, self.locals)
        return self._resolved[key]

    # -- expressions ----------------------------------------------------------------------------
    def visit_Call(self, node):
        self._check_call(node)
        self.visit(node.func)
        for arg in node.args:
            if isinstance(arg, gast.Starred):
                self.visit_Starred(arg, "a call")
            else:
                self.visit(arg)
        for kw in node.keywords:
            if kw.arg is None:
                name = self.text(kw.value)
                self.report(
                    kw,
                    "PB410",
                    f"star-arguments: '**{name}' in a call",
                    fix="pass the keyword arguments one by one, e.g. `f(x, scale=s)` "
                    f"({codes.see('PB410')}).",
                )
            self.visit(kw.value)

    def visit_Starred(self, node, where="a display"):
        value = self.text(node.value)
        if where == "a call":
            fix = f"pass the values one by one, e.g. `f({value}[0], {value}[1])`"
        else:
            fix = f"write the elements out, e.g. `({value}[0], {value}[1])`, or use `+` on tuples"
        self.report(
            node,
            "PB410",
            f"star-arguments: '{self.text(node)}' in {where}",
            fix=f"{fix} ({codes.see('PB410')}).",
        )
        self.visit(node.value)

    def visit_Dict(self, node):
        for key, value in zip(node.keys, node.values, strict=False):
            if key is None:
                self.report(
                    value,
                    "PB410",
                    f"dict unpacking '**{self.text(value)}' in a display",
                    shift=2,
                    fix="write the entries out, e.g. `{'a': d['a'], 'b': 2.0}` "
                    f"({codes.see('PB410')}).",
                )
            else:
                self.visit(key)
            self.visit(value)

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
        self._visit_comprehension(node)

    def _visit_yield(self, node):
        keyword = "yield from" if isinstance(node, gast.YieldFrom) else "yield"
        self.report(
            node,
            "PB402",
            f"'{keyword}' makes a generator, which cannot be differentiated",
            fix="return the values together instead, e.g. collect them with `acc = acc + (v,)` "
            f"and `return np.stack(acc)` ({codes.see('PB402')}).",
        )
        if node.value is not None:
            self.visit(node.value)

    visit_Yield = _visit_yield
    visit_YieldFrom = _visit_yield

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
        name = self.text(node.target)
        value = self.text(node.value)
        self.report(
            node,
            "PB412",
            f"assignment expression '{name} := ...'",
            fix=f"assign on its own line first, `{name} = {value}`, then use '{name}' "
            f"({codes.see('PB412')}).",
        )
        self.visit(node.value)

    # -- calls ------------------------------------------------------------------------------------
    def _check_call(self, node):
        for kw in node.keywords:
            if kw.arg == "out":
                self.report(
                    kw,
                    "PB104",
                    f"array mutation: '{self.text(kw)}' writes the result into an existing array",
                    fix=f"use the returned value instead, e.g. `{self.text(kw.value)} = "
                    f"{self.text(node.func)}(...)` without `out=` ({codes.see('PB104')}).",
                )
        callee = self._resolve(node)
        if callee.kind == "object":
            self._check_object_call(node, callee)
        elif callee.kind == "method":
            self._check_method_name(node, callee.name)
        elif callee.kind == "unbound" and not self._forward_only:
            self._report_unbound(node, callee)

    def _check_method_name(self, node, name) -> bool:
        """PB103/PB106 for ``receiver.name(...)`` when the method changes its receiver."""
        func = node.func
        if not isinstance(func, gast.Attribute):
            return False
        receiver = self.text(func.value)
        call = self.text(node)
        if name in ARRAY_INPLACE_METHODS:
            self.report(
                node,
                "PB103",
                f"array mutation: in-place method '{call}' changes '{receiver}'",
                fix=f"{_inplace_method_fix(receiver, name, node, self.text)} "
                f"({codes.see('PB103')}).",
            )
            return True
        if name in CONTAINER_INPLACE_METHODS and name != "append":
            # append runs as written; the transform refuses it only where a gradient
            # would have to flow through the list (transform/reverse_attributes.py).
            self.report(
                node,
                "PB106",
                f"container mutation: '{call}' changes '{receiver}' in place",
                fix=f"{_container_fix(receiver, name, node, self.text)} ({codes.see('PB106')}).",
            )
            return True
        return False

    def _check_object_call(self, node, callee):
        obj = callee.obj
        if obj is builtins.exec or obj is builtins.eval:
            self.report(
                node.func,
                "PB407",
                f"{obj.__name__}() cannot be differentiated",
                fix=f"write the code out in the function instead of building it from a string "
                f"({codes.see('PB407')}).",
            )
            return
        if _is_inplace_numpy(obj):
            name = _inplace_name(obj)
            self.report(
                node,
                "PB104",
                f"array mutation: '{name}' writes into its argument",
                fix=f"{_inplace_function_fix(obj, node, self.text)} ({codes.see('PB104')}).",
            )
            return
        owner = getattr(obj, "__self__", None)
        if (
            owner is not None
            and not isinstance(owner, (types.ModuleType, type))
            and isinstance(node.func, gast.Attribute)
            and self._check_method_name(node, node.func.attr)
        ):
            return
        if (
            isinstance(owner, np.ndarray)
            and isinstance(node.func, gast.Attribute)
            and (
                node.func.attr in ARRAY_METHODS
                or node.func.attr in ARRAY_VARARG_METHODS
                or node.func.attr in ARRAY_ATTRIBUTES
            )
        ):
            return  # a method of a global array: the same as x.sum() on a local one
        if self._forward_only:
            return
        if id(node) in self._loop_iterators and obj in (
            builtins.zip,
            builtins.enumerate,
            builtins.reversed,
        ):
            return
        if not self._reads_locals(node):
            return  # only constants and globals go in: no gradient can flow through it
        if (
            isinstance(owner, (list, dict, set))
            and isinstance(node.func, gast.Attribute)
            and node.func.attr == "append"
        ):
            return  # runs as written; refused by the transform only if read back (PB106)
        if (
            obj in (builtins.map, builtins.filter)
            and len(node.args) >= 2
            and not node.keywords
            and not any(isinstance(a, gast.Starred) for a in node.args)
        ):
            return  # the comprehension that computes the same list (transform/comprehensions.py)
        kind = self.env.classify(obj, self.registry)
        if kind[0] in ("rule", "opaque"):
            return
        if kind[0] == "user":
            self.user_calls.append(UserCall(node, kind[1], kind[2]))
            return
        if kind[0] == "async":
            self.report(
                node,
                "PB403",
                f"call of async function '{qualified_name(obj)}' cannot be differentiated",
                fix=f"await it outside and pass the result in ({codes.see('PB403')}).",
            )
            return
        self._report_foreign(node, obj, kind[0])

    def _reads_locals(self, call) -> bool:
        """Whether any argument of ``call`` reads a parameter or local variable."""
        for part in list(call.args) + [k.value for k in call.keywords]:
            for sub in gast.walk(part):
                if isinstance(sub, gast.Name) and sub.id in self.locals:
                    return True
        return False

    def _report_foreign(self, node, obj, kind):
        name = qualified_name(obj)
        if isinstance(obj, type):
            what = "a class with no differentiation rule"
        elif kind == "library":
            what = "library code with no differentiation rule (pullback does not transform it)"
        elif kind == "nosource":
            what = "a function whose source cannot be read (made by exec?) and with no rule"
        else:
            what = "a function with no Python source and no differentiation rule"
        short = name.rsplit(".", 1)[-1]
        fix = (
            f"register a rule with `@pullback.rrule({name})` (returning `(y, pullback)`), "
            f"or declare it non-differentiable with `pullback.non_differentiable({name})` if "
            f"no gradient flows through '{short}' ({codes.see('PB301')})."
        )
        failure = getattr(self.env, "failures", {}).get(obj)
        if failure is not None and "no longer matches" in str(failure):
            what = "a function whose file changed after it was imported"
            fix = "reload its module (importlib.reload) or restart Python."
        message = f"call of '{name}', {what}"
        self.report(node.func, "PB301", message, fix=fix)

    def _report_unbound(self, node, callee):
        func = node.func
        name = callee.name
        suggestion = None
        if isinstance(func, gast.Attribute):
            found, base = resolve_expr(self.fs, func.value, self.locals)
            base_text = self.text(func.value)
            if found and isinstance(base, types.ModuleType):
                detail = f"module '{base.__name__}' has no attribute '{func.attr}'"
            else:
                detail = f"'{base_text}' has no attribute '{func.attr}'"
            if found:
                close = difflib.get_close_matches(func.attr, dir(base), n=1, cutoff=0.75)
                if close:
                    suggestion = f"{base_text}.{close[0]}"
            message = f"'{name}' is not defined: {detail}"
        else:
            message = f"name '{name}' is not defined"
            close = difflib.get_close_matches(name, _visible_names(self.fs), n=1, cutoff=0.75)
            if close:
                suggestion = close[0]
        hint = f"did you mean '{suggestion}'? Otherwise, " if suggestion else ""
        self.report(
            func,
            "PB302",
            message,
            fix=f"{hint}define or import '{name}' at module level before the gradient is "
            f"first called ({codes.see('PB302')}).",
        )


# -- helpers -------------------------------------------------------------------------------------
def _visible_locals(tree) -> set[str]:
    """Every name the function binds anywhere, nested scopes included.

    Nested scopes are unsupported, but their own names must not be reported as undefined.
    """
    names = local_names(tree)
    for node in gast.walk(tree):
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


def _visible_names(fs) -> list[str]:
    names = getattr(fs, "visible_names", None)
    if callable(names):
        return list(names())
    fn = getattr(fs, "fn", None)
    result = list(getattr(fn, "__globals__", {}))
    result += list(getattr(getattr(fn, "__code__", None), "co_freevars", ()))
    result += dir(builtins)
    return result


def _quote_first(rewrite) -> str:
    """``code`` or ``(code, note)`` as a backquoted example followed by its note."""
    if isinstance(rewrite, tuple):
        code, note = rewrite
        return f"`{code}`{note}"
    return f"`{rewrite}`"


def _is_inplace_numpy(obj) -> bool:
    if any(obj is f for f in INPLACE_NUMPY_FUNCTIONS):
        return True
    return getattr(obj, "__name__", None) == "at" and isinstance(
        getattr(obj, "__self__", None), np.ufunc
    )


def _inplace_name(obj) -> str:
    owner = getattr(obj, "__self__", None)
    if isinstance(owner, np.ufunc):
        return f"numpy.{owner.__name__}.at"
    return qualified_name(obj)


def _is_whole(index) -> bool:
    if isinstance(index, gast.Constant) and index.value is Ellipsis:
        return True
    return (
        isinstance(index, gast.Slice)
        and index.lower is None
        and index.upper is None
        and index.step is None
    )


def _is_scalar_literal(node) -> bool:
    if isinstance(node, gast.UnaryOp):
        node = node.operand
    return isinstance(node, gast.Constant) and isinstance(node.value, (int, float, complex))


def _parenthesize(node, text, op) -> str:
    """``text`` as the right operand of ``op``, in parentheses only where needed."""
    if isinstance(node, (gast.BoolOp, gast.Compare, gast.IfExp, gast.Lambda, gast.NamedExpr)):
        return f"({text})"
    if isinstance(node, gast.BinOp):
        outer = next((p for t, p in _PRECEDENCE.items() if _OPERATORS[t] == op), 0)
        if _PRECEDENCE.get(type(node.op), 0) <= outer:
            return f"({text})"
    return text


def _plus_one(index: str) -> str:
    """``index + 1`` as source, folded when ``index`` is an integer literal."""
    try:
        return str(int(index) + 1)
    except ValueError:
        return f"{index} + 1"


def _args_text(node, text, start=0) -> list[str]:
    return [text(a) for a in node.args[start:]]


def _inplace_method_fix(receiver, name, node, text) -> str:
    args = _args_text(node, text)
    if name == "sort":
        return (
            f"use a function that returns a new array: `{receiver} = np.sort({receiver})`, or "
            f"`{receiver} = {receiver}[np.argsort({receiver})]` for a 1-d array"
        )
    if name == "partition":
        kth = args[0] if args else "k"
        return f"use `{receiver} = np.partition({receiver}, {kth})`, which returns a new array"
    if name == "fill":
        value = args[0] if args else "v"
        return f"make a new array: `{receiver} = np.full_like({receiver}, {value})`"
    if name == "resize":
        shape = ", ".join(args) if args else "new_shape"
        return f"make a new array: `{receiver} = np.resize({receiver}, ({shape}))`"
    if name in ("put", "itemset"):
        index = args[0] if args else "i"
        value = args[-1] if len(args) > 1 else "v"
        return (
            "build a new array: "
            f"`{receiver} = np.where(np.arange({receiver}.size) == {index}, {value}, {receiver})`"
        )
    return f"compute a new array instead of changing '{receiver}' in place"


def _container_fix(receiver, name, node, text) -> str:
    args = _args_text(node, text)
    first = args[0] if args else "v"
    if name == "append":
        return (
            f"build a new tuple instead: start with `{receiver} = ()` and write "
            f"`{receiver} = {receiver} + ({first},)`; use `np.stack({receiver})` for an array"
        )
    if name == "extend":
        return f"make a new sequence: `{receiver} = {receiver} + {first}` (both of the same type)"
    if name == "insert":
        value = args[1] if len(args) > 1 else "v"
        return (
            f"make a new list: `{receiver} = {receiver}[:{first}] + [{value}] + "
            f"{receiver}[{first}:]`"
        )
    if name == "pop":
        index = args[0] if args else "-1"
        if index == "-1":
            return f"read and rebind: `v = {receiver}[-1]` then `{receiver} = {receiver}[:-1]`"
        return (
            f"read and rebind: `v = {receiver}[{index}]` then "
            f"`{receiver} = {receiver}[:{index}] + {receiver}[{_plus_one(index)}:]`"
        )
    if name == "reverse":
        return f"make a reversed copy: `{receiver} = {receiver}[::-1]`"
    if name == "clear":
        return f"rebind to an empty value: `{receiver} = ()`"
    if name == "add":
        return f"make a new set: `{receiver} = {receiver} | {{{first}}}`"
    if name in ("update", "setdefault", "popitem"):
        return f"build a new dict display instead, e.g. `{receiver} = {{'key': value, ...}}`"
    return f"build a new value instead of changing '{receiver}' in place"


def _inplace_function_fix(obj, node, text) -> str:
    args = _args_text(node, text)
    name = getattr(obj, "__name__", "")
    target = args[0] if args else "a"
    if name == "at":
        ufunc = getattr(obj, "__self__", None)
        index = args[1] if len(args) > 1 else "idx"
        value = args[2] if len(args) > 2 else "v"
        if ufunc is np.add:
            return (
                f"sum into a new array: `{target} = {target} + np.bincount({index}, "
                f"weights={value}, minlength={target}.size)` (for 1-d integer indices)"
            )
        return f"compute a new array instead, e.g. with `np.where(mask, new_values, {target})`"
    if name == "copyto":
        src = args[1] if len(args) > 1 else "src"
        return f"rebind the name instead: `{target} = {src} * np.ones_like({target})`"
    if name == "fill_diagonal":
        value = args[1] if len(args) > 1 else "v"
        return (
            "build a new array: `"
            f"{target} = np.where(np.eye({target}.shape[0], {target}.shape[1], dtype=bool), "
            f"{value}, {target})`"
        )
    if name in ("put", "place", "putmask"):
        return f"build a new array with a mask: `{target} = np.where(mask, values, {target})`"
    if name == "shuffle":
        return f"use a permuted copy: `{target} = {target}[rng.permutation(len({target}))]`"
    return f"compute a new array instead of writing into '{target}'"


def is_coroutine(obj) -> bool:
    """Whether ``obj`` (or what it wraps) is an ``async def`` function."""
    try:
        target = inspect.unwrap(obj) if callable(obj) else obj
        return inspect.iscoroutinefunction(target) or inspect.isasyncgenfunction(target)
    except Exception:  # noqa: BLE001 - an odd object is simply not a coroutine function
        return False
