"""Writes the checker meets: assignments to subscripts and attributes, augmented
assignments and ``del``, with the rewrite each refusal suggests.

A mixin of :class:`~pullback.check.checker.FunctionChecker` (which provides ``report``,
``text``, ``locals`` and the alias analysis).
"""

from __future__ import annotations

import gast

from ..resolve import VIEW_ATTRIBUTES, object_item_target
from ..transform.inplace_calls import flat_store_target, inplace_call, inplace_statement_call
from ..transform.side_effects import kept_parameter_item
from . import codes
from .aliasing import (
    AliasAnalysis,
    Reason,
)
from .fresh_arrays import may_return_view, method_may_return_view
from .mutation_fixes import (
    OPERATORS,
    inplace_function_fix,
    inplace_method_fix,
    inplace_name,
    is_scalar_literal,
    is_whole,
    parenthesize,
    plus_one,
    quote_first,
)
from .param_rebinding import array_parameters
from .special_stores import SpecialStoreReports


class MutationChecks(SpecialStoreReports):
    """Visitors of :class:`~pullback.check.checker.FunctionChecker`; see the module docstring."""

    def _aliases(self) -> AliasAnalysis:
        if self._alias is None:
            self._alias = AliasAnalysis(
                self.tree,
                self._returns_fresh,
                self._inplace_spec,
                helper_writes=self,
                container_kind=self._container_analysis().kinds.get,
                new_object=self._makes_user_object,
            )
        return self._alias

    def _inplace_spec(self, call):
        return inplace_call(call, self._resolve(call))

    # -- in-place calls (a.fill(v), np.copyto(a, s), out=a, ...) --------------------------------
    def check_inplace_call(self, node):
        """PB103/PB104 for an in-place call: ``None`` when ``node`` is not one this module
        knows, ``"out"`` for an accepted ``out=`` (the caller's other checks still run),
        ``"done"`` when accepted or reported."""
        spec = self._inplace_spec(node)
        if spec is None:
            return None
        stmt = self._aliases().parent.get(node)
        if spec.problem is None and inplace_statement_call(stmt) is not node:
            spec.problem = (
                "write the call as a statement of its own (`f(...)` or `r = f(...)`) and use "
                "the array afterwards"
            )
        reason = None
        if spec.problem is None:
            reason = self._aliases().write_reason(spec.target, stmt)
            if reason is None:
                return "out" if spec.kind == "out" else "done"
        self._report_inplace(node, spec, reason)
        return "done"

    def _report_inplace(self, node, spec, reason):
        callee = self._resolve(node)
        if callee.kind == "method":
            code, receiver = "PB103", self.text(node.func.value)
            message = f"in-place method '{self.text(node)}' changes '{receiver}'"
            fix = inplace_method_fix(receiver, node.func.attr, node, self.text)
        elif spec.kind == "out":
            code = "PB104"
            out = next((k for k in node.keywords if k.arg == "out"), None)
            target = self.text(spec.args["out"])  # by keyword or by position
            written = self.text(out) if out is not None else target
            message = f"'{written}' writes the result into an existing array"
            fix = (
                f"use the returned value instead, e.g. `{target} = "
                f"{self._call_text(spec.args['call'])}` without `out=`"
            )
            node = out if out is not None else node
        else:
            code = "PB104"
            message = f"'{inplace_name(callee.obj)}' writes into its argument"
            fix = inplace_function_fix(callee.obj, node, self.text)
        why = None
        if reason is not None and reason.kind == "parameter":
            self.note_parameter_write(spec.target, node)
        if spec.problem is not None:
            fix = f"{spec.problem}, or {fix}"
        elif reason is not None:
            why, first = self._store_why(self.text(spec.target), reason)
            fix = f"{first}{fix}"
        self.report(
            node, code, f"array mutation: {message}", why=why, fix=f"{fix} ({codes.see(code)})."
        )

    def _call_text(self, call):
        parts = [self.text(a) for a in call.args]
        parts += [f"{k.arg}={self.text(k.value)}" for k in call.keywords]
        return f"{self.text(call.func)}({', '.join(parts)})"

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
        op = OPERATORS.get(type(node.op), "?")
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
        elif isinstance(target, gast.Subscript) and self.check_container_delete(target):
            self.visit(target.value)  # a list or dict (check/container_checks.py)
            self.visit(target.slice)
        elif isinstance(target, gast.Subscript):
            base = self.text(target.value)
            index = target.slice
            if isinstance(index, gast.Constant) and isinstance(index.value, str):
                fix = (
                    "build a new dict without the key: write the remaining entries out, "
                    f"e.g. `{base} = {{'other': {base}['other']}}`"
                )
            else:
                after = plus_one(self.text(index))
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
        if isinstance(target, gast.Starred):  # first, *rest = t: rest is a new list
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

    def _kept_parameter_item(self, target) -> bool:
        """``d["key"] = v`` into a dict parameter the function does not use again but to
        store items (transform/side_effects.kept_parameter_item): the transformation runs
        it as the primal does (free_values.object_item_store)."""
        parents = self._parent_map()
        statement = parents.get(target)
        return isinstance(statement, gast.Assign) and kept_parameter_item(
            self.tree, target, parents, after=statement
        )

    def _report_subscript_store(self, target, value, op):
        if op is None and self._kept_parameter_item(target):
            return  # bn_param["running_mean"] = rm: runs as in the primal, never read back
        if self.check_container_store(target, op):
            return  # a list or dict (check/container_checks.py)
        if op is None and object_item_target(target):
            # self.cache["X"] = X: a dict or list on an object gets the value as in the
            # primal; an array there is refused when it runs (free_values.object_item_store)
            return
        if op is None and flat_store_target(target):
            # a.flat[key] = v: np.put's write into a (transform/inplace_calls.py)
            reason = self._aliases().store_reason(target.value)
        else:
            reason = self._aliases().store_reason(target)
        if reason is None:
            return  # a local array: written in place (transform/mutation.py)
        if op is None and flat_store_target(target):
            self._report_flat_store(target, reason)
            return
        if reason.kind == "parameter":
            self.note_parameter_write(target.value, target)
        if self._report_dict_subclass_store(target, value, op, reason):
            return
        if self._report_outer_container_store(target, op):
            return
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
        if self._report_own_view_store(target, value, reason, code, what, part):
            return
        fix = self._subscript_fix(base, index, value, value_text, op)
        why, first = self._store_why(base, reason)
        if reason.kind == "unknown" and isinstance(target.value, gast.Subscript):
            unproved = self.held_unproved.get(id(target))
            why, first = _held_array_why(
                base, self.text(target.value.value), index, self.text, self._held_by(unproved)
            )
        if (
            isinstance(target.value, gast.Attribute)
            and target.value.attr in VIEW_ATTRIBUTES
            and not (op is None and flat_store_target(target))
        ):
            # x.T[i, j] = v: a write through a view of x, which pullback does not follow
            owner = self.text(target.value.value)
            why = (
                f"'{base}' is a view of '{owner}': the write changes '{owner}', through a "
                "view pullback does not follow."
            )
            attr = target.value.attr
            hint = (
                f": `{owner}[j, i] = ...` for `{owner}.{attr}[i, j] = ...`"
                if attr in ("T", "mT")
                else ""
            )
            self.report(
                target,
                code,
                f"array mutation: {what} {part}",
                why=why,
                fix=f"write into '{owner}' itself{hint} ({codes.see(code)}).",
            )
            return
        keyed = self.keyed_store_fix(target, parenthesize(value, value_text, op or "+"), op)
        if keyed is not None:  # grads[k] += reg * W, grads from a call: a dict, likely
            first = f"{keyed}; if it is an array, {first[0].lower()}{first[1:]}"
        self.report(
            target,
            code,
            f"array mutation: {what} {part}",
            why=why,
            fix=f"{first}build a new array, e.g. {fix} ({codes.see(code)}).",
        )

    def _store_why(self, base, reason):
        """Why ``base`` is not provably local, and the first fix to offer (or '')."""
        if reason.kind == "parameter":
            return (
                f"'{base}' comes from a parameter, so it may be the caller's array, and a "
                "differentiated function may write only into arrays it created itself.",
                f"write `{base} = {base}.copy()` before the first write (then '{base}' is the "
                "function's own array), or ",
            )
        if reason.kind == "shared" and reason.node is not None:
            _, line, _ = self.fs.location(reason.node)
            return (
                f"'{base}' is also used on line {line} in a way that may let another name "
                "(an alias or a view such as `v = b[1:3]`, `b.T`, `b.reshape(...)`) or a call "
                "keep its array, and a write would change what that name sees.",
                "copy what that line keeps (`v = b[1:3].copy()`), or ",
            )
        copied = self._name_copy(reason)
        if copied is not None and not self._aliases().moves.is_move_use(copied):
            _, line, _ = self.fs.location(reason.node)
            return (
                f"'{base}' is bound on line {line} to the array of '{copied.id}', and "
                f"'{copied.id}' (or a view or another name of that array) may be read after "
                "that, so both names would see the write. pullback follows an array handed "
                "from one name to another (`u, un = un, u`, `tmp = u; u = un; un = tmp`) "
                "when the name it comes from is bound anew before anything reads it again.",
                f"bind '{base}' to a copy there (`{base} = {copied.id}.copy()`) when "
                f"'{copied.id}' must keep its values, or ",
            )
        view = self._view_definition(reason)
        if view is not None:
            return (
                f"'{base}' is `{view}`, which may be a view of another array or that array "
                "itself (unlike np.sort, np.diff, np.concatenate, arithmetic, ..., which "
                "always return a new array), so a write would change that array too.",
                f"write `{base} = {base}.copy()` before the first write (when the writes need "
                "not reach the array it views), or ",
            )
        return (
            f"pullback cannot prove that '{base}' is an array the function created itself "
            "(np.zeros, np.empty, x.copy(), arithmetic, ...) and that no other name sees.",
            f"write `{base} = {base}.copy()` before the first write (when the writes need not "
            "reach the array it came from), or ",
        )

    def _name_copy(self, reason):
        """The name read where a not-fresh definition takes its value as it is (``b = a``,
        ``u, un = un, u``), else None."""
        if reason.kind != "not_fresh" or reason.node is None:
            return None
        if self._aliases()._parameter_copy(reason.node):
            return None  # b = x: the caller's array (the general message)
        parent = self._aliases().parent.get(reason.node)
        value = parent.value if isinstance(parent, gast.Assign) else None
        if isinstance(parent, gast.Tuple):
            owner = self._aliases().parent.get(parent)
            values = getattr(getattr(owner, "value", None), "elts", None)
            if isinstance(owner, gast.Assign) and values and len(values) == len(parent.elts):
                value = values[next(k for k, e in enumerate(parent.elts) if e is reason.node)]
        return value if isinstance(value, gast.Name) else None

    def _view_definition(self, reason):
        """The source of the value a not-fresh definition binds when that value may be a
        view (a call the table lists as such, ``x.T``), else None. Slices (``x[1:]``) keep
        the general message, which names the views of local arrays too."""
        if reason.kind != "not_fresh" or reason.node is None:
            return None
        parent = self._aliases().parent.get(reason.node)
        if not isinstance(parent, gast.Assign):
            return None
        value = parent.value
        if isinstance(value, gast.Attribute) and value.attr in VIEW_ATTRIBUTES:
            return self.text(value)
        if isinstance(value, gast.Call):
            callee = self._resolve(value)
            if callee.kind in ("array_method", "method") and method_may_return_view(callee.name):
                return self.text(value)
            if callee.kind == "object" and (
                may_return_view(callee.obj) or getattr(callee.obj, "__name__", None) == "diff"
            ):
                return self.text(value)
        return None

    def _subscript_fix(self, base, index, value, value_text, op):
        """A concrete rewrite of ``base[index] (op)= value`` that makes a new array (quoted)."""
        return quote_first(self._subscript_rewrite(base, index, value, value_text, op))

    def _subscript_rewrite(self, base, index, value, value_text, op):

        def combined(current):
            if op is None:
                return value_text
            return f"{current} {op} {parenthesize(value, value_text, op)}"

        if is_whole(index):
            if op is None:
                return f"{base} = {value_text} * np.ones_like({base})"
            return f"{base} = {combined(base)}"
        if isinstance(index, gast.Slice) and index.step is None:
            lower = self.text(index.lower) if index.lower is not None else None
            upper = self.text(index.upper) if index.upper is not None else None
            positions = f"np.arange({base}.size)"
            if not is_scalar_literal(value):
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

    def _held_by(self, unproved) -> str:
        """``, and `a = xs[t]` on line 4 may keep one of its arrays``: what breaks the proof."""
        node = getattr(unproved, "node", None)
        if node is None:
            return ""
        _, line, _ = self.fs.location(node)
        if unproved.kept:
            return f", and `{self.text(node)}` on line {line} may keep one of its arrays"
        return (
            f", and `{self.text(node)}` on line {line} puts in a value that may be held elsewhere"
        )

    # -- augmented assignment to a name (PB105) ----------------------------------------------
    def _check_augassign_name(self, node, op):
        if self._aliases().is_rebinding(node) or self.container_rebinding_ok(node):
            return
        if node.target.id in self._free_declarations():
            return  # global n; n += 1: runs as in the primal, or refused as PB401
        name = node.target.id
        reason = self._aliases().reason(node)
        if self._aliases().is_deferred(node):
            # s = x[i]; s += v or n += 1 on a parameter: checked when it runs
            # (aliasing._solve_deferred), unless the call passes an array there
            arrays = array_parameters(self, self._aliases().parameter_origins(node))
            if not arrays:
                return
            # known kinds: "is the caller's array"; else "may be" (the definition)
            reason = Reason("parameter", None if self.param_kinds is not None else node)
        if reason is not None and reason.kind == "parameter" and reason.node is None:
            why = (
                f"'{name}' is the caller's array at this call (its argument is an array), "
                f"and `{op}=` would change that array in place (on a number it rebinds)."
            )
        elif reason is not None and reason.kind == "parameter":
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
        value_text = parenthesize(node.value, self.text(node.value), op)
        self.report(
            node,
            "PB105",
            f"augmented assignment '{name} {op}= ...' may change an array that another name "
            "also refers to",
            why=why,
            fix=f"write `{name} = {name} {op} {value_text}` (a new array), which leaves other "
            f"references unchanged ({codes.see('PB105')}).",
        )


def _held_array_why(base, holder, index, text, held_by=""):
    """Why and the first fix for ``xs[t][k] = v``: an array held in a list or dict is written
    through the container only where the container is local and holds its arrays alone
    (check/held_arrays.py); writing it under a name of its own before storing it works."""
    return (
        f"'{base}' is an array held in '{holder}': pullback follows such a write only into a "
        f"list or dict the function made, whose every array is new and held by it alone"
        f"{held_by}.",
        f"make the array under a name, write into it, then store it (`a = np.zeros(...)`, "
        f"`a[{text(index)}] = ...`, `{base} = a`), or ",
    )
