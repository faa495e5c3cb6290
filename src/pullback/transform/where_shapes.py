"""The arguments that generated code passes for their shape or as a flag (where_branches):
a member of a branch's subgraph read there gets no cotangent from that read, so the read
keeps the member's cotangent zero where the branch was not selected."""

from __future__ import annotations

import gast

from .. import read_folds, tangents, where_masks
from ..registry import ENTRY_POINTS
from ..rules._elementwise import elementwise_in_x
from .analyze import names_in

__all__ = ["shape_only_read", "shape_only_uses"]


def shape_only_uses() -> dict:
    """``{function: positions}``: arguments that generated code passes for their shape or
    as a flag, which get no cotangent (a member read there keeps a zero cotangent)."""
    from ..rules import numpy_assemble_pullbacks, pullback_runtime_pullbacks, transformable

    return {
        # (in a derivative of a gradient: the pullbacks of masked and unbroadcast)
        pullback_runtime_pullbacks.masked_pullback: {1, 2},
        pullback_runtime_pullbacks.unbroadcast_pullback: {1, 2},
        tangents.unbroadcast: {1},
        read_folds.fold_reads: {1},
        where_masks.masked: {1},
        where_masks.kept: {1},
        where_masks.branch_mask: None,  # every argument
        where_masks.selection_mask: None,
        where_masks.select_mask: None,
        where_masks.inner_mask: None,
        numpy_assemble_pullbacks.select_pullback: {1, 2, 3},
        elementwise_in_x: None,
        transformable.where_pullback: {1, 2, 3},
    }


def shape_only_read(n, v, shape_only) -> bool:
    """Whether the value ``v`` reads ``n`` only where a call reads it for its shape."""
    callee = getattr(v, "pb_callee", None)
    if not isinstance(v, gast.Call) or callee is None or callee.kind != "object":
        return False
    try:
        positions = shape_only.get(callee.obj, ())
    except TypeError:
        return False
    if positions == () and type(callee.obj) is ENTRY_POINTS.VJPRef:
        # the generated vjp of such a function, ``vjp(dvalue, *args)``: an argument the
        # function reads for its shape gets no cotangent from its derivative either
        inner = shape_only.get(callee.obj.fn, ())
        positions = () if not inner else {k + 1 for k in inner}
    if positions == () or v.keywords:
        return False
    return all(
        positions is None or k in positions or n not in names_in(a) for k, a in enumerate(v.args)
    )
