"""Cotangent values: symbolic zeros, accumulation, and undoing broadcasting.

A cotangent is whatever a pullback receives or returns for one value:

* ``ZERO`` — a symbolic zero. It is never turned into an array unless a rule asks
  (:func:`materialize`); adding it is free.
* ``NO_TANGENT`` — what a pullback returns for an argument that has no tangent
  (integers, axis arguments, flags); the same object as ``ZERO``.
* a float, NumPy scalar or array with the shape of its primal;
* a tuple, list or dict of cotangents for a container primal;
* an :class:`IndexedCotangent` — the sum of cotangents of several reads ``x[i]`` of one
  array, kept as a persistent chain of ``(index, value)`` so that many reads cost one
  dense array, made when the value is needed (:func:`densify`).

>>> add(ZERO, 2.0)
2.0
>>> unbroadcast(np.ones((3, 2)), np.zeros(2))
array([3., 3.])
"""

from __future__ import annotations

import sys
from _thread import _local as thread_local  # threading.local, without importing threading

import numpy as np

# The symbolic zero (zero.py) and index chains (indexed_cotangent.py) are cotangents like
# the others: callers import them from here.
from . import backends, sparse_values
from .band_stack import BandStack, sliced_read
from .diagonal_stack import DiagonalStack
from .indexed_cotangent import IndexedCotangent, plus_cotangent
from .records_dataclasses import fields_of, is_dataclass_value, rebuilt
from .user_objects import (  # noqa: F401 (callers import them from here)
    has_array_protocol,
    is_operator_object,
    refuse_operator,
    user_object_refusal,
)
from .zero import NO_TANGENT, ZERO, _Zero, is_zero  # noqa: F401

_ndarray = np.ndarray
_float64 = np.float64
_complex128 = np.complex128

_PY_SCALARS = (float, int, bool, complex)
_FAST_VALUES = frozenset({float, np.float64, np.float32, np.ndarray})
_FLOAT_KINDS = "fc"


def densify(c):
    """An :class:`IndexedCotangent` as a dense array; anything else unchanged."""
    if type(c) is IndexedCotangent:
        return c.dense()
    return c


class CotangentList(list):
    """A list cotangent that the reverse sweep made itself, so it may ``pop`` from it
    (see :func:`pullback.containers.append_cotangent`)."""

    __slots__ = ()


def add(a, b):
    """Accumulate two cotangents of the same value. ``ZERO`` and ``NO_TANGENT`` are free."""
    if a is ZERO or a is NO_TANGENT:
        return b
    if b is ZERO or b is NO_TANGENT:
        return a
    ta = type(a)
    tb = type(b)
    if ta is IndexedCotangent or tb is IndexedCotangent:
        return plus_cotangent(a, b)
    if ta is tuple or ta is list or ta is CotangentList:
        if len(a) == len(b):  # (map: no generator frame; a record's fields add per read)
            return ta(map(add, a, b))
        return ta(add(x, y) for x, y in zip(a, b, strict=True))  # (zip's error)
    if ta is dict:
        out = dict(a)
        for k, v in b.items():
            out[k] = add(out[k], v) if k in out else v
        return out
    if isinstance(a, tuple) and isinstance(b, tuple):
        # a named tuple's cotangent (a tuple subclass): field by field, never `a + b`,
        # which would join the two tuples
        items = [add(x, y) for x, y in zip(a, b, strict=True)]
        return ta(*items) if hasattr(ta, "_fields") else ta(items)
    return a + b


def getitem_cotangent(acc, x, index, g):
    """Add the cotangent ``g`` of ``x[index]`` to ``acc``, the cotangent accumulated for ``x``."""
    if type(acc) is IndexedCotangent and type(index) is int and type(g) in _FAST_VALUES:
        return IndexedCotangent(acc.shape, acc.dtype, index, g, acc)  # the scalar-loop case
    if g is ZERO or g is NO_TANGENT:
        return acc
    if acc is ZERO and type(x) is tuple and type(index) is int:  # a record's field read
        parts = [ZERO] * len(x)
        parts[index] = g
        return tuple(parts)
    if isinstance(x, _ndarray):
        if type(g) is IndexedCotangent:
            g = g.dense()
        if acc is ZERO or acc is NO_TANGENT:
            return IndexedCotangent(x.shape, _cotangent_dtype(x), index, g)
        if type(acc) is IndexedCotangent:
            return acc.plus(index, g)
        return plus_cotangent(IndexedCotangent(x.shape, _cotangent_dtype(x), index, g), acc)
    if isinstance(x, (tuple, list)):
        parts = [ZERO] * len(x)
        if isinstance(index, slice):
            for k, v in zip(range(*index.indices(len(x))), g, strict=True):
                parts[k] = v
        else:
            parts[index] = g
        return add(acc, type(x)(parts) if type(x) in (tuple, list) else tuple(parts))
    if isinstance(x, dict):
        return add(acc, {index: g})
    if isinstance(x, np.generic):
        return add(acc, g)
    if backends.is_foreign_array(x):  # Dask, array API: one dense array per read
        return add(acc, backends.read_cotangent(x, index, densify(g)))
    if _is_sparse(x):  # S[1:, 1:] of a SciPy sparse matrix: on S's pattern
        return add(acc, sparse_values.index_cotangent(x, index, g))
    raise TypeError(f"cannot differentiate indexing into a {type(x).__name__}")


def read_cotangent(g, x, index, value):
    """The cotangent of the read ``x[index]`` taken from ``g``, a cotangent of ``x`` (summed to
    the shape of ``value``, the read's own cotangent, where the read was broadcast).

    It is linear in ``g``: the second-order rules of ``fold_reads`` and ``getitem_cotangent``
    apply it, and while a stack of cotangents runs (see ``batch_axes``) ``index`` applies
    after the leading batch axes, so that Hessians can push every direction at once.

    >>> read_cotangent(np.arange(4.0), np.zeros(4), slice(1, 3), np.zeros(2))
    array([1., 2.])
    """
    g = densify(g)
    if isinstance(x, _ndarray):
        if batch_axes.axes:
            band = _band_read(g, x, index)
            if band is not None:
                if type(value) is _ndarray and value.shape == (band.data.shape[1],):
                    if value.dtype == band.data.dtype and (band.k,) == batch_axes.axes:
                        return band  # what unbroadcast gives: nothing to sum
                return unbroadcast(band, value)
            g = np.asarray(g)
            if g.ndim < len(batch_axes.axes) + x.ndim:
                raise ValueError("a cotangent lost its batch axes")
            index = index if type(index) is tuple else (index,)
            if any(isinstance(i, (list, _ndarray)) for i in index):
                # advanced indices may move axes in front of the batch axes: row by row
                raise TypeError("batched reads take ints, slices, None and Ellipsis only")
            return unbroadcast(g[(slice(None),) * len(batch_axes.axes) + index], value)
        return unbroadcast(np.asarray(g)[index], value)
    if batch_axes.axes:
        raise TypeError("batched reads need a NumPy array")
    if type(g) is dict:  # a dict's cotangent holds only the entries that received one
        return g.get(index, ZERO)
    return backends.read_at(g, index)


def _band_read(g, x, index):
    """The read ``x[start:stop]`` of a diagonal or band stack of a vector, as a band stack
    (see pullback.band_stack), or None."""
    if type(index) is tuple and len(index) == 1:
        index = index[0]
    if type(index) is not slice or x.ndim != 1 or len(batch_axes.axes) != 1:
        return None
    return sliced_read(g, index, x.shape[0])


def broadcast_tangent(dt, value):
    """The tangent ``dt`` of one operand of ``value = a + b`` (or ``a - b``, the other
    operand constant) given ``value``'s shape: ``data - mu`` with a varied scalar ``mu``
    has the tangent ``-t_mu`` at every element, and a later ``value[i]`` reads it there.

    >>> broadcast_tangent(2.0, np.zeros(3))
    array([2., 2., 2.])
    """
    if dt is ZERO:
        return dt
    shape = np.shape(value)
    if np.shape(dt) == shape:
        return dt
    out = np.broadcast_to(dt, shape)
    return out.copy() if type(out) is _ndarray else out  # a tangent others may write into


def plus_tangent(da, a, db, b, value):
    """The tangent of ``value = a + b`` with one operand varied (the other's tangent is
    ZERO): for lists and tuples a concatenation, whose constant part gets ZERO tangents at
    its places (``buf[:1] + [x]``: the tangent of ``x`` is the second); for numbers and
    arrays the varied operand's tangent in ``value``'s shape (:func:`broadcast_tangent`).

    >>> plus_tangent(ZERO, [1.0, 2.0], [3.0], [0.5], [1.0, 2.0, 0.5])
    [ZERO, ZERO, 3.0]
    """
    if type(value) is list or type(value) is tuple:
        left = list(da) if da is not ZERO else [ZERO] * len(a)
        right = list(db) if db is not ZERO else [ZERO] * len(b)
        return type(value)(left + right)
    if type(value) is not _ndarray and (is_dataclass_value(value) or is_operator_object(value)):
        refuse_operator(value)  # (the result of a class's own __add__)
    return broadcast_tangent(db if da is ZERO else da, value)


def sum_tangent(da, a, db, b, value):
    """``da + db``, the tangent of ``value = a + b`` with both operands varied and kinds not
    known to be numbers or arrays (lists and tuples concatenate their tangents); refused for
    an object whose class adds with its own ``__add__`` (a record's tangent is the tuple of
    its fields', which ``+`` would concatenate). An array sum has ``value``'s shape even
    while one tangent is still ZERO (a loop's first pass).

    >>> sum_tangent(ZERO, np.zeros(3), 2.0, 1.0, np.zeros(3))
    array([2., 2., 2.])
    """
    for operand in (a, b):
        if type(operand) is not _ndarray and (
            is_dataclass_value(operand) or is_operator_object(operand)
        ):
            refuse_operator(operand)
    if type(a) in (list, tuple) and type(b) in (list, tuple):
        # a constant part (a loop's first `parts = parts + (x,)` from `parts = ("a",)`):
        # ZERO tangents at its places, so that the tangent's items stay the value's
        if da is ZERO or da is NO_TANGENT:
            da = type(a)([ZERO] * len(a))
        if db is ZERO or db is NO_TANGENT:
            db = type(b)([ZERO] * len(b))
        if type(da) is not type(db):
            return type(a)(da) + type(a)(db)
        return da + db
    if (da is ZERO or db is ZERO) and type(value) is _ndarray:
        return broadcast_tangent(da + db, value)
    return da + db


def both_tangent(da, db, value, subtract: bool):
    """The tangent of ``value = a + b`` (``a - b`` with ``subtract``) of two varied numbers
    or arrays: ``da + db`` (``da - db``), and while one of them is still ZERO (a loop's
    first pass) the other alone in ``value``'s shape (a stack of directions, which has
    more axes, is left to the sum itself).

    >>> both_tangent(2.0, ZERO, np.zeros(3), True)
    array([2., 2., 2.])
    """
    if db is ZERO or da is ZERO:
        one = da if db is ZERO else (-db if subtract else db)
        # (a number's or an object's tangent: as it is)
        return broadcast_tangent(one, value) if type(value) is _ndarray else one
    return da - db if subtract else da + db


def broadcast_cotangent(d, shape):
    """``d`` broadcast to ``shape`` (a read-only view), or to the batch axes + ``shape``
    while a stack of cotangents runs (see ``batch_axes``): the adjoint of ``unbroadcast``.

    >>> broadcast_cotangent(np.ones(3), (2, 3)).shape
    (2, 3)
    """
    d = densify(d)
    batch = batch_axes.axes
    if type(d) is _ndarray and d.shape == batch + tuple(shape):
        return _read_only(d)  # nothing to broadcast: np.broadcast_to costs microseconds
    extra = np.ndim(d) - len(batch) - len(shape)
    if extra > 0:
        # unbroadcast gave leading axes of length 1 (a (1, 1) value stored into a (1,)
        # row, _sum_to): its adjoint takes them away again
        d = np.sum(d, axis=tuple(range(len(batch), len(batch) + extra)))
    if not batch:
        return np.broadcast_to(d, shape)
    if (type(d) is BandStack or type(d) is DiagonalStack) and d.shape == batch + tuple(shape):
        return d  # nothing to broadcast, and the stack keeps its structure
    d = np.asarray(d)
    if d.shape[: len(batch)] != batch:
        raise ValueError("a cotangent lost its batch axes")
    missing = len(shape) - (d.ndim - len(batch))
    if missing > 0:  # align the inner axes on the right, after the batch axes
        d = d.reshape(batch + (1,) * missing + d.shape[len(batch) :])
    return np.broadcast_to(d, batch + tuple(shape))


def _read_only(a):
    """A read-only view of ``a`` (what np.broadcast_to returns, without its cost)."""
    view = a.view()
    view.flags.writeable = False
    return view


def _cotangent_dtype(x):
    dt = np.result_type(x)
    return dt if dt.kind in _FLOAT_KINDS else np.dtype(np.float64)


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x`` (undoing broadcasting) and keep ``x``'s dtype.

    >>> unbroadcast(np.ones((2, 3)), np.zeros((1, 3))).shape
    (1, 3)
    """
    if g is ZERO or g is NO_TANGENT:
        return g
    if batch_axes.axes:
        return _unbroadcast_batched(g, x)
    tx = type(x)
    tg = type(g)
    if tg is _ndarray and tx is _ndarray:
        if g.dtype is x.dtype:  # (the usual case, one dtype: nothing to convert)
            return g if g.shape == x.shape else _sum_to(g, x.shape, x.dtype)
        # The common case, checked without np.iscomplexobj (a Python call per use).
        if g.dtype.kind == "c" and x.dtype.kind != "c":
            g = g.real  # a real input's cotangent is the real part
        if g.shape == x.shape:
            if g.dtype != x.dtype and x.dtype.kind in _FLOAT_KINDS:
                return g.astype(x.dtype)
            return g
        return _sum_to(g, x.shape, x.dtype)
    if tx is float and (tg is float or tg is np.float64):
        return g
    if tx is tg and (tx is np.float64 or tx is np.float32 or tx is complex or tx is _complex128):
        return g  # a NumPy scalar's cotangent of its own type (a scalar loop's step)
    if tx is complex and (tg is float or tg is _complex128):
        return g  # (a complex scalar loop: the checks below cost more than its arithmetic)
    if tx is float and (tg is complex or tg is _complex128):
        return g.real  # a real input's cotangent is the real part
    if tg is IndexedCotangent:
        g = g.dense()
        tg = type(g)
    if tg is not _ndarray and _is_sparse(g):  # (a sparse matrix's product or sum)
        return _sparse_unbroadcast(g, x)
    if tx is float or tx is int or tx is bool:
        if tg is _ndarray:
            g = g.sum() if g.ndim else g[()]
        elif backends.is_dask(g) and g.ndim:  # a float's cotangent from Dask data: lazy
            g = g.sum()
        return g.real if np.iscomplexobj(g) else g
    if tx is _ndarray:
        if x.dtype.kind != "c" and np.iscomplexobj(g):
            g = g.real  # a real input's cotangent is the real part
        if tg is _ndarray and g.shape == x.shape:
            if g.dtype != x.dtype and x.dtype.kind in _FLOAT_KINDS:
                return g.astype(x.dtype)
            return g
        return _sum_to(g, x.shape, x.dtype)
    if backends.is_foreign_array(x):
        return backends.unbroadcast_foreign(g, x, _sum_to)
    if _is_sparse(x):  # a sparse matrix's cotangent: its own pattern (sparse_values.py)
        return _sparse_unbroadcast(g, x)
    if isinstance(x, np.generic):
        if tg is _ndarray and g.ndim:
            g = g.sum()
        if x.dtype.kind != "c" and np.iscomplexobj(g):
            g = g.real  # a real input's cotangent is the real part (np.float64(z) warns)
        if x.dtype.kind in _FLOAT_KINDS and getattr(g, "dtype", None) != x.dtype:
            return x.dtype.type(g)
        return g
    if x is ZERO:
        # A symbolic zero held by a gradient that is differentiated again is a constant:
        # nothing flows back to it (and it must not reach np.shape).
        return ZERO
    if is_dataclass_value(x) or is_operator_object(x):
        if type(g) is tuple and is_dataclass_value(x):
            return g  # a record's own cotangent, the tuple of its fields' (an item of a list)
        refuse_operator(x)
    shape = np.shape(x)
    gshape = np.shape(g)
    if gshape == shape:
        return g
    return _sum_to(g, shape, None)


def _is_sparse(x) -> bool:
    """Whether ``x`` is a SciPy sparse matrix (``scipy.sparse`` not imported: never)."""
    sp = sys.modules.get("scipy.sparse")
    return sp is not None and sp.issparse(x)


def _sparse_unbroadcast(g, x):
    return sparse_values.unbroadcast_sparse(g, x)


class _BatchAxes(thread_local):
    """The leading axes of a stack of cotangents pushed through a pullback at once (see
    pullback.batched): ``()`` except while such a batched pullback runs in this thread
    (per thread, so a gradient running in another thread at that time is unaffected)."""

    axes: tuple = ()


batch_axes = _BatchAxes()


def _unbroadcast_batched(g, x):
    """``unbroadcast`` of a stack of cotangents: every axis but the leading batch axes is
    summed to ``x``'s shape. Anything it cannot follow raises, and the batched caller falls
    back to one pullback per direction."""
    batch = batch_axes.axes
    if type(g) is _ndarray and type(x) is _ndarray and g.dtype == x.dtype:
        if g.shape == batch + x.shape:  # the common case, without np.shape/np.result_type
            return g
    if type(g) is BandStack and type(x) is _ndarray and (g.k, g.data.shape[1]) == batch + x.shape:
        if g.data.dtype == x.dtype:  # a banded step of a Hessian: nothing to sum
            return g
    if type(g) is DiagonalStack and type(x) is _ndarray and g.diagonal.shape == x.shape:
        if g.diagonal.dtype == x.dtype and batch == (x.size,):  # an elementwise step
            return g
    if x is ZERO:  # a symbolic zero held by a gradient differentiated again: a constant
        return ZERO
    shape = batch + tuple(np.shape(x))
    g = densify(g)
    if type(g) is DiagonalStack or type(g) is BandStack:
        if g.shape == shape:  # an elementwise step kept the identity's structure
            dtype = np.result_type(x)
            g = g.real if dtype.kind != "c" else g
            return g if g.dtype == dtype or dtype.kind not in _FLOAT_KINDS else g.astype(dtype)
        g = g.dense()
    if type(g) is not _ndarray:
        raise TypeError("a batched cotangent must be an array")
    if g.dtype.kind == "c" and np.result_type(x).kind != "c":
        g = g.real
    dtype = np.result_type(x)
    if g.shape == shape:
        return g if g.dtype == dtype or dtype.kind not in _FLOAT_KINDS else g.astype(dtype)
    if g.ndim < len(batch) or g.shape[: len(batch)] != batch:
        raise ValueError("a cotangent lost its batch axes")
    # Align the inner axes on the right, after the batch axes: sum the extra leading inner
    # axes, or give a cotangent with fewer inner axes ones to broadcast from.
    extra = g.ndim - len(shape)
    if extra > 0:
        g = g.sum(axis=tuple(range(len(batch), len(batch) + extra)))
    elif extra < 0:
        g = g.reshape(batch + (1,) * -extra + g.shape[len(batch) :])
    return _sum_to(g, shape, dtype if dtype.kind in _FLOAT_KINDS else None)


def _sum_to(g, shape, dtype):
    g = backends.as_array(g)
    extra = g.ndim - len(shape)
    if extra > 0:
        g = g.sum(axis=tuple(range(extra)))
    elif extra < 0:  # a (1, n) value stored into n entries: its leading axes of length 1
        g = g.reshape((1,) * -extra + g.shape)
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    if g.shape != tuple(shape):
        g = np.broadcast_to(g, shape)
    if dtype is not None and dtype.kind in _FLOAT_KINDS and g.dtype != dtype:
        g = g.astype(dtype)
    return g


def materialize(c, like, absent=None):
    """A concrete cotangent for the primal ``like``: zeros for ``ZERO``, dense for chains.

    The result has ``like``'s structure, shape and floating dtype; a Python float primal
    gets a Python float. A leaf that holds no float (an int, a flag, a function) gets
    ``absent``: ``None`` in what users receive, ``NO_TANGENT`` in what generated code adds
    to other cotangents (:func:`pullback.runtime.vjp_zero`).
    """
    tc = type(c)
    if type(like) is float and (tc is float or tc is _float64):
        return float(c)  # (what the general path below gives a float64 cotangent)
    if tc is _ndarray and type(like) is _ndarray:
        if c.shape == like.shape and c.dtype == like.dtype:
            # the common case, already right; a broadcast view becomes an array of its own
            return c if c.flags.writeable else c.copy()
    if isinstance(like, (tuple, list)):
        if is_zero(c):
            c = [ZERO] * len(like)
        out = [materialize(ci, li, absent) for ci, li in zip(c, like, strict=True)]
        if type(like) in (tuple, list):
            return type(like)(out)
        if isinstance(getattr(type(like), "_fields", None), tuple):
            return type(like)(*out)  # a named tuple's gradient: the same named tuple
        return tuple(out)
    if isinstance(like, dict):
        c = {} if is_zero(c) else c
        return {k: materialize(c.get(k, ZERO), v, absent) for k, v in like.items()}
    if like is ZERO:
        # a symbolic zero among the values (an entry of a list cotangent that a gradient
        # differentiated again takes as an input): it stands for a zero of no known shape,
        # so its cotangent stays symbolic where it is zero; None (no tangent) would break
        # the addition of the cotangents of that list
        return ZERO if is_zero(c) else densify(c)
    if not is_differentiable_value(like):
        if is_dataclass_value(like):
            # a dataclass's gradient: the same dataclass (records_dataclasses.py), whose
            # cotangent is the tuple of its fields; a plain class's record likewise
            values = fields_of(like)
            c = [ZERO] * len(values) if is_zero(c) else c
            return rebuilt(
                like, [materialize(ci, v, absent) for ci, v in zip(c, values, strict=True)]
            )
        return absent
    if is_zero(c):
        if isinstance(like, (float, int)):
            return 0.0
        return backends.zeros_like(like)
    c = densify(c)
    if (
        type(c) not in _FAST_VALUES
        and backends.is_foreign_array(c)
        and not backends.is_foreign_array(like)
    ):
        # A NumPy argument whose gradient depends on Dask data: it stays lazy too.
        return backends.lazy_cotangent(unbroadcast(c, like), like)
    if isinstance(like, float) and not isinstance(like, np.generic):
        return float(np.sum(c)) if np.ndim(c) else float(c)
    if isinstance(like, _ndarray):
        out = np.asarray(unbroadcast(c, like))
        if out.dtype != like.dtype:
            out = out.astype(like.dtype)
        return out if out.flags.writeable else out.copy()
    if isinstance(like, np.generic):
        return like.dtype.type(np.sum(c))
    if backends.is_foreign_array(like):
        return backends.like_argument(unbroadcast(c, like), like)
    return c


def is_differentiable_value(v) -> bool:
    """True for floating (or complex) scalars and arrays."""
    if isinstance(v, bool):
        return False
    if isinstance(v, (float, complex)):
        return True
    if isinstance(v, (_ndarray, np.generic)):
        return v.dtype.kind in _FLOAT_KINDS
    return backends.is_float_array(v)
