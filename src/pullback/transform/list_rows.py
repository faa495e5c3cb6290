"""Lists of lists a differentiated function changes a row of (``rows[i][j] = v``): when
every row is a new list that nothing else holds while the rows change, the store is a
rebinding of a new row into a new list (:mod:`pullback.transform.list_mutation`).

A mixin of :class:`~pullback.transform.list_analysis.ContainerAnalysis` (which provides
``refusal``, ``new_container``, the loads and the positions of statements), split from it
with the :class:`Refusal` both give.
"""

from __future__ import annotations

import gast


class Refusal:
    """Why a change of ``name`` is not modelled: ``kind`` is "parameter", "global",
    "closure", "not_local", "shared" (``node`` is the use that may keep the object), or
    "kind" (not known to be a list or a dict). (A plain class, not a dataclass: see
    ``analyze.Activity``.)"""

    def __init__(self, kind: str, node=None):
        self.kind = kind
        self.node = node


class ListRows:
    """See the module docstring."""

    # -- lists of lists -------------------------------------------------------------
    def rows_refusal(self, name) -> Refusal | None:
        """None when ``rows[i][j] (op)= v`` into the local list ``name`` is a rebinding of a
        new row into a new list: every row is a list made for it — by the bindings
        (``[[..] for ..]``, ``[[..], [..]]``, ``[]``) and by every change that puts a row
        in (``rows[i] = [..]``, ``rows.append([..])``, ...) — and no use that could keep a
        row (``r = rows[0]``, ``for r in rows``, ``list(rows)``) comes before the last
        change or inside a loop that changes it. Else the refusal: "rows" (``node`` puts
        in a row that may be shared, as ``[[0.0] * n] * m`` does) or "shared"."""
        refusal = self.refusal(name)
        if refusal is not None:
            return refusal
        for value in self.bindings.get(name, ()):
            if not self._fresh_rows(value):
                return Refusal("rows", value)
        changes = self.changes.get(name, [])
        receivers = set()
        for change in changes:
            receivers.add(id(_root(change)))
            bad = self._row_source(change)
            if bad is not None:
                return Refusal("rows", bad)
        during = self._while_changing(changes)
        for node in self._loads(name, receivers):
            kept = self._kept_row(node)
            if kept is not None and during(kept):
                return Refusal("shared", kept)
        return None

    def _fresh_row(self, value) -> bool:
        """Whether ``value`` makes a new list each time it runs (a display, a comprehension,
        ``list(..)``, ``sorted(..)``, ``[..] * n``, ``[..] + ..``)."""
        return self.new_container(value) == "list"

    def _fresh_rows(self, value) -> bool:
        """Whether ``value`` is a new list of rows that are new lists (``[[..] for ..]``,
        ``[[..], [..]]``; not ``[[..]] * n``, whose rows are one object)."""
        if isinstance(value, gast.List):
            return all(self._fresh_row(e) for e in value.elts)
        if isinstance(value, gast.ListComp):
            return self._fresh_row(value.elt)
        return False

    def _row_source(self, change):
        """The expression by which ``change`` puts into the list a row that may be held
        elsewhere, else None."""
        if isinstance(change, gast.AugAssign):  # rows += [...]
            return None if self._fresh_rows(change.value) else change.value
        statement = self.parents.get(change)
        if isinstance(change, gast.Subscript):
            if not isinstance(change.ctx, gast.Store) or not isinstance(change.value, gast.Name):
                return None  # del rows[i], or a store into a row
            if isinstance(statement, gast.Assign):
                whole = isinstance(change.slice, gast.Slice)
                fresh = self._fresh_rows if whole else self._fresh_row
                return None if fresh(statement.value) else statement.value
            return None  # rows[i] += [..]: the row is unshared, so in place is the same
        method = change.func.attr
        if method in ("append", "insert") and change.args:
            value = change.args[-1]
            return None if self._fresh_row(value) else value
        if method == "extend" and change.args:
            return None if self._fresh_rows(change.args[0]) else change.args[0]
        return None

    def _kept_row(self, node):
        """The expression by which a load of the list ``node`` may keep one of its rows
        (the load itself, or the row read ``rows[k]``), else None."""
        parent = self.parents.get(node)
        if self._length_only(node) or self._numpy_argument(node):
            return None
        if not (isinstance(parent, gast.Subscript) and parent.value is node):
            return node  # the list itself, as a whole: its rows go with it
        if isinstance(parent.slice, gast.Slice):
            return parent  # a new list holding the same rows
        grand = self.parents.get(parent)
        if isinstance(grand, gast.Subscript) and grand.value is parent:
            return None  # rows[k][m]: an item of a row
        if isinstance(grand, (gast.BinOp, gast.Compare, gast.UnaryOp)):
            return None  # rows[k] + [..], rows[k] * 2: new lists
        if self._length_only(parent) or self._numpy_argument(parent):
            return None
        return parent


def change_receiver(change):
    """The name a change node (a subscript store or delete, a method call, ``l += ..``)
    changes."""
    if isinstance(change, gast.Subscript):
        return change.value
    if isinstance(change, gast.Call):
        return change.func.value
    return change.target


def _root(change):
    """The name node a change changes (for ``rows[i][j] = v``, ``rows``)."""
    node = change_receiver(change)
    while isinstance(node, gast.Subscript):
        node = node.value
    return node
