"""Control flow in both sweeps: branches, loops and their tapes.

Loops count their iterations and, at each iteration's exit, push a snapshot of exactly
the values the reverse sweep reads onto the loop's tape, a flat list; the reverse loop
reads one snapshot per iteration backwards from a cursor, without changing the list, so
the pullback stays re-callable; the fused sweeps of grad's hot entry, whose reverse part
runs once, pop it instead (``Line.once``), freeing each snapshot as they read it. A list
of floats costs the cyclic garbage collector nothing (floats are not tracked), where one
tuple per iteration made every collection walk the whole tape. The functions that must
stay differentiable again (the fused gradient and vjp) use the ``alt`` form: one immutable
tuple ``(values..., rest)`` per iteration, linked to the previous one. Branches replay
the forward path's condition.
"""

from __future__ import annotations

import gast

from ..inplace_fields import inplace_snapshot, inplace_verify
from ..tree_walk import walk
from .analyze import all_nodes, names_in
from .code import Compound, Line, identifiers, walk_reads
from .ssa import SnapshotPoint
from .sweep_common import State, src
from .try_blocks import Attempt
from .with_blocks import WithBlock
from .with_blocks import compound as with_compound


class ControlFlowAdjoints:
    """:class:`~.reverse.ReverseBuilder`: branches, loops and their tapes."""

    def rev_if(self, s, state) -> list:
        s_body = state.copy()
        s_else = state.copy()
        rb = self.rev_block(s.body, s_body)
        ro = self.rev_block(s.orelse, s_else)
        if not rb and not ro:
            return []
        self.merge_states(state, s_body, rb, s_else, ro, s.lineno)
        test = src(s.test)
        return [Compound(f"if {test}:", rb, ro, frozenset(names_in(s.test)), s.lineno)]

    def merge_states(self, state, s1, b1, s2, b2, line):
        """Join the states of two branches (overlays of ``state``, :meth:`State.copy`):
        a name either branch set is zero after the join only if it is zero in both; the
        branch where it is zero binds it to ZERO when the other does not. Only the names
        the branches set are visited (elsewhere both read ``state``'s own value)."""
        # sorted: the order of these lines must not depend on the hash seed
        for name in sorted(set(s1) | set(s2)):
            z1 = s1.get(name) == "Z"
            z2 = s2.get(name) == "Z"
            if z1 and not z2:
                b1.append(Line(f"{self.adj(name)} = ZERO", src=line))
            elif z2 and not z1:
                b2.append(Line(f"{self.adj(name)} = ZERO", src=line))
            state[name] = "Z" if (z1 and z2) else "M"

    def rev_loop(self, s, state) -> list:
        info = s.pb_loop
        self.loop_stack.append(info)
        per_iteration = info.assigned - set(info.carried.values())
        # Inside the loop every adjoint that outlives an iteration is bound.
        body_state = State(lambda name: "Z" if name in per_iteration else "M")
        body = self.rev_block(s.body, body_state)
        self.loop_stack.pop()
        # Where the reverse sweep starts reading this loop's tape (filled in by _needs).
        # Set once, before the outermost loop: a nested loop's tape runs on across the
        # outer iterations.
        info.cursor_line = Line("", src=s.lineno)
        pending = self.__dict__.setdefault("_tape_cursors", [])
        pending.append(info.cursor_line)
        if not body:
            info.has_reverse = False
            return []
        info.has_reverse = True
        lid = self.loop_id(info)
        info.stack = self.internal(f"_stack{lid}")
        info.cursor = self.internal(f"_at{lid}")
        info.pop = self.internal(f"_pop{lid}")
        info.reverse_target = None
        if isinstance(s, gast.For) and not _breaks(s.body):
            # Every iteration runs to its end: the reverse loop walks the same range
            # backwards, so neither a count nor the loop variable needs saving.
            info.counter = self.internal(f"_range{lid}")
            info.reverse_target = s.target.id
            header = f"for {s.target.id} in reversed({info.counter}):"
        else:
            info.counter = self.internal(f"_count{lid}")
            header = f"for {self.loop_var} in range({info.counter}):"
        self.primal.add(info.counter)
        for outer in self.loop_stack:
            outer.assigned.add(info.counter)
        outliving = {name for name in _adjoints_touched(body, self) if name not in per_iteration}
        before: list = []
        for name in sorted(outliving):
            if state.get(name) == "Z":
                before.append(Line(f"{self.adj(name)} = ZERO", src=s.lineno))
            if body_state.get(name) == "Z":
                body.append(Line(f"{self.adj(name)} = ZERO", src=s.lineno))
            state[name] = "M"
        pop = Line("pass", src=s.lineno)  # filled in by finish_loops
        info.pop_line = pop
        # Index reads recorded by the previous reverse iteration are folded with the value
        # they read, before this iteration's snapshot replaces it (a carried array may
        # change shape from one iteration to the next: `w = w[k:]`).
        lead = 0
        while lead < len(body) and _is_fold_line(body[lead]):
            lead += 1
        loop = Compound(
            header,
            body[:lead] + [pop] + body[lead:],
            reads=frozenset({info.counter}),
            src=s.lineno,
            loop=info,
        )
        if not self.loop_stack:  # the outermost loop: every tape cursor starts here
            before = pending[:] + before
            pending.clear()
        return before + [loop]

    # -- saved values -----------------------------------------------------------------
    def finish_loops(self, body) -> list[str]:
        """Decide each loop's snapshot and the values saved at the end of the forward."""
        needed_top = self._needs(body, None)
        saved = sorted(n for n in needed_top if n in self.primal)
        for info in self.loops:
            if getattr(info, "has_reverse", False) and info.parent is None:
                saved.append(info.counter)
        for info in self.loops:
            if getattr(info, "has_reverse", False) and (
                info.snapshot or info.reverse_target is None
            ):
                saved.append(info.stack)
        return list(dict.fromkeys(saved))

    def _needs(self, block, info) -> set[str]:
        reads = set(walk_reads(block, stop_at_loops=True))
        for item in _loops_in(block):
            reads |= self._needs(item.body, item.loop)
            reads |= item.reads
        if info is None:
            return reads
        invariant = self.loop_invariants(info)
        snap = sorted(
            n
            for n in reads
            if n in info.assigned
            and n in self.primal
            and n != info.reverse_target
            and n not in invariant
        )
        info.snapshot = snap
        pop = info.pop_line
        stack, cursor = info.stack, info.cursor
        if snap:
            loads = [f"{n} = {stack}[{cursor}{f' + {k}' if k else ''}]" for k, n in enumerate(snap)]
            pop.text = f"{cursor} -= {len(snap)}; " + "; ".join(loads)
            pop.alt = f"{', '.join(snap)}, {stack} = {stack}"
            # Run once (the fused sweeps): the snapshot popped, last value first.
            pop.once = "; ".join(f"{n} = {info.pop}()" for n in reversed(snap))
            info.cursor_line.text = f"{cursor} = len({stack})"
            info.cursor_line.alt = "pass"
            info.cursor_line.once = f"{info.pop} = {stack}.pop"
        elif info.reverse_target is not None:
            pop.text = ""  # nothing to restore: no stack at all
        else:  # only the linked form keeps a (None, rest) entry per iteration
            pop.text = "pass"
            pop.alt = f"_, {stack} = {stack}"
        return {n for n in reads if n not in info.assigned or n in invariant}

    def loop_invariants(self, info) -> set[str]:
        """Names the loop assigns the same value in every iteration (one pure operation on
        values from outside the loop): the reverse sweep reads their final value instead of
        saving one per iteration."""
        assigns: dict[str, list] = {}
        for node in all_nodes(info.node):
            if isinstance(node, gast.Assign):
                assigns.setdefault(node.targets[0].id, []).append(node.value)
            elif isinstance(node, Attempt):  # its exception is stored where no pass looks
                assigns.setdefault(node.exc, []).extend((None, None))
        candidates = {
            name: values[0]
            for name, values in assigns.items()
            if len(values) == 1
            and name not in info.carried.values()
            and isinstance(values[0], _PURE)
        }
        invariant: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, value in candidates.items():
                if name in invariant:
                    continue
                operands = set(names_in(value))
                if all(n not in info.assigned or n in invariant for n in operands):
                    invariant.add(name)
                    changed = True
        return invariant

    # -- forward ----------------------------------------------------------------------
    def fwd_block(self, stmts) -> list:
        out: list = []
        # (np.where branches in a loop: alt-only lines after their targets, reverse_where)
        kept = self.kept_lines(stmts)
        for s in stmts:
            out.extend(self.fwd_stmt(s))
            if kept and type(s) is gast.Assign:
                out.extend(kept.get(s.targets[0].id, ()))
        return out

    def fwd_stmt(self, s) -> list:
        if isinstance(s, gast.Assign):
            return [self.fwd_assign(s)]
        if isinstance(s, gast.If):
            return [
                Compound(
                    f"if {src(s.test)}:",
                    self.fwd_block(s.body),
                    self.fwd_block(s.orelse),
                    src=s.lineno,
                )
            ]
        if isinstance(s, (gast.For, gast.While)):
            info = s.pb_loop
            header = (
                f"for {s.target.id} in {src(s.iter)}:" if isinstance(s, gast.For) else "while True:"
            )
            body = self.fwd_block(s.body)
            if not getattr(info, "has_reverse", False):
                return [Compound(header, body, src=s.lineno)]
            if info.reverse_target is not None:
                # The range object itself is saved; the reverse loop walks it backwards.
                rng = info.counter
                return [
                    Line(f"{rng} = {src(s.iter)}", src=s.lineno),
                    Compound(f"for {s.target.id} in {rng}:", body, src=s.lineno),
                ]
            body.insert(0, Line(f"{info.counter} += 1", src=s.lineno))
            return [
                Line(f"{info.counter} = 0", src=s.lineno),
                Compound(header, body, src=s.lineno),
            ]
        if isinstance(s, WithBlock):
            return with_compound(s, self.fwd_block(s.body), s.lineno)
        if isinstance(s, SnapshotPoint):
            info = s.loop
            if not getattr(info, "has_reverse", False):
                return []
            snap = getattr(info, "snapshot", [])
            if not snap and info.reverse_target is not None:
                return []
            stack = info.stack
            if not snap:
                return [Line("pass", src=s.lineno, alt=f"{stack} = (None, {stack})")]
            # The list tape: 8 bytes per value and no object of its own; the linked form
            # (alt) one flat tuple (values..., rest) per iteration. Up to four values are
            # appended one by one (CPython's specialized list.append is cheaper than a
            # tuple built to extend the list), more with one `+=`.
            if len(snap) <= _APPENDED:
                push = "; ".join(f"{stack}.append({n})" for n in snap)
            else:
                push = f"{stack} += ({', '.join(snap)})"
            return [Line(push, src=s.lineno, alt=f"{stack} = ({', '.join(snap)}, {stack})")]
        if isinstance(s, (gast.Break, gast.Continue)):
            return [Line(type(s).__name__.lower(), src=s.lineno)]
        if isinstance(s, gast.Pass):
            return []
        watched = self.watched_native_call(s)
        if watched is not None:
            return watched
        return [Line(src(s), src=getattr(s, "lineno", None))]

    def attributes_read(self) -> tuple:
        """:func:`attributes_read` of the function, computed once."""
        reads = self.__dict__.get("_attributes_read")
        if reads is None:
            reads = self._attributes_read = attributes_read(self.tree)
        return reads

    def watched_native_call(self, s):
        """``obj.m(...)`` as a statement that runs as written (no gradient flows through
        it) on what may be an object of a user's class, between the snapshot and the check
        of the array fields ``m`` changes in place (:mod:`pullback.inplace_fields`): a
        pullback may hold one of them. None for any other statement."""
        call = s.value if isinstance(s, gast.Expr) else None
        if str(getattr(self.fs, "filename", "")).startswith("<pullback"):
            # a derivative's own code, differentiated again: a change of what a call read
            # is refused there by the recompute's check (PB107, recompute_state.py), and
            # the first order's guard itself is left out
            if call is not None and getattr(call, "pb_callee", None) is not None:
                if getattr(call.pb_callee, "obj", None) is inplace_verify:
                    return []
            return None
        if not (
            isinstance(call, gast.Call)
            and isinstance(call.func, gast.Attribute)
            and isinstance(call.func.value, gast.Name)
            and call.func.attr not in _CONTAINER_METHODS
        ):
            return None
        callee = getattr(call, "pb_callee", None)
        receiver = call.func.value.id
        if callee is None or callee.kind != "method" or self.kinds.get(receiver) is not None:
            return None  # (a number, an array, a list: no method of a user's class)
        snapshot = self.temp()
        take = self.bind("inplace_snapshot", inplace_snapshot)
        verify = self.bind("inplace_verify", inplace_verify)
        where = self.fs.where(call)
        line = s.lineno
        reads = self.attributes_read()
        return [
            Line(f"{snapshot} = {take}({receiver}, {call.func.attr!r}, {reads!r})", src=line),
            Line(src(s), src=line),
            Line(f"{verify}({snapshot}, {where!r})", src=line),
        ]

    def loops_containing(self, stmt):
        """The loops (outermost first) whose bodies hold ``stmt``, a statement of the
        primal tree. The map from statements to their loops is made on the first call, in
        one walk (one walk per statement was quadratic): the reverse builder never changes
        the primal tree's statements, it only reads them."""
        where = self.__dict__.get("_loops_of")
        if where is None:
            where = self._loops_of = {}

            def visit(block, stack):
                for s in block:
                    where.setdefault(id(s), stack)
                    if isinstance(s, (gast.For, gast.While)):
                        visit(s.body, stack + [s.pb_loop])
                    elif isinstance(s, gast.If):
                        visit(s.body, stack)
                        visit(s.orelse, stack)
                    elif isinstance(s, WithBlock):
                        visit(s.body, stack)

            visit(self.tree.body, [])
        return list(where.get(id(stmt), ()))


def attributes_read(tree) -> tuple:
    """The attribute names the normalized function ``tree`` reads (``o.v``, and the
    checked reads ``read_attribute(o, 'v', ...)``/``attribute_of(o, 'v', ...)``)."""
    found = set()
    for node in walk(tree):
        if isinstance(node, gast.Attribute) and isinstance(node.ctx, gast.Load):
            found.add(node.attr)
        elif (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Name)
            and node.func.id in ("read_attribute", "attribute_of")
            and len(node.args) > 1
            and isinstance(node.args[1], gast.Constant)
        ):
            found.add(node.args[1].value)
    return tuple(sorted(a for a in found if isinstance(a, str)))


# methods of lists, dicts and sets (a container's own: pullback follows its items)
_CONTAINER_METHODS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add"}
    | {"discard", "popitem", "reverse", "sort", "copy", "index", "count", "get", "keys"}
    | {"values", "items"}
)


def _adjoints_touched(block, builder) -> set[str]:
    """Primal names whose adjoints a reverse block reads or writes."""
    prefix = builder.prefix
    names = set()

    def visit(items):
        for item in items:
            text = item.text if isinstance(item, Line) else item.header
            for token in identifiers(text):
                if token.startswith(prefix) or token.startswith("_reads"):
                    names.add(token)
            if isinstance(item, Compound):
                visit(item.body)
                visit(item.orelse)

    visit(block)
    # Each adjoint is the prefix and its primal name: look the block's names up in the
    # primal names (one pass over the block, not one over every primal name per loop).
    cut = len(prefix)
    primal = builder.primal
    out = {t[cut:] for t in names if t.startswith(prefix) and t[cut:] in primal}
    # Index reads recorded in a chain count as touching the array's adjoint.
    for primal in builder.subscript_bases:
        if builder.reads_chain(primal) in names:
            out.add(primal)
    return out


def _is_fold_line(item) -> bool:
    return isinstance(item, Line) and (
        "= fold_reads(" in item.text
        or (item.text.startswith("_reads") and item.text.endswith("= None"))
    )


def _breaks(stmts) -> bool:
    """Whether a loop body may leave its loop early (not counting nested loops)."""
    for s in stmts:
        if isinstance(s, gast.Break):
            return True
        if isinstance(s, gast.If) and (_breaks(s.body) or _breaks(s.orelse)):
            return True
        if isinstance(s, WithBlock) and _breaks(s.body):
            return True
    return False


def _loops_in(block):
    for item in block:
        if isinstance(item, Compound):
            if item.loop is not None:
                yield item
            else:
                yield from _loops_in(item.body)
                yield from _loops_in(item.orelse)


#: The most snapshot values pushed with one append each (see fwd_stmt).
_APPENDED = 4

# Operations without side effects whose result depends only on their operands.
# A tuple display of atoms (`axis=(1, 2)` named by the normal form) is as pure: kept on
# the tape, a constant axis would share the activity of the arrays beside it there, and
# the second order would take it for a differentiated value.
_PURE = (
    gast.BinOp,
    gast.UnaryOp,
    gast.Compare,
    gast.Name,
    gast.Constant,
    gast.Subscript,
    gast.Tuple,
)
