"""First-order fast paths of :func:`~pullback.runtime.plus_cotangents` and
:func:`~pullback.runtime.times_cotangents` for the reverse sweep of a loop step.

An operator whose operands' kinds the transformation cannot prove (``sin(x[i]) * x[i]``
with ``x`` an argument) gets its cotangents from the generic helpers, which check for
tuples and lists and unbroadcast each operand: six Python calls per ``*`` and three per
``+``. Here the common case is tested first, by exact types, shapes and dtypes: real
NumPy scalars of one type, Python floats, or real arrays of one shape and one dtype,
where no operand is a sequence and nothing was broadcast. Then the result is exactly
the generic helper's (``g`` itself for ``+``; ``g * b`` and ``a * g`` for ``*``, the
conjugate of a real value being itself). Anything else goes to the generic helper.

The generated code calls these in the sweeps only; the code that must stay
differentiable again keeps the generic, transformable helpers (``Line.alt``).

>>> a, b = np.ones(3), np.full(3, 2.0)
>>> da, db = times_fast(np.ones(3), a, b)
>>> da, db
(array([2., 2., 2.]), array([1., 1., 1.]))
>>> plus_fast(np.float32(1.0), np.float32(2.0), np.float32(3.0))
(np.float32(1.0), np.float32(1.0))
>>> plus_fast(np.ones(2), np.ones((1, 2)), np.ones(2))[0].shape  # broadcast: generic
(1, 2)
"""

from __future__ import annotations

import numpy as np

from .diagonal_stack import DiagonalStack
from .runtime import plus_cotangents, times_cotangents
from .tangents import batch_axes

_ndarray = np.ndarray
_float64 = np.float64
_float32 = np.float32
_complex128 = np.complex128


def _same_real_arrays(g, a, b) -> bool:
    """Whether ``g``, ``a`` and ``b`` are real arrays of one shape and one dtype, outside
    a stack of cotangents (whose ``g`` carries extra axes)."""
    dt = g.dtype
    return (
        a.dtype is dt
        and b.dtype is dt
        and dt.kind == "f"
        and a.shape == g.shape
        and b.shape == g.shape
        and not batch_axes.axes
    )


def plus_fast(g, a, b):
    """``plus_cotangents(g, a, b)``, the same result, with no call where ``g``, ``a`` and
    ``b`` are real scalars of one type or real arrays of one shape and dtype."""
    tg = type(g)
    if tg is type(a) and tg is type(b):
        if tg is _float64 or tg is float or tg is _float32 or tg is complex or tg is _complex128:
            return g, g
        if tg is _ndarray and _same_real_arrays(g, a, b):
            return g, g
    return plus_cotangents(g, a, b)


def times_fast(g, a, b):
    """``times_cotangents(g, a, b)``, the same result (``g * b``, ``a * g``), with no
    further call where the three are real scalars of one type or real arrays of one
    shape and dtype."""
    tg = type(g)
    if tg is type(a) and tg is type(b):
        if tg is _float64 or tg is float or tg is _float32:
            return g * b, a * g
        if tg is _ndarray and _same_real_arrays(g, a, b):
            return g * b, a * g
        if tg is complex or tg is _complex128:  # (conjugated, as times_cotangents does)
            return g * b.conjugate(), a.conjugate() * g
    elif tg is DiagonalStack and _stack_of_real_arrays(g, a, b):
        # the rows of a Jacobian through an elementwise product (pullback.batched): the
        # stack's own products, which unbroadcast keeps as they are; ``a * g`` by the
        # stack's reflected product, not through NumPy's ufunc dispatch (the same values)
        return g * b, g.__rmul__(a)
    return times_cotangents(g, a, b)


def _stack_of_real_arrays(g, a, b) -> bool:
    """Whether ``a`` and ``b`` are real arrays of the shape and dtype of the diagonal of
    the stack ``g``, which holds one row per element of that shape (the batch axes of
    the running stack): there ``times_cotangents`` gives ``g * b`` and ``a * g``."""
    d = g.diagonal
    dt = d.dtype
    return (
        type(a) is _ndarray
        and type(b) is _ndarray
        and a.dtype is dt
        and b.dtype is dt
        and dt.kind == "f"
        and a.shape == d.shape
        and b.shape == d.shape
        and batch_axes.axes == (d.size,)
    )
