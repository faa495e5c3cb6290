"""A branch's subgraph across the blocks of a lowered ``try``, in a gradient differentiated
again (where_branches).

The gradient of a function whose ``try`` body holds ``y = np.where(x > 0, np.sqrt(x),
0.0)`` keeps the steps of that body in ``if ok:`` blocks, in its forward part and again in
its backward part, which reads the forward's ``np.sqrt(x)`` in a masked contribution
``masked(d * (0.5 / v), mask)``. Lowered again, every value that crosses those blocks is a
*join with None*: SSA joins the step's value with the ``v = None`` the generated code binds
first (``v_3 = v_2`` where the step ran, ``v_3 = v`` where it did not). Within one block
list the members of the ``masked`` root stop at that join, the ``np.sqrt`` step is no
member, and its pullback turns the zero cotangent into ``0 * inf``: a Hessian of NaN.

Here such a join stands for its one source that is not None (:func:`none_joins`), the
roots of one selection in all the blocks of one loop make one group (the forward part's
``np.where`` and the backward part's ``masked`` calls: :func:`across_blocks`; the root
written last computes the mask, :func:`source_order`), and its members are looked up in
all those blocks (:func:`wide_lookup`). Such a group's masks start as None in the reverse
sweep (as a try body's steps' do, where_blocks.py): where the root's block did not run,
nothing is masked, and a member's cotangent is zero there. A value copied into the branch
of a ``np.where`` of the selection gets a cotangent that is zero where the branch was not
selected, so that copy is an allowed use of a member (:func:`zero_outside`), and so is a
copy into a join read only for its shape. A condition joined with None is keyed as its
source (:func:`joined_conditions`): the ``np.where`` of a handler and the mask its gradient
made from it read the condition through different joins.

A generated gradient (it has masks) is read so, with or without a ``try``: under a plain
``if`` its forward and backward parts are two ``if`` blocks, and the branch's values
cross them joined with None the same way. So is a function's own lowered ``try`` body:
``b = np.where(x >= 0, np.sqrt(x), -x)`` is four steps, and ``np.sqrt(x)``, computed two
steps before the ``np.where``, reaches it through a join with None (where_branches.
where_groups). Other functions keep one group per block.

In a loop, a step's value (and, in a gradient, its mask) also joins the value the loop
carried from its previous iteration (:func:`loop_carried`): that value is read only where
the step did not run this iteration, so it counts as None, and a copy into it that the
next iteration reads only so is an allowed use (a value the loop hands on after it is
not). A gradient's forward loop keeps a member for its reverse loop as ``m = kept(m,
mask)``, a step of its own in a ``try``: the join of the kept value with ``m`` (the step
did not run) is what the tape saves, so a copy into it is allowed too (:func:`kept_joins`).
"""

from __future__ import annotations

import gast

from .. import where_masks
from .analyze import names_in
from .where_blocks import spliced

__all__ = [
    "across_blocks",
    "copy_sources",
    "joined_conditions",
    "kept_joins",
    "loop_carried",
    "none_joins",
    "source_order",
    "wide_lookup",
    "zero_outside",
]


def across_blocks(body, steps, blocks, loops, defs, users, roots_of, shape_only_read, stale=()):
    """``(joins, units, zeros)`` for a gradient of a function with a lowered ``try``:
    :func:`none_joins`; one unit ``(roots by selection, statements by name, statement
    order, loop)`` per loop (None: outside any), the roots of all its blocks together
    (``roots_of(block)``: a block's roots by selection, where_branches) and the statements
    of :func:`wide_lookup`; and :func:`zero_outside` (``stale``: :func:`loop_carried`)."""
    joins = none_joins(blocks, stale)
    wide = wide_lookup(blocks, loops, defs, joins)
    found: dict = {}
    for block in blocks:
        for key, roots in roots_of(block).items():
            found.setdefault(loops.get(id(block)), {}).setdefault(key, []).extend(roots)
    order = source_order(body, steps)
    units = [(by_key, wide.get(loop, {}), order, loop) for loop, by_key in found.items()]
    keyed = {(loop, key): roots for loop, by_key in found.items() for key, roots in by_key.items()}
    zeros = zero_outside(keyed, users, joins, shape_only_read)
    # (a join read only for its shape, or copied only into such joins, gets no cotangent
    # at all: a copy into it is an allowed use)
    shaped, changed = set(joins), True
    while changed:
        changed = False
        for n in list(shaped):
            for u in users.get(n, ()):
                v = getattr(u, "value", None)
                if not (
                    (v.__class__ is gast.Name and u.targets[0].id in shaped)
                    or shape_only_read(n, v)
                ):
                    shaped.discard(n)
                    changed = True
                    break
    for at in keyed:
        zeros.setdefault(at, set()).update(shaped)
    for at, names in kept_joins(keyed, blocks, stale).items():
        zeros.setdefault(at, set()).update(names)
    # (a copy carried to the next iteration and read there only as a join's None is: its
    # cotangent comes from that join where the step did not run, zero where the value
    # was not selected; a value the loop also hands on after it is read otherwise)
    carried = {
        p
        for p in stale
        if all(
            getattr(u, "value", None).__class__ is gast.Name and u.targets[0].id in joins
            for u in users.get(p, ())
        )
    }
    for at in keyed:
        zeros.setdefault(at, set()).update(carried)
    return joins, units, zeros


def kept_joins(roots_by_key, blocks, stale=()) -> dict:
    """``{(loop, key): names}``: the joins of a member with its kept value. In a ``try``
    body of a gradient's loop, ``m = kept(m, mask)`` (reverse_where.kept_lines) is a step
    of its own, lowered again as ``m_2 = kept(m_1, k)`` in ``if ok:`` and the join
    ``m_3`` of ``m_2`` (the step ran) with ``m_1`` (it did not). Either way ``m_3`` is the
    value the loop's tape saves for a reverse sweep that reads it only masked or for its
    shape, as it saves the kept value outside a ``try``: the copy ``m_3 = m_1`` is an
    allowed use of the member ``m_1``."""
    sources = copy_sources(blocks, stale)
    copied = {n: s[0] for n, s in sources.items() if len(s) == 1 and s[0]}

    def origin(n):
        seen = set()
        while n in copied and n not in seen:
            seen.add(n)
            n = copied[n]
        return n

    out: dict = {}
    for at, roots in roots_by_key.items():
        kept = {}  # the kept values of a member (and their joins with it) -> the member
        for st, branch, mask, _ in roots:
            if mask is not None and _calls(st.value, where_masks.kept):
                kept[st.targets[0].id] = origin(branch)
        changed = bool(kept)
        while changed:
            changed = False
            for n, s in sources.items():
                if n in kept or len(s) < 2 or False in s:
                    continue
                real = {origin(m) for m in s if m is not None}
                members = {m for m in real if m not in kept} | {kept[m] for m in real if m in kept}
                if len(members) == 1 and real & kept.keys():
                    kept[n] = members.pop()
                    out.setdefault(at, set()).add(n)
                    changed = True
    return out


def _calls(value, fn) -> bool:
    callee = getattr(value, "pb_callee", None)
    return (
        value.__class__ is gast.Call
        and callee is not None
        and callee.kind == "object"
        and callee.obj is fn
    )


def joined_conditions(blocks, canon, stale=()) -> dict:
    """``{name: key}``: each join with None (:func:`none_joins`) keyed as its source is
    (``canon``: the text a condition name stands for), so that a ``np.where``'s condition
    and the one its gradient's mask was made from, joined differently, make one selection."""
    joins = none_joins(blocks, stale)
    out = {}
    for n in joins:
        source, seen = joins[n], {n}
        while source in joins and source not in seen:
            seen.add(source)
            source = joins[source]
        out[n] = canon.get(source, source)
    return out


def source_order(body, steps) -> dict:
    """``{id(statement): position}`` in the order the statements are written (the steps
    of a lowered ``try`` spliced, as where_blocks splices them): the root of a selection
    written last is the one its reverse sweep meets first."""
    out: dict = {}

    def walk(stmts):
        for s in spliced(stmts, steps):
            out[id(s)] = len(out)
            if isinstance(s, (gast.If, gast.For, gast.While)):
                walk(s.body)
                walk(s.orelse)

    walk(body)
    return out


def copy_sources(blocks, stale=()) -> dict:
    """``{name: [source, ...]}``, one entry per assignment of the name: the name it
    copies, None for the constant None or a ``stale`` name, False for any other value."""
    sources: dict = {}
    for block in blocks:
        for st in block:
            if st.__class__ is not gast.Assign or st.targets[0].__class__ is not gast.Name:
                continue
            v = st.value
            if v.__class__ is gast.Name:
                source = None if v.id in stale else v.id
            elif v.__class__ is gast.Constant and v.value is None:
                source = None
            else:
                source = False  # (assigned otherwise)
            sources.setdefault(st.targets[0].id, []).append(source)
    return sources


def none_joins(blocks, stale=()) -> dict:
    """``{name: source}`` for the names every assignment of which copies a name or None,
    with one source that is not None (a name assigned only None, or a join of such; a
    ``stale`` name counts as None)."""
    sources = copy_sources(blocks, stale)
    nones = {n for n, s in sources.items() if set(s) == {None}}
    changed = True
    while changed:  # joins of None with None are None
        changed = False
        for n, s in sources.items():
            if n not in nones and False not in s and all(m is None or m in nones for m in s):
                nones.add(n)
                changed = True
    out = {}
    for n, s in sources.items():
        if len(s) < 2 or False in s:
            continue
        real = {m for m in s if m is not None and m not in nones}
        if len(real) == 1:
            out[n] = real.pop()
    return out


def loop_carried(body, defs) -> set:
    """The names a loop carries to its next iteration: copied inside the loop (at its end,
    or in the ``if go:`` a lowered ``while`` ends with) and assigned before it too (SSA's
    join at the loop's head). A value that joins such a name with a step's is the carried
    one only where the step did not run this iteration, and then no cotangent reaches it
    through the step's statements: it counts as None in :func:`none_joins`."""
    out: set = set()
    for s in _walk(body):
        if isinstance(s, (gast.For, gast.While)):
            inside: dict = {}
            copies = set()
            for u in _walk(s.body + s.orelse):
                if u.__class__ is gast.Assign and u.targets[0].__class__ is gast.Name:
                    t = u.targets[0].id
                    inside[t] = inside.get(t, 0) + 1
                    if u.value.__class__ is gast.Name:
                        copies.add(t)
            out |= {t for t in copies if defs.get(t, 0) > inside[t]}
    return out


def _walk(body):
    """Every statement of ``body``, nested blocks included."""
    for s in body:
        yield s
        for field in ("body", "orelse"):
            inner = getattr(s, field, None)
            if isinstance(inner, list):
                yield from _walk(inner)


def wide_lookup(blocks, loops, defs, joins) -> dict:
    """``{loop: {name: statement}}``: for the blocks of each loop (``loops``: ``{id(block):
    loop}``, None outside any), the statement of each name assigned once, and of each
    join with None the copy of its source."""
    out: dict = {}
    for block in blocks:
        here = out.setdefault(loops.get(id(block)), {})
        for st in block:
            if st.__class__ is not gast.Assign or len(st.targets) != 1:
                continue
            t = st.targets[0]
            if t.__class__ is not gast.Name:
                continue
            if defs.get(t.id) == 1 or (
                t.id in joins and st.value.__class__ is gast.Name and st.value.id == joins[t.id]
            ):
                here[t.id] = st
    return out


def zero_outside(roots_by_key, users, joins, shape_only_read) -> dict:
    """``{(loop, key): names}``: the branches of the ``np.where`` roots of each selection
    in one loop's blocks (``roots_by_key`` is keyed so) whose cotangent comes only from
    that root -- every other read is for a shape (``shape_only_read(name, value)``), or a
    join with None read only so -- and is therefore zero where the selection is False."""
    out: dict = {}
    for key, roots in roots_by_key.items():
        for st, branch, mask, select in roots:
            if mask is not None or select is not None:
                continue
            ok = True
            for u in users.get(branch, ()):
                v = getattr(u, "value", None)
                if u is st:
                    ok = names_in(v).count(branch) == 1
                elif v.__class__ is gast.Name and joins.get(u.targets[0].id) == branch:
                    ok = all(
                        shape_only_read(u.targets[0].id, getattr(w, "value", None))
                        for w in users.get(u.targets[0].id, ())
                    )
                else:
                    ok = shape_only_read(branch, v)
                if not ok:
                    break
            if ok:
                out.setdefault(key, set()).add(branch)
    return out
