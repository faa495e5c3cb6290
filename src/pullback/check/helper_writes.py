"""Helpers that write into a parameter: accepted where every call passes a local array.

``def fill(out, x): out[i] = ...`` writes into its caller's array. In the helper alone that
is refused (PB101: ``out`` comes from a parameter). The caller decides: a call that passes
an array the caller created itself and that no other name sees (``buf = np.zeros(n)``;
``fill(buf, x)``, ``buf = fill(buf, x)``, ``fill(np.zeros(n), x)``) is differentiated
through the helper's specialization that owns the parameter
(:mod:`pullback.transform.owned_helpers`), and the call is a write into ``buf`` for the
caller's own analysis (like ``np.copyto(buf, v)``). A call that passes anything else — the
caller's own parameter, a global, a closure variable, a view (``buf[1:3]``), a local another
name may hold — is refused at the call, naming the helper's write, with the copy that makes
it local. Helpers calling helpers compose: a helper that passes its parameter on to one that
writes into it writes into that parameter itself.

Which parameters a helper writes is what the check of the helper alone notes while it
refuses a write for coming from a parameter (:attr:`FunctionChecker.param_writes`), run on
the statements that can write into one (:meth:`HelperWrites.scan_parameter_writes`), plus
``rows.append(v)`` on a parameter (which runs as written when the list is the caller's own
concern, and is a change of the caller's local list here). A helper checked as its
specialization may not keep what it owns where it outlives the call
(:meth:`HelperWrites.check_owned_escapes`).
"""

from __future__ import annotations

import copy
import inspect
import types

import gast

from ..errors import location_text
from ..resolve import own_nodes, parent_map
from ..transform.list_analysis import DICT_ONLY, LIST_ONLY, MUTATORS
from ..transform.owned_helpers import owning_tree, returned_parameter
from ..tree_walk import walk
from . import codes
from .call_targets import user_callee
from .container_checks import none_default, none_default_copy
from .mutation_fixes import OPERATORS


class ParameterWrite:
    """Where a helper writes into one of its parameters (for messages). ``via``: the write
    of the helper this one passes the parameter on to; ``soft``: only appends
    (l.append(v)): into a list outside the caller's variables (a global log, self.history)
    they run as written, checked where read back (escapes.py). (A plain class, not a
    dataclass: dataclasses cost about half a millisecond each at import.)"""

    __slots__ = ("fs", "node", "via", "soft")

    def __init__(self, fs, node, via=None, soft: bool = False):
        self.fs = fs
        self.node = node
        self.via = via
        self.soft = soft

    def __repr__(self) -> str:
        return (
            f"ParameterWrite(fs={self.fs!r}, node={self.node!r}, via={self.via!r}, "
            f"soft={self.soft!r})"
        )

    def place(self) -> str:
        return location_text(*self.fs.location(self.node))

    def describe(self, name: str, p: str) -> str:
        text = f"'{name}' writes into '{p}' at {self.place()}: `{self.line_text()}`"
        if self.via is not None:
            text += f", which writes into it at {self.via.place()}: `{self.via.line_text()}`"
        return text

    def line_text(self) -> str:
        _, line, _ = self.fs.location(self.node)
        return self.fs.file_line(line).strip()


def written_parameters(env, registry, fn, source, checker_class) -> dict:
    """``{parameter: ParameterWrite}`` for the parameters of the user function ``fn``
    (``source`` loaded) that it writes into, directly or through the helpers it calls (as
    ``checker_class``, the check's FunctionChecker, finds them). Once per function and
    environment; a recursive call in progress counts as none."""
    memo = env.__dict__.setdefault("written_parameters", {})
    if fn in memo:
        return memo[fn] or {}
    memo[fn] = None
    tree = getattr(source, "tree", None)
    if not isinstance(tree, gast.FunctionDef):
        memo[fn] = {}
        return {}
    checker = checker_class(source, registry, env)
    checker.scan_parameter_writes()
    params = {a.id for a in tree.args.posonlyargs + tree.args.args + tree.args.kwonlyargs}
    memo[fn] = {p: w for p, w in checker.param_writes.items() if p in params}
    return memo[fn]


def owning_source(source, owned, kinds=()):
    """``source`` as its specialization owning ``owned`` reads (for the check)."""
    special = copy.copy(source)
    special.tree = owning_tree(source.tree, owned, kinds)
    special.owned = owned  # the check refuses keeping them (HelperWrites.check_owned_escapes)
    return special


def bind_arguments(call, tree, bound: int):
    """``{parameter: argument node}`` of a call of the function ``tree`` (``bound``
    leading parameters bound by the callable itself), or None when not plain."""
    a = tree.args
    if bound not in (0, 1) or a.vararg is not None or a.kwarg is not None or a.posonlyargs:
        return None
    if any(isinstance(x, gast.Starred) for x in call.args):
        return None
    if any(k.arg is None for k in call.keywords):
        return None
    params = [p.id for p in a.args][bound:]
    if len(call.args) > len(params):
        return None
    out = dict(zip(params, call.args, strict=False))
    for k in call.keywords:
        out[k.arg] = k.value
    return out


def _passes_a_parameter(call, params) -> bool:
    """Whether a parameter is an argument of ``call`` or the receiver of its method."""
    values = [a.value if isinstance(a, gast.Starred) else a for a in call.args]
    values += [k.value for k in call.keywords]
    if isinstance(call.func, gast.Attribute):
        values.append(call.func.value)
    return any(isinstance(v, gast.Name) and v.id in params for v in values)


def _may_keep(callee, registry) -> bool:
    """Whether a method call may keep an argument: a method of an object (a list's
    ``append``, ``obj.register``), not a function of a module nor a rule."""
    if callee.kind == "method":  # a method of a local value: one that stores its argument
        return callee.name in MUTATORS or callee.name == "add"
    if callee.kind != "object" or registry.lookup(callee.obj) is not None:
        return False
    owner = getattr(callee.obj, "__self__", None)
    return owner is not None and not isinstance(owner, (types.ModuleType, type))


#: Statements an owning call may sit inside (transform/helper_calls.py hoists it before).
SIMPLE = (gast.Expr, gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Return)
#: Expressions that may evaluate a part of themselves conditionally or repeatedly.
_CONDITIONAL = (
    gast.IfExp, gast.BoolOp, gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp,
    gast.GeneratorExp, gast.NamedExpr,
)


def hoistable(call, statement, args, owned) -> bool:
    """Whether the owning ``call`` inside ``statement`` may run just before it: a simple
    statement, the call evaluated exactly once, and no array the call writes into read
    anywhere else in the statement (which would then see the writes too early)."""
    if not isinstance(statement, SIMPLE):
        return False
    parents = parent_map(statement)
    node = parents.get(call)
    while node is not None and node is not statement:
        if isinstance(node, _CONDITIONAL):
            return False
        node = parents.get(node)
    names = {args[p].id for p in owned if isinstance(args.get(p), gast.Name)}
    written = {id(args[p]) for p in owned if isinstance(args.get(p), gast.Name)}
    for n in walk(statement):
        if isinstance(n, gast.Name) and n.id in names and id(n) not in written:
            if isinstance(n.ctx, gast.Load) or isinstance(statement, gast.AugAssign):
                return False
    return True


class HelperWrites:
    """Mixin of :class:`~pullback.check.checker.FunctionChecker`: calls of helpers that
    write into a parameter (see the module docstring)."""

    def note_parameter_write(self, name, node, soft=False) -> None:
        """Remember that the function writes into its parameter ``name`` (a Name) at
        ``node``: a caller passing a local array there makes the write its own."""
        name = name.id if isinstance(name, gast.Name) else name
        known = self.param_writes.get(name)
        if isinstance(name, str) and (known is None or known.soft and not soft):
            self.param_writes[name] = ParameterWrite(self.fs, node, soft=soft)

    def scan_parameter_writes(self) -> None:
        """Fill :attr:`param_writes` by running only the checks of the statements that may
        write into a parameter (a store into it, a call it is passed to or called on): what
        a whole run would note, at a fraction of its cost. ``p += v`` alone is not one: on
        a float it rebinds, and the helper keeps refusing it as it did (PB105)."""
        a = self.tree.args
        params = {p.id for p in a.posonlyargs + a.args + a.kwonlyargs}
        for node in own_nodes(self.tree.body):
            if isinstance(node, (gast.Assign, gast.AugAssign)):
                op = OPERATORS.get(type(node.op), "?") if isinstance(node, gast.AugAssign) else None
                targets = node.targets if isinstance(node, gast.Assign) else [node.target]
                for t in targets:
                    if (
                        isinstance(t, gast.Subscript)
                        and isinstance(t.value, gast.Name)
                        and t.value.id in params
                    ):
                        self._report_subscript_store(t, node.value, op)
            elif isinstance(node, gast.Call) and _passes_a_parameter(node, params):
                func = node.func
                if isinstance(func, gast.Attribute) and func.attr in MUTATORS:
                    self.check_container_call(node, func.attr)  # l.append(v), d.update(e)
                if self.check_inplace_call(node) is None:
                    self.check_owning_call(node)

    def note_passed_on(self, arg, write) -> None:
        """The function passes its parameter ``arg`` (a Name) to a helper that writes
        into it at ``write``: it writes into that parameter itself."""
        known = self.param_writes.get(arg.id)
        if known is None or known.soft and not write.soft:
            self.param_writes[arg.id] = ParameterWrite(self.fs, arg, write, write.soft)

    def owning_call(self, call):
        """``(function, source, owned parameters in order, {parameter: argument})`` for a
        call of a user helper that writes into parameters it is passed, else None."""
        key = id(call)
        cache = self.__dict__.setdefault("_owning", {})
        if key not in cache:
            cache[key] = self._find_owning_call(call)
        return cache[key]

    def _find_owning_call(self, call):
        found = user_callee(self, call)
        if found is None:
            return None
        fn, source, bound = found
        tree = getattr(source, "tree", None)
        if not isinstance(tree, gast.FunctionDef) or bound != 0:
            return None  # a method (its receiver) or a partial: checked as written
        if getattr(getattr(fn, "__code__", None), "co_flags", 0) & inspect.CO_GENERATOR:
            return None  # a generator: its list version (transform/generators.py)
        written = written_parameters(self.env, self.registry, fn, source, type(self))
        if not written:
            return None
        args = bind_arguments(call, tree, 0)
        order = [p.id for p in tree.args.args + tree.args.kwonlyargs]
        owned = tuple(
            p
            for p in order
            if p in written and not (written[p].soft and self._outside(args, p))
        )
        return (fn, source, owned, args, written) if owned else None

    def _outside(self, args, p) -> bool:
        """Whether the call passes ``p`` a value outside the caller's variables (a global,
        a closure variable, an attribute or item of an object)."""
        arg = args.get(p) if args is not None else None
        if isinstance(arg, gast.Name):
            return arg.id not in self.locals
        return isinstance(arg, (gast.Attribute, gast.Subscript))

    def check_owned_escapes(self) -> None:
        """In a helper checked as its specialization owning parameters: refuse storing
        one where it outlives the call (``CACHE.append(out)``, ``self.last = out``,
        ``table[k] = out``). In Python that is the caller's array itself, which the caller
        then changes or reads; pullback would keep a copy of an earlier state."""
        owned = set(getattr(self.fs, "owned", ()) or ())
        if not owned:
            return
        parents = parent_map(self.tree)
        name = self.tree.name
        for node in own_nodes(self.tree.body):
            if not (isinstance(node, gast.Name) and node.id in owned):
                continue
            if not isinstance(node.ctx, gast.Load) or getattr(node, "lineno", None) is None:
                continue
            parent = parents.get(node)
            kept = None
            if isinstance(parent, gast.Assign) and parent.value is node:
                if any(not isinstance(t, gast.Name) for t in parent.targets):
                    kept = parent.targets[0]
            elif (
                isinstance(parent, gast.Call)
                and node in parent.args
                and isinstance(parent.func, gast.Attribute)
                and not (isinstance(parent.func.value, gast.Name) and parent.func.value.id in owned)
            ):
                if _may_keep(self._resolve(parent), self.registry):
                    kept = parent
            if kept is None:
                continue
            self.report(
                node,
                "PB101",
                f"array mutation: '{name}' keeps '{node.id}', which it writes into, in "
                f"`{self.text(kept)}`",
                why=(
                    f"Every call of '{name}' passes '{node.id}' an array of its caller, which "
                    "would then be that same array in Python, changed and read by the caller "
                    "after the call, which pullback does not follow."
                ),
                fix=f"keep a copy (`{node.id}.copy()`) there, or return '{node.id}' "
                f"({codes.see('PB101')}).",
            )

    def is_owned_argument(self, node, call) -> bool:
        """Whether the Name ``node`` is an argument the helper ``call`` writes into (for
        the container analysis: a change of the list or dict, not a use that keeps it)."""
        return any(arg is node for arg, _ in self.owned_argument_uses(call))

    def owned_container(self, value):
        """For the container analysis: ``rows = fill(rows, x)`` is "same" (``rows`` keeps
        its kind), ``rows = fill([], x)`` is "list" (``{}``: "dict"), where ``fill``
        returns the list or dict it owns; else None."""
        if not isinstance(value, gast.Call) or not self.owned_result_fresh(value):
            return None
        _, source, owned, args, _ = self.owning_call(value)
        arg = args[returned_parameter(source.tree, owned)]
        if isinstance(arg, gast.Name):
            return "same"
        if isinstance(arg, (gast.List, gast.ListComp)):
            return "list"
        return "dict" if isinstance(arg, (gast.Dict, gast.DictComp)) else None

    def owned_kinds(self, found) -> tuple:
        """"list", "dict" or None (an array) for each argument a helper call owns."""
        _, _, owned, args, _ = found
        kinds = []
        for p in owned:
            arg = args.get(p)
            if isinstance(arg, (gast.List, gast.ListComp)):
                kinds.append("list")
            elif isinstance(arg, (gast.Dict, gast.DictComp)):
                kinds.append("dict")
            elif isinstance(arg, gast.Name):
                kind = self._container_analysis().kinds.get(arg.id)
                kinds.append(kind if kind in ("list", "dict") else None)
            else:
                kinds.append(None)
        return tuple(kinds)

    def owned_argument_uses(self, call):
        """``[(Name argument, rebound)]`` the call writes into as a helper call: the
        caller's alias analysis counts them as writes (``rebound``: ``buf = fill(buf, x)``,
        the result takes the argument's own name)."""
        found = self.owning_call(call)
        if found is None or found[3] is None:
            return []
        _, _, owned, args, _ = found
        stmt = self._aliases_parent(call)
        out = []
        for p in owned:
            arg = args.get(p)
            if not isinstance(arg, gast.Name):
                continue
            rebound = (
                isinstance(stmt, gast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name)
                and stmt.targets[0].id == arg.id
            )
            out.append((arg, rebound))
        return out

    def owned_result_fresh(self, call) -> bool:
        """``buf = fill(buf, x)`` / ``out = fill(np.zeros(n), x)`` where ``fill`` returns
        the array it owns: a new array no other name holds."""
        found = self.owning_call(call)
        if found is None or found[3] is None:
            return False
        _, source, owned, args, _ = found
        p = returned_parameter(source.tree, owned)
        stmt = self._aliases_parent(call)
        if p is None or p not in args or not isinstance(stmt, gast.Assign):
            return False
        target = stmt.targets[0] if len(stmt.targets) == 1 else None
        arg = args[p]
        if not isinstance(arg, gast.Name):
            return True
        return isinstance(target, gast.Name) and target.id == arg.id

    def _aliases_parent(self, call):
        parents = self.__dict__.get("_helper_parents")
        if parents is None:
            parents = self._helper_parents = parent_map(self.tree)
        return parents.get(call)

    def check_owning_call(self, call) -> tuple:
        """Report the arguments of a helper call that the helper writes into and that are
        not local arrays; the owned parameters (the helper is then checked as its
        specialization owning them, so its own writes are not reported again)."""
        found = self.owning_call(call)
        if found is None:
            return (), ()
        fn, _, owned, args, written = found
        name = getattr(fn, "__name__", "helper")
        if args is None:
            p = owned[0]
            self._report_helper_write(
                call, call, name, p, written[p],
                "pass the array it writes into positionally, as a plain argument",
            )
            return owned, ()
        stmt = self._aliases_parent(call)
        plain = isinstance(stmt, (gast.Expr, gast.Return)) or (
            isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
        )
        for p in owned:
            arg = args.get(p)
            if arg is None:
                self._report_helper_write(
                    call, call, name, p, written[p],
                    _default_fix(fn, p),
                )
                continue
            statement = self._aliases()._statement(call)
            local = not isinstance(arg, gast.Name) or not self._aliases().write_reason(
                arg, statement
            )
            hoisted = plain and stmt.value is call or hoistable(call, statement, args, owned)
            if local and isinstance(arg, gast.Name) and not hoisted:
                self._report_helper_write(
                    call, arg, name, p, written[p],
                    "write the call as a statement of its own (`f(buf, ...)` or "
                    "`buf = f(buf, ...)`) and use the array afterwards",
                )
            else:
                self._check_owned_argument(call, statement, arg, name, p, written[p])
        return owned, self.owned_kinds(found)

    def _check_owned_argument(self, call, stmt, arg, name, p, write):
        text = self.text(arg)
        kind = self._container_analysis().kinds.get(arg.id) if isinstance(arg, gast.Name) else None
        if kind in ("list", "dict"):
            self._check_owned_container(call, arg, kind, name, p, write)
            return
        if isinstance(arg, gast.Name):
            reason = self._aliases().write_reason(arg, stmt)
            if reason is None:
                self._report_passed_twice(call, arg, "array", name, p, write)
                return
            if reason.kind == "parameter":
                self.note_passed_on(arg, write)
            why, _ = self._store_why(text, reason)
            if arg.id not in self.locals:
                why = (
                    f"'{text}' is a global or a variable of an enclosing function: the writes "
                    "would outlive the call."
                )
            self._report_helper_write(call, arg, name, p, write, None, why=why)
            return
        if self._aliases().fresh_expr(arg) or isinstance(
            arg, (gast.List, gast.ListComp, gast.Dict, gast.DictComp)
        ):
            return
        why = (
            f"`{text}` may be a view of another array (or that array itself), and the "
            "helper's writes would change that array through it, which pullback does not "
            "follow."
        )
        fix = (
            f"pass a new array and write it back: `part = {text}.copy()`, "
            f"`{self._call_with(call, arg, 'part')}`, then store `part` where it belongs"
        )
        if isinstance(arg, gast.Subscript):
            fix += f" (`{text} = part`)"
        self._report_helper_write(call, arg, name, p, write, fix, why=why)

    def _check_owned_container(self, call, arg, kind, name, p, write):
        """A local list or dict passed to a helper that changes it (list_analysis)."""
        refusal = self._container_analysis().refusal(arg.id)
        if refusal is None:
            self._report_passed_twice(call, arg, kind, name, p, write)
            return
        if refusal.kind == "parameter":
            self.note_passed_on(arg, write)
            why = f"'{arg.id}' comes from a parameter, so it is the caller's {kind}."
        elif refusal.kind in ("global", "closure"):
            why = f"'{arg.id}' is a global or a variable of an enclosing function."
        elif refusal.kind == "shared" and refusal.node is not None:
            _, line, _ = self.fs.location(refusal.node)
            why = (
                f"'{arg.id}' is also used on line {line} in a way that may let another name "
                f"keep the {kind} while it changes."
            )
        else:
            why = f"pullback cannot prove that '{arg.id}' is a {kind} the function built itself."
        self._report_helper_write(call, arg, name, p, write, None, why=why)

    def _report_passed_twice(self, call, arg, kind, name, p, write) -> None:
        """Refuse a local ``arg`` that another argument of the call may also be."""
        if self._passed_twice(call, arg):
            why = (
                f"'{arg.id}' is also passed as another argument of this call: inside "
                f"'{name}' both parameters would be one {kind}, which pullback does not follow."
            )
            self._report_helper_write(call, arg, name, p, write, None, why=why)

    def _passed_twice(self, call, arg) -> bool:
        """Whether another argument of ``call`` may be ``arg``'s array or hold it (not
        merely a value computed from it, like ``buf * 2``)."""
        others = [a for a in call.args if a is not arg] + [
            k.value for k in call.keywords if k.value is not arg
        ]
        for other in others:
            names = {n.id for n in walk(other) if isinstance(n, gast.Name)}
            if arg.id in names and not isinstance(other, (gast.BinOp, gast.UnaryOp)):
                return True
        return False

    def _call_with(self, call, arg, replacement) -> str:
        parts = [replacement if a is arg else self.text(a) for a in call.args]
        parts += [
            f"{k.arg}={replacement if k.value is arg else self.text(k.value)}"
            for k in call.keywords
        ]
        return f"{self.text(call.func)}({', '.join(parts)})"

    def _report_helper_write(self, call, node, name, p, write, fix, why=None):
        text = self.text(node) if node is not call else p
        optional = _optional_container_fix(self.owning_call(call), name, p, write)
        if optional is not None:  # a copy by the caller fails on None; the helper's own works
            kind, fix = optional
            why = (
                f"'{text}' may be a {kind} the caller keeps (or None, which '{name}' replaces "
                f"by a new {kind}), and the writes would change it in place."
            )
        elif fix is None:
            copied = self._call_with(call, node, f"{text}.copy()")
            fix = (
                f"pass a copy: `{copied}` (then use what '{name}' returns, or name the "
                f"copy first: `{text} = {text}.copy()` before the call)"
            )
        message = (
            f"array mutation: '{name}' writes into its parameter '{p}', which this call "
            f"passes '{text}'"
        )
        detail = write.describe(name, p) + "."
        self.report(
            node,
            "PB101",
            message,
            why=f"{detail} {why}" if why else detail,
            fix=f"{fix} ({codes.see('PB101')}).",
        )


__all__ = [
    "HelperWrites",
    "ParameterWrite",
    "bind_arguments",
    "owning_source",
    "written_parameters",
]


def _default_fix(fn, p) -> str:
    """The fix for a call that leaves the written parameter ``p`` to its default: a local
    container of the default's kind. A default dict (a memo, ``def f(n, x, memo={})``) is
    one object for every call: it would keep, and hand back, values of an earlier call."""
    try:
        default = inspect.signature(fn).parameters[p].default
    except (TypeError, ValueError, KeyError):
        default = None
    if isinstance(default, (dict, list)):
        made = "{}" if isinstance(default, dict) else "[]"
        return (
            f"pass '{p}' a {type(default).__name__} of this call (`{p}={made}`) rather than "
            "its default, which is one object for every call: it would keep the values an "
            "earlier call stored (computed from other arguments) and hand them back"
        )
    return f"pass '{p}' a local array (`{p}=np.zeros(...)`) rather than its default"


def _optional_container_fix(found, name, p, write):
    """The fix for a helper that changes the list or dict ``p`` whose default is None
    (``def sgd_momentum(w, dw, config=None)``): the caller may pass None, which has no
    ``.copy()``; a first line of the helper that copies what it gets, or makes a new one
    for None, works for both."""
    if found is None or not none_default(found[1].tree, p):
        return None
    node = write.node
    keyed = isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Constant)
    method = getattr(getattr(node, "func", None), "attr", None)
    if keyed and isinstance(node.slice.value, str) or method in DICT_ONLY:
        kind = "dict"
    elif method in LIST_ONLY:
        kind = "list"
    else:
        return None
    return kind, (
        f"let '{name}' change a {kind} of its own: make `{none_default_copy(p, kind)}` its "
        f"first line and return '{p}', and use what it returns (`..., {p} = {name}(...)`)"
    )
