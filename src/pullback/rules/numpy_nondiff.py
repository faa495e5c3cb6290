"""NumPy functions whose outputs carry no gradient: rounding, predicates, constructors."""

from __future__ import annotations

import numpy as np

FAMILY = "numpy_nondiff"

NAMES = (
    "floor ceil round rint trunc fix sign "
    "argmax argmin argsort nonzero searchsorted "
    "shape ndim size "
    "zeros ones empty full eye identity arange "
    "zeros_like ones_like empty_like full_like "
    "equal not_equal less less_equal greater greater_equal "
    "logical_and logical_or logical_not logical_xor "
    "isnan isinf isfinite isclose allclose array_equal "
    "any all count_nonzero floor_divide"
).split()


def register(reg):
    fns = [getattr(np, name) for name in NAMES if hasattr(np, name)]
    reg.non_differentiable(*fns, family=FAMILY, trusted=True)
