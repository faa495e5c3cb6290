"""The rules that ship with pullback, one module per family.

Each family module has ``FAMILY`` (its name) and ``register(registry)``;
:func:`build_default_registry` calls them all. ``scipy_special`` registers only when
SciPy can be imported. ``listing`` renders the table of every entry (docs/rules.md).
"""

from __future__ import annotations

from ..registry import RuleRegistry
from . import (
    builtins_rules,
    fft,
    linalg,
    math_rules,
    ndarray_methods,
    numpy_assemble,
    numpy_indexing,
    numpy_misc,
    numpy_nondiff,
    numpy_products,
    numpy_reductions,
    numpy_shape,
    numpy_ufuncs,
    pullback_runtime,
    scipy_integrate,
    scipy_linalg,
    scipy_linalg_decomp,
    scipy_linalg_matfuncs,
    scipy_signal,
    scipy_special,
    transformable,
)

FAMILIES = (
    numpy_ufuncs,
    numpy_reductions,
    numpy_products,
    numpy_shape,
    numpy_assemble,
    numpy_indexing,
    numpy_misc,
    linalg,
    fft,
    numpy_nondiff,
    math_rules,
    builtins_rules,
    scipy_special,
    scipy_linalg,
    scipy_linalg_decomp,
    scipy_linalg_matfuncs,
    scipy_signal,
    scipy_integrate,
    ndarray_methods,
    pullback_runtime,
    transformable,
)


def build_default_registry() -> RuleRegistry:
    """A new registry holding every rule family that ships with pullback."""
    registry = RuleRegistry()
    for family in FAMILIES:
        family.register(registry)
    return registry
