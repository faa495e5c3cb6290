"""Folding the index reads a reverse sweep recorded: ``fold_reads(acc, x, chain)`` adds
the cotangents of the reads ``x[index]`` recorded in ``chain`` (a linked list of
``(index, cotangent, rest)`` triples, one small tuple per read) to ``acc`` in one dense
array, with fast paths for scalar reads of a vector, few reads, equal keys, bands and
stacks of cotangents (split from :mod:`pullback.tangents`, whose helpers it uses).

>>> import numpy as np
>>> x = np.zeros(3)
>>> fold_reads(ZERO, x, (0, 1.0, (2, 0.5, (0, 2.0, None)))).tolist()
[3.0, 0.0, 0.5]
"""

from __future__ import annotations

import warnings

import numpy as np

from .band_stack import as_band, scatter_sum
from .errors import UnsupportedCallError
from .indexed_cotangent import (
    _SCALAR_VALUE_TYPES,
    IndexedCotangent,
    _scatter_entries,
    lazy_scatter,
)
from .tangents import (
    _cotangent_dtype,
    _ndarray,
    add,
    batch_axes,
    densify,
    getitem_cotangent,
    unbroadcast,
)
from .zero import NO_TANGENT, ZERO, is_zero


def _refuse_item_cotangents(chain):
    """An object array (``np.array([a, b], dtype=object)``) holds the cotangents of its
    reads as numbers only: a read whose cotangent is an array or a record's (the tuple of
    its fields) is refused, naming the user's line where the sweep runs (a failed
    ``setting an array element with a sequence`` before)."""
    while chain is not None:
        _, v, chain = chain
        if not is_zero(v) and (np.ndim(v) > 0 or isinstance(v, (tuple, list, dict))):
            raise UnsupportedCallError(
                "pullback: an item of an object array (np.array(..., dtype=object)) that is "
                "an array or an object carrying a gradient cannot pass its gradient back: "
                "an object array holds numbers' gradients only.\n"
                "Fix: keep the items in a list or tuple (`items = [a, b]`, then `items[0]`), "
                "whose items carry their gradients."
            )


def fold_reads(acc, x, chain):
    """Add the cotangents of the reads ``x[index]`` recorded in ``chain`` to ``acc``.

    ``chain`` is ``None`` or a linked triple ``(index, cotangent, rest)`` that the reverse
    sweep builds with one tuple per read, so a loop reading ``x[i]`` n times costs n small
    tuples and one dense array.
    """
    if chain is None:
        return acc
    if batch_axes.axes:
        return _fold_reads_batched(acc, x, chain)
    if type(x) is tuple and chain[2] is None and acc is ZERO and type(chain[0]) is int:
        # One read of a tuple by an int, a float's cotangent: ``quad(...)[0]``, a solver's
        # value read from its result (what the general path gives, without its lists)
        value = chain[1]
        if type(value) is float or type(value) is np.float64:
            parts = [ZERO] * len(x)
            parts[chain[0]] = value
            return tuple(parts)
    if type(x) is _ndarray:
        out = None
        if x.ndim == 1 and ((d := x.dtype) is _F64 or d.kind == "f"):
            head = type(chain[0])
            if head is int:
                out = _few_scalar_reads(acc, x, chain)
            elif head is _ndarray and (acc is ZERO or acc is NO_TANGENT):
                out = _loop_node_reads(x, chain)
        if out is None:
            if x.dtype.kind == "O":
                _refuse_item_cotangents(chain)
            out = _few_view_reads(acc, x, chain)
        if out is not None:
            return out
    indices, values = _unzip(chain)
    if isinstance(x, _ndarray):
        lazy = lazy_scatter(
            None if is_zero(acc) else acc, x.shape, _cotangent_dtype(x), indices[::-1], values[::-1]
        )
        if lazy is not None:  # a Dask cotangent of a NumPy value: the buffer goes lazy
            return lazy
        if is_zero(acc):
            out = np.zeros(x.shape, dtype=_cotangent_dtype(x))
        else:
            out = np.array(unbroadcast(densify(acc), x), dtype=_cotangent_dtype(x), copy=True)
        if _scatter_scalars(out, indices, values):
            return out
        indices, values = _merge_equal_reads(indices, values)
        _scatter_entries(out, indices[::-1], values[::-1])
        return out
    if type(x) is tuple or type(x) is list:
        folded = _fold_sequence_reads(acc, x, indices, values)
        if folded is not None:
            return densify(folded)
    for index, value in zip(reversed(indices), reversed(values), strict=True):
        if not is_zero(value):
            acc = getitem_cotangent(acc, x, index, densify(value))
    return densify(acc)


def _unzip(chain):
    """``(indices, values)``: the reads of ``chain`` as two lists, the last pushed first."""
    indices = []
    values = []
    add_index = indices.append
    add_value = values.append
    while chain is not None:
        index, value, chain = chain
        add_index(index)
        add_value(value)
    return indices, values


def _fold_sequence_reads(acc, x, indices, values):
    """``fold_reads`` of a tuple or list read by integer indices and slices: the item
    cotangents filled into one list, so a loop over ``n`` items costs O(n) rather than a
    whole tuple per read (O(n^2)); None for any other index (the general path)."""
    n = len(x)
    parts = [ZERO] * n
    touched = False
    for index, value in zip(reversed(indices), reversed(values), strict=True):
        if is_zero(value):
            continue
        g = densify(value)
        if g is ZERO or g is NO_TANGENT:  # a structured zero, (ZERO, ZERO)
            continue
        if isinstance(index, (int, np.integer)):
            parts[index] = add(parts[index], g)
        elif isinstance(index, slice):
            for k, v in zip(range(*index.indices(n)), g, strict=True):
                parts[k] = add(parts[k], v)
        else:
            return None
        touched = True
    return add(acc, type(x)(parts)) if touched else acc


def _fold_reads_batched(acc, x, chain):
    """``fold_reads`` of stacked cotangents: each read's index applies after the batch
    axes. Only NumPy arrays read with basic or integer-array indices."""
    if type(x) is tuple or type(x) is list:  # one cotangent per item: nothing to batch
        while chain is not None:
            index, value, chain = chain
            if not is_zero(value):
                acc = getitem_cotangent(acc, x, index, densify(value))
        return acc
    if type(x) is not _ndarray:
        raise TypeError("batched reads need a NumPy array")
    if is_zero(acc) and x.ndim == 1 and len(batch_axes.axes) == 1:
        band = _fold_band_reads(x, chain)
        if band is not None:
            return band
    lead = (slice(None),) * len(batch_axes.axes)
    shape = batch_axes.axes + x.shape
    if is_zero(acc):
        out = np.zeros(shape, dtype=_cotangent_dtype(x))
    else:
        out = np.array(unbroadcast(densify(acc), x), dtype=_cotangent_dtype(x), copy=True)
    while chain is not None:
        index, value, chain = chain
        if is_zero(value):
            continue
        index = index if type(index) is tuple else (index,)
        if any(i is Ellipsis or i is None or isinstance(i, (list, _ndarray)) for i in index):
            raise TypeError("batched reads take ints and slices only")
        out[lead + index] += densify(value)
    return out


def _fold_band_reads(x, chain):
    """``fold_reads`` of band stacks read by slices of a vector: their sum as a band stack
    (see pullback.band_stack), or None for any other chain."""
    reads = []
    while chain is not None:
        index, value, chain = chain
        if is_zero(value):
            continue
        if type(index) is tuple and len(index) == 1:
            index = index[0]
        band = as_band(value) if type(index) is slice else None
        if band is None:
            return None
        reads.append((index, band))
    out = scatter_sum(reads, x.shape[0]) if reads else None
    if out is None:
        return None
    dtype = x.dtype if x.dtype.kind in "fc" else _cotangent_dtype(x)  # (a float's own)
    if out.dtype != dtype:
        return None
    return out


_F64 = np.dtype(np.float64)
_zeros = np.zeros

# Up to this many scalar reads are added one by one: cheaper than building the arrays
# np.bincount needs (a few microseconds whatever their number).
_FEW_READS = 24
_FEW_STEPS = range(_FEW_READS)


def _few_scalar_reads(acc, x, chain):
    """The reads of a 1-D float array when they are a few single elements by integer
    position with real scalar cotangents (``a[0] + a[1] + a[2]``): written in place one by
    one. ``None`` for anything else (having built nothing but, from a zero ``acc``, the
    array it then drops: checking each read as it is written walks the chain once)."""
    # Every index is in range: the primal read x[index] with it.
    if acc is ZERO or acc is NO_TANGENT:
        out = _zeros(x.shape[0]) if x.dtype is _F64 else _zeros(x.shape[0], x.dtype)
        for _ in _FEW_STEPS:  # no more than _FEW_READS reads (a counter costs more)
            index, value, chain = chain
            if type(index) is not int or type(value) not in _SCALAR_VALUE_TYPES:
                return None
            if value:  # a zero adds nothing (and +0.0 stays +0.0, as 0.0 + -0.0 is)
                if out[index]:
                    out[index] += value
                else:  # 0 + value is value: a store, not a read, an add and a store
                    out[index] = value
            if chain is None:
                return out
        return None
    node = chain
    count = 0
    while node is not None:
        index, value, node = node
        count += 1
        if count > _FEW_READS or type(index) is not int or type(value) not in _SCALAR_VALUE_TYPES:
            return None
    out = np.array(unbroadcast(densify(acc), x), dtype=x.dtype, copy=True)
    while chain is not None:
        index, value, chain = chain
        out[index] += value
    return out


def _few_view_reads(acc, x, chain):
    """The reads of a NumPy array by slices (``x[1:]``, ``x[:-1]``, ``x[i, :]``) with array
    cotangents, when they are few: each added in place through a view of the result (a
    slice read twice costs one in-place add more, as summing the two first would, and no
    temporary). ``None`` (having built nothing) for anything else (integer-array indices,
    masks, scalar reads, Dask values: the general path)."""
    node = chain
    count = 0
    while node is not None:
        index, value, node = node
        count += 1
        if count > _FEW_READS or type(value) is not _ndarray:
            return None
        t = type(index)
        if t is not slice and t is not int and _read_key(index) is None:
            return None
    dtype = x.dtype
    if acc is ZERO or acc is NO_TANGENT:
        out = _zeros(x.shape) if dtype is _F64 else _zeros(x.shape, _cotangent_dtype(x))
    elif type(acc) is not _ndarray:  # a chain, a Dask or sparse cotangent: the general path
        return None
    else:
        out = np.array(unbroadcast(densify(acc), x), dtype=_cotangent_dtype(x), copy=True)
    while chain is not None:
        index, value, chain = chain
        view = out[index]
        if type(view) is _ndarray:
            view += value  # in place: no copy back through __setitem__
        else:  # one element
            out[index] += value
    return out


def _read_key(index):
    """A hashable key equal for equal basic indices (ints, slices and tuples of them),
    or None for indices that are not compared (arrays, lists, masks)."""
    t = type(index)
    if t is int:
        return index
    if t is slice:
        return ("s", index.start, index.stop, index.step)
    if t is tuple:
        keys = tuple(map(_read_key, index))
        return None if None in keys else ("t", keys)
    return None


def _merge_equal_reads(indices, values):
    """Drop zero cotangents and densify chains; reads of one slice (or element) made
    several times are summed first, so each is scattered into the array once."""
    first: dict = {}
    out_indices: list = []
    out_values: list = []
    for index, value in zip(indices, values, strict=True):
        if value is ZERO or value is NO_TANGENT:
            continue
        if type(value) is IndexedCotangent:
            value = value.dense()
        key = _read_key(index) if type(value) is _ndarray else None
        k = first.get(key) if key is not None else None
        if k is None or out_values[k].shape != value.shape:
            if key is not None:
                first[key] = len(out_values)
            out_indices.append(index)
            out_values.append(value)
        else:
            out_values[k] = out_values[k] + value
    return out_indices, out_values


def _scatter_scalars(out, indices, values) -> bool:
    """The scalar-loop case in one vectorized pass: single elements of a 1-D float array
    read by integer position, with the nodes ``(positions, cotangents)`` of loop_reads
    among them. Returns False (touching nothing) for anything else."""
    if out.ndim != 1 or out.dtype.kind != "f":
        return False
    kinds = set(map(type, indices))
    if kinds == {int, _ndarray}:  # loop_reads' nodes and other reads (rosenbrock_loop)
        batches = [k for k, index in enumerate(indices) if type(index) is _ndarray]
        indices, values = list(indices), list(values)
        batches = [(indices.pop(k), values.pop(k)) for k in reversed(batches)]
        if not all(_is_positions_node(p, w) for p, w in batches):
            return False
    elif kinds == {int}:
        batches = ()
    else:
        return False
    return _bincount_into(out, indices, values, batches)


def _bincount_into(out, indices, values, batches) -> bool:
    """``out += `` the sums by position of the scalar reads (``indices`` ints, ``values``
    their cotangents) and of the nodes ``batches`` ``[(positions, cotangents)]``, in that
    order, with ``np.bincount``; False (touching nothing) when a value is no number."""
    try:
        weights = np.array(values, dtype=out.dtype)
    except (TypeError, ValueError):
        return False  # zeros, chains or arrays among the values
    n = len(indices)
    if weights.shape != (n,):
        return False
    # ints only (checked above): fromiter converts them three times faster than np.array,
    # which first finds their common type; the array's minimum is cheaper than min()'s
    where = np.fromiter(indices, dtype=_intp, count=n)
    if batches:
        where = np.concatenate([where] + [p for p, _ in batches])
        weights = np.concatenate([weights] + [w for _, w in batches])
    if where.min() < 0:
        where[where < 0] += out.shape[0]
    out += np.bincount(where, weights=weights, minlength=out.shape[0])
    return True


def _loop_node_reads(x, chain):
    """``fold_reads(ZERO, x, chain)`` of a 1-D float ``x`` when ``chain`` is a node
    ``(positions, cotangents)`` of :func:`loop_reads` on top of scalar reads by integer
    position with real cotangents (rosenbrock_loop's ``x[i]`` twice a step and ``x[i + 1]``):
    the very sums of the general path (:func:`_scatter_scalars`: the same arrays handed to
    the same ``np.bincount``, so the same order of additions), without its generic walks.
    ``None`` (having built nothing) for any other chain."""
    positions, weights, rest = chain
    if rest is None or not _is_positions_node(positions, weights):
        return None  # (a node alone takes the general path's other branch)
    indices, values = _unzip(rest)
    # the types looked at once walked (cheaper than two tests a read)
    if not _INTS.issuperset(map(type, indices)) or not _REAL_FLOATS.issuperset(
        map(type, values)
    ):
        return None
    out = _zeros(x.shape[0]) if x.dtype is _F64 else _zeros(x.shape[0], x.dtype)
    return out if _bincount_into(out, indices, values, [(positions, weights)]) else None


def _is_positions_node(positions, weights) -> bool:
    """Whether a read is a node ``(positions, cotangents)`` as loop_reads makes them: a
    vector of integer positions and one real cotangent for each."""
    return (
        positions.ndim == 1
        and positions.dtype.kind == "i"
        and type(weights) is _ndarray
        and weights.shape == positions.shape
        and weights.dtype.kind == "f"
    )


_intp = np.intp
_REAL_FLOATS = frozenset({float, np.float64, np.float32})
_INTS = frozenset({int})


def loop_reads(steps, k, values, x, chain):
    """The chain after a reverse loop ``for i in reversed(steps)`` that recorded ``k`` reads
    ``x[i]`` a step: their cotangents, in ``values`` (appended in the order the loop ran,
    ``k`` a step), pushed onto ``chain``.

    A reverse loop appends each read's cotangent to a list (one call) instead of pushing a
    node ``(i, cotangent, chain)``; here the list becomes one node of an index and an
    array, when they are real scalars read from a 1-D float array along a ``range``: one
    read a step along a range of non-negative positions is the node ``(slice, array)``
    that :func:`fold_reads` adds through a view (as it adds a slice read ``x[a:b]``), any
    other count the node ``(positions, cotangents)`` it scatters with ``np.add.at`` (the
    same sums). Anything else gets the very chain the loop would have built."""
    n = len(values)
    if (
        n
        and type(steps) is range
        and type(x) is _ndarray
        and x.ndim == 1
        and x.dtype.kind == "f"
        and not batch_axes.axes
        and n == len(steps) * k
    ):
        if k == 1:
            node = _ascending_node(steps, values, x, chain)
            if node is not None:
                return node
        weights = _real_weights(values, x) if n > _FEW_READS else None
        if weights is not None:
            positions = np.arange(steps.start, steps.stop, steps.step)[::-1]
            if k > 1:
                positions = np.repeat(positions, k)
            return positions, weights, chain
    cotangents = iter(values)
    for i in reversed(steps):
        for _ in range(k):
            chain = (i, next(cotangents), chain)
    return chain


def _ascending_node(steps, values, x, chain):
    """The node ``(slice, cotangents, chain)`` of one read a step along ``steps``, a range of
    non-negative positions, the slice ascending (a view of negative stride costs twice as
    much to add into); None for negative positions or values not all real scalars."""
    step = steps.step
    if step > 0:  # values[j] is the cotangent of steps[n - 1 - j]
        low = steps.start
        if low < 0:
            return None
        high, values = steps[-1], values[::-1]
    else:
        low = steps[-1]
        if low < 0:
            return None
        high, step = steps.start, -step
    weights = _real_weights(values, x)
    return None if weights is None else (slice(low, high + 1, step), weights, chain)


def _real_weights(values, x):
    """``values`` (real scalars: Python or NumPy floats) as one array of ``x``'s cotangent
    dtype, or None when any is something else (a zero, an array, a complex number)."""
    if len(values) <= _FEW_READS:  # a few: their types looked at (no warnings context)
        if not _REAL_FLOATS.issuperset(map(type, values)):
            return None
        return np.array(values, dtype=x.dtype)  # a float array: its own cotangent dtype
    if type(values[0]) not in _REAL_FLOATS:
        return None
    # A cotangent is a number, an array or a zero: fromiter takes real numbers only
    # (a zero, an array or a complex number raises, or warns: then the chain).
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        try:
            return np.fromiter(values, dtype=_cotangent_dtype(x), count=len(values))
        except (TypeError, ValueError, np.exceptions.ComplexWarning):
            return None
