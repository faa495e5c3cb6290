"""Hurwitz zeta's derivatives with respect to ``x``: its log-moments, to any order.

``zeta(x, q) = sum_k (k + q)^-x``; differentiated ``p`` times in ``x`` it is ``(-1)^p``
times the log-moment

    H_p(x, q) = sum_(k >= 0) log(k + q)^p (k + q)^-x,

which SciPy does not have. :func:`zeta_log_moment` computes it by the Euler-Maclaurin
formula: the first :data:`_HEAD` terms summed, then the rest as the integral of ``f(t) =
log(t)^p t^-x`` from ``T = q + _HEAD`` (in closed form), ``f(T) / 2`` and the Bernoulli
corrections ``- sum_j B_2j / (2j)! f^(2j-1)(T)`` (each derivative ``t^(-x-m)`` times a
polynomial in ``log t``, its coefficients by recurrence). The formula is the analytic
continuation too, so Riemann's zeta (``q`` omitted) is differentiated for ``x < 1`` as
well, down to ``x = -2`` (below, the head's terms grow as ``k^-x`` and cancel: a
derivative there is refused, NotDifferentiableError, rather than inexact); Hurwitz's
zeta with a ``q`` given is ``nan`` for ``x < 1`` in SciPy, and so are its derivatives.
Against mpmath (40 digits), ``p = 1, 2, 3``, ``x`` from -2 to 150, ``q`` from 0.05 to 40:
within 2e-11 relative, 1e-12 for ``x >= 0``. A ``q <= 0``
makes ``log(k + q)`` complex: the derivative in ``x`` is ``nan``.

Its own rule closes the family (``d H_p / dx = -H_(p+1)``, ``d H_p / dq = p H_(p-1)(x + 1)
- x H_p(x + 1)``, ``H_0 = zeta``), so derivatives of any order run through ``zeta``.

>>> round(float(zeta_log_moment(1, 2.0)), 11)  # -zeta'(2)
0.93754825432
"""

from __future__ import annotations

import math

import numpy as np

from ..refused import Refused
from ..registry import transformable
from ..tangents import NO_TANGENT, unbroadcast

FAMILY = "scipy_special"

# Terms summed before the Euler-Maclaurin tail, and the Bernoulli numbers B_2 ... B_16 of
# its corrections: with T = q + 16 >= 16 the 8th correction is below 1e-17 of the sum
# for the x a float64 zeta resolves.
_HEAD = 16
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)
# Riemann's zeta is differentiated in x down to here (see the module docstring).
_LOWEST = -2.0
_BELOW = Refused(
    "scipy.special.zeta(x) with respect to x below -2",
    "its derivative there is the analytic continuation of a sum whose terms cancel, "
    "which pullback does not compute to float64 accuracy",
)


def refused_below():
    """The cotangent of Riemann zeta's ``x`` below -2: refused at the user's line the sweep
    is at (it raises only where that ``x`` is differentiated). Non-differentiable."""
    return _BELOW.placed()


def zeta_log_moment(p, x, q=None):
    """``H_p(x, q) = sum_(k >= 0) log(k + q)^p (k + q)^-x`` (``(-1)^p`` times the ``p``-th
    derivative of ``scipy.special.zeta(x, q)`` in ``x``), elementwise over ``x`` and ``q``
    broadcast, float64 (float32 where both are float32, as zeta). ``p``: an integer ``>=
    0`` (``H_0`` is zeta itself); ``q=None``: Riemann's zeta (``q = 1``, continued to
    ``x < 1``)."""
    import scipy.special as sc

    p = int(p)
    if p == 0:
        return sc.zeta(x) if q is None else sc.zeta(x, q)
    dtype = np.result_type(x, 1.0 if q is None else q)
    riemann = q is None
    xf = np.asarray(x, dtype=np.float64)
    qf = np.asarray(1.0 if riemann else q, dtype=np.float64)
    xf, qf = np.broadcast_arrays(xf, qf)
    with np.errstate(all="ignore"):
        out = _log_moment(p, xf, qf)
        if not riemann:  # (SciPy's Hurwitz zeta is nan for x < 1, its derivatives too)
            out = np.where(xf < 1.0, np.nan, out)
        out = np.where(qf > 0.0, out, np.nan)
    if dtype == np.float32:
        return out.astype(np.float32)
    return out[()] if out.ndim == 0 else out


def _log_moment(p, x, q):
    """The Euler-Maclaurin sum of :func:`zeta_log_moment` on float64 arrays of one shape."""
    k = np.arange(_HEAD, dtype=np.float64).reshape((_HEAD,) + (1,) * x.ndim)
    t = q + k
    log_t = np.log(t)
    head = np.sum(log_t**p * t ** (-x), axis=0)
    big_t = q + _HEAD
    log_big = np.log(big_t)
    s = x - 1.0
    # integral of log(t)^p t^-x from T: T^-s sum_i p!/(p-i)! log(T)^(p-i) / s^(i+1)
    tail = np.zeros_like(x)
    for i in range(p + 1):
        tail = tail + math.perm(p, i) * log_big ** (p - i) / s ** (i + 1)
    tail = tail * big_t ** (-s)
    half = 0.5 * log_big**p * big_t ** (-x)
    # f^(m)(t) = t^(-x-m) sum_i c[i] log(t)^i; c[i] <- -(x + m) c[i] + (i + 1) c[i + 1]
    c = [np.zeros_like(x) for _ in range(p)] + [np.ones_like(x)]
    powers = [np.ones_like(x)]
    for _ in range(p):
        powers.append(powers[-1] * log_big)
    corrections = np.zeros_like(x)
    for m in range(2 * len(_BERNOULLI) - 1):
        c = [-(x + m) * c[i] + (i + 1) * (c[i + 1] if i < p else 0.0) for i in range(p + 1)]
        if m % 2 == 0:  # the derivative m + 1 = 2j - 1
            j = m // 2 + 1
            poly = sum(ci * pw for ci, pw in zip(c, powers, strict=True))
            weight = _BERNOULLI[j - 1] / math.factorial(2 * j)
            corrections = corrections + weight * big_t ** (-x - (m + 1)) * poly
    return head + tail + half - corrections


@transformable
def zeta_log_moment_pullback(dy, p, x, q=None):
    """``d H_p / dx = -H_(p+1)``; ``d H_p / dq = p H_(p-1)(x + 1, q) - x H_p(x + 1, q)``."""
    if q is None:
        if np.any(x < _LOWEST):
            return NO_TANGENT, refused_below(), NO_TANGENT
        return NO_TANGENT, unbroadcast(dy * -zeta_log_moment(p + 1, x, q), x), NO_TANGENT
    dx = unbroadcast(dy * -zeta_log_moment(p + 1, x, q), x)
    shifted = x + 1.0
    dq = -x * zeta_log_moment(p, shifted, q)
    if p > 0:
        dq = dq + p * zeta_log_moment(p - 1, shifted, q)
    return NO_TANGENT, dx, unbroadcast(dy * dq, q)


@transformable
def zeta_pullback(dy, x, q=None):
    """``d zeta / dx = -H_1(x, q)``; ``d zeta / dq = -x zeta(x + 1, q)``."""
    if q is None:
        if np.any(x < _LOWEST):
            return refused_below(), NO_TANGENT
        return unbroadcast(dy * -zeta_log_moment(1, x, q), x), NO_TANGENT
    dx = unbroadcast(dy * -zeta_log_moment(1, x, q), x)
    return dx, unbroadcast(dy * -x * zeta_log_moment(0, x + 1.0, q), q)


def register(r, reg):
    """Register ``zeta`` and :func:`zeta_log_moment` with the Registrar ``r`` of the
    scipy_special family (``reg`` its registry, which keeps the transformable pullbacks)."""
    import scipy.special as sc

    from .transformable import rule_from_pullback

    for fn, pullback_fn, name, notes in (
        (sc.zeta, zeta_pullback, "scipy.special.zeta", "wrt x (log-moments) and q"),
        (
            zeta_log_moment,
            zeta_log_moment_pullback,
            "pullback.rules.scipy_special_zeta.zeta_log_moment",
            "zeta's derivatives in x (Euler-Maclaurin), any order",
        ),
    ):
        r.rule(fn, rule_from_pullback(fn, pullback_fn), name=name, notes=notes)
        reg.set_pullback_function(fn, pullback_fn)
    r.nondiff(refused_below)
