"""The names of the functions of the rule families that register on their first lookup.

A family whose rules are all for functions of one namespace declares that namespace as its
``DOMAIN`` (``"math"``); a family of NumPy functions shares its namespace with the families
every gradient needs, so its ``DOMAIN`` is instead the set of the qualified names
(:func:`pullback.registry.qualified_name`) of the functions it has rules for. Either way the
registry keeps the family unimported until a lookup, a user's rule or a removal names one of
them (``RuleRegistry.add_family``): a gradient that calls no linear algebra, no polynomial
fit and no ``np.gradient`` never imports those modules (fourteen of them) nor registers
their rules.

The sets are written here rather than in the family modules, so that ``rules/__init__.py``
can defer a family without importing it; each module's ``DOMAIN`` is its entry here.
``tests/test_registry_domains.py`` holds them true: every function a family registers is
named in its set, no other family registers one, and the table after loading is the one of
registering every family in its place. Only names that NumPy versions agree on are used
(``numpy.<name>``, ``numpy.linalg.<name>``, pullback's own functions); a name a NumPy lacks
(``numpy.trapz`` on NumPy 2) is harmless.
"""

from __future__ import annotations

DOMAINS = {
    "linalg": frozenset(
        "numpy.linalg." + name
        for name in (
            "cholesky det eig eigh eigvals eigvalsh inv lstsq matrix_norm matrix_power "
            "matrix_rank norm pinv qr slogdet solve svd svdvals tensorsolve vector_norm"
        ).split()
    ),
    "linalg_derived": frozenset({"numpy.linalg.cond", "numpy.linalg.tensorinv"}),
    "numpy_edit": frozenset(
        {
            "numpy.delete",
            "numpy.resize",
            "pullback.rules.numpy_edit.delete_labels",
            "pullback.rules.numpy_edit.resize_labels",
        }
    ),
    "numpy_grids": frozenset(
        {
            "numpy.geomspace",
            "numpy.logspace",
            "numpy.vander",
            "pullback.rules.numpy_grids.sample_fractions",
        }
    ),
    "numpy_polynomials": frozenset(
        {"numpy.polyder", "numpy.polyfit", "numpy.polyint", "numpy.roots"}
    ),
    "numpy_accumulate": frozenset(
        ["pullback.rules.numpy_accumulate.spread_segments"]
        + [
            "pullback.ufunc_methods." + name
            for name in (
                "add_reduceat divide_accumulate logaddexp2_reduce logaddexp_accumulate "
                "logaddexp_reduce maximum_accumulate minimum_accumulate subtract_accumulate"
            ).split()
        ]
    ),
    "numpy_misc": frozenset(
        ["numpy." + name for name in (
            "bincount convolve corrcoef correlate cov diff ediff1d full full_like gradient "
            "interp linspace meshgrid polyval trapezoid trapz unwrap"
        ).split()]
        + [
            "pullback.rules.numpy_misc_gradient.gradient_adjoint",
            "pullback.rules.numpy_misc_gradient.gradient_axes",
        ]
    ),
    "numpy_casts": frozenset(
        "numpy." + name
        for name in "complex128 complex64 float16 float32 float64 real_if_close".split()
    ),
}
