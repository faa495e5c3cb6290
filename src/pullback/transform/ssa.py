"""Step 5a: rename a normalized function so that straight-line code assigns each name once.

Every value the reverse sweep may need then has its own name and is never overwritten,
except inside loops, where a name holds one value per iteration. A name that a loop
carries from one iteration to the next (or out of the loop) gets one *carried* name,
copied at the end of each iteration and before each ``break``/``continue``; at those
exit points the pass leaves a :class:`SnapshotPoint`, where the reverse sweep saves the
iteration's values.

>>> # x = 1.0; x = x * 2  becomes  x = 1.0; x_1 = x * 2
"""

from __future__ import annotations

import ast
import collections
import itertools

import gast

from ..tree_walk import lean_children, lean_nodes
from . import nodes as N
from .loop_jumps import LoopEnd
from .try_blocks import Attempt, TryStart
from .with_blocks import WithBlock


class SnapshotPoint(gast.Pass):
    """Where one iteration of ``loop`` ends (normally, or by ``break``/``continue``)."""

    def __init__(self, loop, where):
        super().__init__()
        self.loop = loop
        gast.copy_location(self, where)


class LoopInfo:
    """Facts about one loop that the reverse pass needs."""

    def __init__(self, node, parent):
        self.node = node
        self.parent = parent
        self.assigned: set[str] = set()  # SSA names assigned anywhere in the body
        self.carried: dict[str, str] = {}  # source name -> carried SSA name
        # carried names not bound when the loop starts (`j` of an inner loop that a later
        # loop reuses): the copies this pass adds read them on the first iteration, where
        # the user's code does not, so the generated code starts them bound (build.py)
        self.unbound_at_entry: set[str] = set()


def _assigned_names(stmts) -> set[str]:
    out = set()
    for s in stmts:
        for node in lean_nodes(s):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                out.add(node.id)
            elif isinstance(node, gast.For):
                out.add(node.target.id)
    return out


def _reads(node) -> set[str]:
    return {
        n.id for n in lean_nodes(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    }


def _upward_exposed(stmts, candidates, assigned_first=frozenset()) -> set[str]:
    """Names in ``candidates`` that the block may read before assigning them."""
    exposed: set[str] = set()

    def walk(block, assigned: set[str]) -> set[str]:
        assigned = set(assigned)
        for s in block:
            if isinstance(s, gast.Assign):
                exposed.update((_reads(s.value) & candidates) - assigned)
                assigned.add(s.targets[0].id)
            elif isinstance(s, gast.If):
                exposed.update((_reads(s.test) & candidates) - assigned)
                a1 = walk(s.body, assigned)
                a2 = walk(s.orelse, assigned)
                assigned = a1 & a2
            elif isinstance(s, WithBlock):  # a block that always runs
                assigned = walk(s.body, assigned)
            elif isinstance(s, (gast.For, gast.While)):
                if isinstance(s, gast.For):
                    exposed.update((_reads(s.iter) & candidates) - assigned)
                    inner = assigned | {s.target.id}
                else:
                    inner = assigned
                walk(s.body, inner)
            else:
                exposed.update((_reads(s) & candidates) - assigned)
        return assigned

    walk(stmts, set(assigned_first))
    return exposed


class SSARenamer:
    def __init__(self, tree, params, flags=()):
        self.tree = tree
        self.params = params
        self.flags = set(flags)
        scan = _Scan(tree)  # one walk: the facts below
        self.try_binds = set().union(*(t.binds for t in scan.tries))  # bound to None first
        self.taken = scan.names | set(params)
        self.first_def_done: set[str] = set(params)
        self.counters: dict[str, itertools.count] = {}
        self.loops: list[LoopInfo] = []
        self.all_loops: list[LoopInfo] = []
        # Computed before renaming, on source names: how often the function reads each
        # name, and each loop (by id) — a name is read outside a loop when the function
        # reads it more often than the loop does.
        self.reads = scan.reads
        self.reads_in_loop = _reads_in_loops(scan.loops)

    def new_name(self, name: str) -> str:
        if name in self.flags:
            return name
        if name not in self.first_def_done:
            self.first_def_done.add(name)
            return name
        counter = self.counters.setdefault(name, itertools.count(1))
        while True:
            candidate = f"{name}_{next(counter)}"
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate

    def rename_reads(self, node, vmap):
        # An atom or an operation on two (most statements once normalized): no walk.
        if node.__class__ is gast.BinOp and _plain_atom(node.left) and _plain_atom(node.right):
            _rename_read(node.left, vmap)
            _rename_read(node.right, vmap)
            return
        if _plain_atom(node):
            _rename_read(node, vmap)
            return
        for n in lean_nodes(node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in vmap:
                n.id = vmap[n.id]

    def run(self):
        vmap = {p: p for p in self.params}
        ret = self.tree.body[-1]  # the normalizer's single `return _ret`
        self.tree.body, _ = self.block(self.tree.body, vmap)
        if self.tree.body[-1] is not ret and isinstance(ret, gast.Return):
            # a function that always raises: the statements after its `raise` are gone,
            # but the sweeps are built around the one return (never reached when run)
            self.rename_reads(ret, vmap)
            self.tree.body.append(ret)
        return self.all_loops

    def block(self, stmts, vmap):
        """Rename a block in place of ``vmap``; return (statements, falls_through)."""
        out = []
        for s in stmts:
            kind = type(s)
            if kind is gast.Assign:
                self.rename_reads(s.value, vmap)
                target = s.targets[0].id
                new = self.new_name(target)
                s.targets[0].id = new
                vmap[target] = new
                self.note_assigned(new)
                out.append(s)
            elif kind is gast.If:
                self.rename_reads(s.test, vmap)
                out.append(s)
                if not self.branch_join(s, vmap):
                    return out, False
            elif kind is gast.For or kind is gast.While:
                out.extend(self.loop(s, vmap))
            elif kind is WithBlock or kind is Attempt:  # always runs, in the same names
                if getattr(s, "holder", None) is not None:  # a general manager's Context
                    self.rename_reads(s.holder, vmap)
                s.body, falls_through = self.block(s.body, vmap)
                s.body = s.body or [gast.Pass()]
                out.append(s)
                if not falls_through and kind is WithBlock:  # (an Attempt's raise is caught)
                    return out, False
            elif kind is gast.Break or kind is gast.Continue:
                out.extend(self.exit_point(s, vmap))
                out.append(s)
                return out, False
            elif kind is LoopEnd:
                out.extend(self.exit_point(s, vmap))
            elif kind is TryStart:
                out.extend(self.bind_before(s, vmap))
            elif kind is gast.Raise:
                self.rename_reads(s, vmap)
                out.append(s)
                return out, False
            else:  # Expr, Assert, Return
                self.rename_reads(s, vmap)
                out.append(s)
        return out, True

    def bind_before(self, s, vmap) -> list:
        """``name = None`` for each name a try statement binds first: a step of its body
        may raise, and the join copies of the branches around it then read the name's
        value from before the try (try_blocks.py)."""
        out = []
        for name in sorted(s.binds - set(vmap) - self.flags):
            new = self.new_name(name)
            self.note_assigned(new)
            out.append(_unbound(new, s))
            vmap[name] = new
        return out

    def note_assigned(self, name):
        for loop in self.loops:
            loop.assigned.add(name)

    def branch_join(self, s, vmap) -> bool:
        m1 = dict(vmap)
        m2 = dict(vmap)
        s.body, f1 = self.block(s.body, m1)
        s.orelse, f2 = self.block(s.orelse, m2)
        if not s.body:
            s.body = [gast.Pass()]
        if f1 and f2:
            for name in sorted(set(m1) | set(m2)):
                v1, v2 = m1.get(name), m2.get(name)
                if v1 == v2 or name in self.flags:
                    vmap[name] = v1 or v2
                    continue
                if name not in vmap and (v1 is None or v2 is None):
                    # Bound on one path only: later reads are unbound on the other path
                    # in the original too, so no join name is needed.
                    vmap[name] = v1 or v2
                    continue
                new = self.new_name(name)
                self.note_assigned(new)
                if v1 is not None:
                    s.body.append(N.assign(new, N.load(v1), s))
                if v2 is not None:
                    s.orelse.append(N.assign(new, N.load(v2), s))
                vmap[name] = new
            return True
        vmap.clear()
        vmap.update(m1 if f1 else m2)
        return f1 or f2

    def loop(self, s, vmap):
        info = LoopInfo(s, self.loops[-1] if self.loops else None)
        s.pb_loop = info
        self.all_loops.append(info)
        body_names = _assigned_names(s.body)
        if isinstance(s, gast.For):
            body_names.add(s.target.id)
        inside = self.reads_in_loop[id(s)]
        outside = {name for name in body_names if self.reads[name] > inside[name]}
        start = {s.target.id} if isinstance(s, gast.For) else set()
        carried = _upward_exposed(s.body, body_names, start) | outside
        carried -= self.flags
        pre = []
        if isinstance(s, gast.For):
            self.rename_reads(s.iter, vmap)
        for name in sorted(carried):
            h = self.new_name(name)
            info.carried[name] = h
            if name in vmap:
                pre.append(N.assign(h, N.load(vmap[name]), s))
                self.note_assigned(h)
            elif name in self.try_binds:  # bound to None, as a try there binds it first
                pre.append(_unbound(h, s))
                self.note_assigned(h)
            else:
                info.unbound_at_entry.add(h)
            vmap[name] = h
        self.loops.append(info)
        info.assigned.update(info.carried.values())
        body_map = dict(vmap)
        if isinstance(s, gast.For):
            var = s.target.id
            new = self.new_name(var)
            s.target.id = new
            body_map[var] = new
            info.assigned.add(new)
            self.note_assigned(new)
        s.body, _ = self.block(s.body, body_map)
        if not s.body:
            s.body = [gast.Pass()]
        self.loops.pop()
        for name, h in info.carried.items():
            vmap[name] = h
        return pre + [s]

    def exit_point(self, s, vmap):
        loop = self.loops[-1]
        out = [SnapshotPoint(loop, s)]
        for name, h in loop.carried.items():
            if vmap.get(name) != h and name in vmap:
                out.append(N.assign(h, N.load(vmap[name]), s))
        return out


def _unbound(name, where) -> gast.Assign:
    """``name = None`` for a name Python has not bound there: its value reaches only join
    copies that Python would not run, so it constrains no kind (kinds.UNBOUND)."""
    bind = N.assign(name, N.const(None), where)
    bind.pb_unbound = True
    return bind


def _plain_atom(node) -> bool:
    """A constant, or a name with nothing under it but its context."""
    cls = node.__class__
    return cls is gast.Constant or (cls is gast.Name and node.annotation is None)


def _rename_read(atom, vmap) -> None:
    """``SSARenamer.rename_reads`` of a plain atom."""
    if atom.__class__ is gast.Name and isinstance(atom.ctx, gast.Load) and atom.id in vmap:
        atom.id = vmap[atom.id]


def _load_counts(nodes) -> collections.Counter:
    """How many times each name is read among ``nodes``."""
    return collections.Counter(
        n.id for n in nodes if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    )


# what blocks hold (gast's match_case derives from neither: matched by its name)
_HOLDERS = (ast.stmt, ast.excepthandler)


class _Scan:
    """What one pass over the nodes of ``lean_nodes(tree)`` finds (in no particular
    order, which none of these facts depends on): ``names``, the ids of every name;
    ``reads``, how many times each name is read (``_load_counts``); ``loops`` and
    ``tries``, the loops and the try markers.

    It goes statement by statement. Most statements of a normalized function are ``name =
    a op b``, ``name = a`` or ``name = const``: their names are taken without a walk; any
    other statement's own expressions (its fields that hold no block of statements) are
    walked, and its blocks are scanned in turn. No class of the transform derives from
    Name, Constant, BinOp, Assign, For or While."""

    def __init__(self, tree):
        names: set = set()
        reads: dict = {}
        self.loops: list = []
        self.tries: list = []
        add, count = names.add, reads.get
        name, constant, binop, assign, load = (
            gast.Name, gast.Constant, gast.BinOp, gast.Assign, gast.Load
        )  # fmt: skip
        for_, while_, try_start = gast.For, gast.While, TryStart

        def walked(node):
            for n in lean_nodes(node):
                if n.__class__ is name:
                    add(n.id)
                    if isinstance(n.ctx, load):
                        reads[n.id] = count(n.id, 0) + 1

        todo = [tree]
        while todo:
            s = todo.pop()
            cls = s.__class__
            if cls is assign:  # (it holds no block)
                v = s.value
                # its targets, and its value's sides when it is a BinOp (whose walk is
                # itself, no name, then both sides): each plain atom taken in place (a
                # name with nothing under it, a constant: most statements are `t = a op b`)
                parts = s.targets + [v.left, v.right] if v.__class__ is binop else s.targets + [v]
                for part in parts:
                    kind = part.__class__
                    if kind is name and part.annotation is None:
                        add(part.id)
                        if isinstance(part.ctx, load):
                            reads[part.id] = count(part.id, 0) + 1
                    elif kind is not constant:
                        walked(part)
                continue
            if cls is for_ or cls is while_:
                self.loops.append(s)
            elif cls is try_start:
                self.tries.append(s)
            for item in lean_children(s):
                if isinstance(item, _HOLDERS) or item.__class__.__name__ == "match_case":
                    todo.append(item)  # a statement of a block, a handler, a case
                else:
                    walked(item)  # one of its own expressions
        self.names = names
        self.reads = collections.Counter(reads)


def _reads_in_loops(loops) -> dict[int, collections.Counter]:
    """For each of ``loops`` (every loop of the function), by ``id``: how often its body
    reads each name (a ``for`` loop's iterable is not its body).

    The cost is the loops' size: comparing with the function's counts tells what is read
    outside a loop (walking the whole function once per loop was quadratic in length)."""
    out = {}
    for loop in loops:
        inside = _load_counts(lean_nodes(loop))
        if isinstance(loop, gast.For):
            inside.subtract(_load_counts(lean_nodes(loop.iter)))
        out[id(loop)] = inside
    return out


def _copies(stmts, out: dict) -> dict:
    """The copies ``a = b`` / ``a = const`` among ``stmts`` and their nested blocks, by
    target name."""
    assign, copied = gast.Assign, (gast.Name, gast.Constant)
    for s in stmts:
        if s.__class__ is assign:  # (no class derives from it; it holds no block)
            if isinstance(s.value, copied):
                out.setdefault(s.targets[0].id, []).append(s)
            continue
        for field in ("body", "orelse"):
            block = getattr(s, field, None)
            if isinstance(block, list):
                _copies(block, out)
    return out


def remove_dead_copies(tree) -> None:
    """Drop ``a = b`` / ``a = const`` whose target is never read (join copies nobody uses),
    and then the copies only those read, and so on.

    Read counts, kept as copies go: a copy's removal takes one read off its source, whose
    own copies die when that was the last (one walk, not one per link of a dead chain)."""
    copies = _copies(tree.body, {})
    if not copies:
        return  # nothing to drop: no walk of the whole function
    reads = _Scan(tree).reads
    dead: set[int] = set()
    todo = [name for name in copies if not reads[name]]
    while todo:
        for s in copies.pop(todo.pop(), ()):
            dead.add(id(s))
            if isinstance(s.value, gast.Name):
                source = s.value.id
                reads[source] -= 1
                if not reads[source] and source in copies:
                    todo.append(source)
    if not dead:
        return

    assign = gast.Assign

    def sweep(stmts):
        out = []
        for s in stmts:
            if id(s) in dead:
                continue
            if s.__class__ is assign:  # (it holds no block)
                out.append(s)
                continue
            for field in ("body", "orelse"):
                block = getattr(s, field, None)
                if isinstance(block, list) and block:
                    setattr(s, field, sweep(block) or [gast.Pass()])
            out.append(s)
        return out

    tree.body = sweep(tree.body)


def to_ssa(tree, params, flags=()) -> list[LoopInfo]:
    """Rename ``tree`` (a normalized FunctionDef) in place; return its loops' facts."""
    loops = SSARenamer(tree, params, flags).run()
    remove_dead_copies(tree)
    return loops
