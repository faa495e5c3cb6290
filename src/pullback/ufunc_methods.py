"""NumPy ufunc methods that are NumPy functions under another name.

``np.add.reduce(a, axis)`` is ``np.sum(a, axis)`` with the axis defaulting to 0,
``np.multiply.accumulate`` is ``np.cumprod`` (``np.maximum.accumulate`` and a few others
are functions of this module, which have rules), and ``np.subtract.outer(a, b)`` is
``np.subtract`` of ``a`` reshaped to ``a.shape + (1,) * b.ndim`` against ``b``. The
normalizer writes such calls as those functions
(:mod:`pullback.transform.ufunc_calls`), so their rules, second derivatives, forward mode
and lazy backends apply unchanged; the check accepts them for the same reason.

>>> import numpy as np
>>> rewritten_method(np.add.reduce)
('reduce', <ufunc 'add'>, <function sum at ...>)
>>> rewritten_method(np.logaddexp.reduce)[2].__name__   # no NumPy function computes it
'logaddexp_reduce'
>>> rewritten_method(np.hypot.reduce) is None
True
"""

from __future__ import annotations

import numpy as np


def logaddexp_reduce(array, axis=0, dtype=None, keepdims=False, initial=None, where=True):
    """``np.logaddexp.reduce``: ``log(sum(exp(a)))`` along ``axis`` (a log-sum-exp)."""
    return np.logaddexp.reduce(
        array, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where
    )


def logaddexp2_reduce(array, axis=0, dtype=None, keepdims=False, initial=None, where=True):
    """``np.logaddexp2.reduce``: ``log2(sum(2**a))`` along ``axis``."""
    return np.logaddexp2.reduce(
        array, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where
    )


#: ``ufunc.reduce`` -> the function computing the same values: NumPy's reductions, else
#: the functions above (whose rules are in rules/numpy_accumulate.py).
REDUCTIONS = {
    np.add: np.sum,
    np.multiply: np.prod,
    np.maximum: np.max,
    np.minimum: np.min,
    np.logaddexp: logaddexp_reduce,
    np.logaddexp2: logaddexp2_reduce,
}


def maximum_accumulate(array, axis=0, dtype=None):
    """``np.maximum.accumulate``: the running maximum along ``axis``."""
    return np.maximum.accumulate(array, axis, dtype)


def minimum_accumulate(array, axis=0, dtype=None):
    """``np.minimum.accumulate``: the running minimum along ``axis``."""
    return np.minimum.accumulate(array, axis, dtype)


def logaddexp_accumulate(array, axis=0, dtype=None):
    """``np.logaddexp.accumulate``: the running ``log(sum(exp(...)))`` along ``axis``."""
    return np.logaddexp.accumulate(array, axis, dtype)


def subtract_accumulate(array, axis=0, dtype=None):
    """``np.subtract.accumulate``: ``a[0] - a[1] - ... - a[i]`` along ``axis``."""
    return np.subtract.accumulate(array, axis, dtype)


def divide_accumulate(array, axis=0, dtype=None):
    """``np.divide.accumulate``: ``a[0] / a[1] / ... / a[i]`` along ``axis``."""
    return np.divide.accumulate(array, axis, dtype)


def add_reduceat(array, indices, axis=0, dtype=None):
    """``np.add.reduceat``: the sums of the segments ``indices`` marks along ``axis``."""
    return np.add.reduceat(array, indices, axis=axis, dtype=dtype)


def reduceat_segments(indices, n):
    """``(starts, ends)`` of the segments ``ufunc.reduceat(a, indices)`` reduces along an
    axis of length ``n``: ``a[indices[i]:indices[i + 1]]``, the single element
    ``a[indices[i]]`` where the next index is not larger, ``a[indices[-1]:]`` last.
    Python ints (integer bookkeeping: transformed code calls it as it is)."""
    starts = [int(i) for i in np.ravel(indices)]
    for s in starts:
        if not 0 <= s < n:  # (what NumPy says, before any gradient is computed)
            raise IndexError(f"index {s} out-of-bounds in reduceat for an axis of length {n}")
    ends = starts[1:] + [n]
    ends = [e if s < e else s + 1 for s, e in zip(starts, ends, strict=True)]
    return starts, ends


reduceat_segments.__pullback_opaque__ = True


def _reduced_segments(array, indices, axis, kind):
    """Each segment's ``np.prod``, ``np.max`` or ``np.min`` (``kind``), stacked along
    ``axis``: ``ufunc.reduceat`` written with reductions whose rules give the derivative
    (pullback transforms it like user code: first and second order, forward mode). The
    reductions are named in the calls, not passed as values: a second derivative through a
    reduction called as a value is refused (its ``axis`` taken for a differentiated one)."""
    a = np.moveaxis(array, axis, 0)
    starts, ends = reduceat_segments(indices, np.shape(a)[0])
    parts = []
    for s, e in zip(starts, ends, strict=True):
        if kind == "prod":
            parts.append(np.prod(a[s:e], 0))
        elif kind == "max":
            parts.append(np.max(a[s:e], 0))
        else:
            parts.append(np.min(a[s:e], 0))
    return np.moveaxis(np.stack(parts, 0), 0, axis)


def multiply_reduceat(array, indices, axis=0, dtype=None):
    """``np.multiply.reduceat``: each segment's ``np.prod``."""
    return _reduced_segments(np.asarray(array, dtype=dtype), indices, axis, "prod")


def maximum_reduceat(array, indices, axis=0, dtype=None):
    """``np.maximum.reduceat``: each segment's ``np.max`` (ties share as np.max's do)."""
    return _reduced_segments(np.asarray(array, dtype=dtype), indices, axis, "max")


def minimum_reduceat(array, indices, axis=0, dtype=None):
    """``np.minimum.reduceat``: each segment's ``np.min``."""
    return _reduced_segments(np.asarray(array, dtype=dtype), indices, axis, "min")


# Written in the differentiable subset: pullback differentiates them from their source
# (registry.transformable, which this layer does not import).
for _fn in (_reduced_segments, multiply_reduceat, maximum_reduceat, minimum_reduceat):
    _fn.__pullback_transformable__ = True

#: ``ufunc.reduceat`` -> the function computing the same values.
REDUCEATS = {
    np.add: add_reduceat,
    np.multiply: multiply_reduceat,
    np.maximum: maximum_reduceat,
    np.minimum: minimum_reduceat,
}


#: ``ufunc.accumulate`` -> the function computing the same values: NumPy's cumulative
#: functions, else the functions above (whose rules are in rules/numpy_accumulate.py).
ACCUMULATIONS = {
    np.add: np.cumsum,
    np.multiply: np.cumprod,
    np.maximum: maximum_accumulate,
    np.minimum: minimum_accumulate,
    np.logaddexp: logaddexp_accumulate,
    np.subtract: subtract_accumulate,
    np.divide: divide_accumulate,
}
#: Parameter names of the methods, in order (NumPy's signatures).
PARAMETERS = {
    "reduce": ("array", "axis", "dtype", "out", "keepdims", "initial", "where"),
    "accumulate": ("array", "axis", "dtype", "out"),
    "reduceat": ("array", "indices", "axis", "dtype", "out"),
}


def ufunc_method(obj):
    """``(method name, ufunc)`` of a bound method of a NumPy ufunc, or None."""
    owner = getattr(obj, "__self__", None)
    if isinstance(owner, np.ufunc) and callable(obj):
        return getattr(obj, "__name__", ""), owner
    return None


def rewritten_method(obj):
    """``(method, ufunc, NumPy function)`` when the normalizer writes a call of ``obj`` as
    a NumPy function (for ``outer``, the ufunc itself), else None."""
    found = ufunc_method(obj)
    if found is None:
        return None
    name, ufunc = found
    if name == "reduce" and ufunc in REDUCTIONS:
        return name, ufunc, REDUCTIONS[ufunc]
    if name == "accumulate" and ufunc in ACCUMULATIONS:
        return name, ufunc, ACCUMULATIONS[ufunc]
    if name == "reduceat" and ufunc in REDUCEATS:
        return name, ufunc, REDUCEATS[ufunc]
    if name == "outer" and ufunc.nin == 2 and ufunc.nout == 1:
        return name, ufunc, ufunc
    return None
