"""A stack of cotangents of a 1-D array that is zero but on a few diagonals (a band).

A Hessian pushes the identity basis (:class:`~pullback.diagonal_stack.DiagonalStack`)
through the reverse sweep of a gradient. Reading a slice ``x[1:]`` of a vector shifts
that identity off the main diagonal, and sums of such reads (``x[1:] - x[:-1] ** 2``, a
finite difference, a stencil) make a band: row ``r`` of the stack is non-zero only at the
positions ``j`` with ``r - j`` in a small set of offsets. :class:`BandStack` carries one
vector per offset (the rows of one array) through the steps such sweeps take (products
and quotients by arrays of the primal's shape, negations, sums of stacks, slice reads and
their scatter back), and becomes the dense ``(k, m)`` stack as soon as anything else
touches it. The sweep of a banded Hessian then costs a few vectors per step instead of a
``k x m`` array.

It is exact in the sense of :mod:`pullback.diagonal_stack`: every entry of the band is
computed by the same operations as in the dense stack, and the entries off the band are
the exact zeros the dense stack would hold, which is why a step whose result is not finite
(``0 * inf`` is NaN off the band in the dense stack) works on the dense stack instead.

>>> import numpy as np
>>> from pullback.diagonal_stack import DiagonalStack
>>> b = BandStack.from_diagonal(DiagonalStack(np.ones(3))).sliced(slice(1, None))
>>> (b * np.array([2.0, 3.0])).dense()
array([[0., 0.],
       [2., 0.],
       [0., 3.]])
"""

from __future__ import annotations

import math

import numpy as np

from .diagonal_stack import (
    DiagonalStack,
    StructuredStack,
    all_finite,
    checked_on_leaving,
    deferral,
    max_abs,
)

_SCALING = {np.multiply}
_multiply = np.multiply
_DIVIDING = {np.true_divide, np.divide}
_UNARY = {np.negative, np.positive, np.conjugate}
_LINEAR = {np.add, np.subtract}
# Beyond this many offsets a band is no cheaper than the dense stack.
_MAX_BANDS = 16


def _valid(offset: int, k: int, m: int) -> range:
    """The positions ``j`` of a band at ``offset`` that lie in the stack (``0 <= j + offset
    < k``)."""
    return range(max(0, -offset), max(0, min(m, k - offset)))


class BandStack(StructuredStack):
    """The stack of shape ``(k, m)`` whose entry ``[r, j]`` is ``data[r - j - lo, j]`` (zero
    where ``r - j - lo`` is not a row of ``data``): the bands at the consecutive offsets
    ``lo, lo + 1, ...`` are the rows of one array, so that a step of the sweep is one NumPy
    operation whatever their number (an offset between two bands is a row of zeros). Each
    band holds zeros at the positions outside the stack, so that products keep them zero."""

    __slots__ = ("k", "lo", "data")
    _stack_priority = 1  # DiagonalStack defers to it in mixed operations

    def __init__(self, k: int, lo: int, data: np.ndarray):
        self.k = k
        self.lo = lo
        self.data = data

    @classmethod
    def from_bands(cls, k: int, bands: dict, m: int) -> BandStack:
        """The stack of the band vectors ``bands`` (offset -> vector of length ``m``)."""
        lo, hi = min(bands), max(bands) + 1
        dtype = np.result_type(*bands.values())
        data = np.zeros((hi - lo, m), dtype=dtype)
        for o, v in bands.items():
            data[o - lo] = v
        return cls(k, lo, data)

    @classmethod
    def from_diagonal(cls, d: DiagonalStack) -> BandStack:
        diagonal = d.diagonal
        if deferral.on:
            checked_on_leaving(diagonal)  # (the test of its steps was deferred)
        return cls(diagonal.size, 0, diagonal[None, :])

    @property
    def m(self) -> int:
        return self.data.shape[1]

    @property
    def bands(self) -> dict:
        """``{offset: band vector}``."""
        return {self.lo + i: v for i, v in enumerate(self.data)}

    @property
    def shape(self) -> tuple:
        return (self.k, self.data.shape[1])

    @property
    def ndim(self) -> int:
        return 2

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def real(self):
        if self.data.dtype.kind == "c":
            return BandStack(self.k, self.lo, self.data.real)
        return self

    def astype(self, dtype, copy=True):
        return BandStack(self.k, self.lo, self.data.astype(dtype, copy=copy))

    def max_abs(self) -> float:
        return max_abs(self.data)

    def dense(self) -> np.ndarray:
        """The stack as an ordinary ``(k, m)`` array."""
        k, m = self.shape
        out = np.zeros((k, m), dtype=self.data.dtype)
        flat = out.reshape(-1)  # a view: assigning through ``out.flat`` costs far more
        for i, v in enumerate(self.data):
            o = self.lo + i
            j = _valid(o, k, m)
            if len(j):
                # entry [j + o, j]: a strided diagonal of the flat array
                start = (j.start + o) * m + j.start
                flat[start : start + len(j) * (m + 1) : m + 1] = v[j.start : j.stop]
        return out

    def __repr__(self) -> str:
        return f"BandStack({self.k}, {self.bands!r})"

    def sliced(self, index: slice):
        """The stack of the read ``x[index]`` (a slice of step 1), or None."""
        start, stop, step = index.indices(self.data.shape[1])
        if step != 1:
            return None
        length = max(stop, start) - start
        # the bands that keep a position in the stack: -length < offset + start < k
        first = max(0, 1 - length - start - self.lo)
        last = min(self.data.shape[0], self.k - start - self.lo)
        if first >= last or length == 0:
            return None  # an empty band: the dense stack of zeros says it plainly
        return BandStack(self.k, self.lo + first + start, self.data[first:last, start:stop])

    def scattered(self, index: slice, n: int):
        """The stack of a cotangent of ``x`` (length ``n``) that the read ``x[index]``
        (a slice of step 1 whose cotangent this is) adds, or None."""
        m = self.data.shape[1]
        start, stop, step = index.indices(n)
        if step != 1 or max(stop, start) - start != m:
            return None
        data = np.zeros((self.data.shape[0], n), dtype=self.data.dtype)
        data[:, start : start + m] = self.data
        return BandStack(self.k, self.lo - start, data)

    def __neg__(self):
        return BandStack(self.k, self.lo, -self.data)

    # The products and sums a reverse sweep writes (``d * t``, ``2.0 * d``, ``a + b``) are
    # decided here first: the general operators (StructuredStack) cover the rest.
    def __mul__(self, other):
        t = type(other)
        if t is np.ndarray and other.shape == (self.data.shape[1],) and other.dtype.kind == "f":
            # a finite float vector of length m, the factor a sweep multiplies by most, told
            # inline (its sum of squares, as all_finite tells it); _factor tells the rest
            if math.isfinite(other.dot(other)):
                return BandStack(self.k, self.lo, self.data * other)
        elif t is float and math.isfinite(other) or self._factor(other):
            return BandStack(self.k, self.lo, self.data * other)
        return StructuredStack.__mul__(self, other)

    def __rmul__(self, other):
        t = type(other)
        if t is np.ndarray and other.shape == (self.data.shape[1],) and other.dtype.kind == "f":
            if math.isfinite(other.dot(other)):
                return BandStack(self.k, self.lo, other * self.data)
        elif t is float and math.isfinite(other) or self._factor(other):
            return BandStack(self.k, self.lo, other * self.data)
        return StructuredStack.__rmul__(self, other)

    def __add__(self, other):
        if type(other) is BandStack and other.k == self.k and other.m == self.data.shape[1]:
            if other.lo == self.lo and other.data.shape[0] == self.data.shape[0]:
                return BandStack(self.k, self.lo, self.data + other.data)
            out = _linear_union(np.add, self, other)
            if out is not None:
                return out
        return StructuredStack.__add__(self, other)

    def _factor(self, other) -> bool:
        """Whether ``other`` scales every band (a scalar or an array that broadcasts to
        ``(m,)`` without a batch axis) and is finite: off the band the dense stack holds
        ``0 * other``, an exact zero only where ``other`` is finite."""
        t = type(other)
        if t is float or t is int:
            return math.isfinite(other)
        if t is np.ndarray:
            if other.shape == (self.data.shape[1],):
                return all_finite(other)
            if other.ndim > 1 or other.size not in (1, self.data.shape[1]):
                return False
        elif not isinstance(other, np.generic) or isinstance(other, np.bool_):
            return False
        return all_finite(np.asarray(other))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc is _multiply and method == "__call__" and len(inputs) == 2 and not kwargs:
            a = inputs[0]  # ``t * b`` (NumPy's operator): a finite float vector, as in __mul__
            if inputs[1] is self and type(a) is np.ndarray and a.shape == (self.data.shape[1],):
                if a.dtype.kind == "f" and math.isfinite(a.dot(a)):
                    return BandStack(self.k, self.lo, a * self.data)
        if method == "__call__" and not kwargs:
            out = self._structured(ufunc, inputs)
            if out is not None:
                return out
        dense = [x.dense() if isinstance(x, (BandStack, DiagonalStack)) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(
                x.dense() if isinstance(x, (BandStack, DiagonalStack)) else x for x in kwargs["out"]
            )
        return getattr(ufunc, method)(*dense, **kwargs)

    def _as_band(self, other):
        """``other`` as a band stack of this shape, or None."""
        if type(other) is BandStack:
            return other if other.k == self.k and other.m == self.m else None
        if type(other) is DiagonalStack and other.shape == self.shape:
            return BandStack.from_diagonal(other)
        return None

    def _structured(self, ufunc, inputs):
        """The result as a band stack, or None where it is not one. Every band keeps the
        length ``m``; entries off the band stay the dense stack's exact zeros because the
        other operand is finite (and non-zero for a quotient)."""
        if len(inputs) == 1:
            if ufunc in _UNARY:
                return BandStack(self.k, self.lo, ufunc(self.data))
            return None
        if len(inputs) != 2:
            return None
        a, b = inputs
        if ufunc in _SCALING:
            if type(a) is BandStack and a._factor(b):
                return BandStack(a.k, a.lo, a.data * b)
            if type(b) is BandStack and b._factor(a):
                return BandStack(b.k, b.lo, a * b.data)
            return None
        if ufunc in _LINEAR:
            a, b = self._as_band(a), self._as_band(b)
            if a is None or b is None:
                return None
            if a.lo == b.lo and a.data.shape[0] == b.data.shape[0]:
                return BandStack(a.k, a.lo, ufunc(a.data, b.data))
            return _linear_union(ufunc, a, b)
        if ufunc in _DIVIDING and type(a) is BandStack and a._factor(b) and np.all(b != 0):
            return BandStack(a.k, a.lo, ufunc(a.data, b))
        return None


def _linear_union(ufunc, a: BandStack, b: BandStack):
    """``ufunc(a, b)`` (a sum or difference) of bands at different offsets, each band what
    the dense stacks give (``0 - v`` where only ``b`` has one), or None past
    :data:`_MAX_BANDS`."""
    lo = min(a.lo, b.lo)
    hi = max(a.lo + a.data.shape[0], b.lo + b.data.shape[0])
    if hi - lo > _MAX_BANDS:
        return None
    dtype = a.data.dtype
    if b.data.dtype != dtype:
        dtype = np.result_type(a.data, b.data)
    # Where one stack's offsets lie within the other's, the union is made in two steps
    # instead of three, with the same operations on the same values (bit for bit).
    if lo == a.lo and hi == a.lo + a.data.shape[0] and dtype == a.data.dtype:
        data = a.data.copy()
    elif lo == b.lo and hi == b.lo + b.data.shape[0] and dtype == b.data.dtype:
        data = ufunc(dtype.type(0), b.data)  # the rows only b has: 0 + v or 0 - v, as below
        rows = data[a.lo - lo : a.lo - lo + a.data.shape[0]]
        ufunc(a.data, b.data[a.lo - lo : a.lo - lo + a.data.shape[0]], out=rows)
        return BandStack(a.k, lo, data)
    else:
        data = np.zeros((hi - lo, a.data.shape[1]), dtype=dtype)
        data[a.lo - lo : a.lo - lo + a.data.shape[0]] = a.data
    rows = data[b.lo - lo : b.lo - lo + b.data.shape[0]]
    ufunc(rows, b.data, out=rows)
    return BandStack(a.k, lo, data)


def sliced_read(g, index: slice, n: int):
    """The stack of the read ``x[index]`` (``x`` a vector of length ``n``) from ``g``, a
    diagonal or band stack of ``x``'s cotangents, or None. A diagonal stack's read is its
    band at offset ``start`` directly: what ``as_band(g).sliced(index)`` gives."""
    if type(g) is DiagonalStack:
        d = g.diagonal
        if deferral.on:
            checked_on_leaving(d)  # (the test of its steps was deferred)
        if d.ndim != 1 or d.shape[0] != n:
            return None
        start, stop, step = index.indices(n)
        if step != 1 or stop <= start:
            return None  # what sliced() says: an empty band, or a step other than 1
        return BandStack(n, start, d[None, start:stop])
    if type(g) is not BandStack or g.data.shape[1] != n:
        return None
    return g.sliced(index)


def as_band(g):
    """``g`` as a :class:`BandStack` where it is a diagonal or band stack of a vector."""
    if type(g) is BandStack:
        return g
    if type(g) is DiagonalStack and g.diagonal.ndim == 1:
        return BandStack.from_diagonal(g)
    return None


def scatter_sum(reads, n: int):
    """The sum, in the order of ``reads``, of the cotangents of a vector of length ``n``
    that the reads ``(index, band)`` add (``band`` the stack of ``x[index]``, a slice of step
    1): what :meth:`BandStack.scattered` and ``+`` give one read at a time, the same sums
    in the same order, in one array. None where a read is not such a slice or the sum
    would span more than :data:`_MAX_BANDS` offsets."""
    placed = []
    k = reads[0][1].k
    dtype = reads[0][1].data.dtype
    lo = hi = None
    for index, band in reads:
        nb, m = band.data.shape
        start, stop, step = index.indices(n)
        if step != 1 or max(stop, start) - start != m or band.k != k:
            return None
        first = band.lo - start
        placed.append((first, start, band))
        lo = first if lo is None or first < lo else lo
        hi = first + nb if hi is None or first + nb > hi else hi
        if band.data.dtype != dtype:
            dtype = np.result_type(dtype, band.data.dtype)
    if hi - lo > _MAX_BANDS:
        return None
    data = np.zeros((hi - lo, n), dtype=dtype)
    for i, (first, start, band) in enumerate(placed):
        nb, m = band.data.shape
        rows = data[first - lo : first - lo + nb, start : start + m]
        if i == 0:
            rows[...] = band.data  # the first read: its own values, as scattered() gives
        else:
            np.add(rows, band.data, out=rows)
    return BandStack(k, lo, data)


def combine_band(weights, stack: BandStack) -> np.ndarray:
    """``weights @ stack.dense()`` without the dense stack: column ``j`` takes
    ``weights[j + o] * band_o[j]`` from each band (offset ``o``), ``weights`` read through
    one zero-padded copy so that each band is one product over its whole length (the band's
    entries outside the stack meet a zero weight)."""
    k, m = stack.shape
    data = stack.data
    nb, lo = data.shape[0], stack.lo
    # padded[t] = weights[t + lo] where 0 <= t + lo < k: band i at column j reads t = i + j
    padded = np.zeros(nb + m - 1, dtype=weights.dtype)
    a, b = max(0, -lo), min(nb + m - 1, k - lo)
    if a < b:
        padded[a:b] = weights[a + lo : b + lo]
    out = padded[0:m] * data[0]
    for i in range(1, nb):
        out += padded[i : i + m] * data[i]
    return out
