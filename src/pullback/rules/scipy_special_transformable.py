"""Pullbacks of the scipy.special rules that are not elementwise-from-derivatives
(logsumexp, softmax, log_softmax, the Bessel functions of any order, the incomplete gamma
and beta functions) written as transformable functions, so that second derivatives run
through them. The Bessel functions and incomplete gamma/beta functions use them as their
closure pullbacks too (:func:`~.transformable.rule_from_pullback`), so both agree exactly
(zeta's: :mod:`.scipy_special_zeta`).

A float Bessel order has no derivative formula: its cotangent is a
:class:`~.scipy_stats_common.Refused` value, which raises only when used (when that
argument is differentiated).
"""

from __future__ import annotations

import numpy as np
import scipy.special as sc

from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO, densify, unbroadcast
from .scipy_special_series import betainc_partials, gammainc_da
from .scipy_stats_common import refused
from .transformable import _reduced, by_rule

_ORDER = refused(
    "a scipy.special Bessel function with respect to its order v",
    "the derivative of a Bessel function with respect to a non-integer order has no closed form",
)


def refused_order():
    """The cotangent of a Bessel function's order: refused, at the user's line the sweep
    is at (it raises only where that order is differentiated). Non-differentiable."""
    return _ORDER.placed()


@transformable
def _signed_logsumexp_pullback(dy, a, axis, b, keepdims):
    """``logsumexp(..., return_sign=True)``: (log|s|, sign s) with s = sum b e^a; the sign
    is piecewise constant (no cotangent), d log|s| = sign * b e^a / e^log|s|."""
    if np.iscomplexobj(a) or np.iscomplexobj(b):
        return by_rule(sc.logsumexp, dy, a, axis, b, keepdims, True)
    d_log = dy[0]
    if d_log is ZERO or d_log is NO_TANGENT or d_log is None:
        da = np.zeros(np.shape(a), np.result_type(a, 1.0))
        db = NO_TANGENT if b is None else np.zeros(np.shape(b), np.result_type(b, 1.0))
        return da, NO_TANGENT, db, NO_TANGENT, NO_TANGENT
    y, sign = sc.logsumexp(a, axis, b, True, True)
    ge = _reduced(densify(d_log), axis, keepdims) * sign * np.exp(a - y)
    if b is None:
        return unbroadcast(ge, a), NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT
    return unbroadcast(ge * b, a), NO_TANGENT, unbroadcast(ge, b), NO_TANGENT, NO_TANGENT


@transformable
def logsumexp_pullback(dy, a, axis=None, b=None, keepdims=False, return_sign=False):
    if return_sign:
        return _signed_logsumexp_pullback(dy, a, axis, b, keepdims)
    if b is None:
        y = sc.logsumexp(a, axis=axis, keepdims=True)
        da = _reduced(dy, axis, keepdims) * np.exp(a - y)
        return unbroadcast(da, a), NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT
    # log sum b e^a: the weights b e^a / sum b e^a (b by position: it may be differentiated)
    y = sc.logsumexp(a, axis, b, True)
    ge = _reduced(dy, axis, keepdims) * np.exp(a - y)
    return unbroadcast(ge * b, a), NO_TANGENT, unbroadcast(ge, b), NO_TANGENT, NO_TANGENT


@transformable
def softmax_pullback(dy, x, axis=None):
    s = sc.softmax(x, axis=axis)
    return unbroadcast(s * (dy - np.sum(dy * s, axis=axis, keepdims=True)), x), NO_TANGENT


@transformable
def log_softmax_pullback(dy, x, axis=None):
    s = np.exp(sc.log_softmax(x, axis=axis))
    return unbroadcast(dy - s * np.sum(dy, axis=axis, keepdims=True), x), NO_TANGENT


# -- Bessel functions of any order: d/dz by the recurrences ------------------------------


@transformable
def iv_pullback(dy, v, z):
    return refused_order(), unbroadcast(dy * 0.5 * (sc.iv(v - 1.0, z) + sc.iv(v + 1.0, z)), z)


@transformable
def ive_pullback(dy, v, z):
    d = 0.5 * (sc.ive(v - 1.0, z) + sc.ive(v + 1.0, z)) - np.sign(z) * sc.ive(v, z)
    return refused_order(), unbroadcast(dy * d, z)


@transformable
def kv_pullback(dy, v, z):
    return refused_order(), unbroadcast(dy * -0.5 * (sc.kv(v - 1.0, z) + sc.kv(v + 1.0, z)), z)


@transformable
def kve_pullback(dy, v, z):
    d = sc.kve(v, z) - 0.5 * (sc.kve(v - 1.0, z) + sc.kve(v + 1.0, z))
    return refused_order(), unbroadcast(dy * d, z)


@transformable
def jv_pullback(dy, v, z):
    return refused_order(), unbroadcast(dy * 0.5 * (sc.jv(v - 1.0, z) - sc.jv(v + 1.0, z)), z)


@transformable
def yv_pullback(dy, v, z):
    return refused_order(), unbroadcast(dy * 0.5 * (sc.yv(v - 1.0, z) - sc.yv(v + 1.0, z)), z)


# -- incomplete gamma and beta ----------------------------------------------------------


@transformable
def gamma_density(a, x):
    """``d gammainc(a, x) / dx = x^(a-1) e^-x / Gamma(a)`` (at ``x = 0``: 1 for a = 1)."""
    positive = x > 0
    xs = np.where(positive, x, 1.0)
    d = np.exp((a - 1.0) * np.log(xs) - xs - sc.gammaln(a))
    return np.where(positive, d, np.where(a == 1.0, 1.0, 0.0))


@transformable
def gammainc_pullback(dy, a, x):
    return unbroadcast(dy * gammainc_da(a, x), a), unbroadcast(dy * gamma_density(a, x), x)


@transformable
def gammaincc_pullback(dy, a, x):
    return unbroadcast(-dy * gammainc_da(a, x), a), unbroadcast(-dy * gamma_density(a, x), x)


@transformable
def betainc_pullback(dy, a, b, x):
    parts = betainc_partials(a, b, x)
    return (
        unbroadcast(dy * parts[0], a),
        unbroadcast(dy * parts[1], b),
        unbroadcast(dy * parts[2], x),
    )
