"""Writes into arrays the differentiated function created itself (issue 11), and their rules.

The normalizer (:mod:`pullback.transform.mutation`) rewrites a store into a local array
as a call whose result rebinds the name, like ``list.append`` became ``list_append``::

    out[i] = v          ->   out = array_set(out, i, v)
    out[i] += v         ->   _t = out[i]; _u = _t + v; out = array_set(out, i, _u)

``a[idx] += v`` is exactly ``a[idx] = a[idx] + v`` (NumPy's buffered semantics: with a
repeated index the last write wins), and the rules below follow that: the value's
cotangent is taken only at the entries whose write lands last (:func:`write_winners`).

``array_set`` writes in place, as the primal does. Its pullback needs no value of the
array (only the index and the value's shape), so the reverse sweep never has to see an
earlier state of it; the normalizer picks ``array_set_copy`` (a new array per write)
instead when the function also uses the whole array, whose earlier states a pullback may
read, between writes. Reads of a written array go through :func:`array_fresh`, which
copies a view, so that a pullback holding the read never sees a later write.

>>> a = np.zeros(3)
>>> array_set(a, 1, 2.0) is a, a
(True, array([0., 2., 0.]))
>>> write_winners((3,), np.array([0, 2, 0]))
array([False,  True,  True])
"""

from __future__ import annotations

import numpy as np

from .band_stack import BandStack
from .diagonal_stack import DiagonalStack
from .errors import UnsupportedCallError
from .indexed_cotangent import _scatter_add
from .read_folds import fold_reads
from .registry import transformable
from .tangents import (
    NO_TANGENT,
    ZERO,
    _cotangent_dtype,
    batch_axes,
    densify,
    unbroadcast,
)

FAMILY = "arrays_inplace"
_ndarray = np.ndarray
_REAL_SCALARS = frozenset({float, int, np.float64, np.float32})


def _only_arrays(a):
    if not isinstance(a, np.ndarray):
        raise UnsupportedCallError(
            f"a subscript store into a {type(a).__name__}: pullback differentiates stores "
            "into NumPy arrays the function created (issue 11); stores into lists, dicts and "
            "other objects are not supported yet. Fix: build the container with a "
            "comprehension or `append`, or use a NumPy array (`np.zeros(n)`)."
        )


def array_set(a, index, value):
    """``a[index] = value`` in place, returning ``a`` (the normalizer rebinds the name)."""
    if type(a) is not _ndarray:  # the exact type first: this runs once per loop step
        _only_arrays(a)
    a[index] = value
    return a


def array_set_copy(a, index, value):
    """A new array: ``a`` with ``a[index] = value`` (``a`` itself is left as it was)."""
    _only_arrays(a)
    out = np.array(a, copy=True)
    out[index] = value
    return out


def array_add_set(a, index, value):
    """``a[index] += value`` in place, as the primal runs it (NumPy's buffered semantics:
    with a repeated index the last write wins), returning ``a``."""
    if type(a) is not _ndarray:
        _only_arrays(a)
    a[index] += value
    return a


def array_add_set_copy(a, index, value):
    """A new array: ``a`` after ``a[index] += value`` (``a`` itself is left as it was)."""
    _only_arrays(a)
    out = np.array(a, copy=True)
    out[index] += value
    return out


def array_sub_set(a, index, value):
    """``a[index] -= value`` in place, returning ``a`` (see :func:`array_add_set`)."""
    if type(a) is not _ndarray:
        _only_arrays(a)
    a[index] -= value
    return a


def array_sub_set_copy(a, index, value):
    """A new array: ``a`` after ``a[index] -= value``."""
    _only_arrays(a)
    out = np.array(a, copy=True)
    out[index] -= value
    return out


def array_fresh(y):
    """A read ``y = a[index]`` of a written array, as a copy when it is a view of ``a``
    (a later write into ``a`` must not change what earlier statements read)."""
    if type(y) is _ndarray or isinstance(y, np.ndarray):
        return y.copy() if y.base is not None else y
    return y


def array_named_read(y, a):
    """``name = a[index]`` of an array the function writes: ``y`` itself, refused when it
    is a view of ``a`` (a row of a matrix), which NumPy would change under a later write."""
    if isinstance(y, np.ndarray) and np.may_share_memory(y, a):
        raise UnsupportedCallError(
            "a view of an array the function writes: this read gives a view (a row or a "
            "block) of the array, and a later write into the array would change what the "
            "view shows, which pullback does not model. Fix: copy the read, "
            "e.g. `row = m[i].copy()`."
        )
    return y


def tuple_reads_first(a, index, written):
    """``p[0], p[-1] = p[-2], p[1]``: Python reads every value before the first store, but
    a value that is a view of ``p`` (a row, a column) shows the stores the statement made
    before its own. The transform reads each value first, which is what NumPy computes
    unless the view ``a[index]`` overlaps a part an earlier target ``a[w]`` (``w`` in
    ``written``) writes: refused then (``p[0], p[1] = p[1], p[0]`` does not swap rows)."""
    read = a[index]
    if not (type(read) is _ndarray and np.may_share_memory(read, a)):
        return None  # a number or a copy (an integer array index): read once, as written
    ids = np.arange(a.size).reshape(a.shape)
    seen = ids[index]
    for w in written:
        if np.intersect1d(ids[w], seen).size:
            raise UnsupportedCallError(
                "a tuple store whose value is a view of the array it writes, overlapping "
                "a part an earlier target writes: NumPy copies that view after the earlier "
                "store, so it shows the new values (`p[0], p[1] = p[1], p[0]` leaves both "
                "rows equal), which pullback does not model. Fix: write the stores one per "
                "line in the order NumPy runs them, or index with integer arrays to read "
                "first (`p[[0, 1]] = p[[1, 0]]` swaps the rows)."
            )
    return None


def _may_repeat(index) -> bool:
    """Whether ``index`` may select one entry twice (an integer array somewhere in it)."""
    parts = index if isinstance(index, tuple) else (index,)
    for part in parts:
        if isinstance(part, (list, np.ndarray)):
            if np.asarray(part).dtype.kind in "iu":
                return True
    return False


def write_winners(shape, index):
    """``None`` when ``index`` selects distinct entries of an array of ``shape``, else a
    boolean mask over ``a[index]``: True where that write is the one that lands (the last
    one to each entry, as NumPy assigns)."""
    if not _may_repeat(index):
        return None
    if type(index) is _ndarray and index.ndim == 1 and len(shape) == 1 and index.size <= 64:
        return _few_winners(shape[0], index)
    size = int(np.prod(np.broadcast_to(0, shape)[index].shape, dtype=np.intp))
    ids = np.arange(size, dtype=np.intp).reshape(np.broadcast_to(0, shape)[index].shape)
    owner = np.full(shape, -1, dtype=np.intp)
    owner[index] = ids
    return owner[index] == ids


def _few_winners(n, index):
    """:func:`write_winners` of a short integer array into a vector, by a set (cheaper
    than the scatter of ids below for the ``acc[idx] += v`` loop)."""
    positions = index.tolist()
    seen = set(positions)
    if len(seen) == len(positions) and min(positions, default=0) >= 0:
        return None  # distinct non-negative positions: every write lands
    seen = set()
    last = []
    for k in reversed(positions):
        k = k + n if k < 0 else k
        last.append(k not in seen)
        seen.add(k)
    if len(seen) == len(last):
        return None
    return np.array(last[::-1], dtype=bool)


def written_cotangent(g, shape, index):
    """The cotangent of the value written by ``a[index] = value`` from the cotangent ``g``
    of the array after the write: ``g[index]``, zero where a later repeat overwrote."""
    g = np.asarray(densify(g))
    sel = g[index]
    if type(sel) is not _ndarray:  # one entry (a NumPy scalar is a copy)
        return sel
    if sel.base is not None and np.may_share_memory(sel, g):
        # a view: the caller's cotangent may be a buffer the sweep later updates in place
        return sel.copy()
    t = type(index)
    if t is _ndarray and index.ndim == 1 and g.ndim == 1 and index.dtype.kind == "i":
        # acc[idx] += v: a gather (a copy), a repeated position taking the cotangent
        # at its last write only
        winners = (
            _few_winners(g.shape[0], index) if index.size <= 64 else write_winners(shape, index)
        )
        if winners is not None:
            sel[~winners] = 0
        return sel
    winners = write_winners(shape, index)
    if winners is None:
        return sel
    return np.where(winners, sel, np.zeros_like(sel))


@transformable
def array_set_pullback(dy, a, index, value):
    g = densify(dy)
    if type(g) is DiagonalStack or type(g) is BandStack:
        g = g.dense()  # a stack of cotangents (pullback.batched) written into: its array
    if type(index) is int and np.ndim(g) == 1 and np.ndim(value) == 0:
        # The scalar loop (out[i] = v): one entry, no repeat, no broadcast. Our own copy
        # of the cotangent, whose written entry goes to the value (a local write itself).
        g = g * 1.0
        dv = g[index]
        g[index] = 0.0
        return g, NO_TANGENT, dv
    dv = written_cotangent(g, np.shape(a), index)
    if np.shape(dv) != np.shape(value):
        dv = unbroadcast(dv, value)  # the value was broadcast into the entries
    return array_set_copy(g, index, 0.0), NO_TANGENT, dv


# -- cotangents the reverse sweep owns (see pullback.transform.ownership) ----------------
# The plain pullback above copies the whole cotangent at every write: O(n) per write, O(n^2)
# for a loop that fills an n-vector. Where the code generator has proved that the buffer an
# earlier call returned is reachable from no other live variable, it passes that buffer as
# ``owned``; a cotangent that IS that buffer (identity, never a guess) is updated in place.
def array_set_pullback_owned(dy, a, index, value, owned):
    """:func:`array_set_pullback` as ``(da, NO_TANGENT, dv, token)`` that zeroes the
    written entries of ``dy`` in place when ``dy is owned``, else of a fresh copy (with
    ``a``'s shape). ``da`` is never the caller's ``dy`` unless it was ``owned``, ``dv``
    never shares memory with it, and ``token`` is ``da`` (the buffer the sweep now owns),
    or None while stacked cotangents run (Hessians: the plain rule, nothing owned)."""
    if dy is owned and type(index) is int and dy is not None and type(value) in _REAL_SCALARS:
        if dy.ndim == 1:  # the scalar loop, in place (owned is None while batched)
            dv = dy[index]  # a NumPy scalar: a copy
            dy[index] = 0.0
            return dy, NO_TANGENT, dv, dy
    if batch_axes.axes:
        return (*array_set_pullback(dy, a, index, value), None)
    if dy is owned and dy is not None:
        g = dy
    else:
        g = np.array(densify(dy), copy=True)
        if g.dtype.kind not in "fc":
            g = g.astype(np.float64)
        shape = np.shape(a)
        if g.shape != shape:  # a cotangent always has its array's shape; made sure here
            g = np.array(np.broadcast_to(g, shape))
    if _is_basic(index):  # ints and slices: distinct entries, g[index] a view or a scalar
        dv = g[index]
        if type(dv) is _ndarray:
            view = dv
            dv = view.copy()  # it must not see the zeroing below
            if dv.shape != (value.shape if type(value) is _ndarray else np.shape(value)):
                dv = unbroadcast(dv, value)  # the value was broadcast into the entries
            view.fill(0)  # the written entries, through the view (no second indexing)
            return g, NO_TANGENT, dv, g
    elif type(index) is _ndarray and index.ndim == 1 and g.ndim == 1 and index.dtype.kind == "i":
        # acc[idx] += v: integer positions (a gather is a copy); a repeated position
        # passes the cotangent to its last write only, as NumPy assigns
        dv = g[index]
        winners = _few_winners(g.shape[0], index) if index.size <= 64 else None
        if winners is not None:
            dv[~winners] = 0.0
        elif index.size > 64:
            dv = written_cotangent(g, np.shape(a), index)
    else:
        dv = written_cotangent(g, np.shape(a), index)
        if isinstance(dv, np.ndarray) and np.may_share_memory(dv, g):
            dv = dv.copy()
    if np.shape(dv) != (value.shape if type(value) is _ndarray else np.shape(value)):
        dv = unbroadcast(dv, value)  # the value was broadcast into the entries
    g[index] = 0.0
    return g, NO_TANGENT, dv, g


def _is_basic(index) -> bool:
    """Whether ``index`` is an int, a slice or a tuple of them (never repeats an entry)."""
    t = type(index)
    if t is int or t is slice:
        return True
    if t is not tuple:
        return False
    for part in index:
        if type(part) is not int and type(part) is not slice:
            return False
    return True


def fold_reads_owned(acc, x, chain, owned):
    """``(fold_reads(acc, x, chain), owned')``: the recorded reads are added into ``acc``
    in place when ``acc is owned`` (then ``owned' is acc``); otherwise the plain
    ``fold_reads`` runs and ``owned'`` is None (its result is not claimed)."""
    if chain is None:
        return acc, owned
    if acc is not owned or owned is None:  # never owned while stacked cotangents run
        return fold_reads(acc, x, chain), None
    index, value, rest = chain
    if rest is None and type(index) is int and type(value) in _REAL_SCALARS:
        if acc.dtype is x.dtype:  # an owned buffer has the shape of its array, x's
            acc[index] += value  # one read of one entry: the recurrence's step
            return acc, acc
    if (
        type(x) is not _ndarray
        or acc.shape != x.shape
        or (acc.dtype is not x.dtype and acc.dtype != _cotangent_dtype(x))
    ):
        return fold_reads(acc, x, chain), None
    entries = []
    real = acc.dtype.kind != "c"
    node = chain
    while node is not None:
        index, value, node = node
        t = type(value)
        if t is _ndarray:  # the common case first: an array read's cotangent
            if real and value.dtype.kind == "c":
                return fold_reads(acc, x, chain), None  # nothing written yet
        elif value is ZERO or value is NO_TANGENT:
            continue
        elif t not in _REAL_SCALARS:
            value = densify(value)
            if real and np.iscomplexobj(value):
                return fold_reads(acc, x, chain), None  # nothing written yet
        entries.append((index, value))
    for index, value in reversed(entries):  # in the order the reads were recorded
        t = type(index)
        if t is int or t is slice or (t is tuple and _is_basic(index)):
            part = acc[index]
            if type(part) is _ndarray:  # a view: added into in place, one indexing
                _add(part, value, out=part)
            else:
                acc[index] = part + value
        else:
            _scatter_add(acc, index, value)  # np.add.at where an entry may repeat
    return acc, acc


@transformable
def array_add_set_pullback(dy, a, index, value):
    # a[index] += value: every entry's cotangent passes through unchanged (the old value
    # of a written entry is added into it), and the value's is what lands of the
    # written entries' (the last write of a repeated position, as NumPy assigns).
    g = densify(dy)
    return g, NO_TANGENT, updated_cotangent(g, a, index, value)


@transformable
def array_sub_set_pullback(dy, a, index, value):
    g = densify(dy)
    return g, NO_TANGENT, -updated_cotangent(g, a, index, value)


def updated_cotangent(g, a, index, value):
    """The cotangent of ``value`` in ``a[index] += value`` from the cotangent ``g`` of the
    array ``a`` (only its shape is read): :func:`written_cotangent` summed to the value's
    shape. Never shares memory with ``g``."""
    tv = type(value)
    if (
        type(g) is _ndarray
        and g.ndim == 1
        and type(index) is _ndarray
        and index.ndim == 1
        and index.dtype.kind == "i"
        and index.size <= 64
        and g.dtype.kind == "f"
        and (tv is float or tv is g.dtype.type)
    ):
        # acc[idx] += v, a real scalar into a few positions of a vector (one loop step):
        # the sum of the entries that land, one Python float each (NumPy's machinery
        # costs more than the four additions), in the array's dtype
        positions = index.tolist()
        item = g.item
        if len(set(positions)) == len(positions) and min(positions, default=0) >= 0:
            return g.dtype.type(sum(map(item, positions)))
        n = g.shape[0]
        seen = set()
        total = 0.0
        for k in reversed(positions):  # a repeated position: its last write lands
            k = k + n if k < 0 else k
            if k not in seen:
                seen.add(k)
                total += item(k)
        return g.dtype.type(total)
    dv = written_cotangent(g, np.shape(a), index)
    if type(dv) is _ndarray and (tv is float or tv is dv.dtype.type) and dv.dtype.kind == "f":
        return _add_reduce(dv, None)  # a real scalar added into several entries: their sum
    if np.shape(dv) != np.shape(value):
        dv = unbroadcast(dv, value)  # the value was broadcast into the entries
    return dv


_add_reduce = np.add.reduce
_add = np.add


@transformable
def array_fresh_pullback(dy, y):
    return (dy,)


# -- rules -------------------------------------------------------------------------------
def _setting_rrule(setter):
    """The rule of ``setter`` (``array_set`` or ``array_set_copy``): the same pullback."""

    def array_set_rrule(a, index, value):
        y = setter(a, index, value)

        def array_set_closure(dy):
            if dy is ZERO or dy is NO_TANGENT:
                return ZERO, NO_TANGENT, ZERO
            return array_set_pullback(dy, a, index, value)

        return y, array_set_closure

    return array_set_rrule


def _updating_rrule(updater, pullback):
    """The rule of ``a[index] op= value`` (``array_add_set``, ``array_sub_set`` and their
    copying forms): the pullback needs only the index and the shapes."""

    def array_update_rrule(a, index, value):
        y = updater(a, index, value)

        def array_update_closure(dy):
            if dy is ZERO or dy is NO_TANGENT:
                return ZERO, NO_TANGENT, ZERO
            return pullback(dy, a, index, value)  # only a's shape is read

        return y, array_update_closure

    return array_update_rrule


def _array_named_read_rrule(y, a):
    def array_named_read_closure(dy):
        return dy, NO_TANGENT

    return array_named_read(y, a), array_named_read_closure


@transformable
def array_named_read_pullback(dy, y, a):
    return dy, NO_TANGENT


def _array_fresh_rrule(y):
    def array_fresh_closure(dy):
        return (dy,)

    return array_fresh(y), array_fresh_closure


def written_scatter(dz, g, shape, index):
    """The transpose of :func:`written_cotangent`: zeros shaped like ``g`` with ``dz`` at
    the entries of ``index`` whose write lands (distinct, so assignment scatters)."""
    dense = densify(g)
    dz = densify(dz)
    back = np.zeros(np.shape(dense), dtype=np.result_type(dense, dz))
    back[index] = written_cotangent_transpose(dz, shape, index)
    return back


def selected_shape(shape, index):
    """The shape of ``a[index]`` for an array ``a`` of ``shape``."""
    return np.broadcast_to(0, shape)[index].shape


# The pullbacks of the cotangent helpers, transformable: written_cotangent and
# written_scatter are each other's transpose, so derivatives of any order through array
# writes close on these two functions.
@transformable
def written_cotangent_pullback(dz, g, shape, index):
    return written_scatter(dz, g, shape, index), NO_TANGENT, NO_TANGENT


@transformable
def written_scatter_pullback(dy, dz, g, shape, index):
    return written_cotangent(dy, shape, index), ZERO, NO_TANGENT, NO_TANGENT


@transformable
def updated_cotangent_pullback(dz, g, a, index, value):
    # The transpose of the sum over broadcast entries is the broadcast back; then the
    # winning entries are scattered. Nothing of a's or value's values is read.
    spread = np.broadcast_to(dz, selected_shape(np.shape(a), index))
    return written_scatter(spread, g, np.shape(a), index), ZERO, NO_TANGENT, ZERO


def _linear_helper_rrule(fn, pullback, n):
    """The rule of a cotangent helper ``fn`` linear in its first argument, from its
    transformable pullback (``n`` arguments; a zero cotangent pulls back to zeros)."""

    def linear_helper_rrule(*args):
        y = fn(*args)

        def linear_helper_closure(dz):
            if dz is ZERO or dz is NO_TANGENT:
                return (ZERO,) + (NO_TANGENT,) * (n - 1)
            return pullback(dz, *args)

        return y, linear_helper_closure

    return linear_helper_rrule


def written_cotangent_transpose(dz, shape, index):
    winners = write_winners(shape, index)
    dz = np.asarray(densify(dz))
    return dz if winners is None else np.where(winners, dz, np.zeros_like(dz))


def register(reg):
    reg.register(array_set, _setting_rrule(array_set), family=FAMILY, trusted=True)
    reg.register(array_set_copy, _setting_rrule(array_set_copy), family=FAMILY, trusted=True)
    for updater, copier, pullback in (
        (array_add_set, array_add_set_copy, array_add_set_pullback),
        (array_sub_set, array_sub_set_copy, array_sub_set_pullback),
    ):
        for fn in (updater, copier):
            reg.register(fn, _updating_rrule(fn, pullback), family=FAMILY, trusted=True)
            reg.set_pullback_function(fn, pullback)
    reg.register(array_fresh, _array_fresh_rrule, family=FAMILY, trusted=True)
    reg.register(array_named_read, _array_named_read_rrule, family=FAMILY, trusted=True)
    reg.set_pullback_function(array_named_read, array_named_read_pullback)
    for fn, pullback, n in (
        (written_cotangent, written_cotangent_pullback, 3),
        (written_scatter, written_scatter_pullback, 4),
        (updated_cotangent, updated_cotangent_pullback, 4),
    ):
        rrule = _linear_helper_rrule(fn, pullback, n)
        reg.register(fn, rrule, family=FAMILY, trusted=True)
        reg.set_pullback_function(fn, pullback)
    reg.non_differentiable(selected_shape, family=FAMILY, trusted=True)
    reg.set_pullback_function(array_set, array_set_pullback)
    reg.set_pullback_function(array_set_copy, array_set_pullback)
    reg.set_pullback_function(array_fresh, array_fresh_pullback)
    reg.non_differentiable(write_winners, tuple_reads_first, family=FAMILY, trusted=True)
