"""The standardized continuous distributions of the scipy.stats rules, written in the
differentiable subset (every function is ``@transformable``), so that the pullbacks built
from them (:mod:`.scipy_stats_pullbacks`) can be differentiated again.

Each distribution with ``z = (x - loc) / scale`` and shape parameters ``sh`` (a tuple)
gives ``d log f / dz``, the tuple of ``d log f / d shape`` and the tuple of
``dF / d shape`` (``f``, ``F``: the standardized density and cdf), and a point inside its
support where the formulas are evaluated for the ``x`` outside it (whose cotangent is 0:
evaluating there instead keeps NaN and warnings out of the results and out of their
derivatives). Shape derivatives of a cdf without an elementary form call the kernels of
:mod:`.scipy_special_series` (which have rules of their own): regularized incomplete gamma
(gamma, chi2), incomplete beta (beta, t), von Mises quadrature.
"""

from __future__ import annotations

import numpy as np
import scipy.special as sc

from ..registry import transformable
from .scipy_special_series import betainc_partials, gammainc_da, vonmises_cdf_dkappa

_LOG_SQRT_2PI = float(0.5 * np.log(2.0 * np.pi))


@transformable
def none(z, sh):
    """No shape parameters: an empty tuple of partials."""
    return ()


@transformable
def at_zero(sh):
    return 0.0


@transformable
def at_one(sh):
    return 1.0


@transformable
def at_half(sh):
    return 0.5


@transformable
def at_two(sh):
    return 2.0


# -- norm, logistic, cauchy, laplace, gumbel, expon, uniform (and halfnorm, halfcauchy) ------


@transformable
def norm_dz(z, sh):
    return -z


@transformable
def expon_dz(z, sh):
    return 0.0 * z - 1.0


@transformable
def laplace_dz(z, sh):
    return -np.sign(z)


@transformable
def logistic_dz(z, sh):
    return -np.tanh(0.5 * z)


@transformable
def cauchy_dz(z, sh):
    return -2.0 * z / (1.0 + z * z)


@transformable
def uniform_dz(z, sh):
    return 0.0 * z


@transformable
def gumbel_r_dz(z, sh):
    return np.expm1(-z)


@transformable
def gumbel_l_dz(z, sh):
    return -np.expm1(z)


# -- t -----------------------------------------------------------------------------------


@transformable
def t_dz(z, sh):
    df = sh[0]
    return -(df + 1.0) * z / (df + z * z)


@transformable
def t_dshape(z, sh):
    df = sh[0]
    d = 0.5 * (
        sc.digamma(0.5 * (df + 1.0))
        - sc.digamma(0.5 * df)
        - 1.0 / df
        - np.log1p(z * z / df)
        + (df + 1.0) * z * z / (df * (df + z * z))
    )
    return (d,)


@transformable
def t_dcdf(z, sh):
    # F(z) = 1 - I_w(df/2, 1/2) / 2 for z > 0 (and I_w / 2 for z < 0), w = df / (df + z^2)
    df = sh[0]
    w = df / (df + z * z)
    parts = betainc_partials(0.5 * df, 0.5 + 0.0 * w, w)
    d_inner = 0.5 * parts[0] + parts[2] * z * z / (df + z * z) ** 2
    return (np.where(z > 0, -0.5, 0.5) * d_inner,)


# -- beta, gamma, chi2 -----------------------------------------------------------------------


@transformable
def beta_dz(z, sh):
    return (sh[0] - 1.0) / z - (sh[1] - 1.0) / (1.0 - z)


@transformable
def beta_dshape(z, sh):
    psi = sc.digamma(sh[0] + sh[1])
    return (np.log(z) - sc.digamma(sh[0]) + psi, np.log1p(-z) - sc.digamma(sh[1]) + psi)


@transformable
def beta_dcdf(z, sh):
    parts = betainc_partials(sh[0], sh[1], z)
    return (parts[0], parts[1])


@transformable
def gamma_dz(z, sh):
    return (sh[0] - 1.0) / z - 1.0


@transformable
def gamma_dshape(z, sh):
    return (np.log(z) - sc.digamma(sh[0]),)


@transformable
def gamma_dcdf(z, sh):
    return (gammainc_da(sh[0], z),)


@transformable
def chi2_dz(z, sh):
    return (0.5 * sh[0] - 1.0) / z - 0.5


@transformable
def chi2_dshape(z, sh):
    return (0.5 * (np.log(0.5 * z) - sc.digamma(0.5 * sh[0])),)


@transformable
def chi2_dcdf(z, sh):
    return (0.5 * gammainc_da(0.5 * sh[0], 0.5 * z),)


# -- lognorm, pareto -----------------------------------------------------------------------


@transformable
def lognorm_dz(z, sh):
    s = sh[0]
    return -(1.0 + np.log(z) / (s * s)) / z


@transformable
def lognorm_dshape(z, sh):
    s = sh[0]
    return (-1.0 / s + np.log(z) ** 2 / s**3,)


@transformable
def lognorm_dcdf(z, sh):
    s = sh[0]
    u = np.log(z) / s
    return (-np.exp(-0.5 * u * u - _LOG_SQRT_2PI) * u / s,)


@transformable
def pareto_dz(z, sh):
    return -(sh[0] + 1.0) / z


@transformable
def pareto_dshape(z, sh):
    return (1.0 / sh[0] - np.log(z),)


@transformable
def pareto_dcdf(z, sh):
    # z is inside the support (z >= 1); F = 1 - z^-b
    return (z ** -sh[0] * np.log(z),)


# -- invgamma, weibull_min ------------------------------------------------------------------


@transformable
def invgamma_dz(z, sh):
    return -(sh[0] + 1.0) / z + 1.0 / (z * z)


@transformable
def invgamma_dshape(z, sh):
    return (-np.log(z) - sc.digamma(sh[0]),)


@transformable
def invgamma_dcdf(z, sh):
    # F(z) = Q(a, 1/z) = 1 - P(a, 1/z)
    return (-gammainc_da(sh[0], 1.0 / z),)


@transformable
def weibull_min_dz(z, sh):
    c = sh[0]
    return (c - 1.0) / z - c * z ** (c - 1.0)


@transformable
def weibull_min_dshape(z, sh):
    c = sh[0]
    return (1.0 / c + np.log(z) - z**c * np.log(z),)


@transformable
def weibull_min_dcdf(z, sh):
    # F = 1 - exp(-z^c)
    c = sh[0]
    zc = z**c
    return (np.exp(-zc) * zc * np.log(z),)


# -- vonmises -----------------------------------------------------------------------------


@transformable
def vonmises_dz(z, sh):
    return -sh[0] * np.sin(z)


@transformable
def vonmises_dshape(z, sh):
    return (np.cos(z) - sc.i1e(sh[0]) / sc.i0e(sh[0]),)


@transformable
def vonmises_dcdf(z, sh):
    return (vonmises_cdf_dkappa(z, sh[0]),)


# -- truncnorm ---------------------------------------------------------------------------------


@transformable
def truncnorm_dshape(z, sh):
    mass = sc.ndtr(sh[1]) - sc.ndtr(sh[0])
    phi_a = np.exp(-0.5 * sh[0] * sh[0] - _LOG_SQRT_2PI)
    phi_b = np.exp(-0.5 * sh[1] * sh[1] - _LOG_SQRT_2PI)
    return (phi_a / mass, -phi_b / mass)


@transformable
def truncnorm_dcdf(z, sh):
    a = sh[0]
    b = sh[1]
    mass = sc.ndtr(b) - sc.ndtr(a)
    phi_a = np.exp(-0.5 * a * a - _LOG_SQRT_2PI)
    phi_b = np.exp(-0.5 * b * b - _LOG_SQRT_2PI)
    F = (sc.ndtr(z) - sc.ndtr(a)) / mass
    inside = (z > a) & (z < b)
    da = np.where(inside, phi_a * (F - 1.0) / mass, 0.0)
    return (da, np.where(inside, -F * phi_b / mass, 0.0))


@transformable
def truncnorm_safe(sh):
    return 0.5 * (sh[0] + sh[1])


# name: (number of shapes, d log f/dz, d log f/d shapes, dF/d shapes, a point of the support)
SPECS = {
    "norm": (0, norm_dz, none, none, at_zero),
    "t": (1, t_dz, t_dshape, t_dcdf, at_zero),
    "beta": (2, beta_dz, beta_dshape, beta_dcdf, at_half),
    "gamma": (1, gamma_dz, gamma_dshape, gamma_dcdf, at_one),
    "chi2": (1, chi2_dz, chi2_dshape, chi2_dcdf, at_one),
    "expon": (0, expon_dz, none, none, at_one),
    "laplace": (0, laplace_dz, none, none, at_zero),
    "logistic": (0, logistic_dz, none, none, at_zero),
    "cauchy": (0, cauchy_dz, none, none, at_zero),
    "lognorm": (1, lognorm_dz, lognorm_dshape, lognorm_dcdf, at_one),
    "uniform": (0, uniform_dz, none, none, at_half),
    "pareto": (1, pareto_dz, pareto_dshape, pareto_dcdf, at_two),
    "gumbel_r": (0, gumbel_r_dz, none, none, at_zero),
    "gumbel_l": (0, gumbel_l_dz, none, none, at_zero),
    "vonmises": (1, vonmises_dz, vonmises_dshape, vonmises_dcdf, at_zero),
    "truncnorm": (2, norm_dz, truncnorm_dshape, truncnorm_dcdf, truncnorm_safe),
    # the half-line priors of hierarchical models: log f is the full density's plus log 2
    "halfnorm": (0, norm_dz, none, none, at_one),
    "halfcauchy": (0, cauchy_dz, none, none, at_one),
    "invgamma": (1, invgamma_dz, invgamma_dshape, invgamma_dcdf, at_one),
    "weibull_min": (1, weibull_min_dz, weibull_min_dshape, weibull_min_dcdf, at_one),
}
