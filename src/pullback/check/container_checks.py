"""PB106: changes of lists and dicts — allowed on local ones, refused with the fix otherwise.

A change of a list or dict the function built itself, that no other name can see while it
changes (:mod:`pullback.transform.list_analysis`), is differentiated exactly
(:mod:`pullback.transform.list_mutation`). Any other change — of an argument's container,
of a global or closure variable, of a local that another name, container or call may also
hold — is refused here, at the user's line, with the copy that makes it local.

A mixin of :class:`~pullback.check.checker.FunctionChecker` (through ``CallChecks``).
"""

from __future__ import annotations

import gast

from ..transform.list_analysis import DICT_ONLY, MUTATORS, ContainerAnalysis
from ..transform.side_effects import append_read_back, returns_a_value
from ..tree_walk import walk
from . import codes
from .mutation_fixes import outside_append_texts
from .taint import reads_tainted


class ContainerChecks:
    """See the module docstring."""

    def _container_analysis(self) -> ContainerAnalysis:
        found = getattr(self, "_containers", None)
        if found is None:
            found = self._containers = ContainerAnalysis(
                self.fs, self.tree, self.locals, self.is_owned_argument, self.owned_container
            )
        return found

    def check_container_call(self, node, name) -> bool | None:
        """``receiver.name(...)``: True when reported or allowed, None to leave it to the
        array checks (``x.sort()`` on what may be an array)."""
        func = node.func
        if name == "append" and self.env.static:
            self._check_outside_append(node)
        if name not in MUTATORS or not isinstance(func.value, gast.Name):
            return None
        receiver = func.value.id
        analysis = self._container_analysis()
        if self._object_of_a_class(receiver, analysis):
            return False  # layer.update(params) on a Linear(...): its own method (the
            # transformation follows it, plain_methods.py), not dict.update
        refusal = analysis.refusal(receiver)
        if refusal is not None and refusal.kind == "parameter":
            # a caller's local list: its own change (append alone: see helper_writes)
            self.note_parameter_write(func.value, node, soft=name == "append")
        if name == "append":
            return None  # runs as written; refused by the transform only if read back (PB106)
        if refusal is None:
            return True  # a local container: rewritten by transform/list_mutation.py
        if name == "sort" and refusal.kind != "shared":
            return None  # may be an array: PB103 says how to sort it
        kind = analysis.kinds.get(receiver) or ("dict" if name in DICT_ONLY else "list")
        self._report_container(node, receiver, f"'{self.text(node)}'", kind, refusal)
        return True

    def _object_of_a_class(self, name, analysis) -> bool:
        """Whether every value bound to ``name`` is made by calling a class that is not a
        list, dict or set (an object whose ``update``/``pop``/... are its own methods)."""
        values = analysis.bindings.get(name)
        if not values or name in analysis.params:
            return False
        for value in values:
            if not isinstance(value, gast.Call):
                return False
            callee = self._resolve(value)
            cls = getattr(callee, "class_of", None) or getattr(callee, "obj", None)
            made = getattr(cls, "__pullback_class__", None)
            cls = made if isinstance(made, type) else cls
            if not isinstance(cls, type) or issubclass(cls, (list, dict, set)):
                return False
        return True

    def _check_outside_append(self, node) -> None:
        """PB106 (``pullback check`` only: at grad time the transformation decides it with
        the exact activity) where grad refuses ``receiver.append(v)``: ``v`` may be
        differentiated, the list is not one the function builds (an argument's, a global's,
        one inside another container or object) and the function may read it back."""
        receiver = node.func.value
        if len(node.args) != 1 or node.keywords or isinstance(node.args[0], gast.Starred):
            return
        if isinstance(receiver, gast.Name) and receiver.id in self.locals:
            refusal = self._container_analysis().refusal(receiver.id)
            if refusal is None or refusal.kind != "parameter":
                return  # a local list: rewritten, or refused as a shared one
        if not reads_tainted(node.args[0], self.tainted()):
            return
        parents = self._parent_map()
        statement = node
        while statement is not None and not isinstance(statement, gast.stmt):
            statement = parents.get(statement)
        if not append_read_back(self.tree, node.func, statement, parents):
            return
        what, why, fix = outside_append_texts(receiver, self.text(node.args[0]))
        self.report(node, "PB106", what, why=why, fix=f"{fix[:-1]} ({codes.see('PB106')}).")

    def check_container_store(self, target, op) -> bool:
        """``l[i] (op)= v`` / ``d[k] (op)= v``: True when allowed or reported here; False
        leaves it to the array checks (arrays, and names that may be arrays)."""
        base = target.value
        analysis = self._container_analysis()
        if isinstance(base, gast.Subscript):
            unproved = self.held_array_store(target)
            if unproved is None:
                return True  # rewritten by transform/list_mutation.py (held_array_store)
            root = base.value
            rows = analysis.rows_refusal(root.id) if isinstance(root, gast.Name) else None
            if rows is not None and rows.kind == "rows":
                made = [rows.node, *analysis.bindings.get(root.id, ())]
                if not any(_rows_of_lists(v, analysis) for v in made):
                    return False  # a list of arrays: reported as one (mutation_checks.py)
            return self._nested_store(target, analysis)
        if not isinstance(base, gast.Name):
            return False
        kind = analysis.kinds.get(base.id)
        index = target.slice
        if kind is None and isinstance(index, gast.Constant) and isinstance(index.value, str):
            kind = "dict"  # d["key"] = v: a dict whatever its name is bound to
        if kind is None and self._global_memo(base.id) is not None:
            kind = "dict"  # MEMO[n] = v in a recursion: a memo that outlives the call
        if kind not in ("list", "dict"):
            return False
        refusal = analysis.refusal(base.id)
        if refusal is None and isinstance(index, gast.Slice) and kind == "list" and op:
            refusal = _SLICE  # l[a:b] += s: a slice read, extended, stored back
        if refusal is None:
            return True
        what = f"'{self.text(target)} {'' if op is None else op}= ...'"
        self._report_container(target, base.id, what, kind, refusal)
        return True

    def keyed_store_fix(self, target, value_text, op) -> str | None:
        """The fix, for ``d[k] (op)= v`` into a name not known to be a dict, when the key
        reads as a dict's (a string, or a loop variable over strings or over a dict): copy
        it into a dict of the function's own, and write an augmented store out (Python's
        ``+=`` would change the array item itself)."""
        base = target.value
        if not isinstance(base, gast.Name) or not _string_key(target.slice, self._parent_map()):
            return None
        name, key = base.id, self.text(target.slice)
        store = f"`{name}[{key}] = {name}[{key}] {op} {value_text}`" if op else "the store"
        return (
            f"if '{name}' is a dict, make it the function's own first, `{name} = dict({name})` "
            f"(at the function's top level, before the first change), then write {store}"
        )

    def held_array_store(self, target):
        """None when ``xs[t][k] (op)= v`` writes into an array that the local list or dict
        ``xs`` alone holds (check/held_arrays.py), else why not (an ``Unproved``, kept for
        the message of mutation_checks.py)."""
        from .held_arrays import Unproved, held_arrays_refusal  # (a store xs[t][k] = v only)

        outer = target.value
        if not isinstance(outer.value, gast.Name) or isinstance(outer.slice, gast.Slice):
            return Unproved(None)
        unproved = held_arrays_refusal(self, outer.value.id)
        if unproved is not None:
            self.held_unproved[id(target)] = unproved
        return unproved

    def _nested_store(self, target, analysis) -> bool:
        """``rows[i][j] (op)= v`` into a local list of lists: allowed when every row is a new
        list nothing else holds (list_analysis.rows_refusal), else refused with the fix."""
        outer = target.value
        root = outer.value
        if not (isinstance(root, gast.Name) and analysis.kinds.get(root.id) == "list"):
            return False
        rows = root.id
        refusal = analysis.rows_refusal(rows)
        sliced = isinstance(outer.slice, gast.Slice) or isinstance(target.slice, gast.Slice)
        if refusal is None and not sliced:
            return True  # rewritten by transform/list_mutation.py
        what = f"'{self.text(target)} = ...' changes a list inside '{rows}'"
        if refusal is not None and refusal.kind not in ("rows", "shared"):
            self._report_container(target, rows, f"'{self.text(target)} = ...'", "list", refusal)
            return True
        i, j = self.text(outer.slice), self.text(target.slice)
        copy = (
            f"copy the row, change the copy and store it back: `row = list({rows}[{i}])`, "
            f"`row[{j}] = ...`, `{rows}[{i}] = row`"
        )
        if refusal is None:
            why = "A store into a slice of a row is not modelled."
            fix = copy
        elif refusal.kind == "rows":
            _, line, _ = self.fs.location(refusal.node)
            why = (
                f"The rows of '{rows}' may be one object seen from several places: "
                f"`{self.text(refusal.node)}` on line {line} puts in a row that is not a new "
                f"list (as `[[0.0] * n] * m` repeats one row), which pullback does not follow."
            )
            fix = (
                f"make every row a new list (`[[0.0] * n for _ in range(m)]`, `list(row)`), "
                f"or {copy}"
            )
        else:
            _, line, _ = self.fs.location(refusal.node)
            why = (
                f"`{self.text(refusal.node)}` on line {line} may hold a row of '{rows}' (or "
                f"'{rows}' itself) while its rows still change, and the change would show "
                "through it, which pullback does not follow."
            )
            fix = (
                f"copy it there (`list({self.text(refusal.node)})`), or make that use come "
                "after the last change"
            )
        self.report(
            target,
            "PB106",
            f"container mutation: {what}",
            why=why,
            fix=f"{fix} ({codes.see('PB106')}).",
        )
        return True

    def check_container_delete(self, target) -> bool:
        """``del l[i]`` / ``del d[k]``: True when allowed or reported here."""
        base = target.value
        if not isinstance(base, gast.Name):
            return False
        analysis = self._container_analysis()
        kind = analysis.kinds.get(base.id)
        refusal = analysis.refusal(base.id)
        if refusal is None:
            return True
        if kind not in ("list", "dict"):
            index = target.slice
            keyed = isinstance(index, gast.Constant) and isinstance(index.value, str)
            kind = "dict" if keyed else "list"
        self._report_container(target, base.id, f"'del {self.text(target)}'", kind, refusal)
        return True

    def container_rebinding_ok(self, node) -> bool:
        """``l += [...]`` / ``l *= 3`` on a local list: exactly ``l = l + [...]`` (only with
        a display or an integer: ``l += a`` with an array ``a`` would add elementwise)."""
        if self._container_analysis().kind(node.target.id) != "list":
            return False
        value = node.value
        if isinstance(node.op, gast.Add):
            return isinstance(value, (gast.List, gast.ListComp))
        return isinstance(value, gast.Constant) and type(value.value) is int

    def _memo_texts(self, name, kind):
        """``(why, fix)`` when ``name`` is a parameter that the function passes to its own
        recursive call (a memo: ``if n in memo: return memo[n]`` ... ``memo[n] = v``), else
        None. Its fix works: a table the function builds itself, or no memo at all."""
        tree = self.tree
        if kind != "dict" or not isinstance(tree, gast.FunctionDef):
            return None
        arguments = tree.args.args + tree.args.kwonlyargs
        if name not in {a.id for a in arguments if isinstance(a, gast.Name)}:
            return None
        recursive = any(
            isinstance(c, gast.Call)
            and isinstance(c.func, gast.Name)
            and c.func.id == tree.name
            and any(isinstance(a, gast.Name) and a.id == name for a in c.args)
            for c in walk(tree)
        )
        if not recursive:
            return None
        why = (
            f"'{name}' memoizes the recursion of '{tree.name}' in the caller's dict: it may "
            "hold values an earlier call stored (computed from another x), and pullback "
            "follows a memo only in a dict the differentiated function makes itself."
        )
        fix = (
            f"make the memo in a function that calls '{tree.name}' and differentiate that "
            f"one (`def loss(x): return {tree.name}(n, x, {{}})`: each call has a new dict, "
            f"passed down the recursion), or build the table bottom-up (`{name} = {{}}`, then "
            f"`for k in range(n + 1): {name}[k] = ...` reading `{name}[k - 1]`), or call the "
            f"recursion without '{name}' (the gradient is the same: the memo changes the "
            "cost, not the value)"
        )
        return why, fix

    def _global_memo(self, name):
        """``(why, fix)`` when ``name`` is a global or closure dict (its value now) that a
        recursive function writes (``MEMO[n] = v``), else None. It outlives the call: a
        later gradient would read values computed from an earlier argument, stale and
        without their derivative."""
        tree = self.tree
        if name in self.locals or not isinstance(tree, gast.FunctionDef):
            return None
        where, value = self.fs.locate(name)
        if where is None or type(value) is not dict:
            return None
        if not any(
            isinstance(c, gast.Call) and isinstance(c.func, gast.Name) and c.func.id == tree.name
            for c in walk(tree)
        ):
            return None
        why = (
            f"'{name}' memoizes the recursion of '{tree.name}' in a dict that outlives the "
            "call: a later call (another x) would read the values an earlier one stored, "
            "stale and without their gradient."
        )
        fix = (
            f"make the memo a dict of each call: create it in the function you differentiate "
            f"(`memo = {{}}`) and pass it down the recursion as an argument "
            f"(`{tree.name}(..., memo)`, reading and writing `memo[n]`), or drop the memo "
            "(the gradient is the same: the memo changes the cost, not the value)"
        )
        return why, fix

    def _report_container(self, node, name, what, kind, refusal):
        copy = f"{name} = {kind}({name})"
        memo = self._memo_texts(name, kind)
        if memo is None and refusal.kind in ("global", "closure"):
            memo = self._global_memo(name)
        optional = _none_default_fix(self.tree, name, kind)
        if memo is not None:
            why, fix = memo
        elif optional is not None:  # def sgd(w, dw, config=None): the copy must allow None
            self.note_parameter_write(name, node)
            why, fix = optional
        elif refusal.kind == "parameter":
            self.note_parameter_write(name, node)
            why = (
                f"'{name}' comes from a parameter, so it is the caller's {kind}, and a "
                f"differentiated function may change only lists and dicts it built itself."
            )
            fix = f"copy it first: write `{copy}` before the first change"
            if not returns_a_value(self.tree):
                # helper(x, out) filling the caller's container: an output parameter
                fix = (
                    f"build it here and return it (`{name} = {{}}` ... `return {name}`), and "
                    f"let the caller use what it returns instead of the {kind} it passed in; "
                    f"or {fix}"
                )
        elif refusal.kind in ("global", "closure"):
            where = (
                "a global" if refusal.kind == "global" else "a variable of an enclosing function"
            )
            why = (
                f"'{name}' is {where}: the change would outlive the call, and a differentiated "
                f"function may change only lists and dicts it built itself."
            )
            fix = f"work on a copy: write `{copy}` before the first change and return it"
        elif refusal.kind == "shared" and refusal.node is not None:
            _, line, _ = self.fs.location(refusal.node)
            why = (
                f"'{name}' is also used on line {line} in a way that lets another name, a "
                "container or a call hold the same object (or a loop iterate over it) while "
                "it still changes, and pullback does not follow that sharing."
            )
            use = refusal.node  # (an expression, or a statement such as a return)
            held = use.value if isinstance(use, (gast.Return, gast.Expr)) else use
            if isinstance(held, gast.expr):
                fix = (
                    f"copy it where it is shared (`{self.text(held)}` -> "
                    f"`{kind}({self.text(held)})`), or make that use come after the "
                    "last change"
                )
            else:
                fix = f"make the use on line {line} come after the last change"
        elif refusal.kind == "slice":
            why = (
                "An augmented assignment to a slice of a list is not modelled (slice stores "
                "and deletes are)."
            )
            fix = f"write it out as a slice store: `{self.text(node)} = {self.text(node)} + ...`"
        else:
            why = (
                f"pullback cannot prove that '{name}' is a {kind} the function built itself "
                "(a display, a comprehension, list(...), dict(...)) that no other name sees."
            )
            bound = refusal.node
            if (
                isinstance(bound, gast.Assign)
                and len(bound.targets) == 1
                and isinstance(bound.targets[0], gast.Tuple)
            ):
                _, line, _ = self.fs.location(bound)
                fix = (
                    f"copy it right after the assignment on line {line}: `{name} = {kind}({name})`"
                )
            elif isinstance(bound, gast.Assign) and len(bound.targets) == 1:
                _, line, _ = self.fs.location(bound)
                fix = (
                    f"make the assignment on line {line} a new {kind}: "
                    f"`{name} = {kind}({self.text(bound.value)})`"
                )
            else:
                fix = f"assign '{name}' only new {kind}s (`{name} = {kind}(...)`)"
        self.report(
            node,
            "PB106",
            f"container mutation: {what} changes '{name}' in place",
            why=why,
            fix=f"{fix} ({codes.see('PB106')}).",
        )


def _string_key(index, parents) -> bool:
    """Whether ``index`` is a string, or the variable of a loop over strings (``for k in
    ("W1", "W2")``) or over a dict's keys (``for k in grads``, ``grads.keys()``)."""
    if isinstance(index, gast.Constant):
        return isinstance(index.value, str)
    if not isinstance(index, gast.Name):
        return False
    loop = parents.get(index)
    while loop is not None:
        target = getattr(loop, "target", None)
        if isinstance(loop, gast.For) and isinstance(target, gast.Name) and target.id == index.id:
            it = loop.iter
            if isinstance(it, (gast.Tuple, gast.List)):
                return bool(it.elts) and all(
                    isinstance(e, gast.Constant) and isinstance(e.value, str) for e in it.elts
                )
            called = getattr(getattr(it, "func", None), "attr", None)
            return isinstance(it, gast.Name) or called == "keys"
        loop = parents.get(loop)
    return False


def none_default(tree, name) -> bool:
    """Whether ``name`` is a parameter of the function ``tree`` whose default is None."""
    args = getattr(tree, "args", None)
    if args is None:
        return False
    positional = args.posonlyargs + args.args
    defaulted = positional[len(positional) - len(args.defaults) :]
    pairs = list(zip(defaulted, args.defaults, strict=True))
    pairs += list(zip(args.kwonlyargs, args.kw_defaults, strict=True))
    return any(
        isinstance(a, gast.Name)
        and a.id == name
        and isinstance(d, gast.Constant)
        and d.value is None
        for a, d in pairs
    )


def none_default_copy(name, kind) -> str:
    """``config = {} if config is None else dict(config)``: the caller's container copied,
    or a new one where the caller passed None (``dict(None)`` would raise)."""
    made = "{}" if kind == "dict" else "[]"
    return f"{name} = {made} if {name} is None else {kind}({name})"


def _none_default_fix(tree, name, kind):
    """``(why, fix)`` for a change of the parameter ``name`` whose default is None
    (``def sgd_momentum(w, dw, config=None)``, a course's update rule), else None."""
    if kind not in ("list", "dict") or not none_default(tree, name):
        return None
    why = (
        f"'{name}' comes from a parameter (None by default), so it may be the caller's "
        f"{kind}, and a differentiated function may change only lists and dicts it built "
        "itself."
    )
    fix = (
        f"make it the function's own {kind} in its first line: "
        f"`{none_default_copy(name, kind)}` (and return it if the caller needs the changes: "
        f"`return ..., {name}`)"
    )
    return why, fix


class _Slice:
    kind = "slice"
    node = None


_SLICE = _Slice()


def _rows_of_lists(value, analysis) -> bool:
    """Whether ``value`` (what a list of rows got) puts in lists (``[[..]] * 2``,
    ``[[..] for ..]``, ``[..]``), not arrays (``[np.zeros(n)]``, ``np.ones(n)``)."""
    if isinstance(value, gast.BinOp):
        sides = [v for v in (value.left, value.right) if isinstance(v, (gast.List, gast.ListComp))]
        return any(_rows_of_lists(v, analysis) for v in sides)
    if isinstance(value, gast.List):
        return any(analysis.new_container(e) == "list" for e in value.elts)
    if isinstance(value, gast.ListComp):
        return analysis.new_container(value.elt) == "list"
    return analysis.new_container(value) == "list"
