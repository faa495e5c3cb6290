"""scipy.stats discrete distributions: logpmf, pmf, cdf, logcdf, sf and logsf of poisson,
binom, nbinom, geom and bernoulli with respect to their float parameters (``mu``, ``p``,
and nbinom's ``n``, which scipy accepts as a real number) given positionally or by
keyword.

The count ``k``, binom's ``n`` and ``loc`` (a shift of the integer support) carry no
gradient: a float ``k`` or ``loc`` gets a zero cotangent (the functions are piecewise
constant in them), an integer one ``NO_TANGENT``. ``ppf`` returns integers and is
non-differentiable. Cdf derivatives with respect to the parameters:

* poisson: ``dF/dmu = -pmf(k; mu)``;
* binom: ``dF/dp = -n pmf(k; n - 1, p)``;
* nbinom: ``F = I_p(n, k + 1)`` (regularized incomplete beta; ``n`` through its series);
* geom: ``F = 1 - (1 - p)^k``; bernoulli: ``F = 1 - p`` on ``[0, 1)``.

The pullbacks are transformable functions (:mod:`.scipy_stats_discrete_pullbacks`), so
second derivatives run through them.
"""

from __future__ import annotations

from .scipy_stats_common import register_methods

FAMILY = "scipy_stats"
REQUIRES = "scipy.stats"

METHODS = ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf")
DISTRIBUTIONS = ("poisson", "binom", "nbinom", "geom", "bernoulli")


def parameters(dist):
    """The names of the parameters after ``k`` and their defaults (none for shapes)."""
    names = tuple(s.strip() for s in dist.shapes.split(",")) + ("loc",)
    return names, (None,) * (len(names) - 1) + (0,)


def register(reg):
    try:
        import scipy.stats as st
    except ImportError:  # pragma: no cover - scipy is optional
        return
    from .scipy_stats_discrete_pullbacks import discrete_pullback

    r = register_methods(reg, FAMILY, DISTRIBUTIONS, METHODS, discrete_pullback, parameters)
    for dist_name in DISTRIBUTIONS:
        r.nondiff(getattr(st, dist_name).ppf, names=[f"scipy.stats.{dist_name}.ppf"],
                  notes="integer-valued quantiles")
