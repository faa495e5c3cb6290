"""The pullbacks of the scipy.stats continuous distribution methods as transformable
functions: ``pullback(dy, x, *shapes, loc=0, scale=1)`` returns the cotangents of ``x``,
each shape, ``loc`` and ``scale``. One function per distribution and method (made by
:func:`continuous_pullback` from the distribution's spec in :mod:`.scipy_stats_specs`);
the rule's closure pullback calls the same function, so both agree exactly, and second
derivatives transform it like user code.

Location-scale: with ``z = (x - loc) / scale``, ``logpdf(x) = log f(z) - log(scale)`` and
``cdf(x) = F(z)``; the chain rule through ``z`` gives ``x``, ``loc`` and ``scale``.
``ppf`` is the inverse of ``cdf``: ``dQ/dq = 1 / f(Q)``, ``dQ/d shape = -(dF/d shape) / f``.
Outside the support the cotangents are 0 (the functions are flat there).

A call that passes ``loc``/``scale`` by keyword calls the function with those keywords:
it returns one cotangent per parameter all the same, and the generated code reads a
keyword's cotangent at its parameter's place (``rev_direct_pullback``). Shapes passed by
keyword (``t.logpdf(x, df=3)``) use the closure pullback (the functions name them s0, s1).
"""

from __future__ import annotations

import numpy as np

from ..registry import transformable
from ..tangents import unbroadcast


def continuous_pullback(dist, spec, method):
    """The transformable pullback of ``dist.<method>`` from ``spec`` (see the module)."""
    nshapes, dz_fn, dshape_fn, dcdf_fn, safe_fn = spec

    # ``dist.<name>(z, *sh)``, the standardized method: one function per number of
    # shapes, so that a derivative of it meets only calls of dist's own arity (a call
    # with too few shapes, in a branch never taken, left the rule's closure in code
    # differentiated twice: the third derivative stopped there)
    @transformable
    def standard0(name, z, sh):
        if name == "logpdf":
            return dist.logpdf(z)
        if name == "logcdf":
            return dist.logcdf(z)
        if name == "logsf":
            return dist.logsf(z)
        return dist.ppf(z)

    @transformable
    def standard1(name, z, sh):
        if name == "logpdf":
            return dist.logpdf(z, sh[0])
        if name == "logcdf":
            return dist.logcdf(z, sh[0])
        if name == "logsf":
            return dist.logsf(z, sh[0])
        return dist.ppf(z, sh[0])

    @transformable
    def standard2(name, z, sh):
        if name == "logpdf":
            return dist.logpdf(z, sh[0], sh[1])
        if name == "logcdf":
            return dist.logcdf(z, sh[0], sh[1])
        if name == "logsf":
            return dist.logsf(z, sh[0], sh[1])
        return dist.ppf(z, sh[0], sh[1])

    standard = (standard0, standard1, standard2)[nshapes]

    @transformable
    def partials(x, sh, loc, scale):
        """The partials of ``dist.<method>`` in positional order: x, shapes, loc, scale."""
        if method == "ppf":
            q = np.multiply(x, np.float64(1.0))
            Q0 = standard("ppf", q, sh)
            okq = np.isfinite(Q0)
            Q = np.where(okq, Q0, safe_fn(sh))
            f = np.exp(standard("logpdf", Q, sh))
            out = (np.where(okq, scale / f, 0.0),)
            dcdf = dcdf_fn(Q, sh)
            for k in range(nshapes):
                out = out + (np.where(okq, -scale * dcdf[k] / f, 0.0),)
            return out + (np.where(okq, 1.0, 0.0), np.where(okq, Q, 0.0))
        # float64 like scipy (np.float64 promotes float32), written as a call the transform
        # knows the kind of (a global's it does not: a closure where differentiated twice)
        z0 = (np.multiply(x, np.float64(1.0)) - loc) / scale
        logf0 = standard("logpdf", z0, sh)
        inside = np.isfinite(logf0)
        z = np.where(inside, z0, safe_fn(sh))
        if method == "logpdf" or method == "pdf":
            g = dz_fn(z, sh)
            parts = (g / scale,) + dshape_fn(z, sh) + (-g / scale, -(g * z + 1.0) / scale)
            factor = 1.0
            if method == "pdf":
                factor = np.exp(standard("logpdf", z, sh)) / scale
        else:
            # cdf, sf, logcdf, logsf: dF/dz = f, times -1 for sf, over the value for logs
            logf = standard("logpdf", z, sh)
            if method == "logcdf":
                logf = logf - standard("logcdf", z, sh)
            if method == "logsf":
                logf = logf - standard("logsf", z, sh)
            f = np.exp(logf)
            dcdf = dcdf_fn(z, sh)
            if method == "logcdf":
                dcdf = _over(dcdf, np.exp(-standard("logcdf", z, sh)), nshapes)
            if method == "logsf":
                dcdf = _over(dcdf, np.exp(-standard("logsf", z, sh)), nshapes)
            parts = (f / scale,) + dcdf + (-f / scale, -f * z / scale)
            factor = 1.0
            if method == "sf" or method == "logsf":
                factor = -1.0
        out = ()
        for k in range(nshapes + 3):
            out = out + (np.where(inside, factor * parts[k], 0.0),)
        return out

    if nshapes == 0:

        @transformable
        def stats_pullback(dy, x, loc=0.0, scale=1.0):
            p = partials(x, (), loc, scale)
            return unbroadcast(dy * p[0], x), unbroadcast(dy * p[1], loc), unbroadcast(
                dy * p[2], scale
            )

    elif nshapes == 1:

        @transformable
        def stats_pullback(dy, x, s0, loc=0.0, scale=1.0):
            p = partials(x, (s0,), loc, scale)
            return (
                unbroadcast(dy * p[0], x),
                unbroadcast(dy * p[1], s0),
                unbroadcast(dy * p[2], loc),
                unbroadcast(dy * p[3], scale),
            )

    else:

        @transformable
        def stats_pullback(dy, x, s0, s1, loc=0.0, scale=1.0):
            p = partials(x, (s0, s1), loc, scale)
            return (
                unbroadcast(dy * p[0], x),
                unbroadcast(dy * p[1], s0),
                unbroadcast(dy * p[2], s1),
                unbroadcast(dy * p[3], loc),
                unbroadcast(dy * p[4], scale),
            )

    stats_pullback.__name__ = f"{dist.name}_{method}_pullback"
    return stats_pullback


@transformable
def _over(parts, factor, n):
    out = ()
    for k in range(n):
        out = out + (parts[k] * factor,)
    return out
