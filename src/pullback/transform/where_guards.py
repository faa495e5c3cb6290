"""The statements of a generated gradient that run only where a scalar branch of a
``np.where`` was selected (where_branches): a scalar's contribution is written
``(contribution if m is not False else 0.0)`` for its mask ``m`` (reverse_where), which a
derivative of that gradient meets normalized as ``if m is not False:`` blocks. What such a
block reads gets a zero cotangent where the branch was not selected, as a member's masked
contribution does.

A mask of a generated gradient may also be a join with None (:func:`joined_masks`), or a
selection of masks alone (:func:`masks_of_masks`)."""

from __future__ import annotations

import gast

from .. import where_masks
from .sweep_common import src
from .where_joins import copy_sources

__all__ = [
    "guarded_statements",
    "joined_masks",
    "mask_key",
    "masks_alone",
    "masks_of_masks",
    "src_key",
]


def guarded_statements(blocks, mask_keys, defs) -> dict:
    """``{id(statement): selection}`` for the statements of a generated gradient that run
    only where a scalar branch was selected: the blocks of ``if m is not False:`` (the
    ``(contribution if m is not False else 0.0)`` of a scalar's mask ``m``, normalized).
    Such a block gives what it reads a zero cotangent where the branch was not selected."""
    if not mask_keys:
        return {}
    flags = {}
    for block in blocks:
        for st in block:
            if st.__class__ is gast.Assign and defs.get(st.targets[0].id) == 1:
                key = _selected_test(st.value, mask_keys)
                if key is not None:
                    flags[st.targets[0].id] = key
    out: dict = {}
    for block in blocks:
        for st in block:
            if st.__class__ is not gast.If:
                continue
            test = st.test
            key = flags.get(test.id) if test.__class__ is gast.Name else None
            key = key or _selected_test(test, mask_keys)
            if key is None:
                continue
            for u in _statements(st.body):
                out[id(u)] = key
    return out


def _selected_test(node, mask_keys):
    """The selection of ``m is not False`` for a mask ``m`` of ``mask_keys``, else None."""
    if (
        node.__class__ is gast.Compare
        and len(node.ops) == 1
        and node.ops[0].__class__ is gast.IsNot
        and node.left.__class__ is gast.Name
        and node.comparators[0].__class__ is gast.Constant
        and node.comparators[0].value is False
    ):
        return mask_keys.get(node.left.id)
    return None


def _statements(body):
    """Every statement of ``body``, nested blocks included."""
    for s in body:
        yield s
        for field in ("body", "orelse"):
            inner = getattr(s, field, None)
            if isinstance(inner, list):
                yield from _statements(inner)


def joined_masks(blocks, mask_keys, stale=()) -> None:
    """Add to ``mask_keys`` the joins of one mask with None, in a generated gradient: the
    mask of a branch with a user's helper, ``branch_mask(...) if elementwise_in_x(h, ())
    else None``, is such a join once normalized. Where it is None, ``selection_mask``
    masks nothing."""
    copies = copy_sources(blocks, stale)  # (False: assigned otherwise, no join of masks)
    nones = {n for n, sources in copies.items() if sources == [None]}
    changed = True
    while changed:
        changed = False
        for n, sources in copies.items():
            if n in mask_keys or False in sources:
                continue
            keys = {mask_keys.get(m) for m in sources if m is not None and m not in nones}
            if len(keys) == 1 and None not in keys:
                mask_keys[n] = keys.pop()
                changed = True


def masks_of_masks(blocks, mask_keys, calls) -> None:
    """Add to ``mask_keys`` the masks ``selection_mask(None, negate, (), maskeds)`` whose
    ``(ct, mask)`` pairs all take masks of one selection: the mask a derivative of a
    gradient computes for the ``masked`` contributions of a loop's reverse sweep, which a
    third derivative meets in ``kept(member, mask)`` (``calls``: the function objects of
    the call each such mask is assigned by, by name)."""
    tuples = {
        st.targets[0].id: st.value.elts
        for block in blocks
        for st in block
        if st.__class__ is gast.Assign and st.value.__class__ is gast.Tuple
    }

    def pair_mask(node):
        if node.__class__ is gast.Name:
            node = gast.Tuple(elts=tuples.get(node.id, ()), ctx=gast.Load())
        elts = getattr(node, "elts", ())
        return elts[1].id if len(elts) == 2 and elts[1].__class__ is gast.Name else None

    for name, value in calls.items():
        if name in mask_keys:
            continue
        maskeds = value.args[3]
        pairs = tuples.get(maskeds.id, None) if maskeds.__class__ is gast.Name else None
        if pairs is None and maskeds.__class__ is gast.Tuple:
            pairs = maskeds.elts
        if not pairs:
            continue
        keys = {mask_keys.get(pair_mask(p)) for p in pairs}
        if len(keys) == 1 and None not in keys:
            mask_keys[name] = keys.pop()


def mask_key(value):
    """The selection a mask assigned by ``value`` stands for: ``(condition, negate)`` of
    ``branch_mask(c, t, a, negate)`` or ``selection_mask(c, negate, ...)``, else None."""
    callee = getattr(value, "pb_callee", None)
    if not isinstance(value, gast.Call) or callee is None or callee.kind != "object":
        return None
    args = value.args
    if callee.obj is where_masks.select_mask and len(args) == 4:
        k = args[1]
        if isinstance(k, gast.Constant) and type(k.value) is int:
            return (src_key(args[0]) + "#select", k.value)
        return None
    if callee.obj is where_masks.branch_mask and len(args) == 4:
        flag = args[3]
    elif callee.obj is where_masks.selection_mask and len(args) == 4:
        flag = args[1]
    else:
        return None
    if not isinstance(flag, gast.Constant) or not isinstance(flag.value, bool):
        return None
    if isinstance(args[0], gast.Constant):  # (a selection of masks alone)
        return None
    return (src_key(args[0]), flag.value)


def masks_alone(value) -> bool:
    """Whether ``value`` is ``selection_mask(None, negate, wheres, maskeds)``."""
    callee = getattr(value, "pb_callee", None)
    return (
        value.__class__ is gast.Call
        and callee is not None
        and callee.kind == "object"
        and callee.obj is where_masks.selection_mask
        and len(value.args) == 4
        and value.args[0].__class__ is gast.Constant
        and value.args[0].value is None
    )


def src_key(node) -> str:
    return src(node)
