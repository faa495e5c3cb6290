"""Transformable pullbacks of the assembling and splitting rules (numpy_assemble.py):
written in the differentiable subset, so that second derivatives run through them (see
transformable.py).

Each is linear in the cotangent: it cuts the cotangent of a joined array into the pieces
the inputs gave (or joins the cotangents of the pieces a split made), and reshapes each
piece to its input's shape (the promotion to 1-, 2- or 3-d only added axes of length 1).
"""

from __future__ import annotations

import math

import numpy as np

from ..list_operands import dense_operand
from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO, batch_axes, densify, unbroadcast
from ._util import choice_picks, position_labels
from .transformable import set_pullbacks


@transformable
def _like_nested(g, obj):
    """The cotangent of ``obj`` (an array, a scalar or a list/tuple of them, nested) that
    NumPy turned into the array whose cotangent is ``g``."""
    if isinstance(obj, (list, tuple)):
        # one list built in place (a tuple grown by `+` was quadratic in the length)
        return tuple([_like_nested(g[k], obj[k]) for k in range(len(obj))])
    return unbroadcast(g, obj)


@transformable
def _array_like(dy, obj):
    g = densify(dy)
    # ndmin (and ascontiguousarray of a scalar) added leading axes of length 1
    extra = np.ndim(g) - _nested_ndim(obj)
    if extra > 0:
        g = np.reshape(g, np.shape(g)[extra:])
    return _like_nested(g, obj)


@transformable
def _nested_ndim(obj):
    if isinstance(obj, (list, tuple)):
        if len(obj) == 0:
            return 1
        return 1 + _nested_ndim(obj[0])
    return np.ndim(obj)


@transformable
def array_pullback(dy, obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, like=None):
    return _array_like(dy, obj), NO_TANGENT


@transformable
def asarray_pullback(dy, a, dtype=None, order=None, device=None, copy=None, like=None):
    return _array_like(dy, a), NO_TANGENT


@transformable
def contiguous_pullback(dy, a, dtype=None, like=None):
    return _array_like(dy, a), NO_TANGENT


@transformable
def copy_pullback(dy, a, order="K", subok=False):
    return _array_like(dy, a), NO_TANGENT


@transformable
def _cut(dy, arrays, axis, widths):
    """``dy`` cut along ``axis`` into pieces of ``widths``, each in its array's shape."""
    g = densify(dy)
    lead = (slice(None),) * axis
    parts = ()
    start = 0
    for k in range(len(arrays)):
        stop = start + widths[k]
        piece = g[lead + (slice(start, stop),)]
        parts = parts + (unbroadcast(np.reshape(piece, np.shape(arrays[k])), arrays[k]),)
        start = stop
    return parts


@transformable
def hstack_pullback(dy, tup, dtype=None, casting="same_kind"):
    if np.ndim(dy) == 1:  # items of at most one axis, joined end to end
        widths = [math.prod(np.shape(a)) for a in tup]
        return _cut(dy, tup, 0, widths), NO_TANGENT
    return _cut(dy, tup, 1, [np.shape(a)[1] for a in tup]), NO_TANGENT


@transformable
def vstack_pullback(dy, tup, dtype=None, casting="same_kind"):
    widths = [1 if np.ndim(a) < 2 else np.shape(a)[0] for a in tup]
    return _cut(dy, tup, 0, widths), NO_TANGENT


@transformable
def dstack_pullback(dy, tup):
    widths = [1 if np.ndim(a) < 3 else np.shape(a)[2] for a in tup]
    return (_cut(dy, tup, 2, widths),)


@transformable
def column_stack_pullback(dy, tup):
    widths = [1 if np.ndim(a) < 2 else np.shape(a)[1] for a in tup]
    return (_cut(dy, tup, 1, widths),)


@transformable
def append_pullback(dy, arr, values, axis=None):
    if axis is None:
        g = np.ravel(densify(dy))
        widths = [math.prod(np.shape(arr)), math.prod(np.shape(values))]
        parts = _cut(g, (arr, values), 0, widths)
    else:
        ax = axis % np.ndim(dy)
        parts = _cut(dy, (arr, values), ax, [np.shape(arr)[ax], np.shape(values)[ax]])
    return parts[0], parts[1], NO_TANGENT


@transformable
def _joined(dy, ary, sections, axis, stack):
    """The cotangent of ``ary`` from the cotangents ``dy`` of its pieces (``ZERO`` for a
    piece no gradient reached): concatenated along ``axis`` (stacked when ``stack``)."""
    pieces = ()
    for k in range(len(dy)):
        p = dy[k]
        if p is ZERO:
            shape = np.shape(ary)
            ax = axis % len(shape)
            if stack:
                p = np.zeros(shape[:ax] + shape[ax + 1 :], np.result_type(dense_operand(ary), 1.0))
            else:
                p = _piece_zeros(ary, sections, axis, k, len(dy))
        pieces = pieces + (densify(p),)
    if stack:
        return unbroadcast(np.stack(pieces, axis), ary)
    return unbroadcast(np.concatenate(pieces, axis), ary)


@transformable
def _piece_zeros(ary, sections, axis, k, n):
    """Zeros in the shape of piece ``k`` of the ``n`` that splitting ``ary`` at
    ``sections`` made (a piece no gradient reached)."""
    shape = np.shape(ary)
    ax = axis % len(shape)
    size = shape[ax]
    if isinstance(sections, int):
        base, more = size // n, size % n  # array_split: the first ``more`` are longer
        width = base + 1 if k < more else base
    else:
        bounds = [0] + list(sections) + [size]
        width = max(min(bounds[k + 1], size) - min(bounds[k], size), 0)
    dtype = np.result_type(dense_operand(ary), 1.0)  # (a list: what np.split makes of it)
    return np.zeros(shape[:ax] + (width,) + shape[ax + 1 :], dtype)


@transformable
def split_pullback(dy, ary, indices_or_sections, axis=0):
    return _joined(dy, ary, indices_or_sections, axis, False), NO_TANGENT, NO_TANGENT


@transformable
def hsplit_pullback(dy, ary, indices_or_sections):
    return _joined(dy, ary, indices_or_sections, 0 if np.ndim(ary) == 1 else 1, False), NO_TANGENT


@transformable
def vsplit_pullback(dy, ary, indices_or_sections):
    return _joined(dy, ary, indices_or_sections, 0, False), NO_TANGENT


@transformable
def dsplit_pullback(dy, ary, indices_or_sections):
    return _joined(dy, ary, indices_or_sections, 2, False), NO_TANGENT


@transformable
def unstack_pullback(dy, x, axis=0):
    return (_joined(dy, x, None, axis, True),)


@transformable
def select_pullback(dy, condlist, choicelist, default=0):
    # each place takes the first choice whose condition holds there, else the default
    g = densify(dy)
    taken = np.zeros(np.shape(g), bool)
    parts = ()
    for k in range(len(choicelist)):
        pick = np.logical_and(np.broadcast_to(condlist[k], np.shape(g)), np.logical_not(taken))
        parts = parts + (unbroadcast(np.where(pick, g, 0.0), choicelist[k]),)
        taken = np.logical_or(taken, pick)
    return NO_TANGENT, parts, unbroadcast(np.where(taken, 0.0, g), default)


@transformable
def choose_pullback(dy, a, choices, *rest, mode="raise"):
    # each place takes the choice its index names (wrapped or clipped as mode says);
    # rest is (out, mode) given by position
    if len(rest) > 1:
        mode = rest[1]
    g = densify(dy)
    picks = np.broadcast_to(choice_picks(a, len(choices), mode), np.shape(g))
    parts = ()
    for k in range(len(choices)):
        parts = parts + (unbroadcast(np.where(picks == k, g, 0.0), choices[k]),)
    return (NO_TANGENT, parts) + (NO_TANGENT,) * len(rest)


@transformable
def gather_labelled(dy, keys, n):
    """``flat[k]``: the sum of the elements of ``dy`` whose position label (see
    ``_util.position_labels``) is ``k``, for ``k < n``: the cotangents of the labelled
    inputs of a function that only moves and copies elements, one after the other."""
    g = np.ravel(densify(dy))
    if np.iscomplexobj(g):
        return np.bincount(keys, np.real(g), n) + 1j * np.bincount(keys, np.imag(g), n)
    return np.bincount(keys, g, n)


@transformable
def labelled_part(flat, start, x):
    """The cotangent of the input ``x`` labelled from ``start`` (real when ``x`` is)."""
    g = np.reshape(flat[start : start + math.prod(np.shape(x))], np.shape(x))
    if not np.iscomplexobj(x):
        g = np.real(g)
    return g


def insert_labels(arr, obj, values, axis):
    """Where ``np.insert`` puts each element of ``arr`` (labels from 1) and of the
    broadcast ``values`` (after them): the labels of the result, flat, and their count."""
    n = math.prod(np.shape(arr))
    ids = np.insert(position_labels(np.asarray(arr), 1), obj, position_labels(values, 1 + n), axis)
    keys = np.ravel(np.rint(np.imag(ids)).astype(np.intp))
    return keys, 2 + n + math.prod(np.shape(values))


# Integer bookkeeping: transformed code (a second derivative) calls it as it is.
insert_labels.__pullback_opaque__ = True


@transformable
def insert_pullback(dy, arr, obj, values, axis=None):
    keys, n = insert_labels(arr, obj, values, axis)
    flat = gather_labelled(dy, keys, n)
    start = 1 + math.prod(np.shape(arr))
    return labelled_part(flat, 1, arr), NO_TANGENT, labelled_part(flat, start, values), NO_TANGENT


def block_labels(arrays):
    """Where ``np.block`` puts each element of its (nested) blocks: the labels of the
    result, flat, their count, and each block's first label (nested like ``arrays``)."""
    count = [1]

    def label(x):
        if type(x) is list:  # np.block nests lists only (a tuple is a block's value)
            pairs = [label(v) for v in x]
            return [p[0] for p in pairs], [p[1] for p in pairs]
        start = count[0]
        count[0] += math.prod(np.shape(x))
        return position_labels(np.asarray(x), start), start

    labels, starts = label(arrays)
    ids = np.block(labels)
    keys = np.ravel(np.rint(np.imag(ids)).astype(np.intp))
    return keys, count[0] + 1, starts


# Integer bookkeeping: declared non-differentiable in register (its nested helper is
# no code pullback transforms).


@transformable
def _block_parts(flat, arrays, starts):
    """The cotangent of each block (nested like ``arrays``) from the labelled sums."""
    if type(arrays) is list:
        return [_block_parts(flat, arrays[k], starts[k]) for k in range(len(arrays))]
    return unbroadcast(labelled_part(flat, starts, arrays), arrays)


@transformable
def block_pullback(dy, arrays):
    keys, n, starts = block_labels(arrays)
    return (_block_parts(gather_labelled(dy, keys, n), arrays, starts),)


def register(reg):
    set_pullbacks(
        reg,
        [
            (np.array, array_pullback),
            (np.asarray, asarray_pullback),
            (np.asanyarray, asarray_pullback),
            (np.ascontiguousarray, contiguous_pullback),
            (np.asfortranarray, contiguous_pullback),
            (np.copy, copy_pullback),
            (np.hstack, hstack_pullback),
            (np.vstack, vstack_pullback),
            (getattr(np, "row_stack", None), vstack_pullback),
            (np.dstack, dstack_pullback),
            (np.column_stack, column_stack_pullback),
            (np.append, append_pullback),
            (np.split, split_pullback),
            (np.array_split, split_pullback),
            (np.hsplit, hsplit_pullback),
            (np.vsplit, vsplit_pullback),
            (np.dsplit, dsplit_pullback),
            (getattr(np, "unstack", None), unstack_pullback),
            (np.select, select_pullback),
            (np.choose, choose_pullback),
            (np.ndarray.choose, choose_pullback),
            (np.insert, insert_pullback),
            (np.block, block_pullback),
        ],
    )
    reg.non_differentiable(block_labels, choice_picks, family="numpy_assemble", trusted=True)


# -- the sweeps' form of array_pullback (transform/ownership.py) -----------------------
_PYTHON_ITEM_TYPES = frozenset({float, int})
_FLAT_ITEM_TYPES = frozenset({float, int, np.float64})
_F64 = np.dtype(np.float64)


def array_pullback_sweep(dy, obj, *rest, **options):
    """``array_pullback(dy, obj, ...)`` (of ``np.array(obj)``) as the sweeps call it: for a
    flat list of real scalars (``np.array(lst)`` after a loop filled ``lst``) the items'
    cotangents are the entries of ``dy`` as they are, taken in one pass instead of one
    call per item; anything else goes to ``array_pullback``."""
    if (
        type(obj) is list
        and type(dy) is np.ndarray
        and dy.ndim == 1
        and dy.dtype.kind == "f"
        and dy.shape[0] == len(obj)
        and not rest
        and not options
        and not batch_axes.axes
    ):
        types = set(map(type, obj))
        # a NumPy float64 item takes its cotangent as float64 (unbroadcast casts to it)
        if types <= _PYTHON_ITEM_TYPES or (types <= _FLAT_ITEM_TYPES and dy.dtype == _F64):
            return tuple(dy), NO_TANGENT
    return array_pullback(dy, obj, *rest, **options)
