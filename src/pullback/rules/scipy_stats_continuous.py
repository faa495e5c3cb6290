"""scipy.stats continuous distributions: logpdf, pdf, cdf, logcdf, sf, logsf and ppf of
norm, t, beta, gamma, chi2, expon, laplace, logistic, cauchy, lognorm, uniform, pareto,
gumbel_r, gumbel_l, vonmises and truncnorm, with respect to ``x`` (``q``) and every
float parameter (shape parameters, ``loc``, ``scale``) given positionally.

Every distribution here is a location-scale family: with ``z = (x - loc) / scale``,
``pdf(x) = f(z; shapes) / scale`` and ``cdf(x) = F(z; shapes)``. So each needs only
``d log f / dz``, ``d log f / d shape`` and ``dF / d shape`` (the standardized ``f`` and
``F`` themselves come from scipy); the chain rule through ``z`` gives ``x``, ``loc`` and
``scale``, and ``ppf`` is the inverse of ``cdf`` (``dQ/dq = 1 / f(Q)``,
``dQ/d shape = -(dF/d shape) / f``).

Shape derivatives of a cdf that have no elementary form use the series of
:mod:`.scipy_special_series` (gamma and chi2: regularized incomplete gamma; beta and t:
regularized incomplete beta; vonmises: Gauss-Legendre quadrature of the derivative of the
density). Outside the support the cotangents are zero (the functions are flat there).
"""

from __future__ import annotations

import numpy as np

from .scipy_special_series import betainc_partials, gammainc_da
from .scipy_stats_common import (
    LOC_SCALE,
    bind_params,
    f64,
    register_methods,
    where_finite,
)

FAMILY = "scipy_stats"
REQUIRES = "scipy.stats"

METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf")
_LOG_SQRT_2PI = float(0.5 * np.log(2.0 * np.pi))


def _sc():
    import scipy.special as sc

    return sc


# -- the standardized families: d log f/dz, d log f/dθ, dF/dθ ---------------------------


def _t_dlogf_ddf(z, df):
    sc = _sc()
    return 0.5 * (
        sc.digamma(0.5 * (df + 1.0))
        - sc.digamma(0.5 * df)
        - 1.0 / df
        - np.log1p(z * z / df)
        + (df + 1.0) * z * z / (df * (df + z * z))
    )


def _t_dcdf_ddf(z, df):
    # F(z) = 1 - I_w(df/2, 1/2) / 2 for z > 0 (and I_w / 2 for z < 0), w = df / (df + z^2)
    w = df / (df + z * z)
    da, _, dw = betainc_partials(0.5 * df, np.full_like(w, 0.5), w)
    d_inner = 0.5 * da + dw * z * z / (df + z * z) ** 2
    return np.where(z > 0, -0.5, 0.5) * d_inner


def _beta_dlogf(z, a, b, which):
    sc = _sc()
    psi = sc.digamma(a + b)
    return np.log(z) - sc.digamma(a) + psi if which == 0 else np.log1p(-z) - sc.digamma(b) + psi


def _beta_dcdf(z, a, b, which):
    return betainc_partials(a, b, np.clip(z, 0.0, 1.0))[which]


def _truncnorm_parts(a, b):
    sc = _sc()
    mass = sc.ndtr(b) - sc.ndtr(a)
    phi_a = np.exp(-0.5 * a * a - _LOG_SQRT_2PI)
    phi_b = np.exp(-0.5 * b * b - _LOG_SQRT_2PI)
    return mass, phi_a, phi_b


def _truncnorm_dcdf(z, a, b, which):
    sc = _sc()
    mass, phi_a, phi_b = _truncnorm_parts(a, b)
    F = (sc.ndtr(z) - sc.ndtr(a)) / mass
    inside = (z > a) & (z < b)
    d = phi_a * (F - 1.0) / mass if which == 0 else -F * phi_b / mass
    return np.where(inside, d, 0.0)


_LEGENDRE = np.polynomial.legendre.leggauss(128)


def _vonmises_dcdf_dkappa(z, kappa):
    """``dF/dkappa = int_(-pi)^z f(t) (cos t - A(kappa)) dt`` with ``A = I1/I0`` (the
    derivative of the density under the integral), by Gauss-Legendre quadrature. scipy's
    cdf grows by 1 per turn, so its derivative is periodic: ``z`` is reduced to one turn.
    The integrand is smooth and, for ``kappa`` up to a few hundred, well resolved."""
    sc = _sc()
    z, kappa = np.broadcast_arrays(np.asarray(z, np.float64), np.asarray(kappa, np.float64))
    turn = np.mod(z + np.pi, 2.0 * np.pi) - np.pi
    nodes, weights = _LEGENDRE
    nodes = nodes.reshape((-1,) + (1,) * z.ndim)
    weights = weights.reshape(nodes.shape)
    half = 0.5 * (turn + np.pi)  # [-pi, turn] mapped from [-1, 1]
    t = -np.pi + half * (nodes + 1.0)
    density = np.exp(kappa * (np.cos(t) - 1.0)) / (2.0 * np.pi * sc.i0e(kappa))
    mean_cos = sc.i1e(kappa) / sc.i0e(kappa)
    return half * np.sum(weights * density * (np.cos(t) - mean_cos), axis=0)


def _gamma_dcdf(z, a):
    return gammainc_da(a, np.maximum(z, 0.0))


SPECS = {
    # name: (d log f/dz, (d log f/dθ, ...), (dF/dθ, ...))
    "norm": (lambda z: -z, (), ()),
    "t": (lambda z, df: -(df + 1.0) * z / (df + z * z), (_t_dlogf_ddf,), (_t_dcdf_ddf,)),
    "beta": (
        lambda z, a, b: (a - 1.0) / z - (b - 1.0) / (1.0 - z),
        (lambda z, a, b: _beta_dlogf(z, a, b, 0), lambda z, a, b: _beta_dlogf(z, a, b, 1)),
        (lambda z, a, b: _beta_dcdf(z, a, b, 0), lambda z, a, b: _beta_dcdf(z, a, b, 1)),
    ),
    "gamma": (
        lambda z, a: (a - 1.0) / z - 1.0,
        (lambda z, a: np.log(z) - _sc().digamma(a),),
        (_gamma_dcdf,),
    ),
    "chi2": (
        lambda z, df: (0.5 * df - 1.0) / z - 0.5,
        (lambda z, df: 0.5 * (np.log(0.5 * z) - _sc().digamma(0.5 * df)),),
        (lambda z, df: 0.5 * _gamma_dcdf(0.5 * z, 0.5 * df),),
    ),
    "expon": (lambda z: np.full_like(z, -1.0), (), ()),
    "laplace": (lambda z: -np.sign(z), (), ()),
    "logistic": (lambda z: -np.tanh(0.5 * z), (), ()),
    "cauchy": (lambda z: -2.0 * z / (1.0 + z * z), (), ()),
    "lognorm": (
        lambda z, s: -(1.0 + np.log(z) / (s * s)) / z,
        (lambda z, s: -1.0 / s + np.log(z) ** 2 / s**3,),
        (lambda z, s: -np.exp(-0.5 * (np.log(z) / s) ** 2 - _LOG_SQRT_2PI) * np.log(z) / s**2,),
    ),
    "uniform": (lambda z: np.zeros_like(z), (), ()),
    "pareto": (
        lambda z, b: -(b + 1.0) / z,
        (lambda z, b: 1.0 / b - np.log(z),),
        (lambda z, b: np.where(z > 1.0, z**-b * np.log(z), 0.0),),
    ),
    "gumbel_r": (lambda z: np.expm1(-z), (), ()),
    "gumbel_l": (lambda z: -np.expm1(z), (), ()),
    "vonmises": (
        lambda z, k: -k * np.sin(z),
        (lambda z, k: np.cos(z) - _sc().i1e(k) / _sc().i0e(k),),
        (_vonmises_dcdf_dkappa,),
    ),
    "truncnorm": (
        lambda z, a, b: -z,
        (
            lambda z, a, b: _truncnorm_parts(a, b)[1] / _truncnorm_parts(a, b)[0],
            lambda z, a, b: -_truncnorm_parts(a, b)[2] / _truncnorm_parts(a, b)[0],
        ),
        (lambda z, a, b: _truncnorm_dcdf(z, a, b, 0), lambda z, a, b: _truncnorm_dcdf(z, a, b, 1)),
    ),
}


def shape_names(dist) -> tuple:
    return tuple(s.strip() for s in dist.shapes.split(",")) if dist.shapes else ()


def params_of(dist, args, kwargs):
    """``(shapes, loc, scale)`` as float64 arrays from a method's arguments after ``x``."""
    names = shape_names(dist) + LOC_SCALE
    values = bind_params(args, kwargs, names, (None,) * (len(names) - 2) + (0.0, 1.0))
    values = [f64(v) for v in values]
    return values[:-2], values[-2], values[-1]


def density_partials(dist, logf, x, shapes, loc, scale):
    """Partials of ``logpdf`` at ``x``: ``[x, *shapes, loc, scale]`` (``logf`` is its value)."""
    dlogf_dz, dlogf_dshape, _ = SPECS[dist.name]
    z = (f64(x) - loc) / scale
    ok = np.isfinite(logf)
    with np.errstate(all="ignore"):
        g = dlogf_dz(z, *shapes)
        out = [g / scale]
        out += [d(z, *shapes) for d in dlogf_dshape]
        out += [-g / scale, -(g * z + 1.0) / scale]
    return [where_finite(p, ok) for p in out]


def cdf_partials(dist, x, shapes, loc, scale, log_denominator=None, sign=1.0):
    """Partials of ``cdf`` (``sign=-1``: ``sf``), divided by ``exp(log_denominator)``
    (the value itself, for ``logcdf``/``logsf``)."""
    _, _, dcdf_dshape = SPECS[dist.name]
    z = (f64(x) - loc) / scale
    with np.errstate(all="ignore"):
        logf = dist.logpdf(z, *shapes)
        inside = np.isfinite(logf)
        if log_denominator is None:
            f = np.exp(logf)
            over = 1.0
        else:
            f = np.exp(logf - log_denominator)
            over = np.exp(-log_denominator)
        f = np.where(inside, f, 0.0) * sign
        out = [f / scale]
        for d in dcdf_dshape:
            p = d(z, *shapes)
            out.append(np.where(inside, p * over * sign, 0.0))
        out += [-f / scale, -f * z / scale]
    return out


def ppf_partials(dist, q, shapes, scale):
    _, _, dcdf_dshape = SPECS[dist.name]
    with np.errstate(all="ignore"):
        Q = dist.ppf(f64(q), *shapes)
        f = np.exp(dist.logpdf(Q, *shapes))
        out = [scale / f]
        for d in dcdf_dshape:
            p = d(Q, *shapes)
            out.append(-scale * p / f)
        out += [np.ones_like(Q), Q]
    ok = np.isfinite(Q)
    return [where_finite(p, ok) for p in out]


def partials(dist, name, y, args, kwargs):
    """The partials of ``dist.<name>(*args, **kwargs) = y``, in positional order."""
    x = args[0]
    shapes, loc, scale = params_of(dist, args[1:], kwargs)
    if name == "logpdf":
        return density_partials(dist, y, x, shapes, loc, scale)
    if name == "pdf":
        with np.errstate(all="ignore"):
            logf = np.log(y)
        return [
            where_finite(y * p, y > 0) for p in density_partials(dist, logf, x, shapes, loc, scale)
        ]
    if name == "cdf":
        return cdf_partials(dist, x, shapes, loc, scale)
    if name == "sf":
        return cdf_partials(dist, x, shapes, loc, scale, sign=-1.0)
    if name == "logcdf":
        return cdf_partials(dist, x, shapes, loc, scale, log_denominator=y)
    if name == "logsf":
        return cdf_partials(dist, x, shapes, loc, scale, log_denominator=y, sign=-1.0)
    if name == "ppf":
        return ppf_partials(dist, x, shapes, scale)
    raise KeyError(name)  # pragma: no cover - METHODS lists what is registered


def register(reg):
    try:
        import scipy.stats  # noqa: F401
    except ImportError:  # pragma: no cover - scipy is optional
        return
    register_methods(reg, FAMILY, SPECS, METHODS, partials)
