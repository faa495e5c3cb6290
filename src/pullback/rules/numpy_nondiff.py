"""Functions whose outputs carry no gradient: rounding, sign, comparisons and predicates,
index-valued functions (arg*, nonzero, searchsorted, ...), shape queries, constructors
that take no differentiable value (zeros, ones, empty, eye, arange, ``*_like`` except
``full_like``). Random number generation is the family ``numpy_random``.

The core treats their outputs as constants: no adjoint is allocated for them.
"""

from __future__ import annotations

import numpy as np

from ._util import Registrar
from .numpy_random import GENERATOR_METHODS, RANDOM_FUNCTIONS, RANDOMSTATE_METHODS  # noqa: F401

FAMILY = "numpy_nondiff"

NUMPY_NAMES = (
    # rounding and sign: piecewise constant
    "floor ceil round around rint trunc fix sign signbit spacing floor_divide "
    # comparisons, predicates, logic
    "equal not_equal less less_equal greater greater_equal "
    "logical_and logical_or logical_not logical_xor "
    "isnan isinf isfinite isposinf isneginf isclose allclose array_equal array_equiv "
    "isreal iscomplex isrealobj iscomplexobj isscalar isin any all count_nonzero "
    "bitwise_and bitwise_or bitwise_xor invert left_shift right_shift gcd lcm "
    # index-valued
    "argmax argmin argsort argpartition lexsort nonzero flatnonzero argwhere "
    "searchsorted digitize nanargmax nanargmin unravel_index ravel_multi_index "
    "indices diag_indices diag_indices_from tril_indices triu_indices "
    "tril_indices_from triu_indices_from mask_indices ix_ "
    # shapes and types
    "shape ndim size result_type can_cast promote_types min_scalar_type "
    "may_share_memory shares_memory broadcast_shapes isdtype "
    # constructors without differentiable inputs
    "zeros ones empty eye identity arange tri zeros_like ones_like empty_like "
    # histograms count elements
    "histogram histogram_bin_edges histogram2d histogramdd"
).split()


def register(reg):
    r = Registrar(reg, FAMILY)
    fns, names = [], []
    for name in NUMPY_NAMES:
        fn = getattr(np, name, None)
        if fn is not None and reg.lookup(fn) is None and fn not in fns:
            fns.append(fn)
            names.append(f"numpy.{name}")
    r.nondiff(*fns, names=names, notes="zero gradient")
