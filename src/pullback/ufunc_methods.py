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
    if name == "outer" and ufunc.nin == 2 and ufunc.nout == 1:
        return name, ufunc, ufunc
    return None
