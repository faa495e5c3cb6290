"""The pullbacks of the scipy.stats discrete distribution methods as transformable
functions: ``pullback(dy, k, *shapes, loc=0)`` returns the cotangents of ``k``, each shape
and ``loc`` (zero for ``k``, ``loc`` and binom's integer ``n``: the functions are piecewise
constant in them). The rule's closure pullback calls the same function; second
derivatives transform it like user code. ``loc`` by keyword is called as a keyword (its
cotangent is read at its parameter's place); shapes by keyword use the closure pullback.

The spec of each distribution gives ``d logpmf / d shape`` at ``k - loc`` and
``dF / d shape`` at ``floor(k - loc)`` (see :mod:`.scipy_stats_discrete`).
"""

from __future__ import annotations

import numpy as np
import scipy.special as sc
import scipy.stats as st

from ..registry import transformable
from ..tangents import unbroadcast
from .scipy_special_series import betainc_partials


@transformable
def poisson_dlogpmf(k, sh):
    return (k / sh[0] - 1.0,)


@transformable
def poisson_dcdf(k, sh):
    return (-st.poisson.pmf(k, sh[0]),)


@transformable
def binom_dlogpmf(k, sh):
    n = sh[0]
    p = sh[1]
    return (0.0 * k, k / p - (n - k) / (1.0 - p))


@transformable
def binom_dcdf(k, sh):
    n = sh[0]
    return (0.0 * k, -n * st.binom.pmf(k, n - 1.0, sh[1]))


@transformable
def nbinom_dlogpmf(k, sh):
    n = sh[0]
    p = sh[1]
    return (sc.digamma(k + n) - sc.digamma(n) + np.log(p), n / p - k / (1.0 - p))


@transformable
def nbinom_dcdf(k, sh):
    # F = I_p(n, k + 1); for k < 0 it is 0 (evaluated at k = 0 and masked)
    parts = betainc_partials(sh[0], np.maximum(k, 0.0) + 1.0, sh[1])
    return (np.where(k >= 0, parts[0], 0.0), np.where(k >= 0, parts[2], 0.0))


@transformable
def geom_dlogpmf(k, sh):
    p = sh[0]
    return (1.0 / p - (k - 1.0) / (1.0 - p),)


@transformable
def geom_dcdf(k, sh):
    p = sh[0]
    return (np.where(k >= 1, k * (1.0 - p) ** (k - 1.0), 0.0),)


@transformable
def bernoulli_dlogpmf(k, sh):
    p = sh[0]
    return (k / p - (1.0 - k) / (1.0 - p),)


@transformable
def bernoulli_dcdf(k, sh):
    return (np.where((k >= 0) & (k < 1), -1.0, 0.0) + 0.0 * sh[0],)


# name: (number of shapes, d logpmf / d shapes, dF / d shapes)
SPECS = {
    "poisson": (1, poisson_dlogpmf, poisson_dcdf),
    "binom": (2, binom_dlogpmf, binom_dcdf),
    "nbinom": (2, nbinom_dlogpmf, nbinom_dcdf),
    "geom": (1, geom_dlogpmf, geom_dcdf),
    "bernoulli": (1, bernoulli_dlogpmf, bernoulli_dcdf),
}


def discrete_pullback(dist, method):
    """The transformable pullback of ``dist.<method>`` (see the module)."""
    nshapes, dlogpmf_fn, dcdf_fn = SPECS[dist.name]

    # ``dist.<name>(k, *sh, loc)``: one function per number of shapes (a derivative of
    # it meets only calls of dist's own arity, see scipy_stats_pullbacks.py)
    @transformable
    def standard1(name, k, sh, loc):
        if name == "logpmf":
            return dist.logpmf(k, sh[0], loc)
        if name == "logcdf":
            return dist.logcdf(k, sh[0], loc)
        return dist.logsf(k, sh[0], loc)

    @transformable
    def standard2(name, k, sh, loc):
        if name == "logpmf":
            return dist.logpmf(k, sh[0], sh[1], loc)
        if name == "logcdf":
            return dist.logcdf(k, sh[0], sh[1], loc)
        return dist.logsf(k, sh[0], sh[1], loc)

    standard = standard1 if nshapes == 1 else standard2

    @transformable
    def partials(k, sh, loc):
        """The partials with respect to the shapes, in order."""
        # float64 like scipy (np.float64 promotes float32), of a kind the transform knows
        kk = np.multiply(k, np.float64(1.0)) - loc
        if method == "logpmf" or method == "pmf":
            logpmf = standard("logpmf", k, sh, loc)
            ok = np.isfinite(logpmf)
            parts = dlogpmf_fn(np.where(ok, kk, 0.0), sh)  # k = 0: inside every support
            factor = 1.0
            if method == "pmf":
                factor = np.exp(logpmf)
        else:
            kf = np.floor(kk)
            parts = dcdf_fn(kf, sh)
            factor = 1.0
            ok = np.isfinite(kf)
            if method == "sf":
                factor = -1.0
            if method == "logcdf":
                logcdf = standard("logcdf", k, sh, loc)
                ok = np.isfinite(logcdf)
                factor = np.exp(-np.where(ok, logcdf, 0.0))
            if method == "logsf":
                logsf = standard("logsf", k, sh, loc)
                ok = np.isfinite(logsf)
                factor = -np.exp(-np.where(ok, logsf, 0.0))
        out = ()
        for j in range(nshapes):
            out = out + (np.where(ok, factor * parts[j], 0.0),)
        return out + (0.0 * kk,)

    if nshapes == 1:

        @transformable
        def stats_pullback(dy, k, s0, loc=0):
            p = partials(k, (s0,), loc)
            zero = dy * p[1]
            return unbroadcast(zero, k), unbroadcast(dy * p[0], s0), unbroadcast(zero, loc)

    else:

        @transformable
        def stats_pullback(dy, k, s0, s1, loc=0):
            p = partials(k, (s0, s1), loc)
            zero = dy * p[2]
            return (
                unbroadcast(zero, k),
                unbroadcast(dy * p[0], s0),
                unbroadcast(dy * p[1], s1),
                unbroadcast(zero, loc),
            )

    stats_pullback.__name__ = f"{dist.name}_{method}_pullback"
    return stats_pullback
