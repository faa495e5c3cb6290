"""The statement lists in which :mod:`.where_branches` looks for a selection's subgraph.

A block that always runs in the same names is spliced into the list around it: a plain
``with`` block (``with np.errstate(...)``), and the steps of a lowered ``try`` body
(try_blocks.Attempt, one operation each) with the ``if ok:`` blocks that run after a step
completed. ``y = np.where(x > 0, x * np.log(x), 0)`` in a ``try`` is four steps, and its
branch's subgraph spans them: spliced, its members are found as in straight-line code.
"""

from __future__ import annotations

import gast

from .try_blocks import Attempt
from .with_blocks import WithBlock

__all__ = ["BLOCK_FIELDS", "spliced", "statement_lists", "try_steps"]

BLOCK_FIELDS = ("body", "orelse")


def spliced(body, steps=None) -> list:
    """``body`` with the statements of each plain ``with`` block in its place: a block that
    always runs, in the same names (``with np.errstate(...)``), so that a gradient's masks
    under one see the primal values computed under another.

    The steps of a lowered ``try`` body (``steps``: ``{ok flag: set of statement ids}``,
    see :func:`try_steps`) are spliced too, with the ``if ok:`` blocks that run after a
    step completed: ``y = np.where(x > 0, x * np.log(x), 0)`` in a ``try`` is one step per
    operation, each in the ``if ok:`` of the step before it, and its branch's subgraph
    spans them. (A member's cotangent is zero unless the root's step completed; its
    statements are marked in ``steps``: the mask may be unbound where they are reversed.)"""
    if steps is None or not steps:
        if not any(type(s) is WithBlock for s in body):
            return body
        steps = None
    out = []
    for s in body:
        if type(s) is WithBlock:
            out.extend(spliced(s.body, steps))
        elif steps is not None and type(s) is Attempt:
            out.extend(spliced(s.body, steps))
        elif steps is not None and _step_test(s, steps):
            inner = spliced(s.body, steps) + spliced(s.orelse, steps)
            steps[s.test.id].update(id(u) for u in inner)
            out.extend(inner)
        else:
            out.append(s)
    return out


def _step_test(s, steps) -> bool:
    """Whether ``s`` is the ``if ok:`` after a step of a lowered ``try`` body."""
    return s.__class__ is gast.If and s.test.__class__ is gast.Name and s.test.id in steps


def try_steps(body) -> dict:
    """``{ok: set()}`` for the ok flag of every step (``Attempt``) of a lowered ``try``."""
    out: dict = {}
    for s in body:
        if type(s) is Attempt:
            out[s.ok] = set()
        for field in BLOCK_FIELDS:
            inner = getattr(s, field, None)
            if isinstance(inner, list):
                out.update(try_steps(inner))
    return out


def statement_lists(body, steps=None, loops=None, loop=None):
    """Every statement list of the tree (the function's body first), plain ``with``
    blocks (and the steps of a lowered ``try``) spliced into the list around them.
    ``loops``: a dict that receives ``{id(list): id of the innermost loop around it}``
    (``loop``; None outside any loop)."""
    body = spliced(body, steps)
    if loops is not None:
        loops[id(body)] = loop
    yield body
    for s in body:
        if isinstance(s, (gast.If, gast.For, gast.While, WithBlock)):
            inside = id(s) if isinstance(s, (gast.For, gast.While)) else loop
            for field in BLOCK_FIELDS:
                inner = getattr(s, field, None)
                if inner:
                    yield from statement_lists(inner, steps, loops, inside)
