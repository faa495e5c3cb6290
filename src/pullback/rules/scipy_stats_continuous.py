"""scipy.stats continuous distributions: logpdf, pdf, cdf, logcdf, sf, logsf and ppf of
norm, t, beta, gamma, chi2, expon, laplace, logistic, cauchy, lognorm, uniform, pareto,
gumbel_r, gumbel_l, vonmises, truncnorm, halfnorm, halfcauchy, invgamma and weibull_min,
with respect to ``x`` (``q``) and every float parameter (shape parameters, ``loc``,
``scale``), given positionally or by keyword.

Every distribution here is a location-scale family: with ``z = (x - loc) / scale``,
``pdf(x) = f(z; shapes) / scale`` and ``cdf(x) = F(z; shapes)``. So each needs only
``d log f / dz``, ``d log f / d shape`` and ``dF / d shape`` (the standardized ``f`` and
``F`` themselves come from scipy); the chain rule through ``z`` gives ``x``, ``loc`` and
``scale``, and ``ppf`` is the inverse of ``cdf`` (``dQ/dq = 1 / f(Q)``,
``dQ/d shape = -(dF/d shape) / f``).

The derivatives are written in the differentiable subset: :mod:`.scipy_stats_specs` (the
standardized distributions) and :mod:`.scipy_stats_pullbacks` (one transformable pullback
per distribution and method, which the rule's closure pullback calls too), so second
derivatives run through them. Shape derivatives of a cdf that have no elementary form use
the series of :mod:`.scipy_special_series` (gamma and chi2: regularized incomplete gamma;
beta and t: regularized incomplete beta; invgamma: incomplete gamma at ``1/z``; vonmises:
Gauss-Legendre quadrature of the derivative of the density). Outside the support the
cotangents are zero (the functions are flat there).
"""

from __future__ import annotations

from .scipy_stats_common import LOC_SCALE, register_methods

FAMILY = "scipy_stats"
REQUIRES = "scipy.stats"

METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf")
DISTRIBUTIONS = (
    "norm", "t", "beta", "gamma", "chi2", "expon", "laplace", "logistic", "cauchy", "lognorm",
    "uniform", "pareto", "gumbel_r", "gumbel_l", "vonmises", "truncnorm", "halfnorm",
    "halfcauchy", "invgamma", "weibull_min",
)


def shape_names(dist) -> tuple:
    return tuple(s.strip() for s in dist.shapes.split(",")) if dist.shapes else ()


def parameters(dist):
    """The names of the parameters after ``x`` and their defaults (none for shapes)."""
    names = shape_names(dist) + LOC_SCALE
    return names, (None,) * (len(names) - 2) + (0.0, 1.0)


def register(reg):
    try:
        import scipy.stats  # noqa: F401
    except ImportError:  # pragma: no cover - scipy is optional
        return
    from .scipy_stats_pullbacks import continuous_pullback
    from .scipy_stats_specs import SPECS as STANDARD

    def pullback_of(dist, method):
        return continuous_pullback(dist, STANDARD[dist.name], method)

    register_methods(reg, FAMILY, DISTRIBUTIONS, METHODS, pullback_of, parameters)
