"""The subgraphs of elementwise statements that feed only branches one selection picks.

For ``t = np.where(c, a, b)`` the cotangent ``np.where`` sends into ``a`` is exactly zero
where ``c`` is False. A statement that computes ``a`` (or a value only ``a``'s subgraph
reads) by an elementwise operation -- ``+ - * / ** %``, unary minus, an elementwise rule
(``np.log``, ``np.sqrt``, ...) or its derivative, a nested ``np.where``, a user's helper
proved elementwise at run time -- keeps that zero at those positions, as long as the
branch has ``t``'s shape (checked at run time by :func:`pullback.where_masks.branch_mask`)
and the value has it too (checked by :func:`pullback.where_masks.masked`: a scalar or a
row inside the branch sums over positions). Its pullback may still compute ``0 * inf``
(``log'(0)``) or ``0 * nan`` (``log(-1)``) there, so every contribution a member's
statement sends is masked: the derivative of what the function computes is zero there,
and NaN computed for a value the function threw away is not part of it.

A member is a name assigned once, in the block of its roots, by such an operation, and
read only by other members, as the branch of a root, or for its shape (``unbroadcast``'s
second argument, the arguments of the masks' own helpers). The roots of one group are the
branches of a block that one selection ``(condition, negate)`` picks: the ``np.where``'s
with that condition, and in a generated gradient being differentiated again its
``masked(ct, mask)`` calls, whose masks were made from that condition -- so the primal
values the gradient's masked contributions read (``np.log(x)``, read by ``x * log(x)``
and by ``d * log(x)``) are members too, and a Hessian has no NaN from the unselected
branch either. A value also read elsewhere gets its masked contribution, and keeps its
other uses as they are.

A derivative of a gradient finds more roots of that kind: the ``kept(member, mask)`` that
the gradient's forward loop saves on its tape (reverse_where.kept_lines: a branch's
members in a loop, whose values its reverse loop reads), so the forward loop's members are
masked as well; a ``np.where`` whose result no cotangent reaches (the primal result of a
generated vjp function, read only for its shape); and the reads inside the ``if m is not
False:`` blocks of a scalar's masked contributions are allowed uses (where_guards.py).
Statement lists are found by where_blocks.py (a ``try`` body's steps spliced together);
in a generated gradient, and in a function's lowered ``try`` body, one selection's roots
and members span the blocks of one loop (where_joins.py: SSA's joins with None between
them).
"""

from __future__ import annotations

import math
import types

import gast
import numpy as np

from .. import runtime, where_masks
from ..registry import ENTRY_POINTS, SCALAR
from .analyze import names_in
from .where_blocks import BLOCK_FIELDS as _BLOCK_FIELDS
from .where_blocks import statement_lists, try_steps
from .where_guards import (
    guarded_statements,
    joined_masks,
    mask_key,
    masks_alone,
    masks_of_masks,
    src_key,
)
from .where_joins import across_blocks, joined_conditions, loop_carried
from .where_shapes import shape_only_read as _shape_only_read
from .where_shapes import shape_only_uses as _shape_only_uses
from .with_blocks import WithBlock

__all__ = ["WhereGroup", "finite_factors", "helper_calls", "where_groups"]

_ELEMENTWISE_OPS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow, gast.Mod)


class WhereGroup:
    """The branches of a block that one selection picks (``np.where``'s with one condition,
    and, in a generated gradient, the ``masked`` contributions of its mask): ``target`` the
    root the reverse sweep meets first (where the mask is computed), ``condition`` the
    where's condition (a node; None when the first root is a ``masked``), ``roots`` their
    ``(target, branch name, mask name or None)``, ``negate`` for second branches,
    ``members`` the names of the subgraph, ``mask`` the name the reverse sweep gives the
    mask (set by the builder)."""

    __slots__ = (
        "target",
        "condition",
        "roots",
        "negate",
        "members",
        "mask",
        "helpers",
        "select",
        "inner",
        "stepped",
    )

    def __init__(self, target, condition, roots, negate, members):
        self.inner = None  # the name of the mask of contributions between members
        self.select = None  # np.select's (conditions node, k, result name)
        self.helpers = ()  # (function, argument nodes) of the user helpers among members
        self.target = target
        self.roots = roots
        self.condition = condition
        self.negate = negate
        self.members = members
        self.mask = None
        self.stepped = False  # spans the steps of a lowered try (its masks start as None)


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


def _plain_call(value, fn, nargs) -> bool:
    """Whether ``value`` calls ``fn`` with ``nargs`` positional arguments and no others."""
    callee = getattr(value, "pb_callee", None)
    return (
        isinstance(value, gast.Call)
        and callee is not None
        and callee.kind == "object"
        and callee.obj is fn
        and len(value.args) == nargs
        and not value.keywords
        and not any(isinstance(a, gast.Starred) for a in value.args)
    )


def _is_where(value) -> bool:
    return _plain_call(value, np.where, 3)


def _is_masked(value) -> bool:
    """``masked(ct, mask)`` or ``kept(v, mask)`` on names: in a generated gradient, a
    branch's contribution, or a branch's member saved on a loop's tape (whose cotangent
    comes back masked); both are roots of the mask's selection."""
    return (
        _plain_call(value, where_masks.masked, 2) or _plain_call(value, where_masks.kept, 2)
    ) and all(isinstance(a, gast.Name) for a in value.args)


def _elementwise_vjp(value) -> bool:
    """Whether ``value`` calls the vjp function of a one-argument elementwise rule
    (``_sqrt_vjp(g, x)``, in a gradient being differentiated again: scalar_vjps.
    scalar_vjp), whose one cotangent ``(g * f'(x),)`` is elementwise in ``g`` and ``x``;
    or the generated vjp of a user's helper of one argument (``_vjp_h(g, x)``), which is
    as elementwise as the helper (proved at run time: :func:`helper_calls`)."""
    callee = getattr(value, "pb_callee", None)
    return (
        value.__class__ is gast.Call
        and callee is not None
        and callee.kind == "object"
        and (
            (
                getattr(callee.obj, "__pullback_elementwise_vjp__", False) is True
                and len(value.args) == 2
            )
            or _helper_vjp(callee.obj, len(value.args)) is not None
        )
        and not value.keywords
    )


def _helper_vjp(obj, nargs):
    """The user's function of one argument whose generated vjp ``obj`` is, called with
    ``nargs`` arguments (a cotangent per level: ``_vjp_h(g, x)``, and in a third
    derivative ``_vjp_h__vjp(dg, g, x)``), or the vjp of an elementwise rule's vjp
    (``_vjp_sqrt_vjp(dg, g, x)``, elementwise as it is: returned as such), else None."""
    depth = 0
    while type(obj) is ENTRY_POINTS.VJPRef:
        obj, depth = obj.fn, depth + 1
    if depth and getattr(obj, "__pullback_elementwise_vjp__", False) is True:
        return obj if nargs == depth + 2 else None
    if depth == 0 or nargs != depth + 1 or not isinstance(obj, types.FunctionType):
        return None
    return obj


def _elementwise(value, registry, local=None) -> bool:
    """Whether the value of an assignment is computed elementwise from its operands
    (``local``: the block's statements by target, for ``t = v[k]`` of such a vjp's
    result ``v``, the identity on one of its cotangents)."""
    if isinstance(value, gast.Name):
        return True
    if isinstance(value, gast.Subscript):
        base, k = value.value, value.slice
        return (
            local is not None
            and isinstance(base, gast.Name)
            and isinstance(k, gast.Constant)
            and type(k.value) is int
            and base.id in local
            and _elementwise_vjp(local[base.id].value)
            and 0 <= k.value < len(local[base.id].value.args) - 1  # (a cotangent per input)
        )
    if isinstance(value, gast.BinOp):
        return isinstance(value.op, _ELEMENTWISE_OPS)
    if isinstance(value, gast.UnaryOp):
        return isinstance(value.op, (gast.USub, gast.UAdd))
    if not isinstance(value, gast.Call) or value.keywords:
        return False
    if any(isinstance(a, gast.Starred) for a in value.args):
        return False
    if _is_where(value) or _is_masked(value) or _elementwise_vjp(value):
        return True
    callee = getattr(value, "pb_callee", None)
    if callee is None or callee.kind != "object":
        return False
    try:
        rule = registry.lookup(callee.obj)
    except TypeError:  # an unhashable callee
        return False
    if callee.obj is runtime.conjugate:  # (a product's factor in a generated gradient)
        return True
    if rule is None and isinstance(callee.obj, types.FunctionType) and value.args:
        # a derivative of an elementwise rule (in a generated gradient), or a user's helper
        # proved elementwise at run time (helper_calls)
        return True
    return rule is not None and rule.kind == SCALAR


def _derivatives(registry) -> set:
    """The partial derivatives of the registry's elementwise rules (``d_arcsin(y, x)`` in
    a generated gradient): elementwise in every argument by construction."""
    return {
        id(d)
        for rule in registry.rules()
        if rule.kind == SCALAR
        for d in (rule.derivatives or ())
        if d is not None
    }


def helper_calls(group, local, registry) -> list:
    """The calls of user functions among the members of ``group``, as ``(function,
    argument nodes)``: the mask holds only while each is proved elementwise in its first
    argument, the others real scalars (``rules/_elementwise.elementwise_in_x``, at run
    time: its free names may be rebound)."""
    out = []
    derivatives = None
    for m in sorted(group.members):
        v = local[m].value
        callee = getattr(v, "pb_callee", None)
        if isinstance(v, gast.Call) and callee is not None and callee.kind == "object":
            helper = _helper_vjp(callee.obj, len(v.args)) if _elementwise_vjp(v) else None
            if getattr(helper, "__pullback_elementwise_vjp__", False) is True:
                continue  # (an elementwise rule's: nothing to prove)
            if helper is not None:  # (its vjp is elementwise where the helper is)
                out.append((helper, v.args[-1:]))
                continue
            if not _is_where(v) and not _elementwise_vjp(v) and registry.lookup(callee.obj) is None:
                if derivatives is None:
                    derivatives = _derivatives(registry)
                if id(callee.obj) not in derivatives and callee.obj is not runtime.conjugate:
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


_TUPLES = "tuples"  # (the key of shape_only's set of tuples read for shapes only)
_GUARDED = "guarded"  # (its {id(statement): selection} of statements under a mask's test)
_KEY = "key"  # (the selection whose members are being found)
_JOINS = "joins"  # (in a try body's gradient: the joins with None, where_joins.none_joins)
_ZEROS = "zeros"  # (and the branches of the selection's np.where's: where_joins.zero_outside)


def _shape_tuples(blocks, users, defs, shape_only) -> set:
    """The names assigned once by a tuple display that only the masks' helpers read, for
    the shapes of its items (``selection_mask(c, False, ((t, a),), ())``)."""
    tuples = {
        st.targets[0].id
        for block in blocks
        for st in block
        if st.__class__ is gast.Assign
        and st.value.__class__ is gast.Tuple
        and defs.get(st.targets[0].id) == 1
    }
    found: set = set()
    changed = True
    while changed:
        changed = False
        for name in tuples - found:
            if all(
                (getattr(u, "value", None).__class__ is gast.Tuple and u.targets[0].id in found)
                or _shape_only_read(name, getattr(u, "value", None), shape_only)
                for u in users.get(name, ())
            ):
                found.add(name)
                changed = True
    return found


def _roots(block, is_active, mask_keys, users, defs, shape_only, canon) -> dict:
    """``{(condition, negate): [(statement, branch name)]}``: the ``np.where`` branches of a
    block, and the ``masked(ct, mask)`` of a generated gradient (a branch ``ct`` selected
    by the mask's condition), by the selection they make; and the choices of a
    ``np.select``. A root is ``(statement, branch, mask name or None, np.select's
    (conditions, k, result) or None)``."""
    out: dict = {}
    lists = {
        s.targets[0].id: s
        for s in block
        if isinstance(s, gast.Assign) and isinstance(s.value, gast.List)
    }
    for s in block:
        if not isinstance(s, gast.Assign):
            continue
        v = s.value
        if not is_active(s.targets[0].id) and not _is_where(v):
            continue
        if _is_where(v):
            # (an inactive where is a root too: it reads its branch for nothing, as the
            # primal result of a generated vjp function does, whose masks it selects)
            condition, a, b = v.args
            cond = getattr(condition, "id", None)
            for negate, branch, other in ((False, a, b), (True, b, a)):
                if not isinstance(branch, gast.Name) or branch.id == cond:
                    continue
                if isinstance(other, gast.Name) and other.id == branch.id:
                    continue
                root = (s, branch.id, None, None)
                key = src_key(condition)
                out.setdefault((canon.get(key, key), negate), []).append(root)
        elif _is_masked(v):
            ct, mask = v.args
            key = mask_keys.get(mask.id)
            if key is not None:
                out.setdefault(key, []).append((s, ct.id, mask.id, None))
        elif _plain_call(v, np.select, 2) or _plain_call(v, np.select, 3):
            for key, root in _select_roots(s, lists, users, defs, shape_only):
                out.setdefault(key, []).append(root)
    return out


def _select_roots(s, lists, users, defs, shape_only):
    """The choices of ``t = np.select(conditions, choices[, default])`` as roots: each
    element ``k`` of the list display ``choices`` (made in the block and read only here),
    and the default, keyed by the selection ``(conditions#select, k)``."""
    conditions, choices, *default = s.value.args
    t = s.targets[0].id
    if isinstance(choices, gast.Name) and choices.id in lists and defs.get(choices.id) == 1:
        display = lists[choices.id]
        reads = users.get(choices.id, ())
        if sum(u is s for u in reads) == 1 and all(
            u is s or _shape_only_read(choices.id, getattr(u, "value", None), shape_only)
            for u in reads
        ):
            for k, e in enumerate(display.value.elts):
                if isinstance(e, gast.Name):
                    key = (src_key(conditions) + "#select", k)
                    yield key, (display, e.id, None, (conditions, k, t))
        if default and isinstance(default[0], gast.Name):
            key = (src_key(conditions) + "#select", len(display.value.elts))
            yield key, (s, default[0].id, None, (conditions, key[1], t))


def _selects(s) -> bool:
    """Whether ``s`` assigns a call of ``np.where``, ``np.select`` or ``masked``."""
    if s.__class__ is not gast.Assign or s.value.__class__ is not gast.Call:
        return False
    obj = getattr(getattr(s.value, "pb_callee", None), "obj", None)
    return (
        obj is np.where or obj is np.select or obj is where_masks.masked or obj is where_masks.kept
    )


def where_groups(tree, registry, is_active) -> dict:
    """``{member name: [WhereGroup, ...]}`` (a nested where's members belong to the groups
    of both); empty when the function has no ``np.where`` with an active branch."""
    loops: dict = {}
    blocks = list(statement_lists(tree.body, None, loops))
    if not any(_selects(s) for block in blocks for s in block):
        return {}  # (one look at each statement: most functions have no selection)
    steps = try_steps(tree.body)
    if steps:  # (the steps of a try body, spliced)
        loops.clear()
        blocks = list(statement_lists(tree.body, steps, loops))
    stepped = set().union(*steps.values())
    users: dict = {}  # name -> the statements that read it (one entry per read)
    defs: dict = {}  # name -> number of assignments
    mask_keys: dict = {}  # the masks of a generated gradient -> their selection
    alone: dict = {}  # the masks selected by masks alone -> their call
    for block in blocks:
        for s in block:
            if isinstance(s, gast.Assign):
                for t in s.targets:
                    if isinstance(t, gast.Name):
                        defs[t.id] = defs.get(t.id, 0) + 1
                        key = mask_key(s.value)
                        if key is not None:
                            mask_keys[t.id] = key
                        elif masks_alone(s.value):
                            alone[t.id] = s.value
                read = names_in(s.value)
            elif isinstance(s, (gast.If, gast.For, gast.While, WithBlock)):
                read = _header_names(s)
                if isinstance(s, gast.For) and isinstance(s.target, gast.Name):
                    defs[s.target.id] = defs.get(s.target.id, 0) + 2
            else:
                read = names_in(s)
            for n in read:
                users.setdefault(n, []).append(s)
    # conditions written twice (x > 0 in two np.where's) make one selection: a name
    # assigned once by a comparison of names assigned at most once stands for its text
    canon = {
        st.targets[0].id: "(" + src_key(st.value) + ")"
        for block in blocks
        for st in block
        if st.__class__ is gast.Assign
        and st.value.__class__ is gast.Compare
        and defs.get(st.targets[0].id) == 1
        and all(defs.get(n, 0) <= 1 for n in names_in(st.value))
    }
    # (loop-carried values join with a step's as None do: where_joins.loop_carried)
    stale = loop_carried(tree.body, defs) if steps or mask_keys else set()
    if steps or mask_keys:  # a condition joined with None is its source (where_joins)
        canon.update(joined_conditions(blocks, canon, stale))
    mask_keys = {m: (canon.get(k[0], k[0]), k[1]) for m, k in mask_keys.items() if defs.get(m) == 1}
    if mask_keys:
        joined_masks(blocks, mask_keys, stale)
        alone = {m: v for m, v in alone.items() if defs.get(m) == 1}
        if alone:
            masks_of_masks(blocks, mask_keys, alone)
    for block in blocks:  # a mask of no selection found here (read from a loop's tape)
        for st in block:  # is a selection of its own: its roots have its positions
            if st.__class__ is gast.Assign and _is_masked(st.value):
                m = st.value.args[1].id
                if m not in mask_keys and defs.get(m) == 1:
                    mask_keys[m] = (f"<mask {m}>", False)
    shape_only = _shape_only_uses()
    shape_only[_TUPLES] = _shape_tuples(blocks, users, defs, shape_only)
    shape_only[_GUARDED] = guarded_statements(blocks, mask_keys, defs)
    units = []  # (roots by selection, statements by name, statement order, loop)
    if steps or mask_keys:  # across blocks: one unit per loop (where_joins.py)
        shape_only[_JOINS], units, zeros = across_blocks(
            tree.body,
            steps,
            blocks,
            loops,
            defs,
            users,
            lambda b: _roots(b, is_active, mask_keys, users, defs, shape_only, canon),
            lambda n, v: _shape_only_read(n, v, shape_only),
            stale,
        )
    else:
        zeros = None
        for block in blocks:
            roots_by_key = _roots(block, is_active, mask_keys, users, defs, shape_only, canon)
            if roots_by_key:
                local = {
                    st.targets[0].id: st
                    for st in block
                    if isinstance(st, gast.Assign)
                    and isinstance(st.targets[0], gast.Name)
                    and len(st.targets) == 1
                }
                units.append((roots_by_key, local, {id(st): k for k, st in enumerate(block)}, None))
    groups: dict = {}
    for roots_by_key, local, order, loop in units:
        for key, roots in roots_by_key.items():
            negate = key[1]
            shape_only[_KEY] = key
            if zeros is not None:
                shape_only[_ZEROS] = zeros.get((loop, key), ())
            members = _members(roots, local, users, defs, registry, is_active, shape_only)
            if not any(not finite_factors(local[m].value) for m in members):
                continue
            last = max(roots, key=lambda r: order[id(r[0])])[0]
            condition = next(
                (st.value.args[0] for st, _, m, sel in roots if m is None and sel is None), None
            )
            group = WhereGroup(
                last.targets[0].id,
                condition,
                [(st.targets[0].id, branch, mask) for st, branch, mask, _ in roots],
                negate,
                members,
            )
            group.select = next((sel for *_, sel in roots if sel is not None), None)
            group.helpers = helper_calls(group, local, registry)
            group.stepped = (
                zeros is not None
                or any(id(local[m]) in stepped for m in members)
                or any(id(r[0]) in stepped for r in roots)
            )
            for m in members:
                groups.setdefault(m, []).append(group)
    return groups


def _allowed_use(n, u, roots, inside, shape_only) -> bool:
    """Whether the statement ``u`` reads ``n`` without giving it a cotangent that is not
    zero where the selection is False: a member, a root reading it as its branch (once),
    or a call that reads it for its shape only."""
    if id(u) in inside:
        return True
    v = getattr(u, "value", None)
    for st, branch, *_ in roots:
        if st is u:
            return n == branch and names_in(v).count(n) == 1
    if v.__class__ is gast.Tuple and u.targets[0].id in shape_only.get(_TUPLES, ()):
        return True  # a tuple of values the masks' helpers read for their shapes
    key = shape_only.get(_GUARDED, {}).get(id(u))
    if key is not None and key == shape_only.get(_KEY):
        return True  # runs only where the selection picked the branch (a scalar's mask)
    if v.__class__ is gast.Name and u.targets[0].id in shape_only.get(_ZEROS, ()):
        return True  # a copy into a branch of the selection's np.where (where_joins.py)
    return _shape_only_read(n, v, shape_only)


def _members(roots, local, users, defs, registry, is_active, shape_only) -> frozenset:
    """The subgraph of the roots' branches (see the module docstring), by a fixpoint:
    collect the elementwise definitions reachable from the branches, then drop any name
    read by a statement that may give it another cotangent until none is. Inactive names
    (constants: ``-0.5``) carry no cotangent and are left out."""
    branches = [branch for _, branch, *_ in roots]
    candidates: set = set()
    work = list(branches)
    joins = shape_only.get(_JOINS, {})
    while work:
        n = work.pop()
        if n in candidates or n not in local or not is_active(n):
            continue
        if defs.get(n) != 1 and n not in joins:
            continue
        st = local[n]
        if not _elementwise(st.value, registry, local):
            continue
        candidates.add(n)
        work.extend(names_in(st.value))
    changed = True
    while changed:
        changed = False
        inside = {id(local[n]) for n in candidates}
        for n in list(candidates):
            if not all(_allowed_use(n, u, roots, inside, shape_only) for u in users.get(n, ())):
                candidates.discard(n)
                changed = True
    # only what the branches still reach through members
    reach, work = set(), list(branches)
    while work:
        n = work.pop()
        if n in reach or n not in candidates:
            continue
        reach.add(n)
        work.extend(names_in(local[n].value))
    return frozenset(reach)
