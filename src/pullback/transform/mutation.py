"""Stores into arrays the function created itself (issue 11), as calls the sweeps know.

The check (:mod:`pullback.check.mutation_checks`) lets a subscript store through only when
its array is provably *local*; the normalizer then writes

* ``a[idx] = v`` as ``a = array_set(a, idx, v)``,
* ``a[idx] += v`` as ``a = array_add_set(a, idx, v)`` (``-=``: ``array_sub_set``), which runs
  ``a[idx] += v`` as the primal does (NumPy's buffered semantics: with a repeated index
  the last write wins) and whose pullback needs neither the array nor a copy of it,
* any other ``a[idx] op= v`` as ``t = a[idx]; u = t op v; a = array_set(a, idx, u)``,

where ``idx`` becomes a value (``slice(...)`` objects, tuples). ``array_set`` writes in
place when the array is only ever read by index (and its size, shape, ...) while it is
being written, or used whole only after its last write: then no pullback needs an
earlier state of it. Otherwise every write makes a new array (``array_set_copy``), so each
state a pullback holds stays as it was; a store right after another store into the same
name, reading it nowhere, writes into the copy that store made (:func:`follows_own_copy`).
Index reads of an array written in place go through ``array_fresh`` (a copy of a view), so
a read never changes under a later write.
"""

from __future__ import annotations

import gast

from .. import arrays_inplace, arrays_inplace_calls, arrays_ufunc_at
from ..resolve import CONSTANT_ATTRIBUTES, Callee, parent_map
from ..tree_walk import statements, walk
from . import nodes as N
from .inplace_calls import InplaceCalls
from .owned_helpers import ENTRY

_HELPERS = {
    "_pb_array_set": arrays_inplace.array_set,
    "_pb_array_set_copy": arrays_inplace.array_set_copy,
    "_pb_array_add_set": arrays_inplace.array_add_set,
    "_pb_array_add_set_copy": arrays_inplace.array_add_set_copy,
    "_pb_array_sub_set": arrays_inplace.array_sub_set,
    "_pb_array_sub_set_copy": arrays_inplace.array_sub_set_copy,
    "_pb_array_fresh": arrays_inplace.array_fresh,
    "_pb_array_named_read": arrays_inplace.array_named_read,
    "_pb_tuple_reads_first": arrays_inplace.tuple_reads_first,
    "_pb_array_fill": arrays_inplace_calls.array_fill,
    "_pb_array_fill_copy": arrays_inplace_calls.array_fill_copy,
    "_pb_array_iadd": arrays_inplace_calls.array_iadd,
    "_pb_array_add_at": arrays_inplace_calls.array_add_at,
    "_pb_array_add_at_copy": arrays_inplace_calls.array_add_at_copy,
    "_pb_put_index": arrays_inplace_calls.put_index,
    "_pb_flat_index": arrays_inplace_calls.flat_index,
    "_pb_diagonal_index": arrays_inplace_calls.diagonal_index,
    "_pb_cycled": arrays_inplace_calls.cycled,
    "_pb_array_sort": arrays_inplace_calls.array_sort,
    "_pb_array_copyto": arrays_inplace_calls.array_copyto,
    "_pb_array_copyto_copy": arrays_inplace_calls.array_copyto_copy,
    "_pb_copyto_checked": arrays_inplace_calls.copyto_checked,
    "_pb_mask_index": arrays_inplace_calls.mask_index,
    "_pb_putmask_positions": arrays_inplace_calls.putmask_positions,
    "_pb_along_axis_index": arrays_inplace_calls.along_axis_index,
    "_pb_take_flat": arrays_inplace_calls.take_flat,
    "_pb_where_index": arrays_inplace_calls.where_index,
    "_pb_take_broadcast": arrays_inplace_calls.take_broadcast,
    "_pb_array_ufunc_at_copy": arrays_ufunc_at.array_ufunc_at_copy,
}


def written_arrays(tree, calls=()) -> dict[str, bool]:
    """``{name: in_place}`` for every name the function stores into by subscript or by an
    in-place call (``calls``: ``(statement, InplaceCall)``, whose target is a write, not
    a use of the whole array)."""
    parents = parent_map(tree)
    writes: dict[str, list] = {}
    written = set()  # the Names in-place calls write into
    for stmt, spec in calls:
        writes.setdefault(spec.target.id, []).append(stmt)
        written.add(spec.target)
    for node in statements(tree):
        if isinstance(node, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                    writes.setdefault(t.value.id, []).append(node)
    for node in walk(tree):
        # a += v / a -= v into an array written by index or call: in place too (iadd)
        if (
            isinstance(node, gast.AugAssign)
            and isinstance(node.target, gast.Name)
            and isinstance(node.op, (gast.Add, gast.Sub))
            and node.target.id in writes
        ):
            writes[node.target.id].append(node)
    modes = {}
    received = moved_into(tree)
    for name, stores in writes.items():
        if name in received:
            modes[name] = False  # its array came from another name (check/moves.py)
            continue
        last = max((s.lineno, s.col_offset) for s in stores)
        loops = {id(loop) for s in stores for loop in _loops(s, parents)}
        in_place = True
        for node in walk(tree):
            if not (
                isinstance(node, gast.Name)
                and node.id == name
                and isinstance(node.ctx, gast.Load)
                and node not in written
                and not getattr(node, ENTRY, False)  # a helper's copy of what it owns
                and _whole_use(node, parents)
            ):
                continue
            stmt = _statement(node, parents)  # a use in a write runs before its store
            before = (stmt.lineno, stmt.col_offset) <= last
            if before or any(id(loop) in loops for loop in _loops(node, parents)):
                in_place = False
                break
        modes[name] = in_place
    return modes


def moved_into(tree) -> set:
    """The names an assignment binds to another name's value (``b = a``, ``u, un = un,
    u``): those the check lets own an array handed on by a move (``check/moves.py``).
    Their writes make new arrays: an in-place write would change the array as the name
    it came from left it, which a pullback or a view read before the move may hold."""
    found = set()
    for node in statements(tree):
        if isinstance(node, gast.Assign):
            pairs = [(t, node.value) for t in node.targets]
        elif isinstance(node, gast.AnnAssign) and node.value is not None:
            pairs = [(node.target, node.value)]
        else:
            continue
        while pairs:
            target, value = pairs.pop()
            if isinstance(target, gast.Name) and isinstance(value, gast.Name):
                found.add(target.id)
            elif isinstance(target, (gast.Tuple, gast.List)) and isinstance(
                value, (gast.Tuple, gast.List)
            ):
                pairs.extend(zip(target.elts, value.elts, strict=False))
    return found


# Statements whose evaluation order is plain: nothing in them runs user code or rebinds.
_PLAIN_STATEMENTS = (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr, gast.Return)
_OPAQUE = (
    gast.Call,
    gast.NamedExpr,
    gast.Lambda,
    gast.ListComp,
    gast.SetComp,
    gast.DictComp,
    gast.GeneratorExp,
    gast.Yield,
    gast.YieldFrom,
    gast.Await,
)


def sum_operand_reads(tree, modes) -> set:
    """Where (:func:`read_key`) the index reads of arrays written in place are operands
    of ``+`` or ``-`` (or scaled by a number) in a statement without calls: the operation
    is taken before anything can write the array (no call runs in between) and its
    pullback reads only the operand's shape, which no write changes, so such a read needs
    no copy (``array_fresh``)."""
    parents = parent_map(tree)
    found = set()
    for node in walk(tree):
        if not (
            isinstance(node, gast.Subscript)
            and isinstance(node.ctx, gast.Load)
            and isinstance(node.value, gast.Name)
            and modes.get(node.value.id, False)
        ):
            continue
        if not _value_unused(node, parents.get(node)):
            continue
        stmt = _statement(node, parents)
        if isinstance(stmt, _PLAIN_STATEMENTS) and not any(
            isinstance(n, _OPAQUE) for n in walk(stmt)
        ):
            found.add(read_key(node))
    return found


def _value_unused(node, parent) -> bool:
    """Whether the pullback of the operation that consumes the read ``node`` needs only
    its shape: ``r + s``, ``r - s``, ``-r``, and ``r * c``, ``c * r``, ``r / c`` with ``c``
    a number written in the source."""
    if isinstance(parent, gast.UnaryOp):
        return isinstance(parent.op, (gast.USub, gast.UAdd))
    if not isinstance(parent, gast.BinOp):
        return False
    if isinstance(parent.op, (gast.Add, gast.Sub)):
        return True
    other = parent.right if parent.left is node else parent.left
    number = isinstance(other, gast.Constant) and type(other.value) in (int, float)
    if isinstance(parent.op, gast.Mult):
        return number
    return isinstance(parent.op, gast.Div) and parent.left is node and number


def read_key(node):
    """A read's source position and array name (the normalizer's copy keeps both)."""
    where = ("lineno", "col_offset", "end_lineno", "end_col_offset")
    return (*(getattr(node, k, None) for k in where), getattr(node.value, "id", None))


def _whole_use(node, parents) -> bool:
    """A use that may need the array's values as a whole (not an index read, a store,
    ``len`` or a constant attribute)."""
    parent = parents.get(node)
    if isinstance(parent, gast.Subscript) and parent.value is node:
        return False
    if isinstance(parent, gast.Attribute) and parent.attr in CONSTANT_ATTRIBUTES:
        return False
    if (
        isinstance(parent, gast.Call)
        and isinstance(parent.func, gast.Name)
        and parent.func.id == "len"
        and parent.args == [node]
    ):
        return False
    return True


def _statement(node, parents):
    while not isinstance(node, gast.stmt):
        node = parents[node]
    return node


def _loops(node, parents):
    """The loops around ``node`` (the whole loop statement repeats)."""
    out = []
    p = parents.get(node)
    while p is not None:
        if isinstance(p, (gast.For, gast.While)):
            out.append(p)
        p = parents.get(p)
    return out


class ArrayStores(InplaceCalls):
    """A mixin of :class:`~pullback.transform.normalize.Normalizer`."""

    def array_modes(self) -> dict[str, bool]:
        modes = getattr(self, "_array_modes", None)
        if modes is None:
            modes = self._array_modes = written_arrays(self.fs.tree, self.inplace_writes())
        return modes

    def helper_call(self, name, args, where):
        fn = _HELPERS[name]
        self.namespace[name] = fn
        call = gast.copy_location(N.call(name, args), where)
        call.pb_callee = Callee("object", fn, name=f"pullback.{fn.__name__}")
        return call

    def array_store(self, target, value, op, s):
        """``target (op)= value`` with ``target`` a subscript of a local array."""
        name = target.value.id
        stmts: list = []
        in_place = self.array_modes().get(name, False)
        if op is None:
            more, v = self.expr(value)
            stmts.extend(more)
            key = self.key_value(target.slice, stmts)
        elif isinstance(op, (gast.Add, gast.Sub)):
            # a[idx] += v as one call, run as the primal runs it: its pullback passes the
            # array's cotangent through and gathers the value's (no read of a, no copy)
            key = self.key_value(target.slice, stmts)
            v = self.atom(value, stmts)
            helper = "_pb_array_add_set" if isinstance(op, gast.Add) else "_pb_array_sub_set"
            helper += "" if in_place else "_copy"
            call = self.helper_call(helper, [N.load(name), key, v], s)
            stmts.append(N.assign(name, call, s))
            return stmts, False
        else:
            key = self.key_value(target.slice, stmts)
            read = gast.copy_location(N.subscript(N.load(name), key), target)
            old = self.as_atom(self.written_read(read, stmts), stmts, target)
            right = self.atom(value, stmts)
            binop = gast.copy_location(gast.BinOp(left=old, op=op, right=right), s)
            tmp = self.fresh()
            stmts.append(N.assign(tmp, binop, s))
            v = N.load(tmp)
        chained = op is None and not in_place and follows_own_copy(self.fs.tree, s, name)
        helper = "_pb_array_set" if in_place or chained else "_pb_array_set_copy"
        stmts.append(N.assign(name, self.helper_call(helper, [N.load(name), key, v], s), s))
        return stmts, False

    def named_read(self, name, value, s):
        """``name = a[idx]`` of a written array ``a``: checked at run time not to be a view
        (statements), or None for other assignments and for a read after every write
        into ``a``. A read whose values are all used
        before the next write into ``a`` (:func:`read_dead_before_write`) is copied
        instead: the copy holds what the view shows wherever it is read."""
        if not isinstance(value, gast.Subscript):
            return None
        base = value.value
        if not (isinstance(base, gast.Name) and base.id in self.array_modes()):
            return None
        if self.read_after_writes(base.id, value):
            # dx = dx_pad[:, :, 1:-1, 1:-1] after the loop that fills dx_pad: nothing
            # writes into it afterwards, so the view shows what the read gave (an ordinary
            # read, as written_read keeps one)
            return None
        stmts: list = []
        index = self.index(value.slice, stmts)
        node = gast.copy_location(N.subscript(N.load(base.id), index), value)
        read = self.as_atom(node, stmts, s)
        if read_dead_before_write(self.fs.tree, s, name, base.id):
            call = self.helper_call("_pb_array_fresh", [read], s)
        else:
            call = self.helper_call("_pb_array_named_read", [read, N.load(base.id)], s)
        stmts.append(N.assign(name, call, s))
        return stmts

    def written_read(self, node, stmts):
        """The read ``node`` (``base[index]``), through ``array_fresh`` when ``base`` is
        written in place."""
        base = node.value
        if not (isinstance(base, gast.Name) and self.array_modes().get(base.id, False)):
            return node
        reads = getattr(self, "_sum_operand_reads", None)
        if reads is None:
            reads = self._sum_operand_reads = sum_operand_reads(self.fs.tree, self.array_modes())
        if node.lineno is not None and read_key(node) in reads:
            return node  # consumed at once, its shape alone kept: no copy
        if self.read_after_writes(base.id, node):
            return node  # nothing writes into it afterwards (inplace_calls.py)
        tmp = self.as_atom(node, stmts, node)
        return self.helper_call("_pb_array_fresh", [tmp], node)

    def tuple_store_guards(self, s, stmts):
        """``p[0], p[-1] = p[-2], p[1]`` (check/alias_uses.py ``_tuple_store_value``): the
        tuple's values are read before its stores; a value read of an array an earlier
        target writes is checked when it runs not to be a view overlapping that target
        (``arrays_inplace.tuple_reads_first``)."""
        targets, values = s.targets[0].elts, s.value.elts
        for k, value in enumerate(values):
            if not (isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name)):
                continue
            name = value.value.id
            earlier = [
                t.slice
                for t in targets[:k]
                if isinstance(t, gast.Subscript)
                and isinstance(t.value, gast.Name)
                and t.value.id == name
            ]
            if not earlier:
                continue
            index = self.key_value(value.slice, stmts)
            written = N.tuple_([self.key_value(w, stmts) for w in earlier])
            call = self.helper_call("_pb_tuple_reads_first", [N.load(name), index, written], s)
            stmts.append(N.assign(self.fresh(), call, s))

    def as_atom(self, node, stmts, where):
        if N.is_atom(node):
            return node
        tmp = self.fresh()
        stmts.append(N.assign(tmp, node, where))
        return N.load(tmp)


def follows_own_copy(tree, s, name: str) -> bool:
    """Whether ``s`` (``name[idx] = v``, into an array written by copies) comes right after
    another such store into ``name`` in one block and reads ``name`` nowhere: then the array
    it writes is the copy that store just made, which nothing else holds (the pullbacks of
    stores read only its shape), so ``s`` may write into it in place (``un[1:-1] = ...;
    un[0] = ...; un[-1] = ...`` costs one copy, not three)."""
    block = _block_of(tree, s)
    if block is None:
        return False
    k = next(i for i, t in enumerate(block) if t is s)
    return k > 0 and _plain_store(block[k - 1], name) and _plain_store(s, name, reads=False)


def _plain_store(s, name, reads=True) -> bool:
    """``name[idx] = v`` (no ``op=``, no held array); ``reads=False``: and neither ``idx``
    nor ``v`` names ``name``."""
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1):
        return False
    target = s.targets[0]
    if not (
        isinstance(target, gast.Subscript)
        and isinstance(target.value, gast.Name)
        and target.value.id == name
    ):
        return False
    return reads or not any(
        isinstance(n, gast.Name) and n.id == name
        for part in (target.slice, s.value)
        for n in walk(part)
    )


def read_dead_before_write(tree, s, name: str, base: str) -> bool:
    """Whether ``s`` (``name = base[idx]``) is only read before the next write into
    ``base``: ``y = ys[k]; k1 = f(y); ...; ys[k + 1] = y + h * k1`` (a Runge-Kutta step).

    Then a copy of the read is exact: NumPy's view would show the write, but nothing reads
    it (or a value computed from it) afterwards. Provable, conservatively, when ``s``'s
    block has a later statement ``w`` that is the first to name ``base`` other than by an
    index read, and every load of ``name`` and of each name bound between ``s`` and ``w``
    lies between them (in ``w``: in the value of ``base[idx] (op)= value``, which runs
    before the store), with no function or lambda there that could read them later and no
    store into them by index or ``op=`` (that would write into the view)."""
    block = _block_of(tree, s)
    if block is None:
        return False
    start = next(i for i, t in enumerate(block) if t is s)
    write = None
    for k in range(start + 1, len(block)):
        if _names_otherwise(block[k], base):
            write = k
            break
    if write is None:
        return False
    last = block[write]
    if isinstance(last, gast.AugAssign):
        target = last.target
    elif isinstance(last, gast.Assign) and len(last.targets) == 1:
        target = last.targets[0]
    else:
        return False
    if not (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name)):
        return False
    if target.value.id != base or _names_otherwise(last.value, base):
        return False
    between = [*block[start + 1 : write], last.value]
    inside = {id(n) for part in between for n in walk(part)}
    bound = {name}
    for part in between:
        for n in walk(part):
            if isinstance(n, (gast.FunctionDef, gast.Lambda, gast.Global, gast.Nonlocal)):
                return False
            if isinstance(n, (gast.Subscript, gast.Attribute)) and not isinstance(n.ctx, gast.Load):
                return False  # d[i] = y, o.a = y: kept where the copy would differ
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                bound.add(n.id)
    local = {
        n.id for n in walk(tree) if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)
    }
    for part in between:
        for n in walk(part):
            if (
                isinstance(n, gast.Call)
                and isinstance(n.func, gast.Attribute)
                and isinstance(n.func.value, gast.Name)
                and n.func.value.id in local - bound
            ):
                return False  # out.append(y): a local container could keep the view
    parents = parent_map(tree)
    for n in _outer_names(tree, bound):
        if isinstance(n.ctx, gast.Load) and id(n) not in inside:
            return False
        parent = parents.get(n)
        if isinstance(parent, gast.AugAssign) or (
            isinstance(parent, gast.Subscript) and not isinstance(parent.ctx, gast.Load)
        ):
            return False
    return True


def _outer_names(tree, names):
    """The Name nodes of ``tree`` that refer to the function's own ``names``: inside a
    nested function, a parameter or local of the same name is another variable."""
    todo = [(child, names) for child in gast.iter_child_nodes(tree)]
    while todo:
        node, visible = todo.pop()
        if isinstance(node, gast.Name) and node.id in visible:
            yield node
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            visible = visible - _own_names(node)
        todo.extend((child, visible) for child in gast.iter_child_nodes(node))


def _own_names(fn) -> set:
    """The parameters and names bound in ``fn``'s own scope (not in functions nested in it)."""
    own = set()
    todo = list(gast.iter_child_nodes(fn))
    while todo:
        node = todo.pop()
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
            own.add(node.id)
        if isinstance(node, gast.FunctionDef):
            own.add(node.name)
        elif not isinstance(node, gast.Lambda):
            todo.extend(gast.iter_child_nodes(node))
    return own


def _block_of(tree, s):
    """The statement list that holds ``s``."""
    for node in walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(t is s for t in block):
                return block
    return None


def _names_otherwise(node, base: str) -> bool:
    """Whether ``node`` names ``base`` other than in an index read ``base[...]``."""
    parents = parent_map(node)
    for n in walk(node):
        if isinstance(n, gast.Name) and n.id == base:
            parent = parents.get(n)
            if not (
                isinstance(parent, gast.Subscript)
                and parent.value is n
                and isinstance(parent.ctx, gast.Load)
            ):
                return True
    return False
