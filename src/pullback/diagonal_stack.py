"""A stack of cotangents that is a scaled identity: row ``r`` is ``e_r * v.flat[r]``.

The rows of a Jacobian start as the basis of the output's cotangents, ``np.eye(n)``
reshaped to ``(n,) + shape``. Through an elementwise map every row stays zero except at
its own position, so the whole stack is told by one array ``v`` of the primal's shape:
:class:`DiagonalStack` carries that vector through products, quotients, negations and sums
with other diagonal stacks (what the reverse sweep of an elementwise map does), and turns
into the dense ``(n,) + shape`` stack (:meth:`DiagonalStack.dense`) as soon as anything
else touches it, so every other step sees the ordinary batched array.

It is exact: row ``r`` of ``diag(v) * a`` is ``e_r * v_r * a_r``, computed with the same
floating-point operations as the row-by-row pullback of ``e_r`` (``1 * ... * a_r`` at
``r``, exact zeros elsewhere). The one difference would be a non-finite factor (row by
row, ``0 * inf`` puts NaN off the diagonal): a step whose result is not finite everywhere
therefore works on the dense stack instead.

While a batched sweep runs with the check deferred (:func:`deferred_call`, what
``pullback.batched`` does for a diagonal seed), a real step skips that test, and the
test is made where the stack leaves this form instead: :meth:`DiagonalStack.dense` and
the band stacks made from it raise :class:`NonFiniteDiagonal` for a non-finite diagonal,
and the sweep's caller tests the stacks it gets back. The answer is the same: every step
works on each position of the diagonal alone (column ``c`` of the dense stack), and a
non-finite entry stays non-finite through every real step (``inf * 0``, ``inf / inf``,
``inf - inf`` are NaN), so a diagonal that is finite where it leaves was finite after
every step; one that is not makes the caller run the sweep again with the test at each
step, as before. (A column that ``np.where`` zeroes is zero in both forms.)

>>> import numpy as np
>>> d = DiagonalStack(np.ones(3))
>>> (d * np.arange(3.0)).dense()
array([[0., 0., 0.],
       [0., 1., 0.],
       [0., 0., 2.]])
"""

from __future__ import annotations

import functools
import math
from _thread import _local as thread_local  # threading.local, without importing threading

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from .zero import _Zero

# Ufuncs that map a diagonal stack (and operands that broadcast to the primal's shape,
# not along the batch axis) to a diagonal stack, by what they do to the diagonal.
_SCALING = {np.multiply}
_DIVIDING = {np.true_divide, np.divide}
_UNARY = {np.negative, np.positive}
_LINEAR = {np.add, np.subtract}


def all_finite(v) -> bool:
    """Whether every entry of the array ``v`` is finite. For a real array its sum of
    squares is: a NaN or infinite entry makes it NaN or infinite, and its terms are never
    negative, so nothing cancels (one dot product, half the cost of ``np.add.reduce`` on a
    small array, no boolean array). A sum that overflows says False for finite entries,
    which only costs the structure."""
    if v.dtype.kind == "f":
        flat = v if v.ndim == 1 else v.reshape(-1)
        return math.isfinite(flat.dot(flat))
    return bool(np.isfinite(v).all())


class NonFiniteDiagonal(ArithmeticError):
    """A diagonal stack whose finiteness test was deferred (:func:`deferred_call`) left its
    form with a non-finite diagonal: the sweep must run again with the test at each step."""


class _Deferral(thread_local):
    """Whether the finiteness test of the running sweep's real steps is deferred (see the
    module docstring): False except while :func:`deferred_call` runs, in this thread only."""

    on: bool = False


deferral = _Deferral()


def deferred_call(fn, *args):
    """``fn(*args)`` with the finiteness test of diagonal stacks deferred to where they
    leave their form, in this thread (see the module docstring).

    >>> d = DiagonalStack(np.array([1.0, 2.0]))
    >>> e = deferred_call(d.__mul__, np.array([np.inf, 1.0]))  # not tested: still diagonal
    >>> e
    DiagonalStack(array([inf,  2.]))
    >>> deferred_call(e.dense)
    Traceback (most recent call last):
    ...
    pullback.diagonal_stack.NonFiniteDiagonal: a diagonal stack is not finite
    >>> with np.errstate(invalid="ignore"):  # tested at the step: dense, as row by row
    ...     d * np.array([np.inf, 1.0])
    array([[inf,  0.],
           [nan,  2.]])
    """
    outer = deferral.on
    deferral.on = True
    try:
        return fn(*args)
    finally:
        deferral.on = outer


def checked_on_leaving(diagonal):
    """``diagonal``, tested as its stack leaves its form while the test is deferred."""
    if deferral.on and not all_finite(diagonal):
        raise NonFiniteDiagonal("a diagonal stack is not finite")
    return diagonal


_largest = np.maximum.reduce
_multiply = np.multiply
_ndarray = np.ndarray
_isfinite = math.isfinite
_new = object.__new__


def max_abs(a) -> float:
    """The largest absolute entry of the array ``a`` (0.0 when it is empty; NaN when one
    is NaN), in one reduction without NumPy's method wrappers."""
    return float(_largest(np.abs(a), axis=None)) if a.size else 0.0


def stack_operator(ufunc, name, reflected=False):
    """The binary operator ``name`` of a structured stack: its ``_structured(ufunc,
    inputs)`` result where there is one, else what NumPy's operator mixin does (the dense
    result, or NotImplemented). The operators a reverse sweep writes (``d * t``, ``2.0 *
    d``, ``a + b``) then skip NumPy's ufunc dispatch, which costs more than a small step."""
    fallback = getattr(NDArrayOperatorsMixin, name)

    def operator(self, other):
        if type(other) is _Zero:
            return NotImplemented  # what the fallback says: ZERO's own operator answers
        out = self._structured(ufunc, (other, self) if reflected else (self, other))
        return out if out is not None else fallback(self, other)

    operator.__name__ = name
    return operator


class StructuredStack(NDArrayOperatorsMixin):
    """A stack of cotangents kept in a compact form: NumPy sees its dense array
    (``dense()``) wherever it is converted or indexed."""

    __slots__ = ()

    def dense(self) -> np.ndarray:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def __array__(self, dtype=None, copy=None):
        out = self.dense()
        return out if dtype is None else out.astype(dtype, copy=False)

    def __getitem__(self, index):
        return self.dense()[index]

    def _structured(self, ufunc, inputs):  # pragma: no cover - every subclass defines it
        """The result of ``ufunc(*inputs)`` as a stack of this kind, or None."""
        raise NotImplementedError

    __mul__ = stack_operator(np.multiply, "__mul__")
    __rmul__ = stack_operator(np.multiply, "__rmul__", reflected=True)
    __truediv__ = stack_operator(np.true_divide, "__truediv__")
    __add__ = stack_operator(np.add, "__add__")
    __radd__ = stack_operator(np.add, "__radd__", reflected=True)
    __sub__ = stack_operator(np.subtract, "__sub__")
    __rsub__ = stack_operator(np.subtract, "__rsub__", reflected=True)


class DiagonalStack(StructuredStack):
    """The stack ``(n,) + shape`` whose row ``r`` is zero but at flat position ``r``, where
    it is ``diagonal.flat[r]`` (``n = diagonal.size``). See the module docstring."""

    __slots__ = ("diagonal",)

    def __init__(self, diagonal):
        self.diagonal = diagonal

    @property
    def inner_shape(self) -> tuple:
        return self.diagonal.shape

    @property
    def shape(self) -> tuple:
        return (self.diagonal.size,) + self.diagonal.shape

    @property
    def ndim(self) -> int:
        return self.diagonal.ndim + 1

    @property
    def dtype(self):
        return self.diagonal.dtype

    @property
    def real(self):
        if self.diagonal.dtype.kind == "c":
            return DiagonalStack(self.diagonal.real)
        return self

    def astype(self, dtype, copy=True):
        return DiagonalStack(self.diagonal.astype(dtype, copy=copy))

    def dense(self) -> np.ndarray:
        """The stack as an ordinary array of shape ``(n,) + shape``."""
        d = self.diagonal
        if deferral.on:
            checked_on_leaving(d)
        n = d.size
        out = np.zeros((n, n), dtype=d.dtype)
        # a strided view of the flat array: assigning through ``out.flat`` costs ~20x more
        if d.ndim == 1:
            out.reshape(-1)[:: n + 1] = d
            return out
        out.reshape(-1)[:: n + 1] = d.reshape(-1)
        return out.reshape((n,) + d.shape)

    def __repr__(self) -> str:
        return f"DiagonalStack({self.diagonal!r})"

    def _inner(self, other) -> bool:
        """Whether ``other`` broadcasts to the primal's shape without adding axes (a scalar
        or an array with no batch axis), so it scales each row where that row lives."""
        t = type(other)
        if t is float or t is np.ndarray and other.shape == self.diagonal.shape:
            return True
        if isinstance(other, (int, float, complex, np.generic)) and not isinstance(other, bool):
            return True
        if t is not np.ndarray or other.ndim > self.diagonal.ndim:
            return False
        if other.shape == self.diagonal.shape:
            return True
        try:
            return np.broadcast_shapes(other.shape, self.inner_shape) == self.inner_shape
        except ValueError:
            return False

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc is _multiply and method == "__call__" and not kwargs and len(inputs) == 2:
            # ``t * d`` with ``t`` an array of the primal's shape (NumPy's operator comes
            # here): the product a reverse sweep writes most, decided first
            a = inputs[0]
            d = self.diagonal
            if inputs[1] is self and (type(a) is _ndarray and a.shape == d.shape):
                v = a * d
                if v.ndim == 1 and v.dtype.kind == "f" and (deferral.on or _isfinite(v.dot(v))):
                    out = _new(DiagonalStack)  # (as in __mul__)
                    out.diagonal = v
                    return out
                out = _scaled(v, d)
                if out is not None:
                    return out
        for x in inputs:
            if getattr(type(x), "_stack_priority", 0):
                return NotImplemented  # a band stack (pullback.band_stack) knows both
        if method == "__call__" and not kwargs:
            out = self._structured(ufunc, inputs)
            if out is not None:
                return out
        dense = [x.dense() if type(x) is DiagonalStack else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(
                x.dense() if type(x) is DiagonalStack else x for x in kwargs["out"]
            )
        return getattr(ufunc, method)(*dense, **kwargs)

    def __neg__(self):
        return DiagonalStack(-self.diagonal)

    # ``d * t`` and ``2.0 * d`` by an array of the primal's shape or a float, decided here
    # before the general operators (StructuredStack): the products an elementwise sweep
    # writes. Off the diagonal the dense stack holds 0 * t: exact zeros where the result
    # is finite (see _structured). A float vector, the common product, is checked inline
    # (the sum of squares of all_finite) without a call of _scaled, which decides the rest.
    def __mul__(self, other):
        t = type(other)
        d = self.diagonal
        if t is float or t is _ndarray and other.shape == d.shape:
            v = d * other
            if v.ndim == 1 and v.dtype.kind == "f" and (deferral.on or _isfinite(v.dot(v))):
                # a finite vector (or its test deferred): _scaled's answer, made without
                # a call of __init__ (a Python frame costs more than the product)
                out = _new(DiagonalStack)
                out.diagonal = v
                return out
            out = _scaled(v, d)
            if out is not None:
                return out
        return StructuredStack.__mul__(self, other)

    def __rmul__(self, other):
        t = type(other)
        d = self.diagonal
        if t is float or t is _ndarray and other.shape == d.shape:
            v = other * d
            if v.ndim == 1 and v.dtype.kind == "f" and (deferral.on or _isfinite(v.dot(v))):
                out = _new(DiagonalStack)  # (as in __mul__)
                out.diagonal = v
                return out
            out = _scaled(v, d)
            if out is not None:
                return out
        return StructuredStack.__rmul__(self, other)

    def __add__(self, other):
        if type(other) is DiagonalStack and other.diagonal.shape == self.diagonal.shape:
            out = _new(DiagonalStack)  # what _structured gives (made as in __mul__)
            out.diagonal = self.diagonal + other.diagonal
            return out
        return StructuredStack.__add__(self, other)

    def _scaled(self, v):
        """The stack of diagonal ``v``, this one's times a float or an array of the
        primal's shape, where ``v`` is finite (see _structured); else None."""
        return _scaled(v, self.diagonal)

    def _structured(self, ufunc, inputs):
        """The result as a diagonal stack, or None where it is not one (or not finite)."""
        if ufunc in _UNARY and len(inputs) == 1:
            return DiagonalStack(ufunc(self.diagonal))
        if ufunc is np.conjugate and len(inputs) == 1:
            return DiagonalStack(np.conjugate(self.diagonal))
        if len(inputs) != 2:
            return None
        a, b = inputs
        if ufunc in _LINEAR:
            if type(a) is DiagonalStack and type(b) is DiagonalStack and a.shape == b.shape:
                return DiagonalStack(ufunc(a.diagonal, b.diagonal))
            return None
        if ufunc in _SCALING:
            if type(a) is DiagonalStack and a._inner(b):
                v = ufunc(a.diagonal, b)
            elif type(b) is DiagonalStack and b._inner(a):
                v = ufunc(a, b.diagonal)
            else:
                return None
        elif ufunc in _DIVIDING and type(a) is DiagonalStack and a._inner(b):
            v = ufunc(a.diagonal, b)
        else:
            return None
        v = np.asarray(v)
        if v.shape != self.inner_shape or not _finite_or_deferred(v):
            return None  # off the diagonal row by row would not be exact zeros
        return DiagonalStack(v)


def _scaled(v, diagonal):
    """The stack of diagonal ``v`` (a product of ``diagonal`` and a float or an array of
    the primal's shape) where ``v`` is finite (see DiagonalStack._structured); else None.
    A function of the module, not a method: one attribute look-up less per product."""
    if type(v) is _ndarray and v.shape == diagonal.shape:
        if v.ndim == 1 and v.dtype.kind == "f":  # all_finite of a vector, written out
            return DiagonalStack(v) if deferral.on or _isfinite(v.dot(v)) else None
        if _finite_or_deferred(v):
            return DiagonalStack(v)
    return None


def _finite_or_deferred(v) -> bool:
    """Whether the step's diagonal ``v`` may stay a diagonal stack: it is finite, or it is
    real and the test is deferred (a complex one is tested at once: its real part could
    drop a non-finite imaginary part)."""
    return (deferral.on and v.dtype.kind == "f") or all_finite(v)


@functools.lru_cache(maxsize=16)
def identity_stack(shape: tuple, dtype) -> DiagonalStack:
    """The basis of cotangents of an array of ``shape`` (a tuple): ``np.eye(n)`` reshaped
    to ``(n,) + shape``, as a :class:`DiagonalStack`. Made once per shape and dtype (a
    Jacobian per call of the same shapes needs the same basis) and shared: its vector of
    ones is read-only, so every step makes new arrays from it, and a write into it would
    raise (the batched sweep then falls back to rows)."""
    ones = np.ones(shape, dtype=np.dtype(dtype))
    ones.flags.writeable = False
    return DiagonalStack(ones)


def combine(weights, stack: DiagonalStack) -> np.ndarray:
    """``np.tensordot(weights, stack, axes=1)`` without the dense stack."""
    return weights.reshape(stack.diagonal.shape) * stack.diagonal
