"""The cotangent of an array read by index: :class:`IndexedCotangent`, a persistent chain
of ``(index, value)`` entries that many reads ``x[i]`` share, made into one dense array
(scattered, repeated indices accumulating) only when its value is needed.

>>> import numpy as np
>>> c = IndexedCotangent((3,), np.dtype(float), 0, 1.0).plus(2, 5.0).plus(0, 1.0)
>>> c.dense()
array([2., 0., 5.])
"""

from __future__ import annotations

import sys

import numpy as np

from .zero import NO_TANGENT, ZERO

_ndarray = np.ndarray


class IndexedCotangent:
    """The cotangent of an array that was read by index, as a chain of ``(index, value)``.

    The chain is persistent (each :meth:`plus` makes a new head that shares the tail), so
    a cotangent may be shared by several adjoint variables without copying.
    """

    __slots__ = ("shape", "dtype", "index", "value", "parent", "base", "length")
    __array_ufunc__ = None

    def __init__(self, shape, dtype, index, value, parent=None, base=None):
        self.shape = shape
        self.dtype = dtype
        self.index = index
        self.value = value
        self.parent = parent
        self.base = base  # a dense cotangent under the whole chain, or None
        self.length = 1 if parent is None else parent.length + 1

    def plus(self, index, value) -> IndexedCotangent:
        return IndexedCotangent(self.shape, self.dtype, index, value, self, None)

    def dense(self) -> np.ndarray:
        """Scatter every entry into one new array (repeated indices accumulate)."""
        indices = []
        values = []
        node = self
        base = None
        while node is not None:
            indices.append(node.index)
            values.append(node.value)
            if node.base is not None:
                base = node.base
            node = node.parent
        indices.reverse()
        values.reverse()
        lazy = lazy_scatter(base, self.shape, self.dtype, indices, values)
        if lazy is not None:
            return lazy
        if base is not None:
            if type(base) is IndexedCotangent:
                base = base.dense()
            out = np.array(base, dtype=self.dtype, copy=True)
            if out.shape != self.shape:
                out = np.broadcast_to(out, self.shape).copy()
        else:
            out = np.zeros(self.shape, dtype=self.dtype)
        _scatter_entries(out, indices, values)
        return out

    # Arithmetic turns the chain into a dense array first.
    def __add__(self, other):
        return plus_cotangent(self, other)

    __radd__ = __add__

    def __neg__(self):
        return -self.dense()

    def __mul__(self, other):
        return self.dense() * other

    def __rmul__(self, other):
        return other * self.dense()

    def __truediv__(self, other):
        return self.dense() / other

    def __sub__(self, other):
        return self.dense() - other

    def __rsub__(self, other):
        return other - self.dense()

    def __matmul__(self, other):
        return self.dense() @ other

    def __rmatmul__(self, other):
        return other @ self.dense()

    def __array__(self, dtype=None, copy=None):
        out = self.dense()
        return out if dtype is None else out.astype(dtype)

    def __repr__(self) -> str:
        return f"IndexedCotangent(shape={self.shape}, entries={self.length})"


def plus_cotangent(a, b):
    """The sum of two cotangents of one array, at least one of them a chain: chains merge,
    a dense one rides along as the chain's base (nothing is scattered yet).

    >>> c = plus_cotangent(IndexedCotangent((2,), np.dtype(float), 1, 1.0), np.ones(2))
    >>> type(c).__name__, c.dense()
    ('IndexedCotangent', array([1., 2.]))
    """
    if a is ZERO or a is NO_TANGENT:
        return b
    if b is ZERO or b is NO_TANGENT:
        return a
    if type(a) is IndexedCotangent:
        if type(b) is IndexedCotangent:
            return _merged(a, b)
        return _with_base(a, b)
    if type(b) is IndexedCotangent:
        return _with_base(b, a)
    return a + b  # two dense cotangents of an array (a chain's base plus another)


def _merged(a: IndexedCotangent, b: IndexedCotangent) -> IndexedCotangent:
    # Append the shorter chain onto the longer one; both stay valid.
    if b.length > a.length:
        a, b = b, a
    entries = []
    node = b
    base = None
    while node is not None:
        entries.append((node.index, node.value))
        if node.base is not None:
            base = node.base
        node = node.parent
    out = a
    for index, value in reversed(entries):
        out = out.plus(index, value)
    if base is not None:
        out = _with_base(out, base)
    return out


def _with_base(chain: IndexedCotangent, dense) -> IndexedCotangent:
    """``chain + dense`` without scattering yet: the dense part rides along as a base."""
    head = IndexedCotangent(chain.shape, chain.dtype, chain.index, chain.value, chain.parent)
    head.base = dense if chain.base is None else plus_cotangent(chain.base, dense)
    head.length = chain.length
    return head


def lazy_scatter(base, shape, dtype, indices, values):
    """``base`` (or zeros) of ``shape`` with each of ``values`` added at its index, as a
    Dask graph when a value or the base is a Dask array (second derivatives on Dask: the
    cotangent of a NumPy value the gradient reads by index is lazy); ``None`` otherwise,
    for the NumPy buffer. A NumPy buffer cannot receive a Dask value without computing it,
    so the buffer takes the cotangent's backend."""
    module = sys.modules.get("dask.array")  # no Dask array exists unless it was imported
    if module is None:
        return None
    dask_array = module.Array
    if not isinstance(base, dask_array) and not any(isinstance(v, dask_array) for v in values):
        return None
    from . import backends

    da = module

    if type(base) is IndexedCotangent:
        base = base.dense()
    like = da.zeros(shape, dtype=dtype)  # the cotangent's chunks: a value's own chunking
    out = like if base is None else da.broadcast_to(base, shape).astype(dtype)
    for index, value in zip(indices, values, strict=True):
        if type(value) is IndexedCotangent:
            value = value.dense()
        out = out + backends.read_cotangent(like, index, value)
    return out


def _needs_add_at(index) -> bool:
    """True when ``index`` may select one element twice (integer arrays or lists)."""
    if isinstance(index, tuple):
        return any(_needs_add_at(i) for i in index)
    if isinstance(index, list):
        return True
    if isinstance(index, _ndarray):
        return index.dtype.kind != "b"
    return False


_SCALAR_VALUE_TYPES = frozenset({float, int, np.float64, np.float32, np.float16})


def _scatter_entries(out: np.ndarray, indices: list, values: list) -> None:
    """Add ``values[k]`` at ``indices[k]`` into ``out``. Reads of single elements by
    integer position (the scalar-loop case) are summed in one vectorized pass."""
    if not indices:
        return
    if (
        out.ndim == 1
        and out.dtype.kind == "f"
        and set(map(type, indices)) == {int}
        and set(map(type, values)) <= _SCALAR_VALUE_TYPES
    ):
        where = np.asarray(indices)
        where[where < 0] += out.shape[0]
        out += np.bincount(where, weights=values, minlength=out.shape[0]).astype(
            out.dtype, copy=False
        )
        return
    for index, value in zip(indices, values, strict=True):
        _scatter_add(out, index, value)


def _scatter_add(out: np.ndarray, index, value) -> None:
    if _needs_add_at(index):
        np.add.at(out, index, value)
    else:
        out[index] += value
