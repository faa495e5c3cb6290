"""The rules that ship with pullback, one module per family.

Each family module has ``FAMILY`` (its name) and ``register(registry)``;
:func:`build_default_registry` calls them all. A family that also declares ``REQUIRES``
(a module name, e.g. ``"scipy.special"``) is deferred: the registry registers it on the
first lookup miss after that module has been imported (see ``RuleRegistry.add_family``),
so pullback itself never imports SciPy. ``listing`` renders the table of every entry
(docs/rules.md), loading the deferred families first.
"""

from __future__ import annotations

from .. import (
    arrays_inplace,
    containers_mutation,
    escapes,
    records,
    records_calls,
    records_dataclasses,
    unpacking,
)
from ..registry import RuleRegistry
from . import (
    array_api,
    array_api_compat_rules,
    builtins_rules,
    container_cotangent_pullbacks,
    container_cotangents,
    fft,
    inplace_calls,
    linalg,
    math_rules,
    ndarray_methods,
    numpy_assemble,
    numpy_casts,
    numpy_functional,
    numpy_index_tricks,
    numpy_indexing,
    numpy_misc,
    numpy_nondiff,
    numpy_products,
    numpy_random,
    numpy_reductions,
    numpy_shape,
    numpy_ufuncs,
    operator_rules,
    pullback_runtime,
    scipy_integrate,
    scipy_linalg,
    scipy_linalg_decomp,
    scipy_linalg_matfuncs,
    scipy_ode,
    scipy_optimize,
    scipy_quad,
    scipy_signal,
    scipy_special,
    scipy_special_more,
    scipy_stats_continuous,
    scipy_stats_discrete,
    scipy_stats_frozen,
    scipy_stats_multivariate,
    star_call_rules,
    transformable,
    user_function_calls,
)

FAMILIES = (
    numpy_ufuncs,
    numpy_reductions,
    numpy_products,
    numpy_shape,
    numpy_assemble,
    numpy_indexing,
    numpy_index_tricks,
    numpy_functional,
    numpy_casts,
    numpy_misc,
    linalg,
    fft,
    numpy_nondiff,
    numpy_random,
    math_rules,
    builtins_rules,
    operator_rules,
    scipy_special,
    scipy_special_more,
    scipy_stats_continuous,
    scipy_stats_discrete,
    scipy_stats_multivariate,
    scipy_stats_frozen,
    scipy_linalg,
    scipy_linalg_decomp,
    scipy_linalg_matfuncs,
    scipy_signal,
    scipy_integrate,
    scipy_quad,
    scipy_ode,
    scipy_optimize,
    ndarray_methods,
    pullback_runtime,
    user_function_calls,
    transformable,
    array_api,
    array_api_compat_rules,
    arrays_inplace,
    unpacking,
    inplace_calls,
    containers_mutation,
    escapes,
    records,
    records_dataclasses,
    records_calls,
    container_cotangents,
    container_cotangent_pullbacks,
    star_call_rules,
)


def build_default_registry() -> RuleRegistry:
    """A new registry holding every rule family that ships with pullback."""
    registry = RuleRegistry()
    for family in FAMILIES:
        registry.add_family(family)
    return registry
