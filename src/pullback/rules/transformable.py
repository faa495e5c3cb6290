"""Pullbacks written as plain functions in the differentiable subset.

Generated adjoints call these directly (no closure per call), and because pullback can
transform them like user code, derivatives run through them again: Hessians and grad of
grad of code that uses these functions. Each one must agree with its rule's pullback
(tests/test_second_order_rules.py checks that).
"""

from __future__ import annotations

import numpy as np

from ..registry import transformable
from ..runtime import matmul_lhs_cotangent, matmul_rhs_cotangent
from ..tangents import NO_TANGENT

FAMILY = "transformable"


@transformable
def sum_pullback(dy, x, axis=None, dtype=None, keepdims=False):
    g = dy
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
    return np.broadcast_to(g, np.shape(x)), NO_TANGENT


@transformable
def mean_pullback(dy, x, axis=None, dtype=None, keepdims=False):
    g = dy / (np.size(x) / np.size(dy))
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
    return np.broadcast_to(g, np.shape(x)), NO_TANGENT


@transformable
def transpose_pullback(dy, x, axes=None):
    if axes is None:
        return np.transpose(dy), NO_TANGENT
    return np.transpose(dy, np.argsort(axes)), NO_TANGENT


@transformable
def reshape_pullback(dy, x, shape=None, order="C"):
    return np.reshape(dy, np.shape(x), order=order), NO_TANGENT


@transformable
def matmul_pullback(dy, a, b):
    return matmul_lhs_cotangent(dy, a, b), matmul_rhs_cotangent(dy, a, b)


def register(reg):
    for fn, pullback_fn in (
        (np.sum, sum_pullback),
        (np.mean, mean_pullback),
        (np.transpose, transpose_pullback),
        (np.reshape, reshape_pullback),
        (np.matmul, matmul_pullback),
    ):
        if reg.lookup(fn) is not None:
            reg.set_pullback_function(fn, pullback_fn)
