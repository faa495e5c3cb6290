"""``break``, ``continue`` and ``return`` that leave a ``try`` statement with ``finally``.

Python runs the ``finally`` clause on the way out, then jumps (unless ``finally`` returned
or raised). The lowered try (try_blocks.py) runs ``finally`` after the body, the handlers
and ``else``, so a jump out of them would skip it. Before the statement is lowered, each such
jump becomes the raise of a marker (an instance of :class:`TryJump`, one per kind of jump,
bound in the generated code's namespace): the step that raises it ends the body (or the
handler) like any exception, the handlers never take it (their dispatch raises a marker
again before testing a type), ``finally`` runs, and the jump is made after it::

    for i in ...:                       for i in ...:
        try:                                try:
            if c: break          ->             if c: raise _pullback_break
        finally:                            finally:
            cleanup()                           cleanup()
                                            (then, unless finally returned:)
                                            if pending is _pullback_break: break

A ``return`` inside a loop (which the normalizer writes as a ``break``) keeps its value in a
fresh name and becomes a marker too; outside loops it is a flag already and stays as it is.
"""

from __future__ import annotations

import gast

from ..tree_walk import walk
from . import nodes as N

BREAK = "_pullback_break"
CONTINUE = "_pullback_continue"
RETURN = "_pullback_return"
#: the markers' class, which dispatches test first
JUMP = "_pullback_jump"


class TryJump(BaseException):
    """The marker of a jump out of a try statement with ``finally`` (never escapes: the
    code after ``finally`` jumps instead)."""


#: what the generated code's namespace binds (reserved: free_values.RESERVED)
MARKERS = {
    BREAK: TryJump("break"),
    CONTINUE: TryJump("continue"),
    RETURN: TryJump("return"),
    JUMP: TryJump,
}


def mark_jumps(s, in_loop: bool, fresh) -> tuple[list, str | None]:
    """Rewrite in place the jumps out of the try statement ``s`` (a user's, with
    ``finally``) into raises of markers; ``(markers used, the name a return's value is kept
    in)``. ``fresh(hint)`` gives a new local name."""
    used: list = []
    kept = [None]

    def raise_(marker, where):
        if marker not in used:
            used.append(marker)
        return gast.copy_location(gast.Raise(exc=_name(marker), cause=None), where)

    def block(stmts, loops):
        out = []
        for x in stmts:
            if isinstance(x, gast.Break) and not loops:
                out.append(raise_(BREAK, x))
            elif isinstance(x, gast.Continue) and not loops:
                out.append(raise_(CONTINUE, x))
            elif isinstance(x, gast.Return) and in_loop:
                if kept[0] is None:
                    kept[0] = fresh("try_return")
                value = x.value if x.value is not None else N.const(None)
                out.append(gast.copy_location(N.assign(kept[0], value), x))
                out.append(raise_(RETURN, x))
            else:
                loop = isinstance(x, (gast.For, gast.While))
                if not isinstance(x, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
                    for field in ("body", "orelse", "finalbody"):
                        sub = getattr(x, field, None)
                        if isinstance(sub, list) and sub:
                            # a loop's else runs after it: its jumps are the enclosing ones
                            setattr(x, field, block(sub, loops or (loop and field == "body")))
                    for h in getattr(x, "handlers", ()):
                        h.body = block(h.body, loops)
                out.append(x)
        return out

    s.body = block(s.body, False)
    for h in s.handlers:
        h.body = block(h.body, False)
    s.orelse = block(s.orelse, False)
    return used, kept[0]


def after_finally(pending: str, used: list, kept: str | None, returned: str, where) -> list:
    """What runs after ``finally``: unless it returned, the jump whose marker is
    ``pending``, or the raise of the exception kept there (user-level statements)."""
    jumps = {BREAK: gast.Break(), CONTINUE: gast.Continue()}
    if kept is not None:
        jumps[RETURN] = gast.Return(value=N.load(kept))
    rest: list = [gast.Raise(exc=N.load(pending), cause=None)]
    for marker in reversed(used):
        test = gast.Compare(left=N.load(pending), ops=[gast.Is()], comparators=[_name(marker)])
        rest = [N.if_(test, [jumps[marker]], rest, where=where)]
    test = gast.BoolOp(
        op=gast.And(),
        values=[
            gast.Compare(left=N.load(pending), ops=[gast.IsNot()], comparators=[N.const(None)]),
            N.not_(N.load(returned)),
        ],
    )
    out = [N.if_(test, rest, where=where)]
    for node in out:
        for sub in walk(node):
            if isinstance(sub, (gast.stmt, gast.expr)):
                gast.copy_location(sub, where)
    return out


def raises_marker(stmts) -> bool:
    """Whether ``stmts`` (a try body, after an outer try marked its jumps) raise a marker:
    the dispatch of that try then raises markers again before its handlers."""
    return any(
        isinstance(n, gast.Raise) and isinstance(n.exc, gast.Name) and n.exc.id in MARKERS
        for x in stmts
        for n in walk(x)
    )


def _name(name):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


__all__ = ["JUMP", "MARKERS", "TryJump", "after_finally", "mark_jumps", "raises_marker"]
