"""Derivatives of the regularized incomplete gamma and beta functions with respect to their
parameters, which have no elementary form (helpers of the scipy.special and scipy.stats
rules; not a family).

* ``P(a, x) = gammainc(a, x)``: for ``x <= a + 1`` the power series
  ``P = sum_k exp((a+k) log x - x - lgamma(a+k+1))`` differentiated term by term
  (``d/da`` of a term is the term times ``log x - digamma(a+k+1)``); for larger ``x``,
  ``Q = 1 - P = int_x^inf t^(a-1) e^-t dt / Gamma(a)`` by Gauss-Laguerre quadrature
  (``t = x + u``), differentiated under the integral: ``dQ/da`` is the integral of the
  same density times ``log t - digamma(a)``. Each form is used where its terms do not
  cancel, so a tiny ``Q`` (far tail) keeps its relative accuracy.
* ``I_x(a, b) = betainc(a, b, x)``: the hypergeometric series
  ``I = sum_n x^(a+n) (1-x)^b Gamma(a+b+n) / (Gamma(b) Gamma(a+1+n))`` differentiated
  term by term, for ``x < (a+1)/(a+b+2)``; otherwise the symmetry
  ``I_x(a, b) = 1 - I_(1-x)(b, a)``.

The series are summed in vectorized blocks until every element's next terms are
negligible. Tested against central differences of scipy.special in
tests/rules/test_scipy_special_more.py.
"""

from __future__ import annotations

import numpy as np

_BLOCK = 64
_MAX_TERMS = 200_000
_EPS = 1e-17
_LAGUERRE = np.polynomial.laguerre.laggauss(96)


def _sum_series(log_term, weights, shape):
    """``[sum_n exp(log_term(n)) * w(n) for w in weights]``, summing blocks of ``n`` until
    the terms are negligible past their peak."""
    totals = [np.zeros(shape) for _ in weights]
    mass = np.zeros(shape)
    previous = np.full(shape, -np.inf)
    for start in range(0, _MAX_TERMS, _BLOCK):
        n = np.arange(start, start + _BLOCK, dtype=np.float64).reshape((-1,) + (1,) * len(shape))
        lt = log_term(n)
        t = np.exp(lt)
        for total, w in zip(totals, weights, strict=True):
            total += np.sum(t * w(n), axis=0)
        mass += np.sum(t, axis=0)
        last = lt[-1]
        # decreasing and negligible against what has been summed: done
        small = t[-1] <= _EPS * np.maximum(mass, np.finfo(float).tiny)
        if np.all(((last <= previous) & small) | ~np.isfinite(last)):
            break
        previous = last
    return totals


def _gammainc_da_series(a, x, second=False):
    from scipy.special import digamma, gammaln, polygamma

    logx = np.log(x)
    if second:  # d2/da2 of a term: the term times (log x - psi(a+k+1))^2 - psi'(a+k+1)
        weight = lambda n: (logx - digamma(a + n + 1.0)) ** 2 - polygamma(1, a + n + 1.0)  # noqa: E731
    else:
        weight = lambda n: logx - digamma(a + n + 1.0)  # noqa: E731
    (d,) = _sum_series(
        lambda n: (a + n) * logx - x - gammaln(a + n + 1.0), [weight], np.shape(x)
    )
    return d


def _gammaincc_da_quadrature(a, x, second=False):
    from scipy.special import digamma, gammaln, polygamma

    u, w = _LAGUERRE
    u = u.reshape((-1,) + (1,) * np.ndim(x))
    w = w.reshape(u.shape)
    t = x + u
    logt = np.log(t)
    # int_0^inf e^-u g(u) du with g = t^(a-1) e^-x (log t - digamma(a)) / Gamma(a)
    density = np.exp((a - 1.0) * logt - x - gammaln(a))
    u_a = logt - digamma(a)
    weight = u_a * u_a - polygamma(1, a) if second else u_a
    return np.sum(w * density * weight, axis=0)


def gammainc_da(a, x, second=False):
    """``d gammainc(a, x) / da`` for ``a > 0``, ``x >= 0`` (0 at ``x = 0``); with
    ``second``, ``d2 gammainc / da2``."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    out = np.zeros(a.shape)
    near = (x > 0) & (x <= a + 1.0)
    far = x > a + 1.0
    with np.errstate(all="ignore"):
        if np.any(near):
            out[near] = _gammainc_da_series(a[near], x[near], second)
        if np.any(far):
            out[far] = -_gammaincc_da_quadrature(a[far], x[far], second)
    return out


def _betainc_param_series(a, b, x, second=False):
    """``(dI/da, dI/db)`` of ``I_x(a, b)`` from the series (x small against the mean);
    with ``second``, ``(d2I/da2, d2I/dadb, d2I/db2)``."""
    from scipy.special import digamma, gammaln, polygamma

    logx, log1mx = np.log(x), np.log1p(-x)
    head = b * log1mx - gammaln(b)
    u_a = lambda n: logx + digamma(a + b + n) - digamma(a + 1.0 + n)  # noqa: E731
    u_b = lambda n: log1mx + digamma(a + b + n) - digamma(b)  # noqa: E731
    if second:
        t1 = lambda n: polygamma(1, a + b + n)  # noqa: E731
        weights = [
            lambda n: u_a(n) ** 2 + t1(n) - polygamma(1, a + 1.0 + n),
            lambda n: u_a(n) * u_b(n) + t1(n),
            lambda n: u_b(n) ** 2 + t1(n) - polygamma(1, b),
        ]
    else:
        weights = [u_a, u_b]
    return _sum_series(
        lambda n: (a + n) * logx + head + gammaln(a + b + n) - gammaln(a + 1.0 + n),
        weights,
        np.shape(x),
    )


def _betainc_regions(a, b, x):
    a, b, x = np.broadcast_arrays(
        np.asarray(a, np.float64), np.asarray(b, np.float64), np.asarray(x, np.float64)
    )
    inner = (x > 0) & (x < 1)
    direct = inner & (x < (a + 1.0) / (a + b + 2.0))
    return a, b, x, inner, direct, inner & ~direct


def betainc_partials(a, b, x):
    """``(dI/da, dI/db, dI/dx)`` of ``I_x(a, b) = betainc(a, b, x)`` for ``a, b > 0``,
    ``0 <= x <= 1`` (the parameter derivatives are 0 at ``x = 0`` and ``x = 1``)."""
    from scipy.special import betaln

    a, b, x, inner, direct, flipped = _betainc_regions(a, b, x)
    da, db = np.zeros(a.shape), np.zeros(a.shape)
    with np.errstate(all="ignore"):
        if np.any(direct):
            da[direct], db[direct] = _betainc_param_series(a[direct], b[direct], x[direct])
        if np.any(flipped):
            # I_x(a, b) = 1 - I_(1-x)(b, a): the roles of a and b swap, and the sign
            s_db, s_da = _betainc_param_series(b[flipped], a[flipped], 1.0 - x[flipped])
            da[flipped], db[flipped] = -s_da, -s_db
        dx = np.exp((a - 1.0) * np.log(x) + (b - 1.0) * np.log1p(-x) - betaln(a, b))
    return da, db, np.where(inner, dx, 0.0)


def betainc_second_partials(a, b, x):
    """``(I_aa, I_ab, I_bb, D_a, D_b, D_x)``: the second derivatives of ``I_x(a, b)`` in
    its parameters and the partials of the density ``D = dI/dx`` (0 outside (0, 1))."""
    from scipy.special import digamma

    a, b, x, inner, direct, flipped = _betainc_regions(a, b, x)
    aa, ab, bb = np.zeros(a.shape), np.zeros(a.shape), np.zeros(a.shape)
    with np.errstate(all="ignore"):
        if np.any(direct):
            parts = _betainc_param_series(a[direct], b[direct], x[direct], second=True)
            aa[direct], ab[direct], bb[direct] = parts
        if np.any(flipped):
            s_bb, s_ab, s_aa = _betainc_param_series(
                b[flipped], a[flipped], 1.0 - x[flipped], second=True
            )
            aa[flipped], ab[flipped], bb[flipped] = -s_aa, -s_ab, -s_bb
        dx = betainc_partials(a, b, x)[2]
        psi = digamma(a + b)
        d_a = dx * (np.log(x) - digamma(a) + psi)
        d_b = dx * (np.log1p(-x) - digamma(b) + psi)
        d_x = dx * ((a - 1.0) / x - (b - 1.0) / (1.0 - x))
    return aa, ab, bb, *(np.where(inner, d, 0.0) for d in (d_a, d_b, d_x))


_LEGENDRE = np.polynomial.legendre.leggauss(128)


def vonmises_cdf_dkappa(z, kappa, second=False):
    """``dF/dkappa = int_(-pi)^z f(t) (cos t - A(kappa)) dt`` of the standard von Mises
    cdf, with ``A = I1/I0`` (the derivative of the density under the integral), by
    Gauss-Legendre quadrature; with ``second``, ``d2F/dkappa2`` (the integrand times
    ``(cos t - A)^2 - A'``, ``A' = 1 - A/kappa - A^2``). scipy's cdf grows by 1 per turn,
    so its derivative is periodic: ``z`` is reduced to one turn. The integrand is smooth
    and, for ``kappa`` up to a few hundred, well resolved."""
    from scipy.special import i0e, i1e

    z, kappa = np.broadcast_arrays(np.asarray(z, np.float64), np.asarray(kappa, np.float64))
    turn = np.mod(z + np.pi, 2.0 * np.pi) - np.pi
    nodes, weights = _LEGENDRE
    nodes = nodes.reshape((-1,) + (1,) * z.ndim)
    weights = weights.reshape(nodes.shape)
    half = 0.5 * (turn + np.pi)  # [-pi, turn] mapped from [-1, 1]
    t = -np.pi + half * (nodes + 1.0)
    density = np.exp(kappa * (np.cos(t) - 1.0)) / (2.0 * np.pi * i0e(kappa))
    mean_cos = i1e(kappa) / i0e(kappa)
    u = np.cos(t) - mean_cos
    if second:
        u = u * u - (1.0 - mean_cos / kappa - mean_cos * mean_cos)
    return half * np.sum(weights * density * u, axis=0)
