"""A reverse loop's own gradient buffer for its reads ``x[i]`` by its counter (issue 13).

A reverse loop ``for i in reversed(_range1):`` that reads ``x[i]`` once a step used to
append each cotangent to a list, turned after the loop into an array and a node of the
read chain, which ``fold_reads`` then added into a fresh zero array: three allocations and
two passes over the values, the fixed cost that dominated short loops (N = 10). Here the
loop owns the buffer: before the loop :func:`own_reads` makes one zero array of ``x``'s
cotangent dtype, and each step stores its cotangent into it::

    _lreads_x, _lreal_x = _own_reads(_range1, x)
    for i in reversed(_range1):
        ...
        if type(d__t5) in _lreal_x:
            _lreads_x[i] = d__t5
        else:
            _reads_x = (i, d__t5, _reads_x)
    _reads_x = _owned_node(_range1, _lreads_x, _reads_x)

After the loop :func:`owned_node` pushes the buffer as the node the list would have become
(``(slice, view of the buffer by the slice, rest)``).

Why the values are exactly the old ones: the old node was ``(slice, weights)`` with
``weights = np.array(values, dtype)``, the slice ascending over the range's positions; the
buffer's view by that slice holds the same numbers, bit for bit (each slot is stored once:
the positions of a range with no negative one are distinct, where a negative start could
reach one element twice, as ``x[-1]`` and ``x[n - 1]``; and a store casts a real scalar to
the buffer's dtype as ``np.array(values, dtype)`` does), so every fold of the node sums
what it summed.

Where the sweep folds the chain right after the loop (mse_loop's return),
:func:`fold_owned_reads` does both in one call, and the loop stores ``d__t5 or 0.0``:
``0.0 + w`` for every ``w`` (a zero, ``-0.0`` included, is the ``+0.0`` that sum gives),
so when the loop's reads were all there was to fold into a zero adjoint, the buffer
itself is the fold, exactly (the old one added the weights into a fresh zero array).
Otherwise that call folds the node as above; the one difference then: a ``-0.0``
cotangent stored as ``+0.0`` added to a slot that holds ``-0.0`` gives ``+0.0`` (was
``-0.0``), the sign of a zero.

A cotangent that is not a real scalar (a zero object, an array of stacked cotangents, a
complex number) goes onto the chain as before, where ``fold_reads`` handles it, its slot
in the buffer left ``0.0`` (the same sum: adding ``+0.0`` changes only the sign of a
zero); so does every cotangent when the buffer does not apply (``x`` not a 1-D float
array, stacked cotangents running, a negative position), the set of types being empty.
"""

from __future__ import annotations

import numpy as np

from .read_folds import fold_reads
from .tangents import _ndarray, batch_axes
from .zero import NO_TANGENT, ZERO

_F64 = np.dtype(np.float64)
_zeros = np.zeros
# The cotangents a buffer stores: real scalars that NumPy converts exactly as
# np.array(values, dtype) converts them (what loop_reads made of them).
_REAL_SCALARS = frozenset({float, np.float64, np.float32})
_NOTHING = frozenset()
_NO_BUFFER = (None, _NOTHING)


def own_reads(steps, x):
    """``(buffer, types)`` before a reverse loop over ``steps`` that reads ``x[i]`` once a
    step: a zero array for the cotangents and the types it stores, or ``(None, frozenset())``
    when it does not apply (every read then goes onto the chain)."""
    if (
        type(steps) is not range
        or type(x) is not _ndarray
        or x.ndim != 1
        or batch_axes.axes
        or not steps
        or (steps.start if steps.step > 0 else steps[-1]) < 0
    ):
        return _NO_BUFFER
    dtype = x.dtype
    if dtype is _F64:
        return _zeros(len(x)), _REAL_SCALARS
    if dtype.kind != "f":
        return _NO_BUFFER
    return _zeros(len(x), dtype), _REAL_SCALARS


def owned_node(steps, buffer, chain):
    """The chain after the loop: ``chain`` with the node of the buffer's positions pushed
    (the slice ascending, as loop_reads made it), or ``chain`` itself without a buffer."""
    if buffer is None:
        return chain
    step = steps.step
    if step > 0:
        low, high = steps.start, steps[-1]
    else:
        low, high, step = steps[-1], steps.start, -step
    return slice(low, high + 1, step), buffer[low : high + 1 : step], chain


def fold_owned_reads(acc, x, chain, steps, buffer):
    """``fold_reads(acc, x, owned_node(steps, buffer, chain))`` in one call, for a sweep
    that folds the chain as soon as the loop ends (its loop stores ``cotangent or 0.0``):
    the buffer itself when the loop's reads were all stored and ``acc`` is zero."""
    # (a buffer means no stacked cotangents ran as the loop began: none run in its sweep)
    if buffer is not None and chain is None and (acc is ZERO or acc is NO_TANGENT):
        return buffer
    return fold_reads(acc, x, owned_node(steps, buffer, chain))
