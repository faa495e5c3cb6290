"""``try``/``except``/``else``/``finally``: the path Python took, recorded like a branch.

The gradient is the derivative of what Python ran at that call: the statements of the try
body that completed before an exception keep their effects, the handler that matched runs,
``else`` only without an exception, ``finally`` always. The normalizer lowers a ``try`` into
the core language with one new block, :class:`Attempt`: one step of the body that may raise
(one operation, already in A-normal form), run inside ``try:`` by the forward sweeps, which
store any exception in ``exc``. Its ``ok`` flag is set as the step's last statement, so it
is true exactly when the step completed, and the statements after it run inside ``if ok:``
(one flat ``if`` per step: a flag is false unless the one before it was true)::

    try:                          _exc = None; _ok1 = False
        L = chol(K)       ->      Attempt[-> _exc](_v = chol(K); _ok1 = True)
    except LinAlgError:           if _ok1: L = _v
        L = chol(K + eps)         if _exc is None: pass
                                  elif isinstance(_exc, LinAlgError): L = chol(K + eps)
                                  else: raise _exc

A step's result goes to a fresh name, copied to its target inside ``if ok:``, so SSA joins
the target's old value (the step raised) with its new one (it completed). Everything else is
an ordinary branch: SSA, activity and kinds walk an Attempt as a block that always runs; the
reverse sweep runs its body's reverse under ``if ok:`` (an interrupted step has no effect on
any binding, so its pullback gets nothing), and the flags are saved per loop iteration like
any branch condition. The forward sweeps write ``with _pb_try(exc):``, a header every pass
reads like a ``with``, which :func:`~.code.render` writes as ``try:`` ... ``except
BaseException as _caught: exc = _caught`` (after ``except _pullback_errors: raise``: an
error of pullback's own, a rule refusing at run time, is never a user's exception): the
generated code stays inside the subset, so a second derivative lowers that ``try`` again.

Every step catches every exception; the handlers are tested in order with ``isinstance``
after the body, and an exception no handler matches is raised again (the same object)
before anything else of the statement runs. ``except ... as e`` binds ``e``, a bare
``raise`` in a handler re-raises the exception. With ``finally``, the handlers and ``else``
run as steps too, their exception kept in a second name; then ``finally`` runs, and that
exception is raised again unless ``finally`` returned. A loop in a try body (a user's, or one
the normalizer writes for a comprehension or ``functools.reduce``) leaves by ``break`` at the
first step that raised: the iteration cut half-way is recorded like any iteration that left
early (its values and flags on the loop's tape, its carried values as the completed steps
left them), and the statements after the loop run under ``exc is None``. Names the statement
binds first are bound to None where it starts (:class:`TryStart`). A ``break``/``continue``
(or a ``return`` in a loop) that leaves a ``try`` with ``finally`` raises a marker first
(:mod:`.try_jumps`): ``finally`` runs, then the jump is made.
"""

from __future__ import annotations

import copy

import gast

from ..tree_walk import walk
from . import nodes as N
from .code import CAUGHT
from .try_jumps import JUMP, after_finally, mark_jumps, raises_marker
from .with_blocks import WithBlock

RETURNED = "_returned"  # normalize.RETURNED (normalize imports this module)


class TryStart(gast.Pass):
    """Where a lowered try statement starts; ``binds``: the names it assigns. SSA binds
    those the function has not bound yet to None here, so that every join copy after a
    step that raised reads a bound name."""

    def __init__(self, binds, where):
        super().__init__()
        self.binds = frozenset(binds)
        gast.copy_location(self, where)


class Attempt(WithBlock):
    """One step of a try body that may raise: run inside ``try:``; an exception is stored
    in ``exc``; ``ok`` is set by the body's last statement."""

    _fields = ("body",)

    def __init__(self, body, exc: str, ok: str, where):
        super().__init__(body, f"_pb_try({exc})", where)
        self.exc = exc
        self.ok = ok

    def as_if(self) -> gast.If:
        """``if ok: body``: what the reverse sweep runs (built once: the same body)."""
        branch = self.__dict__.get("_as_if")
        if branch is None or branch.body is not self.body:
            branch = N.if_(N.load(self.ok), [gast.Pass()], where=self)
            branch.body = self.body
            self._as_if = branch
        return branch

    def as_try(self) -> gast.Try:
        """The ``try`` statement the block stands for (to show the core language)."""
        keep = N.assign(self.exc, N.load(CAUGHT), self)
        handler = gast.ExceptHandler(type=_name("BaseException"), name=N.store(CAUGHT), body=[keep])
        return gast.copy_location(
            gast.Try(body=self.body, handlers=[handler], orelse=[], finalbody=[]), self
        )


def may_raise(s) -> bool:
    """Whether the core statement ``s`` may raise (a copy or a display of atoms cannot)."""
    if isinstance(s, gast.Assign):
        v = s.value
        if isinstance(v, (gast.Name, gast.Constant)):
            return False
        if isinstance(v, (gast.Tuple, gast.List)):
            return not all(isinstance(e, (gast.Name, gast.Constant)) for e in v.elts)
        return True
    if isinstance(s, (gast.Pass, gast.Break, gast.Continue)):
        return False
    if isinstance(s, gast.If):
        return any(may_raise(x) for x in s.body + s.orelse)
    if type(s) is WithBlock:
        return any(may_raise(x) for x in s.body)
    return True


def reraise_bare(stmts, exc: str) -> None:
    """Make each bare ``raise`` of a handler's body ``raise exc`` (the handler runs after
    the ``try`` in the lowered code, where no exception is being handled); not inside a
    nested handler (its bare ``raise`` is its own) or a nested function."""
    for s in stmts:
        if isinstance(s, gast.Raise) and s.exc is None:
            s.exc = N.load(exc)
            continue
        if isinstance(s, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if isinstance(block, list):
                reraise_bare(block, exc)


def _at(node, where):
    return gast.copy_location(node, where)


def _name(name):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def _compare(name, op):
    """``name is None`` / ``name is not None``."""
    return gast.Compare(left=N.load(name), ops=[op], comparators=[N.const(None)])


class TryStatements:
    """:class:`~.normalize.Normalizer`: lower a ``try`` statement (see the module
    docstring)."""

    def stmt_Try(self, s):
        self.locals.add(RETURNED)
        exc = self.fresh("try_exc")
        self.flags.add(exc)
        pre = [_at(N.assign(exc, N.const(None)), s)]
        pending = None
        if s.finalbody:  # what a handler or else raised (or no handler caught): after finally
            pending = self.fresh("try_exc")
            self.flags.add(pending)
            pre.append(_at(N.assign(pending, N.const(None)), s))
        used, kept = mark_jumps(s, bool(self.loops), self.fresh) if s.finalbody else ([], None)
        out = self.block(pre)
        body = self.chain(self.block(s.body), exc)
        out += body
        dispatch = self.block([self.dispatch(s, exc, self.may_jump(body))])
        out += self.chain(dispatch, pending) if pending else dispatch
        out += self.block(s.finalbody)
        if s.finalbody:  # the jump, or the exception raised again, unless finally returned
            out += self.block(after_finally(pending, used, kept, RETURNED, s))
        binds = {
            n.id
            for stmt in out
            for n in walk(stmt)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
        }
        return [TryStart(binds, s)] + out, self.may_jump(out)

    def dispatch(self, s, exc, body_jumps):
        """``if exc is None: else-body elif isinstance(exc, T1): handler1 ... else: raise
        exc`` (each step catches every exception: one no handler matches is raised again,
        the same object, before anything else of the try runs)."""
        rest: list = [_at(gast.Raise(exc=N.load(exc), cause=None), s)]
        for h in reversed(s.handlers):
            handler = copy.deepcopy(h.body)
            reraise_bare(handler, exc)
            if h.name is not None:
                handler.insert(0, _at(N.assign(copy.deepcopy(h.name), N.load(exc)), h))
            if h.type is None:
                rest = handler
                continue
            test = N.call(_name("isinstance"), [N.load(exc), copy.deepcopy(h.type)])
            rest = [_at(N.if_(_at(test, h), handler, rest, where=h), h)]
        orelse = list(s.orelse) or [_at(gast.Pass(), s)]
        if s.orelse and body_jumps:  # the body returned: no else
            orelse = [_at(N.if_(N.not_(N.load(RETURNED)), orelse, where=s.orelse[0]), s)]
        if raises_marker(s.body):  # a jump out of an enclosing try with finally: not caught
            test = N.call(_name("isinstance"), [N.load(exc), _name(JUMP)])
            again = _at(gast.Raise(exc=N.load(exc), cause=None), s)
            rest = [_at(N.if_(_at(test, s), [again], rest, where=s), s)]
        return _at(N.if_(_at(_compare(exc, gast.Is()), s), orelse, rest, where=s), s)

    def chain(self, stmts, exc, in_loop=False) -> list:
        """The core statements of a try body, each step that may raise in an
        :class:`Attempt`, each statement after it under its ``ok`` flag. The guards follow
        one another (``if ok1: ...`` then ``if ok2: ...``, each flag false unless the one
        before was true), so a long body does not nest deeper. In the body of a loop of the
        try body (``in_loop``), a step that raised also leaves the loop by ``break``: the
        iteration ends where the exception cut it, recorded like any iteration that left
        by ``break`` (its values and flags on the loop's tape)."""
        flags: list = []  # all false first: an iteration that left early leaves no stale flag
        out: list = []
        guard, run = None, []  # the flag the statements in `run` are waiting for

        def flush():
            if run:
                out.extend(run if guard is None else [N.if_(N.load(guard), run, where=run[0])])

        for s in stmts:
            if not may_raise(s):
                run.append(s)
                continue
            flag = self.fresh("try_ok" if isinstance(s, (gast.Assign, gast.Expr)) else "try_done")
            self.flags.add(flag)
            flags.append(N.assign(flag, N.const(False), s))
            after = []
            if isinstance(s, gast.If) or type(s) is WithBlock:  # each path sets the flag
                s.body = self.chain(s.body + [N.assign(flag, N.const(True), s)], exc, in_loop)
                if isinstance(s, gast.If):
                    done = N.assign(flag, N.const(True), s)
                    s.orelse = self.chain(s.orelse + [done], exc, in_loop)
            elif isinstance(s, (gast.For, gast.While)):  # left early when a step raised
                s.body = self.chain(s.body, exc, in_loop=True)
                after = [N.assign(flag, _compare(exc, gast.Is()), s)]
                run.append(s)
                s = after.pop()
            else:
                if isinstance(s, gast.Assign):  # its result bound once the step completed
                    value = self.fresh("try_value")
                    self.flags.add(value)  # read only under the step's flag: never joined
                    after = [N.assign(s.targets[0].id, N.load(value), s)]
                    s = N.assign(value, s.value, s)
                s = Attempt([s, N.assign(flag, N.const(True), s)], exc, flag, s)
            run.append(s)
            if in_loop and (isinstance(s, Attempt) or not isinstance(s, (gast.If, WithBlock))):
                # a step or a loop that raised: leave, under the same guard (one exit per
                # iteration; a branch leaves by its own steps' exits)
                run.append(N.if_(N.not_(N.load(flag)), [N.located(gast.Break(), s)], where=s))
            flush()
            guard, run = flag, after
        flush()
        return flags + out


__all__ = [
    "Attempt",
    "TryStart",
    "TryStatements",
    "may_raise",
    "reraise_bare",
]
