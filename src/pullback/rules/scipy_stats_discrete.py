"""scipy.stats discrete distributions: logpmf, pmf, cdf, logcdf, sf and logsf of poisson,
binom, nbinom, geom and bernoulli with respect to their float parameters (``mu``, ``p``,
and nbinom's ``n``, which scipy accepts as a real number) given positionally.

The count ``k``, binom's ``n`` and ``loc`` (a shift of the integer support) carry no
gradient: a float ``k`` or ``loc`` gets a zero cotangent (the functions are piecewise
constant in them), an integer one ``NO_TANGENT``. ``ppf`` returns integers and is
non-differentiable. Cdf derivatives with respect to the parameters:

* poisson: ``dF/dmu = -pmf(k; mu)``;
* binom: ``dF/dp = -n pmf(k; n - 1, p)``;
* nbinom: ``F = I_p(n, k + 1)`` (regularized incomplete beta; ``n`` through its series);
* geom: ``F = 1 - (1 - p)^k``; bernoulli: ``F = 1 - p`` on ``[0, 1)``.
"""

from __future__ import annotations

import numpy as np

from .scipy_special_series import betainc_partials
from .scipy_stats_common import bind_params, f64, register_methods, where_finite

FAMILY = "scipy_stats"
REQUIRES = "scipy.stats"

METHODS = ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf")


def _st():
    import scipy.stats as st

    return st


def _nbinom_dcdf(k, n, p, which):
    da, _, dx = betainc_partials(n, k + 1.0, p)
    return np.where(k >= 0, da if which == 0 else dx, 0.0)


def _digamma(v):
    import scipy.special as sc

    return sc.digamma(v)


# name: ((d logpmf/dθ or None per shape), (dF/dθ or None per shape)); k is floor(k - loc)
SPECS = {
    "poisson": ((lambda k, mu: k / mu - 1.0,), (lambda k, mu: -_st().poisson.pmf(k, mu),)),
    "binom": (
        (None, lambda k, n, p: k / p - (n - k) / (1.0 - p)),
        (None, lambda k, n, p: -n * _st().binom.pmf(k, n - 1, p)),
    ),
    "nbinom": (
        (
            lambda k, n, p: _digamma(k + n) - _digamma(n) + np.log(p),
            lambda k, n, p: n / p - k / (1.0 - p),
        ),
        (lambda k, n, p: _nbinom_dcdf(k, n, p, 0), lambda k, n, p: _nbinom_dcdf(k, n, p, 1)),
    ),
    "geom": (
        (lambda k, p: 1.0 / p - (k - 1.0) / (1.0 - p),),
        (lambda k, p: np.where(k >= 1, k * (1.0 - p) ** (k - 1.0), 0.0),),
    ),
    "bernoulli": (
        (lambda k, p: k / p - (1.0 - k) / (1.0 - p),),
        (lambda k, p: np.where((k >= 0) & (k < 1), -1.0, 0.0),),
    ),
}


def params_of(dist, args, kwargs):
    names = tuple(s.strip() for s in dist.shapes.split(",")) + ("loc",)
    values = bind_params(args, kwargs, names, (None,) * (len(names) - 1) + (0,))
    return [f64(v) for v in values[:-1]], f64(values[-1])


def partials(dist, name, y, args, kwargs):
    """The partials of ``dist.<name>(*args, **kwargs) = y`` in positional order (``None``
    for ``k``, integer parameters and ``loc``)."""
    dlogpmf, dcdf = SPECS[dist.name]
    shapes, loc = params_of(dist, args[1:], kwargs)
    k = f64(args[0]) - loc
    y = f64(y)
    with np.errstate(all="ignore"):
        if name in ("logpmf", "pmf"):
            logpmf = y if name == "logpmf" else np.log(y)
            factor = 1.0 if name == "logpmf" else y
            ok = np.isfinite(logpmf)
            out = [None if d is None else where_finite(factor * d(k, *shapes), ok) for d in dlogpmf]
        else:
            kf = np.floor(k)
            if name == "cdf":
                factor = 1.0
            elif name == "sf":
                factor = -1.0
            elif name == "logcdf":
                factor = np.exp(-y)
            else:  # logsf
                factor = -np.exp(-y)
            out = [
                None if d is None else where_finite(factor * d(kf, *shapes), np.isfinite(factor))
                for d in dcdf
            ]
    return [None] + out + [None]


def register(reg):
    try:
        import scipy.stats as st
    except ImportError:  # pragma: no cover - scipy is optional
        return
    r = register_methods(reg, FAMILY, SPECS, METHODS, partials)
    for dist_name in SPECS:
        r.nondiff(
            getattr(st, dist_name).ppf,
            names=[f"scipy.stats.{dist_name}.ppf"],
            notes="integer-valued quantiles",
        )
