"""A stack of cotangents of a 1-D array that is zero but on a few diagonals (a band).

A Hessian pushes the identity basis (:class:`~pullback.diagonal_stack.DiagonalStack`)
through the reverse sweep of a gradient. Reading a slice ``x[1:]`` of a vector shifts
that identity off the main diagonal, and sums of such reads (``x[1:] - x[:-1] ** 2``, a
finite difference, a stencil) make a band: row ``r`` of the stack is non-zero only at the
positions ``j`` with ``r - j`` in a small set of offsets. :class:`BandStack` carries one
vector per offset through the steps such sweeps take (products and quotients by arrays of
the primal's shape, negations, sums of stacks, slice reads and their scatter back), and
becomes the dense ``(k, m)`` stack as soon as anything else touches it. The sweep of a
banded Hessian then costs a few vectors per step instead of a ``k x m`` array.

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

from .diagonal_stack import DiagonalStack, StructuredStack, all_finite

_SCALING = {np.multiply}
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
    """The stack of shape ``(k, m)`` whose entry ``[r, j]`` is ``bands[r - j][j]`` (zero
    where ``r - j`` is not a key). Every band vector has length ``m`` and holds zeros at
    the positions outside the stack, so that products keep them zero."""

    __slots__ = ("k", "m", "bands")
    _stack_priority = 1  # DiagonalStack defers to it in mixed operations

    def __init__(self, k: int, bands: dict, m: int | None = None):
        self.k = k
        self.bands = bands
        self.m = next(iter(bands.values())).shape[0] if m is None else m

    @classmethod
    def from_diagonal(cls, d: DiagonalStack) -> BandStack:
        return cls(d.diagonal.size, {0: d.diagonal})

    @property
    def shape(self) -> tuple:
        return (self.k, self.m)

    @property
    def ndim(self) -> int:
        return 2

    @property
    def dtype(self):
        return np.result_type(*self.bands.values())

    @property
    def real(self):
        if self.dtype.kind == "c":
            return BandStack(self.k, {o: v.real for o, v in self.bands.items()})
        return self

    def astype(self, dtype, copy=True):
        return BandStack(self.k, {o: v.astype(dtype, copy=copy) for o, v in self.bands.items()})

    def max_abs(self) -> float:
        return max(float(np.abs(v).max(initial=0.0)) for v in self.bands.values())

    def dense(self) -> np.ndarray:
        """The stack as an ordinary ``(k, m)`` array."""
        k, m = self.shape
        out = np.zeros((k, m), dtype=self.dtype)
        for o, v in self.bands.items():
            j = _valid(o, k, m)
            if len(j):
                # entry [j + o, j]: a strided diagonal of the flat array
                start = (j.start + o) * m + j.start
                out.flat[start : start + len(j) * (m + 1) : m + 1] = v[j.start : j.stop]
        return out

    def __repr__(self) -> str:
        return f"BandStack({self.k}, {self.bands!r})"

    def sliced(self, index: slice):
        """The stack of the read ``x[index]`` (a slice of step 1), or None."""
        start, stop, step = index.indices(self.m)
        if step != 1:
            return None
        stop = max(stop, start)
        bands = {}
        for o, v in self.bands.items():
            if len(_valid(o + start, self.k, stop - start)):
                bands[o + start] = v[start:stop]
        if not bands:
            return None  # an empty band: the dense stack of zeros says it plainly
        return BandStack(self.k, bands, stop - start)

    def scattered(self, index: slice, n: int):
        """The stack of a cotangent of ``x`` (length ``n``) that the read ``x[index]``
        (a slice of step 1 whose cotangent this is) adds, or None."""
        start, stop, step = index.indices(n)
        if step != 1 or max(stop, start) - start != self.m:
            return None
        bands = {}
        for o, v in self.bands.items():
            full = np.zeros(n, dtype=v.dtype)
            full[start : start + self.m] = v
            bands[o - start] = full
        return BandStack(self.k, bands, n)

    def __neg__(self):
        return BandStack(self.k, {o: -v for o, v in self.bands.items()}, self.m)

    def _factor(self, other) -> bool:
        """Whether ``other`` scales every band (a scalar or an array that broadcasts to
        ``(m,)`` without a batch axis) and is finite: off the band the dense stack holds
        ``0 * other``, an exact zero only where ``other`` is finite."""
        t = type(other)
        if t is float or t is int:
            return math.isfinite(other)
        if t is np.ndarray:
            if other.ndim > 1 or other.size not in (1, self.m):
                return False
        elif not isinstance(other, np.generic) or isinstance(other, np.bool_):
            return False
        return all_finite(np.asarray(other))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and not kwargs:
            out = self._structured(ufunc, inputs)
            if out is not None:
                return out
        dense = [x.dense() if isinstance(x, (BandStack, DiagonalStack)) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(
                x.dense() if isinstance(x, (BandStack, DiagonalStack)) else x
                for x in kwargs["out"]
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
        k, m = self.k, self.m
        if len(inputs) == 1:
            if ufunc in _UNARY:
                return BandStack(k, {o: ufunc(v) for o, v in self.bands.items()}, m)
            return None
        if len(inputs) != 2:
            return None
        a, b = inputs
        if ufunc in _SCALING:
            if type(a) is BandStack and a._factor(b):
                return BandStack(k, {o: v * b for o, v in a.bands.items()}, m)
            if type(b) is BandStack and b._factor(a):
                return BandStack(k, {o: a * v for o, v in b.bands.items()}, m)
            return None
        if ufunc in _LINEAR:
            a, b = self._as_band(a), self._as_band(b)
            if a is None or b is None:
                return None
            bands = dict(a.bands)
            for o, v in b.bands.items():
                if o in bands:
                    bands[o] = ufunc(bands[o], v)
                else:  # 0 + v and 0 - v without the zeros
                    bands[o] = v if ufunc is np.add else -v
            return BandStack(k, bands, m) if len(bands) <= _MAX_BANDS else None
        if ufunc in _DIVIDING and type(a) is BandStack and a._factor(b) and np.all(b != 0):
            return BandStack(k, {o: ufunc(v, b) for o, v in a.bands.items()}, m)
        return None


def as_band(g):
    """``g`` as a :class:`BandStack` where it is a diagonal or band stack of a vector."""
    if type(g) is BandStack:
        return g
    if type(g) is DiagonalStack and g.diagonal.ndim == 1:
        return BandStack.from_diagonal(g)
    return None


def combine_band(weights, stack: BandStack) -> np.ndarray:
    """``weights @ stack.dense()`` without the dense stack."""
    k, m = stack.shape
    out = np.zeros(m, dtype=np.result_type(weights, stack.dtype))
    for o, v in stack.bands.items():
        j = _valid(o, k, m)
        out[j.start : j.stop] += weights[j.start + o : j.stop + o] * v[j.start : j.stop]
    return out
