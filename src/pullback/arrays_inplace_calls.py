"""In-place array methods and functions on arrays the function created itself (issue 11).

The normalizer (:mod:`pullback.transform.inplace_calls`) rewrites each in-place call into
a functional store whose result rebinds the array's name, reusing ``array_set`` (in place
when no pullback needs an earlier state of the array, a copy otherwise)::

    a.fill(v)                    ->  a = array_fill(a, v)
    np.copyto(a, s)              ->  a = array_fill(a, s)
    np.copyto(a, s, where=m)     ->  a = array_copyto(a, s, m)   (also for casting=)
    np.copyto(a[k], s)           ->  copyto_checked(a, k, s); a = array_set(a, k, s)
    np.place(a, m, v)            ->  i = mask_index(a, m); w = cycled(v, i); a = array_set(a, i, w)
    np.putmask(a, m, v)          ->  i = mask_index(a, m); k = putmask_positions(a, m, v);
                                     w = take_flat(v, k); a = array_set(a, i, w)
    np.put_along_axis(a, j, v, axis) -> i = along_axis_index(a, j, axis); a = array_set(a, i, v)
    r = np.multiply(x, y, out=a) ->  t = np.multiply(x, y); a = array_fill(a, t); r = a
    np.add(x, y, out=a, where=m) ->  i = where_index(a, m); s = take_broadcast(x, a, i);
                                     u = take_broadcast(y, a, i); t = np.add(s, u);
                                     a = array_set(a, i, t)   (the ufunc runs where m holds)
    np.put(a, ind, v)            ->  i = put_index(a, ind); w = cycled(v, i); a = array_set(a, i, w)
    a.flat[key] = v              ->  i = flat_index(a, key); w = cycled(v, i); (as np.put)
    np.fill_diagonal(a, v)       ->  i = diagonal_index(a); w = cycled(v, i); a = array_set(a, i, w)
    np.add.at(a, idx, v)         ->  a = array_add_at(a, idx, v)
    a.sort(axis)                 ->  a = array_sort(a, axis)
    a += v  (a written in place) ->  a = array_iadd(a, v)

This module holds the helpers that ``array_set`` does not cover, and their pullbacks: each
is a transformable function (second order) whose transpose gives forward mode; the rules
are in :mod:`pullback.rules.inplace_calls`.

>>> a = np.zeros(3)
>>> array_add_at(a, [0, 0, 2], 1.0) is a, a
(True, array([2., 0., 1.]))
>>> put_index(np.zeros((2, 2)), [3, -4])
(array([1, 0]), array([1, 0]))
>>> cycled(np.array([1.0, 2.0]), (np.arange(3),))
array([1., 2., 1.])
"""

from __future__ import annotations

import math

import numpy as np

from .errors import UnsupportedCallError
from .registry import transformable
from .tangents import NO_TANGENT, ZERO, densify, unbroadcast


def _only_arrays(a, what):
    if not isinstance(a, np.ndarray):
        raise UnsupportedCallError(
            f"{what} on a {type(a).__name__}: pullback differentiates this in-place call only "
            "on NumPy arrays the function created (issue 11). Fix: use a NumPy array "
            "(`np.asarray(...)`), or a function that returns a new value."
        )


# -- a.fill, np.copyto, out=: every entry overwritten ----------------------------------------
def array_fill(a, value):
    """``a[...] = value`` in place (``value`` broadcast), returning ``a``."""
    _only_arrays(a, "an in-place fill, copyto or out=")
    a[...] = value
    return a


def array_fill_copy(a, value):
    """A new array shaped and typed as ``a``, filled with ``value`` (``a`` is left as it was)."""
    _only_arrays(a, "an in-place fill, copyto or out=")
    out = np.empty_like(a)
    out[...] = value
    return out


@transformable
def array_fill_pullback(dy, a, value):
    # Every entry is overwritten: no earlier value of a reaches the result (a symbolic
    # zero, nothing allocated), and the value gets the cotangent, summed where broadcast.
    g = densify(dy)
    if np.shape(g) != np.shape(value):
        g = unbroadcast(g, value)
    return ZERO, g


# -- np.copyto(a, src, casting=, where=mask): the masked entries overwritten -----------------
def copyto_checked(a, index, src):
    """``np.copyto(a[index], src)``, written as ``a[index] = src``: NumPy's own checks of
    the call first (``same_kind`` casting, broadcasting, a number rather than a view as
    the destination), on a scratch copy of the part, so an error is the primal's."""
    part = a[index]
    np.copyto(np.empty_like(part) if type(part) is np.ndarray else part, src)


def array_copyto(a, src, where=True, casting="same_kind"):
    """``np.copyto(a, src, casting=casting, where=where)`` in place, returning ``a``."""
    _only_arrays(a, "np.copyto")
    np.copyto(a, src, casting=casting, where=where)
    return a


def array_copyto_copy(a, src, where=True, casting="same_kind"):
    """A new array: ``a`` after :func:`array_copyto` (``a`` is left as it was)."""
    _only_arrays(a, "np.copyto")
    out = np.array(a, copy=True)
    np.copyto(out, src, casting=casting, where=where)
    return out


@transformable
def array_copyto_pullback(dy, a, src, where=True, casting="same_kind"):
    # Entries where the mask holds took src's value (summed where src was broadcast); the
    # others kept a's. The mask broadcasts to a's shape, as np.copyto broadcasts it.
    g = densify(dy)
    mask = np.broadcast_to(where, np.shape(a))
    da = np.where(mask, 0.0, g).astype(g.dtype, copy=False)
    ds = np.where(mask, g, 0.0).astype(g.dtype, copy=False)
    if np.shape(ds) != np.shape(src):
        ds = unbroadcast(ds, src)
    return da, ds, NO_TANGENT, NO_TANGENT


# -- a += v on an array written in place -----------------------------------------------------
def array_iadd(a, value):
    """``a += value`` in place on an array (NumPy's casting and broadcasting rules: the
    array keeps its shape and dtype), returning ``a``; a number is added as usual."""
    if not isinstance(a, np.ndarray):
        return a + value
    a += value
    return a


@transformable
def array_iadd_pullback(dy, a, value):
    g = densify(dy)
    dv = g
    if np.shape(dv) != np.shape(value):
        dv = unbroadcast(dv, value)
    return g, dv


# -- np.add.at (unbuffered: every repeat of an index adds) ------------------------------------
def array_add_at(a, index, value):
    """``np.add.at(a, index, value)`` in place, returning ``a``."""
    _only_arrays(a, "np.add.at")
    np.add.at(a, index, value)
    return a


def array_add_at_copy(a, index, value):
    """A new array: ``a`` after ``np.add.at(a, index, value)`` (``a`` is left as it was)."""
    _only_arrays(a, "np.add.at")
    out = np.array(a, copy=True)
    np.add.at(out, index, value)
    return out


@transformable
def array_add_at_pullback(dy, a, index, value):
    # Every entry of a passes through; each write of value reads the cotangent of the entry
    # it lands on (a gather: repeats each get the whole cotangent, as each added).
    g = densify(dy)
    dv = g[index]
    if np.shape(dv) != np.shape(value):
        dv = unbroadcast(dv, value)  # the value was broadcast over the selected entries
    return g, NO_TANGENT, dv


# -- np.put, np.fill_diagonal: positions and the values written there -------------------------
def put_index(a, ind, mode="raise"):
    """The index tuple (one integer array per axis) of the flat positions ``ind`` of ``a``
    that ``np.put(a, ind, v, mode)`` writes, in the order it writes them."""
    shape = np.shape(a)
    size = math.prod(shape)
    flat = np.asarray(ind).astype(np.intp, copy=False).reshape(-1)
    if mode == "raise":
        bad = (flat >= size) | (flat < -size)
        if np.any(bad):
            raise IndexError(
                f"index {int(flat[bad][0])} is out of bounds for np.put into an array of size "
                f"{size}"
            )
        flat = flat % max(size, 1)
    elif mode == "wrap":
        flat = flat % max(size, 1)
    elif mode == "clip":
        flat = np.clip(flat, 0, max(size - 1, 0))
    else:
        raise ValueError(f"np.put: mode must be 'raise', 'wrap' or 'clip', not {mode!r}")
    return np.unravel_index(flat, shape)


def flat_index(a, key):
    """The index tuple of the entries ``a.flat[key] = v`` writes, in order: the flat
    positions ``np.arange(a.size)[key]`` (an int, a slice, a list or a 1-d mask), as
    ``np.put`` writes them (which NumPy documents as ``a.flat[ind] = v``)."""
    return put_index(a, np.arange(math.prod(np.shape(a)))[key])


def diagonal_index(a, wrap=False):
    """The index tuple of the entries ``np.fill_diagonal(a, v, wrap)`` writes, in order."""
    shape = np.shape(a)
    if len(shape) < 2:
        raise ValueError("np.fill_diagonal: the array must be at least 2-d")
    size = math.prod(shape)
    if len(shape) == 2:
        step = shape[1] + 1
        end = size if wrap else min(size, shape[1] * shape[1])
    else:
        if len(set(shape)) != 1:
            raise ValueError("np.fill_diagonal: all dimensions of the array must be equal")
        step = 1 + int(np.sum(np.cumprod(shape[:-1])))
        end = size
    return np.unravel_index(np.arange(0, end, step, dtype=np.intp), shape)


def mask_index(a, mask):
    """The index tuple of the entries ``np.place`` / ``np.putmask`` write: where ``mask``
    (of ``a``'s size, read in a's flat order) holds, in order."""
    m = np.asarray(mask).astype(bool, copy=False)
    if m.size != np.size(a):
        raise ValueError(
            f"np.place/np.putmask: the mask has {m.size} entries but the array has "
            f"{np.size(a)}; they must be the same size"
        )
    return np.unravel_index(np.flatnonzero(m), np.shape(a))


def putmask_positions(a, mask, value):
    """The flat positions in ``value`` that ``np.putmask(a, mask, value)`` writes: entry
    ``n`` of ``a`` (flat) gets ``value.flat[n % value.size]``."""
    flat = np.flatnonzero(np.asarray(mask).astype(bool, copy=False))
    size = max(np.size(value), 1)
    if np.size(value) == 0 and flat.size:
        raise UnsupportedCallError(
            "np.putmask with an empty value writes nothing, which pullback does not model. "
            "Fix: skip the call when the value is empty."
        )
    return flat % size


def along_axis_index(a, indices, axis):
    """The index tuple ``np.put_along_axis(a, indices, v, axis)`` writes through (one
    integer array per axis of ``a``, broadcast together); ``axis=None`` is ``np.put``."""
    shape = np.shape(a)
    ind = np.asarray(indices)
    if axis is None:
        if ind.ndim != 1:
            raise ValueError("np.put_along_axis with axis=None needs 1-d indices")
        return put_index(a, ind)
    if ind.ndim != len(shape):
        raise ValueError(
            "np.put_along_axis: indices must have as many dimensions as the array "
            f"({ind.ndim} != {len(shape)})"
        )
    axis = axis + len(shape) if axis < 0 else axis
    out = []
    for d, n in enumerate(shape):
        if d == axis:
            out.append(ind.astype(np.intp, copy=False))
        else:
            out.append(np.arange(n).reshape([-1 if k == d else 1 for k in range(len(shape))]))
    return tuple(out)


def take_flat(value, positions):
    """``np.ravel(value)[positions]``: the values ``np.putmask`` writes."""
    return np.ravel(value)[positions]


@transformable
def take_flat_pullback(dy, value, positions):
    # Each entry of value was read at every position that names it: the cotangents add up.
    g = np.ravel(densify(dy))
    dv = np.zeros(np.size(value), dtype=g.dtype)
    np.add.at(dv, positions, g)
    return np.reshape(dv, np.shape(value)), NO_TANGENT


def cycled(value, index):
    """The values ``np.put`` writes at the positions ``index``: ``value`` flattened and
    repeated (or cut) to one per position."""
    count = len(index[0])
    flat = np.ravel(value)
    if flat.size == 0 and count:
        raise UnsupportedCallError(
            "np.put/np.fill_diagonal with an empty value writes nothing, which pullback does "
            "not model. Fix: skip the call when the value is empty."
        )
    return np.resize(flat, count)


@transformable
def cycled_pullback(dy, value, index):
    # Each entry of value was written at the positions k, k + n, k + 2n, ...: their
    # cotangents add up (zero-padded to whole cycles).
    n = math.prod(np.shape(value))
    count = len(index[0])
    reps = -(-count // n)
    g = np.ravel(densify(dy))
    padded = np.concatenate([g, np.zeros(reps * n - count, dtype=g.dtype)])
    dv = np.sum(np.reshape(padded, (reps, n)), axis=0)
    return np.reshape(dv, np.shape(value)), NO_TANGENT


# -- a.sort(axis) --------------------------------------------------------------------------
def array_sort(a, axis=-1):
    """``a.sort(axis)`` as a new sorted array (the normalizer rebinds the name)."""
    _only_arrays(a, "sort()")
    return np.sort(a, axis=axis)


@transformable
def array_sort_pullback(dy, a, axis=-1):
    # The sorted entry k came from position perm[k]: the inverse permutation sends the
    # cotangent back (a stable argsort, so ties go the same way each time).
    perm = np.argsort(a, axis=axis, kind="stable")
    inverse = np.argsort(perm, axis=axis, kind="stable")
    return np.take_along_axis(densify(dy), inverse, axis=axis), NO_TANGENT


# -- ufunc(x, y, out=a, where=m): only the entries where m holds are computed and written -----
def where_index(a, where):
    """The index tuple of the entries of ``a`` that ``ufunc(..., out=a, where=where)``
    writes: where the mask, broadcast to ``a``'s shape, holds (each entry once)."""
    _only_arrays(a, "a ufunc with out= and where=")
    mask = np.broadcast_to(np.asarray(where).astype(bool, copy=False), np.shape(a))
    return np.nonzero(mask)


def take_broadcast(x, a, index):
    """The entries ``index`` (of :func:`where_index`) of ``x`` broadcast to ``a``'s shape:
    the ufunc's inputs at the entries it writes (it computes nothing elsewhere, so a
    ``np.log(x, out=a, where=x > 0)`` never meets log(0), in value or derivative)."""
    return np.broadcast_to(np.asarray(x), np.shape(a))[index]


@transformable
def take_broadcast_pullback(dy, x, a, index):
    # Each taken entry is one position of x broadcast to a's shape: scatter the cotangents
    # there (the positions are distinct), then sum over the broadcast axes.
    g = densify(dy)
    full = np.zeros(np.shape(a), dtype=np.result_type(g, np.float32))
    np.add.at(full, index, g)
    return unbroadcast(full, x), NO_TANGENT, NO_TANGENT
