"""Python lists (and tuples) of numbers where a derivative formula needs an array.

A NumPy function takes a list as ``np.asarray`` of it (``np.square(errs)`` for a list
``errs`` that a loop appended to), and first-order reverse mode runs its rule's closure,
which does the same. But the formulas pullback writes itself apply Python's operators to
the argument or to its tangent or cotangent: an inline derivative ``2.0 * x`` in forward
mode or in a vjp function that a second derivative transforms, ``t_x * d`` with the tangent
of a list (a list, with ``ZERO`` for entries that carry none), ``d / n`` in the reverse
sweep of a pullback that got a list as the cotangent of the array it returned. On a list
those are a ``TypeError`` (or a list repeated). The helpers here give such a formula what
NumPy would see:

* :func:`dense_operand` — the value, as an array where it is a list or tuple;
* :func:`dense_tangent` — a list tangent (or cotangent) of a list, as an array of that
  array's shape, zeros where an entry has none;
* :func:`stacked_like` — entries, one per row of an array, as an array like it (what a
  split of an array's cotangent into its rows gives back when transposed), and
  :func:`cotangent_like`, the same for a cotangent that may already be an array.

>>> import numpy as np
>>> from pullback.tangents import ZERO
>>> dense_operand([1.0, 2.0]), dense_operand(3.0)
(array([1., 2.]), 3.0)
>>> dense_tangent([ZERO, 0.5], [np.float32(1.0), np.float32(2.0)])
array([0. , 0.5], dtype=float32)
>>> stacked_like([ZERO, [1.0, 2.0]], np.ones((2, 2)))
array([[0., 0.],
       [1., 2.]])
"""

from __future__ import annotations

import numpy as np

from .registry import transformable
from .tangents import NO_TANGENT, ZERO, densify

_SEQUENCES = (list, tuple)


@transformable
def dense_operand(x):
    """``np.asarray(x)`` for a list or tuple (what a NumPy function makes of it), else
    ``x`` itself (a number stays a number). Transformable: a derivative of a formula on it
    goes back through ``np.asarray``, whose rule gives a list's cotangent as a list."""
    if isinstance(x, (list, tuple)):
        return np.asarray(x)
    return x


def dense_tangent(t, x):
    """The tangent (or cotangent) ``t`` of ``x`` as that of :func:`dense_operand` ``(x)``:
    for a list or tuple ``x``, an array of ``np.asarray(x)``'s shape, floating, with zeros
    where an entry has none; anything else unchanged."""
    if t is ZERO or t is NO_TANGENT or type(x) not in _SEQUENCES:
        return t
    like = np.asarray(x)
    if like.dtype.kind not in "fc":
        like = like.astype(np.result_type(like.dtype, 1.0))
    if isinstance(t, _SEQUENCES):
        dense = stacked_like(t, like)
        if not isinstance(dense, _SEQUENCES):
            return dense
    return np.asarray(densify(t))


@transformable  # (a third derivative transforms the pullbacks that call it)
def cotangent_like(c, like):
    """The cotangent ``c`` in the structure of ``like``: a list or tuple ``c`` of an array
    ``like`` as an array (:func:`stacked_like`); anything else unchanged. The transpose of
    a step that took an array's cotangent into a list (``add`` of a list's cotangent and
    an array's) gives the array its cotangent in its own form."""
    if type(like) is np.ndarray and type(c) in _SEQUENCES:
        return stacked_like(c, like)
    return c


@transformable
def stacked_like(items, like):
    """``items`` (one per row of the array ``like``, ``ZERO`` where none; an item may be a
    list for a row of rows) as an array of ``like``'s shape and floating dtype. Items of
    another shape (a stack of cotangents with a batch axis) leave ``items`` as they are."""
    if type(like) is not np.ndarray or like.ndim == 0 or len(items) != len(like):
        return items
    row = like.shape[1:]
    dtype = like.dtype if like.dtype.kind in "fc" else np.result_type(like.dtype, 1.0)
    out = np.zeros(like.shape, dtype)
    for k, item in enumerate(items):
        if item is ZERO or item is NO_TANGENT:
            continue
        if isinstance(item, _SEQUENCES):
            item = stacked_like(item, like[k])
            if isinstance(item, _SEQUENCES):
                return items
        item = densify(item)
        if np.shape(item) != row:
            return items
        if out.dtype.kind != "c" and np.iscomplexobj(item):
            out = out.astype(np.result_type(out.dtype, 1j))
        out[k] = item
    return out
