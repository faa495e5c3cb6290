"""Stores the checker refuses with a message of their own, not the array message: a write
through ``a.flat``, an item of a dict subclass (``defaultdict``, ``Counter``), a slice
written from a view of the same array that a call may keep (``a[1:] = keep(a[:-1])``),
and an item of a module-level or enclosing function's dict or list (a memo that outlives
the call).

A mixin of :class:`~pullback.check.mutation_checks.MutationChecks` (which provides
``report``, ``text``, ``locals``, ``fs``, ``_aliases``, ``_resolve`` and ``_store_why``).
"""

from __future__ import annotations

import gast

from ..tree_walk import walk
from . import codes


class SpecialStoreReports:
    """The special-case store reports; each returns True when it reported."""

    def _report_flat_store(self, target, reason):
        """``a.flat[key] = v`` where ``a`` is not provably the function's own array."""
        owner = self.text(target.value.value)
        if reason.kind == "parameter":
            self.note_parameter_write(target.value.value, target)
        why, first = self._store_why(owner, reason)
        self.report(
            target,
            "PB101",
            f"array mutation: assignment to elements of '{owner}.flat'",
            why=why,
            fix=f"{first}build a new array, e.g. with np.where ({codes.see('PB101')}).",
        )

    def _report_dict_subclass_store(self, target, value, op, reason) -> bool:
        """``d[k] += v`` on ``d = collections.defaultdict(float)`` (or a Counter, an
        OrderedDict): PB106 with a plain dict as the fix, not the array message. pullback
        models the changes of lists and dicts built with ``[]``, ``{}``, ``list()`` and
        ``dict()``; a dict subclass runs code of its own (a default stored on a missing
        key's read, a Counter's update), which the rewrite would not follow."""
        if reason.kind != "not_fresh" or reason.node is None:
            return False
        parent = self._aliases().parent.get(reason.node)
        made = parent.value if isinstance(parent, gast.Assign) else None
        if not isinstance(made, gast.Call):
            return False
        callee = self._resolve(made)
        cls = callee.obj if callee.kind == "object" else None
        if not (isinstance(cls, type) and issubclass(cls, dict) and cls is not dict):
            return False
        base = self.text(target.value)
        key = self.text(target.slice)
        default = _default_text(cls, made, self.text)
        if op is not None:
            value_text = self.text(value) if value is not None else "v"
            rewrite = f"`{base}[{key}] = {base}.get({key}, {default}) {op} {value_text}`"
        else:
            rewrite = f"`{base}[{key}] = ...` as it is"
        self.report(
            target,
            "PB106",
            f"container mutation: a change of an item of '{base}', a {cls.__name__}",
            why=f"pullback follows the changes of lists and dicts built with [], {{}}, "
            f"list() and dict(); a {cls.__name__} runs code of its own (a default for a "
            "missing key, its own update), which the rewrite of the change would not follow.",
            fix=f"build a plain dict (`{base} = {{}}`) and write {rewrite}, giving the default "
            f"where a key is read ({codes.see('PB106')}).",
        )
        return True

    def _report_own_view_store(self, target, value, reason, code, what, part) -> bool:
        """``a[1:] = keep(a[:-1])``: the value reads a view of the array written and hands
        it on where it may be kept. A store of the view itself (``a[1:] = a[:-1]``,
        ``p[:, -1] = p[:, -2]``) is differentiated: NumPy reads the value before it writes,
        and so does the store's rule (check/alias_uses.py). Refused here, naming the view
        and what takes it, with the copy NumPy would make as the fix."""
        use = reason.node if reason.kind == "shared" else None
        if value is None or not isinstance(use, gast.Name):
            return False
        parents = self._aliases().parent
        view = parents.get(use)
        if not isinstance(view, gast.Subscript) or view.value is not use:
            return False
        if not any(n is view for n in walk(value)):
            return False
        read = self.text(view)
        taker = parents.get(view)
        if isinstance(taker, gast.Call) and any(a is view for a in taker.args):
            holder = f"the call `{self.text(taker.func)}(...)`, which may keep it"
        else:
            holder = f"`{self.text(taker)}`, which may keep it"
        self.report(
            target,
            code,
            f"array mutation: {what} {part} from '{read}', a view of the same array",
            why=f"'{read}' is a view of '{use.id}' handed to {holder}: the write changes "
            "what a kept view shows, which pullback does not follow (a store of the view "
            "itself is fine: its values are read before the write).",
            fix=f"hand on a copy, `{read}.copy()`, in its place ({codes.see(code)}).",
        )
        return True

    def _report_outer_container_store(self, target, op) -> bool:
        """``_memo[k] = v`` on a dict (or list) of the module or of an enclosing function:
        a memo that outlives the call, not an array. Say what it is and the per-call fix
        (the array message's `copy()` would not say why)."""
        name = target.value
        if not isinstance(name, gast.Name) or name.id in self.locals:
            return False
        where, value = self.fs.locate(name.id)
        if where is None or where[0] not in ("global", "cell") or type(value) not in (dict, list):
            return False
        kind = type(value).__name__
        owner = "a module-level" if where[0] == "global" else "an enclosing function's"
        code = "PB101" if op is None else "PB102"
        what = "assignment to" if op is None else f"augmented assignment ({op}=) to"
        empty = "{}" if kind == "dict" else "[]"
        self.report(
            target,
            code,
            f"mutation of {owner} {kind}: {what} an item of '{name.id}'",
            why=f"'{name.id}' is {owner} {kind} written by the differentiated function (a "
            "memo or cache): what it keeps outlives the call, so a later call would read "
            "values computed at other arguments, whose gradients cannot reach this call's.",
            fix=f"make the {kind} per call: `{name.id} = {empty}` at the start of the "
            f"function, passed on to the helpers that fill it ({codes.see(code)}).",
        )
        return True


_FACTORY_VALUES = {float: "0.0", int: "0", list: "[]", dict: "{}", tuple: "()", str: "''"}


def _default_text(cls, made, text) -> str:
    """The default a missing key of the dict subclass ``made`` (its call) reads, as text."""
    if cls.__name__ == "Counter":
        return "0"
    if made.args:
        factory = text(made.args[0])
        for kind, value in _FACTORY_VALUES.items():
            if factory == kind.__name__:
                return value
        return f"{factory}()"
    return "..."
