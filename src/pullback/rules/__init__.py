"""The rules that ship with pullback, one module per family.

Each family module has ``FAMILY`` (its name) and ``register(registry)``;
:func:`build_default_registry` registers them all. A family that also declares ``REQUIRES``
(a module name, e.g. ``"scipy.special"``) is deferred: the registry registers it on the
first lookup miss after that module has been imported (see ``RuleRegistry.add_family``),
so pullback itself never imports SciPy. Those families' modules are not even imported
until then (:class:`DeferredFamily`): a NumPy gradient's cold start would pay about thirty
modules (SciPy's rules, their helpers, ``numpy.fft``) it never uses. A family that declares
``DOMAIN`` instead (``"math"``: every function it has a rule for lies in that namespace;
or the set of its functions' names, ``family_domains.py``: linear algebra, polynomials,
``np.gradient`` and the other NumPy families a plain gradient seldom calls) waits,
unimported, for the first lookup of such a function. ``listing`` renders the table
of every entry (docs/rules.md), loading the deferred families first; ``FAMILIES`` (every
family module, in registration order) imports them all when read.
"""

from __future__ import annotations

import importlib

from .. import (
    arrays_inplace,
    called_objects,
    closure_cells,
    containers_mutation,
    dynamic_attrs,
    escapes,
    object_versions,
    recompute_state,
    records,
    records_dataclasses,
    records_named,
    unpacking,
)
from ..registry import RuleRegistry
from . import (
    builtins_rules,
    container_cotangent_pullbacks,
    container_cotangents,
    inplace_calls,
    ndarray_methods,
    numpy_assemble,
    numpy_functional,
    numpy_index_tricks,
    numpy_indexing,
    numpy_nondiff,
    numpy_products,
    numpy_random,
    numpy_reductions,
    numpy_shape,
    numpy_ufuncs,
    operator_rules,
    pullback_runtime,
    star_call_rules,
    transformable,
    user_function_calls,
)
from .family_domains import DOMAINS


class DeferredFamily:
    """A family module not imported yet: its ``FAMILY`` and ``REQUIRES`` (the module its
    rules need) or ``DOMAIN`` (the namespace of the functions it has rules for), so the
    registry can defer it without importing it; ``register`` imports it (a submodule of
    this package: the import stays inside the rules layer) and registers it.
    ``tests/test_lazy_families.py`` checks that the names agree with the module's own.
    """

    __slots__ = ("module", "FAMILY", "REQUIRES", "DOMAIN")

    def __init__(self, module: str, family: str, requires: str | None = None, domain=None):
        self.module = module
        self.FAMILY = family
        self.REQUIRES = requires
        self.DOMAIN = domain

    def load(self):
        """The family module itself (imported now if it was not); ``module`` is a name in
        this package, or a ``pullback.`` module of the runtime layer below it."""
        name = self.module if self.module.startswith("pullback.") else f"{__name__}.{self.module}"
        return importlib.import_module(name)

    def register(self, registry) -> None:
        self.load().register(registry)

    def __repr__(self) -> str:
        return (
            f"DeferredFamily({self.module!r}, requires={self.REQUIRES!r}, domain={self.DOMAIN!r})"
        )


# Every family in registration order: a module, or a DeferredFamily for those whose
# rules need a module that pullback never imports itself (``numpy.fft`` is one: NumPy
# loads it on first use of ``np.fft``, which is also how a function's call of it resolves).
_ORDER = (
    numpy_ufuncs,
    numpy_reductions,
    numpy_products,
    numpy_shape,
    numpy_assemble,
    DeferredFamily("numpy_edit", "numpy_edit", domain=DOMAINS["numpy_edit"]),
    numpy_indexing,
    numpy_index_tricks,
    numpy_functional,
    DeferredFamily("numpy_casts", "numpy_casts", domain=DOMAINS["numpy_casts"]),
    DeferredFamily("numpy_misc", "numpy_misc", domain=DOMAINS["numpy_misc"]),
    DeferredFamily("numpy_grids", "numpy_grids", domain=DOMAINS["numpy_grids"]),
    DeferredFamily("numpy_polynomials", "numpy_polynomials", domain=DOMAINS["numpy_polynomials"]),
    DeferredFamily("numpy_polynomials_npp", "numpy_polynomials", "numpy.polynomial.polynomial"),
    DeferredFamily("numpy_accumulate", "numpy_accumulate", domain=DOMAINS["numpy_accumulate"]),
    DeferredFamily("linalg", "linalg", domain=DOMAINS["linalg"]),
    DeferredFamily("linalg_derived", "linalg_derived", domain=DOMAINS["linalg_derived"]),
    DeferredFamily("fft", "fft", "numpy.fft"),
    numpy_nondiff,
    numpy_random,
    DeferredFamily("math_rules", "math", domain="math"),
    builtins_rules,
    operator_rules,
    DeferredFamily("statistics_rules", "statistics", "statistics"),
    DeferredFamily("scipy_special", "scipy_special", "scipy.special"),
    DeferredFamily("scipy_special_more", "scipy_special", "scipy.special"),
    DeferredFamily("scipy_stats_continuous", "scipy_stats", "scipy.stats"),
    DeferredFamily("scipy_stats_discrete", "scipy_stats", "scipy.stats"),
    DeferredFamily("scipy_stats_multivariate", "scipy_stats", "scipy.stats"),
    DeferredFamily("scipy_stats_frozen", "scipy_stats", "scipy.stats"),
    DeferredFamily("scipy_linalg", "scipy_linalg", "scipy.linalg"),
    DeferredFamily("scipy_linalg_decomp", "scipy_linalg_decomp", "scipy.linalg"),
    DeferredFamily("scipy_linalg_matfuncs", "scipy_linalg_matfuncs", "scipy.linalg"),
    DeferredFamily("scipy_linalg_lyapunov", "scipy_linalg_lyapunov", "scipy.linalg"),
    DeferredFamily("scipy_signal", "scipy_signal", "scipy.signal"),
    DeferredFamily("scipy_integrate", "scipy_integrate", "scipy.integrate"),
    DeferredFamily("scipy_quad", "scipy_quad", "scipy.integrate"),
    DeferredFamily("scipy_ode", "scipy_ode", "scipy.integrate"),
    DeferredFamily("scipy_optimize", "scipy_optimize", "scipy.optimize"),
    DeferredFamily("scipy_optimize_scalar", "scipy_optimize", "scipy.optimize"),
    DeferredFamily("scipy_interpolate", "scipy_interpolate", "scipy.interpolate"),
    DeferredFamily("scipy_spatial", "scipy_spatial", "scipy.spatial.distance"),
    DeferredFamily("scipy_sparse", "scipy_sparse", "scipy.sparse"),
    DeferredFamily("scipy_sparse_solve", "scipy_sparse", "scipy.sparse.linalg"),
    ndarray_methods,
    pullback_runtime,
    user_function_calls,
    transformable,
    DeferredFamily("array_api", "array_api", "array_api_strict"),
    DeferredFamily("array_api_compat_rules", "array_api_compat", "array_api_compat"),
    arrays_inplace,
    unpacking,
    inplace_calls,
    containers_mutation,
    escapes,
    records,
    records_named,
    object_versions,
    recompute_state,
    records_dataclasses,
    dynamic_attrs,
    closure_cells,
    called_objects,
    # dataclasses.replace/astuple/asdict: once a program has imported dataclasses
    DeferredFamily("pullback.records_calls", "records_calls", "dataclasses"),
    container_cotangents,
    container_cotangent_pullbacks,
    star_call_rules,
)


def __getattr__(name):
    """``FAMILIES``: every family module in registration order (importing the deferred
    ones: for listings and tests, never on the way to a gradient)."""
    if name == "FAMILIES":
        return tuple(f.load() if isinstance(f, DeferredFamily) else f for f in _ORDER)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_default_registry() -> RuleRegistry:
    """A new registry holding every rule family that ships with pullback."""
    registry = RuleRegistry()
    for family in _ORDER:
        registry.add_family(family)
    return registry
