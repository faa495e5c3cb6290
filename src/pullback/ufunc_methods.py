"""NumPy ufunc methods that are NumPy functions under another name.

``np.add.reduce(a, axis)`` is ``np.sum(a, axis)`` with the axis defaulting to 0,
``np.multiply.accumulate`` is ``np.cumprod``, and ``np.subtract.outer(a, b)`` is
``np.subtract`` of ``a`` reshaped to ``a.shape + (1,) * b.ndim`` against ``b``. The
normalizer writes such calls as those functions
(:mod:`pullback.transform.ufunc_calls`), so their rules, second derivatives, forward mode
and lazy backends apply unchanged; the check accepts them for the same reason.

>>> import numpy as np
>>> rewritten_method(np.add.reduce)
('reduce', <ufunc 'add'>, <function sum at ...>)
>>> rewritten_method(np.logaddexp.reduce) is None   # no NumPy function computes it
True
"""

from __future__ import annotations

import numpy as np

#: ``ufunc.reduce`` -> the NumPy reduction computing the same values.
REDUCTIONS = {np.add: np.sum, np.multiply: np.prod, np.maximum: np.max, np.minimum: np.min}
#: ``ufunc.accumulate`` -> the NumPy cumulative function computing the same values.
ACCUMULATIONS = {np.add: np.cumsum, np.multiply: np.cumprod}
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
