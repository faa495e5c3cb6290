"""The subgraphs of elementwise statements that feed only one branch of a ``np.where``.

For ``t = np.where(c, a, b)`` the cotangent ``np.where`` sends into ``a`` is exactly zero
where ``c`` is False. A statement that computes ``a`` (or a value only ``a``'s subgraph
reads) by an elementwise operation -- ``+ - * / ** %``, unary minus, an elementwise rule
(``np.log``, ``np.sqrt``, ...), a nested ``np.where``, a user's helper proved elementwise
at run time -- keeps that zero at those positions,
as long as the branch has ``t``'s shape (checked at run time by
:func:`pullback.where_masks.branch_mask`) and the value has it too (checked by
:func:`pullback.where_masks.masked`: a scalar or a row inside the branch sums over
positions). Its pullback may still compute ``0 * inf`` (``log'(0)``) or ``0 * nan``
(``log(-1)``) there, so every contribution a member's statement sends is masked: the
derivative of what the function computes is zero there, and NaN computed for a value the
function threw away is not part of it.

A member is a name assigned once, in the ``where``'s own block, by such an operation, and
read only by other members or as that branch of the ``where`` (a value also read
elsewhere gets its masked contribution, and keeps its other uses as they are).
"""

from __future__ import annotations

import math
import types

import gast
import numpy as np

from ..registry import SCALAR
from .analyze import names_in
from .with_blocks import WithBlock

__all__ = ["WhereGroup", "finite_factors", "helper_calls", "where_groups"]

_ELEMENTWISE_OPS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow, gast.Mod)
_BLOCK_FIELDS = ("body", "orelse")


class WhereGroup:
    """One branch of one ``np.where`` statement: ``target`` the where's name, ``condition``
    its first argument (a node), ``branch`` the name of the branch, ``negate`` for the
    second branch, ``members`` the names of
    the subgraph, ``mask`` the name the reverse sweep gives the mask (set by the builder)."""

    __slots__ = ("target", "condition", "branch", "negate", "members", "mask", "helpers")

    def __init__(self, target, condition, branch, negate, members):
        self.helpers = ()  # (function, argument nodes) of the user helpers among members
        self.target = target
        self.branch = branch
        self.condition = condition
        self.negate = negate
        self.members = members
        self.mask = None


def _blocks(body):
    """Every statement list of the tree (the function's body first)."""
    yield body
    for s in body:
        if isinstance(s, (gast.If, gast.For, gast.While, WithBlock)):
            for field in _BLOCK_FIELDS:
                inner = getattr(s, field, None)
                if inner:
                    yield from _blocks(inner)


def _header_names(s) -> list:
    """The names a compound statement reads outside its blocks (test, iterable, ...)."""
    out = []
    for field, value in gast.iter_fields(s):
        if field in _BLOCK_FIELDS:
            continue
        if isinstance(value, gast.AST):
            out.extend(names_in(value))
        elif isinstance(value, list):
            for v in value:
                if isinstance(v, gast.AST):
                    out.extend(names_in(v))
    return out


def _is_where(value) -> bool:
    callee = getattr(value, "pb_callee", None)
    return (
        isinstance(value, gast.Call)
        and callee is not None
        and callee.kind == "object"
        and callee.obj is np.where
        and len(value.args) == 3
        and not value.keywords
        and not any(isinstance(a, gast.Starred) for a in value.args)
    )


def _elementwise(value, registry) -> bool:
    """Whether the value of an assignment is computed elementwise from its operands."""
    if isinstance(value, gast.Name):
        return True
    if isinstance(value, gast.BinOp):
        return isinstance(value.op, _ELEMENTWISE_OPS)
    if isinstance(value, gast.UnaryOp):
        return isinstance(value.op, (gast.USub, gast.UAdd))
    if not isinstance(value, gast.Call) or value.keywords:
        return False
    if any(isinstance(a, gast.Starred) for a in value.args):
        return False
    if _is_where(value):
        return True
    callee = getattr(value, "pb_callee", None)
    if callee is None or callee.kind != "object":
        return False
    try:
        rule = registry.lookup(callee.obj)
    except TypeError:  # an unhashable callee
        return False
    if rule is None and isinstance(callee.obj, types.FunctionType) and value.args:
        return True  # a user's helper: proved elementwise at run time (helper_calls)
    return rule is not None and rule.kind == SCALAR


def helper_calls(group, local, registry) -> list:
    """The calls of user functions among the members of ``group``, as ``(function,
    argument nodes)``: the mask holds only while each is proved elementwise in its first
    argument, the others real scalars (``rules/_elementwise.elementwise_in_x``, at run
    time: its free names may be rebound)."""
    out = []
    for m in sorted(group.members):
        v = local[m].value
        callee = getattr(v, "pb_callee", None)
        if isinstance(v, gast.Call) and callee is not None and callee.kind == "object":
            if not _is_where(v) and registry.lookup(callee.obj) is None:
                out.append((callee.obj, v.args))
    return out


def finite_factors(value) -> bool:
    """Whether the pullback of ``t = value`` multiplies the cotangent only by finite
    constants (``a + b``, ``-a``, ``0.1 * x``, ``x / 2.0``): a zero cotangent stays zero,
    and its contributions need no mask (``np.where(x > 0, x, 0.1 * x)`` costs what it did)."""
    if isinstance(value, (gast.Name, gast.UnaryOp)):
        return True
    if not isinstance(value, gast.BinOp):
        return False
    if isinstance(value.op, (gast.Add, gast.Sub)):
        return True

    def finite(node):
        return (
            isinstance(node, gast.Constant)
            and type(node.value) in (int, float)
            and math.isfinite(node.value)
        )

    if isinstance(value.op, gast.Mult):
        return finite(value.left) or finite(value.right)
    if isinstance(value.op, gast.Div):
        return finite(value.right) and value.right.value != 0
    return False


def where_groups(tree, registry, is_active) -> dict:
    """``{member name: [WhereGroup, ...]}`` (a nested where's members belong to the groups
    of both); empty when the function has no ``np.where`` with an active branch."""
    blocks = list(_blocks(tree.body))
    wheres = [
        (block, s)
        for block in blocks
        for s in block
        if isinstance(s, gast.Assign) and _is_where(s.value) and is_active(s.targets[0].id)
    ]
    if not wheres:
        return {}
    users: dict = {}  # name -> the statements that read it (one entry per read)
    defs: dict = {}  # name -> number of assignments
    for block in blocks:
        for s in block:
            if isinstance(s, gast.Assign):
                for t in s.targets:
                    if isinstance(t, gast.Name):
                        defs[t.id] = defs.get(t.id, 0) + 1
                read = names_in(s.value)
            elif isinstance(s, (gast.If, gast.For, gast.While, WithBlock)):
                read = _header_names(s)
                if isinstance(s, gast.For) and isinstance(s.target, gast.Name):
                    defs[s.target.id] = defs.get(s.target.id, 0) + 2
            else:
                read = names_in(s)
            for n in read:
                users.setdefault(n, []).append(s)
    groups: dict = {}
    for block, s in wheres:
        local = {
            st.targets[0].id: st
            for st in block
            if isinstance(st, gast.Assign)
            and isinstance(st.targets[0], gast.Name)
            and len(st.targets) == 1
        }
        condition, a, b = s.value.args
        for negate, branch in ((False, a), (True, b)):
            if not isinstance(branch, gast.Name) or branch.id == getattr(condition, "id", None):
                continue
            other = b if not negate else a
            if isinstance(other, gast.Name) and other.id == branch.id:
                continue
            members = _members(branch.id, s, local, users, defs, registry, is_active)
            if any(not finite_factors(local[m].value) for m in members):
                group = WhereGroup(s.targets[0].id, condition, branch.id, negate, members)
                group.helpers = helper_calls(group, local, registry)
                for m in members:
                    groups.setdefault(m, []).append(group)
    return groups


def _members(root, where_stmt, local, users, defs, registry, is_active) -> frozenset:
    """The subgraph of ``root`` (see the module docstring), by a fixpoint: collect the
    elementwise definitions reachable from the branch, then drop any name read by a
    statement outside the set until none is. Inactive names (constants: ``-0.5``) carry no
    cotangent and are left out (their shape would spoil the run-time check)."""
    candidates: set = set()
    work = [root]
    while work:
        n = work.pop()
        if n in candidates or defs.get(n) != 1 or n not in local or not is_active(n):
            continue
        st = local[n]
        if not _elementwise(st.value, registry):
            continue
        candidates.add(n)
        work.extend(names_in(st.value))
    changed = True
    while changed:
        changed = False
        inside = {id(local[n]) for n in candidates}
        for n in list(candidates):
            reads = users.get(n, ())
            ok = all(id(u) in inside for u in reads if u is not where_stmt)
            # the where reads it once, as this branch (not in its condition)
            ok = ok and sum(1 for u in reads if u is where_stmt) == (1 if n == root else 0)
            if not ok:
                candidates.discard(n)
                changed = True
    if root not in candidates:
        return frozenset()
    # only what the branch still reaches through members
    reach, work = set(), [root]
    while work:
        n = work.pop()
        if n in reach or n not in candidates:
            continue
        reach.add(n)
        work.extend(names_in(local[n].value))
    return frozenset(reach)
