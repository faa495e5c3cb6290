"""Which uses of a value let no other name hold its array, and which may run before a
statement: the use side of the rebinding analysis (check/aliasing.py).

A use is *harmless* when it reads the value without another name keeping the array: an
operand of arithmetic or a comparison, an element read, a test, an argument of a call
known to return a new object, ``return x``, a copy back through a slice store. A use
*may precede* a statement when it runs between the value's definition and that
statement, directly or through the back edge of a loop. Apart from aliasing.py because
these questions read only the tree and its parents, where aliasing.py holds the def-use
chains and the fixed point over them.
"""

from __future__ import annotations

import gast

from ..resolve import CONSTANT_ATTRIBUTES
from ..transform.mutation import read_dead_before_write
from ..tree_walk import walk
from .argument_reads import reads_only
from .fresh_arrays import NEW_ARRAY_METHODS


class AliasUses:
    """:class:`~.aliasing.AliasAnalysis`: the uses of a definition (reads ``parent``,
    ``inplace_uses``, ``inplace_calls``, ``container_kind`` and ``fresh_call``)."""

    def _store_or_read(self, use) -> bool:
        """``a[idx] = v`` / ``a[idx] op= v``, or ``name = a[idx]`` with an index that has no
        slice, ``...`` or ``None`` (so that no view of ``a`` gets a name)."""
        parent = self.parent.get(use)
        if not (isinstance(parent, gast.Subscript) and parent.value is use):
            return False
        if not isinstance(parent.ctx, gast.Load):
            return True
        above = self.parent.get(parent)
        if not selects_elements(parent.slice):
            # x = R[k:, k], read up before the next write into R (a Householder step): the
            # transform reads it as a copy (transform/mutation.py read_dead_before_write)
            return (
                isinstance(above, gast.Assign)
                and len(above.targets) == 1
                and isinstance(above.targets[0], gast.Name)
                and read_dead_before_write(self.tree, above, above.targets[0].id, use.id)
            )
        if not isinstance(above, gast.IfExp):
            return isinstance(above, gast.Assign)
        while isinstance(above, gast.IfExp) and above.test is not parent:
            # name = a[i] if c else b: the normalizer writes the branches as named reads
            # (transform/assignments.py chosen_read), each checked as `name = a[i]`
            parent, above = above, self.parent.get(above)
        return (
            isinstance(above, gast.Assign)
            and len(above.targets) == 1
            and isinstance(above.targets[0], gast.Name)
        )

    def _harmless_use(self, use) -> bool:
        """A use that reads the value without letting another name hold the array."""
        if use in self.inplace_uses:
            return not self.inplace_uses[use]  # r = f(..., out=a): r is a
        node = use
        while True:
            parent = self.parent.get(node)
            if parent is None:
                return False
            if isinstance(parent, gast.Subscript):
                if parent.value is not node:
                    return True  # an index: advanced indexing copies
                if not isinstance(parent.ctx, gast.Load):
                    # x[i] = v: a write the check allows only into a local array
                    return node is use
                node = parent  # x[i]: harmless if that read is harmless
                continue
            if isinstance(parent, gast.Slice):
                return True
            if isinstance(parent, gast.Attribute):
                if parent.attr in CONSTANT_ATTRIBUTES:
                    return True
                above = self.parent.get(parent)
                if parent.attr == "flat" and isinstance(above, gast.Subscript):
                    # a.flat[key] (= v): a read or a write of a's elements, as a[i] (= v)
                    if above.value is not parent:
                        return True
                    if not isinstance(above.ctx, gast.Load):
                        return node is use
                    node = above
                    continue
                if parent.attr in ("T", "mT") and isinstance(parent.ctx, gast.Load):
                    node = parent  # e[t].T.dot(f): a view that is only read (dismalpy)
                    continue
                call = self.parent.get(parent)  # x.copy(), x[i].sum(): a new object
                return (
                    parent.attr in NEW_ARRAY_METHODS
                    and isinstance(call, gast.Call)
                    and call.func is parent
                )
            if isinstance(
                parent,
                (gast.BinOp, gast.UnaryOp, gast.Compare, gast.FormattedValue, gast.AugAssign),
            ):
                return True
            if isinstance(parent, gast.IfExp):
                if parent.test is node:
                    return True
                node = parent
                continue
            if isinstance(parent, (gast.If, gast.While, gast.Assert)):
                return True
            if isinstance(parent, gast.Assign) and parent.value is node:
                # u[:] = un (a copy back): a store through a slice copies the values. From
                # a view of the array written too (`p[:, -1] = p[:, -2]`, `a[1:] = a[:-1]`):
                # NumPy reads the value before it writes (through a temporary where the two
                # overlap), and so does the store's rule (arrays_inplace.array_set)
                return self.container_kind is not None and all(
                    _slice_store(t) and self.container_kind(t.value.id) not in ("list", "dict")
                    for t in parent.targets
                )
            if isinstance(parent, (gast.Return, gast.Raise, gast.Expr)):
                return True
            if self._tuple_store_value(parent, node, use):
                return True
            if isinstance(parent, (gast.Tuple, gast.List)) and isinstance(
                self.parent.get(parent), gast.Return
            ):
                return True  # return (a, b): nothing of this call runs afterwards
            if isinstance(parent, (gast.Tuple, gast.List)) and isinstance(parent.ctx, gast.Load):
                call = self.parent.get(parent)
                if isinstance(call, gast.Call) and any(a is parent for a in call.args):
                    # np.concatenate(([0.0], x[:-1])): a display only a call returning a
                    # new object reads
                    return call not in self.inplace_calls and self.fresh_call(call)
            if isinstance(parent, gast.keyword):
                call = self.parent.get(parent)
                return call in self.inplace_calls or (
                    isinstance(call, gast.Call) and self.fresh_call(call)
                )
            if isinstance(parent, gast.Call):
                return parent.func is not node and (
                    parent in self.inplace_calls
                    or self.fresh_call(parent)
                    or self._read_by_callee(parent, node)
                )
            return False

    def _read_by_callee(self, call, node) -> bool:
        """``b = build_up_b(b, rho, dt, u, v)``: ``node`` (an array or a view of it) is a
        positional argument of a user function that only reads it and returns nothing of
        it (check/argument_reads.py), so no name holds the array after the call returns
        (the CFD course's helpers, called each step between writes into ``u``)."""
        if not any(a is node for a in call.args):
            return False
        position = next(k for k, a in enumerate(call.args) if a is node)
        if any(isinstance(a, gast.Starred) for a in call.args[:position]):
            return False
        return self._callee_reads_only(call, position, returned=False)

    def _tuple_store_value(self, display, node, use) -> bool:
        """``u[0], u[-1] = u[-2], u[1]`` (a periodic edge): ``node`` is a value of a tuple
        store whose every target is a subscript of an array, so its values are copied in.
        The transform reads the values first, and checks when it runs that no value is a
        view overlapping an earlier target (transform/mutation.py tuple_store_guards),
        evaluating the indices once more: they may call nothing."""
        if not (
            isinstance(display, (gast.Tuple, gast.List))
            and isinstance(node, gast.Subscript)
            and node.value is use
            and self.container_kind is not None
        ):
            return False
        stmt = self.parent.get(display)
        if not (isinstance(stmt, gast.Assign) and stmt.value is display and len(stmt.targets) == 1):
            return False
        targets = stmt.targets[0]
        if not (
            isinstance(targets, (gast.Tuple, gast.List))
            and len(targets.elts) == len(display.elts)
            and not any(isinstance(e, gast.Starred) for e in display.elts)
            and all(
                isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name)
                for t in targets.elts
            )
        ):
            return False
        if any(self.container_kind(t.value.id) in ("list", "dict") for t in targets.elts):
            return False
        indices = [t.slice for t in targets.elts] + [node.slice]
        return not any(
            isinstance(n, (gast.Call, gast.NamedExpr, gast.Lambda, gast.Yield, gast.Await))
            for index in indices
            for n in walk(index)
        )

    def _consumed_by_store(self, use, stmt) -> bool:
        """``Y[i + 1] = Y[i] + dt * f(Y[i])``: ``use`` is read by index into an argument of
        a function called in the value of the store ``stmt`` itself, and the call's result
        is an operand of arithmetic there (or the whole value, which the store copies). The
        call has returned before the store writes, and its result is gone after it, so no
        name sees the array change (the transform reads a written array's rows as copies)."""
        if not isinstance(stmt, (gast.Assign, gast.AugAssign)) or not self._inside(use, stmt.value):
            return False
        node, parent = use, self.parent.get(use)
        while isinstance(parent, gast.Subscript) and parent.value is node:
            if not isinstance(parent.ctx, gast.Load):
                return False
            node, parent = parent, self.parent.get(parent)
        if node is use or not isinstance(parent, gast.Call):
            return False
        if not any(a is node for a in parent.args):
            return False
        above = self.parent.get(parent)
        if not (parent is stmt.value or isinstance(above, (gast.BinOp, gast.UnaryOp))):
            return False
        position = next(k for k, a in enumerate(parent.args) if a is node)
        if any(isinstance(a, gast.Starred) for a in parent.args[:position]):
            return False
        return self._callee_reads_only(parent, position)

    def _callee_reads_only(self, call, position, returned=True) -> bool:
        """Whether the function ``call`` calls keeps nothing of its ``position``-th
        argument (check/argument_reads.py; with ``returned`` False, not in its result
        either): a function defined once in this one, or a user function with source
        (through the checker, ``helper_writes``)."""
        name = call.func.id if isinstance(call.func, gast.Name) else None
        defs = [
            n
            for n in walk(self.tree)
            if isinstance(n, gast.FunctionDef) and n.name == name and n is not self.tree
        ]
        bound = [
            n
            for n in walk(self.tree)
            if isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load)
        ]
        if defs or bound:
            # a function of this one's: its own, unless the name is bound otherwise too
            return (
                len(defs) == 1
                and not bound
                and reads_only(defs[0], position, self.fresh_call, returned)
            )
        # a function of a module (`rhs(y)`, `helpers.rhs(y)`); a method (`lst.append(y)`,
        # `obj.step(y)`) is no user function of its own (callee_reads_only says False)
        checker = self.checker
        return checker is not None and checker.callee_reads_only(call, position, returned)

    def _may_precede(self, use, stmt, renewed=()) -> bool:
        """Whether ``use`` may run after the definition and before ``stmt`` (through the
        back edge of a loop not in ``renewed``, whose passes each bind a new value)."""
        if self._inside(use, stmt):
            return True
        if (use.lineno, use.col_offset) < (stmt.lineno, stmt.col_offset):
            return True
        use_loops = set(self._repeating_loops(use))
        return any(
            loop in use_loops and loop not in renewed for loop in self._repeating_loops(stmt)
        )

    def _inside(self, node, ancestor) -> bool:
        while node is not None:
            if node is ancestor:
                return True
            node = self.parent.get(node)
        return False

    def _repeating_loops(self, node):
        """The loops whose repeated part (body, target, while-test) holds ``node``."""
        child = node
        parent = self.parent.get(child)
        while parent is not None:
            if isinstance(parent, gast.For) and (
                child is parent.target or any(child is s for s in parent.body)
            ):
                yield parent
            elif isinstance(parent, gast.While) and (
                child is parent.test or any(child is s for s in parent.body)
            ):
                yield parent
            child, parent = parent, self.parent.get(parent)


def selects_elements(index) -> bool:
    """An index with no slice, ``None`` or ``...``: on an array it reads elements (a copy
    for an integer array index, a scalar for integers), never a view with a name."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    return not any(
        isinstance(p, gast.Slice) or (isinstance(p, gast.Constant) and p.value in (None, ...))
        for p in parts
    )


def _slice_store(target) -> bool:
    """``a[1:-1] = v`` or ``a[...] = v``: into an array (``arrays_inplace`` refuses any
    other object as it runs) NumPy copies ``v``'s elements, whatever ``a``'s dtype, so ``a``
    keeps no reference to ``v``; ``a[0] = v`` into an object array would."""
    if not (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name)):
        return False
    return not selects_elements(target.slice)
