"""Rules of the helpers that in-place array calls on local arrays become (issue 11):
``a.fill`` / ``np.copyto`` (``where=``, ``casting=``) / ``out=``, ``np.add.at``, the values
of ``np.put`` / ``np.fill_diagonal`` / ``np.place`` / ``np.putmask``, ``a.sort()`` (see
:mod:`pullback.arrays_inplace_calls`). Each
rule's closure calls the transformable pullback, so second derivatives and forward mode
run through the same function."""

from __future__ import annotations

from .. import arrays_inplace_calls as calls
from .. import arrays_ufunc_at
from ..tangents import NO_TANGENT, ZERO

FAMILY = "arrays_inplace_calls"


def _rule_from(fn, pullback_fn):
    """The rule of ``fn`` whose closure calls its transformable ``pullback_fn``. The
    pullbacks need no value the call changes (shapes, the index, an unsorted input)."""

    def rrule(*args):
        y = fn(*args)

        def closure(dy):
            if dy is ZERO or dy is NO_TANGENT:
                return (ZERO,) * len(args)
            # one cotangent per argument given (defaults passed or not)
            out = tuple(pullback_fn(dy, *args))[: len(args)]
            return out + (NO_TANGENT,) * (len(args) - len(out))

        return y, closure

    rrule.__name__ = f"{fn.__name__}_rrule"
    return rrule


def register(reg):
    pairs = (
        (calls.array_iadd, calls.array_iadd_pullback),
        (calls.array_fill, calls.array_fill_pullback),
        (calls.array_fill_copy, calls.array_fill_pullback),
        (calls.array_add_at, calls.array_add_at_pullback),
        (calls.array_add_at_copy, calls.array_add_at_pullback),
        (calls.cycled, calls.cycled_pullback),
        (calls.array_sort, calls.array_sort_pullback),
        (calls.array_copyto, calls.array_copyto_pullback),
        (calls.array_copyto_copy, calls.array_copyto_pullback),
        (calls.take_flat, calls.take_flat_pullback),
        (calls.take_broadcast, calls.take_broadcast_pullback),
        (arrays_ufunc_at.array_ufunc_at_copy, arrays_ufunc_at.array_ufunc_at_pullback),
    )
    for fn, pullback_fn in pairs:
        reg.register(fn, _rule_from(fn, pullback_fn), family=FAMILY, trusted=True)
        reg.set_pullback_function(fn, pullback_fn)
    reg.non_differentiable(
        calls.put_index,
        calls.copyto_checked,
        calls.flat_index,
        calls.diagonal_index,
        calls.mask_index,
        calls.where_index,
        calls.putmask_positions,
        calls.along_axis_index,
        arrays_ufunc_at.at_plan,
        family=FAMILY,
        trusted=True,
    )
