"""Loops and early exits in the core language: ``return``, ``break``, ``continue``.

A mixin of :class:`~pullback.transform.normalize.Normalizer`, which supplies ``block``,
``expr``, ``as_name``, ``fresh`` and ``loop_header`` (loop_iterables.py). The reverse
sweep replays the forward path backwards, so the path must be visible as data: every
early exit becomes a flag that guards the rest of its block instead of a jump over it.
``return`` sets ``_ret`` and ``_returned`` (and breaks out of the loop it is in, the
loops around it break on ``_returned``); ``while test:`` becomes ``while True:`` with a
``break`` when the test fails; a loop's ``else`` runs on a flag the ``break`` clears; and
each iteration ends with a :class:`LoopEnd` marker, where the SSA pass copies the
carried names and the reverse sweep takes its snapshot.

>>> from pullback.transform.normalize import core_source
>>> def f(x, n):
...     for i in range(n):
...         if x > 3.0:
...             break
...         x = x * 2.0
...     return x
>>> print(core_source(f))
def f(x, n):
    _ret = None
    _returned = False
    for i in range(n):
        _go2 = True
        _t1 = x > 3.0
        if _t1:
            _go2 = False
            break
        if _go2:
            x = x * 2.0
            pass
    _ret = x
    _returned = True
    return _ret
"""

from __future__ import annotations

import gast

from ..tree_walk import statements
from . import nodes as N
from .with_blocks import WithBlock

RET = "_ret"  # the value the function returns, assigned where it returns
RETURNED = "_returned"  # set by a return: guards everything after it


class Loop:
    """The loop being normalized; ``break_flag`` names the flag its ``else`` runs on."""

    def __init__(self, break_flag: str | None):
        self.break_flag = break_flag


class LoopEnd(gast.Pass):
    """Marks the end of one loop iteration, where the SSA pass puts the loop's carried
    copies and the reverse sweep its snapshot. It is guarded like any other statement."""

    def __init__(self, where):
        super().__init__()
        gast.copy_location(self, where)


class LoopJumps:
    """The normalizer's loops and jumps (see the module docstring)."""

    def guarded(self, new, rest, where) -> list:
        """``new`` may leave the block: run ``rest`` only when it did not.

        Inside a loop the guard is a flag set before ``new`` and cleared just before each
        of its ``break``/``continue``, so it is right even in the iteration that left
        (the reverse sweep reads it from that iteration's snapshot). Outside loops only
        ``return`` leaves, and the guard is ``not _returned``.
        """
        guard = self.fresh("go")
        if self.loops:
            self.flags.add(guard)
            for stmts in jump_blocks(new):
                k = next(
                    i for i, s in enumerate(stmts) if isinstance(s, (gast.Break, gast.Continue))
                )
                stmts.insert(k, N.assign(guard, N.const(False), stmts[k]))
            head = [N.assign(guard, N.const(True), where)] + new
        else:
            head = new + [N.assign(guard, N.not_(N.load(RETURNED)), where)]
        return head + [N.if_(N.load(guard), self.block(rest), where=rest[0])]

    @staticmethod
    def may_jump(stmts) -> bool:
        return may_jump(stmts)

    def stmt_LoopEnd(self, s):
        return [s], False

    def stmt_Return(self, s):
        stmts = []
        if s.value is None:
            value = N.const(None)
        else:
            stmts, value = self.expr(s.value, keep_call=True)
        stmts.append(N.assign(RET, value, s))
        stmts.append(N.assign(RETURNED, N.const(True), s))
        if self.loops:
            stmts.append(N.located(gast.Break(), s))
        return stmts, "always"

    def stmt_Break(self, s):
        loop = self.loops[-1]
        stmts = []
        if loop.break_flag:
            stmts.append(N.assign(loop.break_flag, N.const(True), s))
        stmts.append(N.located(gast.Break(), s))
        return stmts, "always"

    def stmt_Continue(self, s):
        return [N.located(gast.Continue(), s)], "always"

    def stmt_While(self, s):
        # while test: body   ->   while True: c = test; if c: body; else: break
        loop = Loop(self.fresh("broke") if s.orelse else None)
        self.loops.append(loop)
        test_stmts, test = self.expr(s.test)
        cond = self.as_name(test, test_stmts, s, "c")
        inner = self.block(s.body)
        step = N.if_(N.load(cond), inner, [N.located(gast.Break(), s)], where=s)
        body = test_stmts + self.guarded([step], [LoopEnd(s)], s)
        self.loops.pop()
        pre = []
        if loop.break_flag:
            pre.append(N.assign(loop.break_flag, N.const(False), s))
        loop_node = N.located(gast.While(test=N.const(True), body=body, orelse=[]), s)
        return self.after_loop(s, pre, loop_node, loop, body)

    def stmt_For(self, s):
        loop = Loop(self.fresh("broke") if s.orelse else None)
        pre, var, prefix, iter_value = self.loop_header(s)
        self.loops.append(loop)
        body = prefix + self.block(s.body + [LoopEnd(s)])
        self.loops.pop()
        if loop.break_flag:
            pre.append(N.assign(loop.break_flag, N.const(False), s))
        loop_node = N.located(
            gast.For(target=N.store(var), iter=iter_value, body=body, orelse=[], type_comment=None),
            s,
        )
        return self.after_loop(s, pre, loop_node, loop, body)

    def after_loop(self, s, pre, loop_node, loop, body):
        stmts = pre + [loop_node]
        jumps = False
        if loop.break_flag:
            else_body = self.block(s.orelse)
            stmts.append(N.if_(N.not_(N.load(loop.break_flag)), else_body, where=s.orelse[0]))
            jumps = may_jump(else_body)
        if contains_return(body):
            if self.loops:
                stmts.append(N.if_(N.load(RETURNED), [N.located(gast.Break(), s)], where=s))
            jumps = True
        return stmts, jumps


def jump_blocks(stmts):
    """The statement lists, outside nested loops, that end in ``break``/``continue``."""
    found = []
    if any(isinstance(s, (gast.Break, gast.Continue)) for s in stmts):
        found.append(stmts)
    for s in stmts:
        if isinstance(s, gast.If):
            found.extend(jump_blocks(s.body))
            found.extend(jump_blocks(s.orelse))
        elif isinstance(s, WithBlock):
            found.extend(jump_blocks(s.body))
    return found


def may_jump(stmts) -> bool:
    """Whether normalized ``stmts`` may leave their block: a ``break``/``continue`` of the
    enclosing loop, or a return (which sets ``_returned``)."""
    for s in stmts:
        for node in _walk_no_loops(s):
            if isinstance(node, (gast.Break, gast.Continue)):
                return True
            if isinstance(node, gast.Assign) and any(
                isinstance(t, gast.Name) and t.id == RETURNED for t in node.targets
            ):
                return True
    return False


def contains_return(stmts) -> bool:
    """Whether normalized ``stmts`` return somewhere, nested loops included (the loop
    around them must then break on ``_returned``)."""
    for s in stmts:
        for node in statements(s):
            if isinstance(node, gast.Assign) and any(
                isinstance(t, gast.Name) and t.id == RETURNED for t in node.targets
            ):
                if isinstance(node.value, gast.Constant) and node.value.value is True:
                    return True
    return False


def _walk_no_loops(node):
    """Walk a statement without entering nested loops (their jumps are their own)."""
    yield node
    if isinstance(node, (gast.For, gast.While)):
        return
    for child in gast.iter_child_nodes(node):
        if isinstance(child, gast.stmt) or isinstance(child, gast.AST):
            yield from _walk_no_loops(child)
