"""The statements of a generated gradient that run only where a scalar branch of a
``np.where`` was selected (where_branches): a scalar's contribution is written
``(contribution if m is not False else 0.0)`` for its mask ``m`` (reverse_where), which a
derivative of that gradient meets normalized as ``if m is not False:`` blocks. What such a
block reads gets a zero cotangent where the branch was not selected, as a member's masked
contribution does."""

from __future__ import annotations

import gast

__all__ = ["guarded_statements"]


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
