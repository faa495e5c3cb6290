"""Rules for the derivative kernels of :mod:`.scipy_special_series` (the parameter
derivatives of the regularized incomplete gamma and beta functions and of the von Mises
cdf), so that the transformable pullbacks of the scipy.stats rules, which call them, can
be differentiated again: each kernel's rule gives the next derivative (by the same series
and quadratures with the squared weights, or in closed form for the argument).

Registered by the scipy_special family (these are pullback's own functions, not
scipy's); their own second derivatives are not available (the series stop here).
"""

from __future__ import annotations

import numpy as np

from ._util import ZERO, dy_parts, finalize, zeros_for
from .scipy_special_series import (
    betainc_partials,
    betainc_second_partials,
    gammainc_da,
    vonmises_cdf_dkappa,
)


def _f64(v):
    return np.asarray(v, dtype=np.float64)


def _two_argument_rrule(kernel, partials):
    """A rule for ``kernel(u, v)`` from ``partials(u, v)``: its two partial derivatives
    (float64 arrays of the broadcast shape)."""

    def kernel_rrule(u, v):
        y = kernel(u, v)

        def kernel_pullback(dy):
            if dy is ZERO:
                return zeros_for((u, v))
            du, dv = partials(u, v)
            g = _f64(dy)
            return finalize(g * du, u), finalize(g * dv, v)

        kernel_pullback.__name__ = f"{kernel.__name__}_pullback"
        return y, kernel_pullback

    kernel_rrule.__name__ = f"{kernel.__name__}_rrule"
    return kernel_rrule


def _gammainc_da_partials(a, x):
    from scipy.special import digamma, gammaln

    af, xf = np.broadcast_arrays(_f64(a), _f64(x))
    with np.errstate(all="ignore"):
        # d/dx dP/da = d/da of the gamma density = density * (log x - psi(a))
        density = np.exp((af - 1.0) * np.log(xf) - xf - gammaln(af))
        dx = np.where(xf > 0, density * (np.log(xf) - digamma(af)), 0.0)
    return gammainc_da(a, x, second=True), dx


def _betainc_partials_rrule(a, b, x):
    y = betainc_partials(a, b, x)

    def betainc_partials_pullback(dy):
        ga, gb, gx = dy_parts(dy, 3)
        if ga is ZERO and gb is ZERO and gx is ZERO:
            return zeros_for((a, b, x))
        aa, ab, bb, d_a, d_b, d_x = betainc_second_partials(a, b, x)
        ga, gb, gx = (0.0 if g is ZERO else _f64(g) for g in (ga, gb, gx))
        return (
            finalize(ga * aa + gb * ab + gx * d_a, a),
            finalize(ga * ab + gb * bb + gx * d_b, b),
            finalize(ga * d_a + gb * d_b + gx * d_x, x),
        )

    return y, betainc_partials_pullback


def _vonmises_partials(z, kappa):
    from scipy.special import i0e, i1e

    zf, kf = np.broadcast_arrays(_f64(z), _f64(kappa))
    # d/dz of the integral: its integrand at z (periodic, like the reduction to a turn)
    density = np.exp(kf * (np.cos(zf) - 1.0)) / (2.0 * np.pi * i0e(kf))
    dz = density * (np.cos(zf) - i1e(kf) / i0e(kf))
    return dz, vonmises_cdf_dkappa(z, kappa, True)


def register(r):
    """Register the kernels' rules with the Registrar ``r`` (of the scipy_special family)."""
    prefix = "pullback.rules.scipy_special_series."
    note = "a derivative kernel of the scipy.stats and scipy.special rules"
    for kernel, rrule in (
        (gammainc_da, _two_argument_rrule(gammainc_da, _gammainc_da_partials)),
        (betainc_partials, _betainc_partials_rrule),
        (vonmises_cdf_dkappa, _two_argument_rrule(vonmises_cdf_dkappa, _vonmises_partials)),
    ):
        r.rule(kernel, rrule, name=prefix + kernel.__name__, notes=note)
