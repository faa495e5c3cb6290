"""Editing arrays by position: ``np.delete`` and ``np.resize``.

Both only move and copy elements, so their pullbacks run the function itself on position
labels (``_util.position_labels``) to learn where each element went, then sum the output
cotangent back by label (``numpy_assemble_pullbacks.gather_labelled``): no second copy of
NumPy's rules for ``obj`` (ints, slices, boolean masks, negative indices) or for the
cyclic repetition of ``np.resize``. The pullbacks are transformable functions, so second
derivatives run through them (the label bookkeeping is integer work, declared opaque).

>>> import numpy as np
>>> from pullback import grad
>>> grad(lambda x: np.sum(np.delete(x, 1) ** 2))(np.array([1.0, 2.0, 3.0])).tolist()
[2.0, 0.0, 6.0]
>>> grad(lambda x: np.sum(np.resize(x, 5)))(np.array([1.0, 2.0])).tolist()
[3.0, 2.0]
"""

from __future__ import annotations

import math

import numpy as np

from ..registry import transformable
from ._util import NO_TANGENT, Registrar, position_labels
from .family_domains import DOMAINS
from .numpy_assemble_pullbacks import gather_labelled, labelled_part
from .transformable import rule_from_pullback, set_pullbacks

FAMILY = "numpy_edit"
# Registered on the first lookup of one of its functions (family_domains.py).
DOMAIN = DOMAINS["numpy_edit"]


def _keys(ids):
    return np.ravel(np.rint(np.imag(ids)).astype(np.intp))


def delete_labels(arr, obj, axis):
    """The flat labels (from 1) of ``np.delete(arr, obj, axis)``'s elements, and their count."""
    ids = np.delete(position_labels(np.asarray(arr), 1), obj, axis)
    return _keys(ids), 1 + math.prod(np.shape(arr))


def resize_labels(a, new_shape):
    """The flat labels (from 1) of ``np.resize(a, new_shape)``'s elements, and their count."""
    ids = np.resize(position_labels(np.asarray(a), 1), new_shape)
    return _keys(ids), 1 + math.prod(np.shape(a))


# Integer bookkeeping: transformed code (a second derivative) calls them as they are.
delete_labels.__pullback_opaque__ = True
resize_labels.__pullback_opaque__ = True


@transformable
def delete_pullback(dy, arr, obj, axis=None):
    keys, n = delete_labels(arr, obj, axis)
    return labelled_part(gather_labelled(dy, keys, n), 1, arr), NO_TANGENT, NO_TANGENT


@transformable
def resize_pullback(dy, a, new_shape):
    keys, n = resize_labels(a, new_shape)
    return labelled_part(gather_labelled(dy, keys, n), 1, a), NO_TANGENT


def register(reg):
    r = Registrar(reg, FAMILY)
    pairs = ((np.delete, delete_pullback), (np.resize, resize_pullback))
    for fn, pullback_fn in pairs:
        r.rule(fn, rule_from_pullback(fn, pullback_fn), notes="moves elements: labels")
    reg.non_differentiable(delete_labels, resize_labels, family=FAMILY, trusted=True)
    set_pullbacks(reg, pairs)
