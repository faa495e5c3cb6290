"""scipy.special: gamma and friends, error functions, expit/logit, logsumexp, softmax,
xlogy, Bessel functions of order 0 and 1, normal distribution functions.

Deferred until scipy.special is imported (``REQUIRES``); ``register`` does nothing without SciPy.
Rules are for real arguments. Integer orders (``polygamma``'s ``n``) get no tangent.
"""

from __future__ import annotations

import numpy as np

from ..registry import transformable
from ._util import (
    NO_TANGENT,
    ZERO,
    Registrar,
    bind,
    densify,
    dy_parts,
    expand_reduced,
    finalize,
    zeros_for,
)

FAMILY = "scipy_special"
REQUIRES = "scipy.special"

_SQRT_PI_HALF = float(np.sqrt(np.pi) / 2.0)
_TWO_OVER_SQRT_PI = float(2.0 / np.sqrt(np.pi))
_LOG_SQRT_2PI = float(0.5 * np.log(2.0 * np.pi))


@transformable
def _safe_ratio(num, x, at_zero):
    """``num / x`` with the limit ``at_zero`` at ``x == 0``."""
    zero = x == 0
    return np.where(zero, at_zero, num / np.where(zero, 1.0, x))


def _logsumexp_rrule(a, *args, **kwargs):
    import scipy.special as sc

    y = sc.logsumexp(a, *args, **kwargs)
    p = bind(
        args,
        kwargs,
        ("axis", "b", "keepdims", "return_sign"),
        (None, None, False, False),
        name="scipy.special.logsumexp",
    )
    axis, b, keepdims = p["axis"], p["b"], p["keepdims"]
    value = y[0] if p["return_sign"] else y
    shape = np.broadcast_shapes(np.shape(a), np.shape(b)) if b is not None else np.shape(a)

    def logsumexp_pullback(dy):
        d_value = dy_parts(dy, 2)[0] if p["return_sign"] else dy
        if d_value is ZERO:
            return zeros_for((a,) + args)
        g = expand_reduced(d_value, shape, axis, keepdims)
        # exp(a - lse): the softmax weights (times b)
        e = np.exp(np.asarray(a) - expand_reduced(value, shape, axis, keepdims))
        if p["return_sign"]:  # sum(b e^a) = sign * e^lse
            e = e * expand_reduced(y[1], shape, axis, keepdims)
        da = g * e if b is None else g * e * b
        out = [finalize(da, a)]
        for k, v in enumerate(args):
            out.append(finalize(g * e, v) if k == 1 and v is not None else NO_TANGENT)
        return tuple(out)

    return y, logsumexp_pullback


def _softmax_rule(fn, log):
    def softmax_rrule(x, *args, **kwargs):
        y = fn(x, *args, **kwargs)
        axis = bind(args, kwargs, ("axis",), (None,), name=f"scipy.special.{fn.__name__}")["axis"]
        s = np.exp(y) if log else y
        rest = (NO_TANGENT,) * len(args)

        def softmax_pullback(dy):
            if dy is ZERO:
                return zeros_for((x,)) + rest
            g = np.asarray(densify(dy))
            if log:  # y = x - lse(x)
                dx = g - s * np.sum(g, axis=axis, keepdims=True)
            else:
                dx = s * (g - np.sum(g * s, axis=axis, keepdims=True))
            return (finalize(dx, x),) + rest

        return y, softmax_pullback

    softmax_rrule.__name__ = f"{fn.__name__}_rrule"
    return softmax_rrule


def register(reg):
    try:
        import scipy.special as sc
    except ImportError:  # pragma: no cover - scipy is optional
        return
    r = Registrar(reg, FAMILY)

    def s(fn, *derivatives, notes=""):
        r.scalar(
            fn, *derivatives, holomorphic=False, name=f"scipy.special.{fn.__name__}", notes=notes
        )

    s(sc.gamma, lambda y, x: y * sc.digamma(x))
    s(sc.gammaln, lambda y, x: sc.digamma(x))
    s(sc.rgamma, lambda y, x: -y * sc.digamma(x))
    s(sc.digamma, lambda y, x: sc.polygamma(1, x))
    s(sc.polygamma, None, lambda y, n, x: sc.polygamma(n + 1, x))
    s(
        sc.beta,
        lambda y, a, b: y * (sc.digamma(a) - sc.digamma(a + b)),
        lambda y, a, b: y * (sc.digamma(b) - sc.digamma(a + b)),
    )
    s(
        sc.betaln,
        lambda y, a, b: sc.digamma(a) - sc.digamma(a + b),
        lambda y, a, b: sc.digamma(b) - sc.digamma(a + b),
    )
    s(sc.erf, lambda y, x: _TWO_OVER_SQRT_PI * np.exp(-x * x))
    s(sc.erfc, lambda y, x: -_TWO_OVER_SQRT_PI * np.exp(-x * x))
    s(sc.erfcx, lambda y, x: 2.0 * x * y - _TWO_OVER_SQRT_PI)
    s(sc.erfinv, lambda y, x: _SQRT_PI_HALF * np.exp(y * y))
    s(sc.erfcinv, lambda y, x: -_SQRT_PI_HALF * np.exp(y * y))
    s(sc.expit, lambda y, x: y * (1.0 - y))
    s(sc.log_expit, lambda y, x: sc.expit(-x))
    s(sc.logit, lambda y, x: 1.0 / (x * (1.0 - x)))
    s(sc.ndtr, lambda y, x: np.exp(-0.5 * x * x - _LOG_SQRT_2PI))
    s(sc.log_ndtr, lambda y, x: np.exp(-0.5 * x * x - _LOG_SQRT_2PI - y))
    s(sc.ndtri, lambda y, x: np.exp(0.5 * y * y + _LOG_SQRT_2PI))
    s(sc.xlogy, lambda y, a, b: np.log(b), lambda y, a, b: a / b)
    s(sc.xlog1py, lambda y, a, b: np.log1p(b), lambda y, a, b: a / (1.0 + b))
    s(sc.entr, lambda y, x: -(np.log(x) + 1.0))
    s(sc.rel_entr, lambda y, a, b: np.log(a / b) + 1.0, lambda y, a, b: -a / b)
    s(sc.i0, lambda y, x: sc.i1(x))
    s(sc.i1, lambda y, x: sc.i0(x) - _safe_ratio(y, x, 0.5), notes="i1'(0) = 1/2")
    s(sc.i0e, lambda y, x: sc.i1e(x) - np.sign(x) * y)
    s(
        sc.i1e,
        lambda y, x: sc.i0e(x) - _safe_ratio(y, x, 0.5) - np.sign(x) * y,
        notes="i1e'(0) = 1/2",
    )
    s(sc.j0, lambda y, x: -sc.j1(x))
    s(sc.j1, lambda y, x: sc.j0(x) - _safe_ratio(y, x, 0.5), notes="j1'(0) = 1/2")
    s(sc.y0, lambda y, x: -sc.y1(x))
    s(sc.y1, lambda y, x: sc.y0(x) - y / x)

    rule = r.rule(sc.logsumexp, _logsumexp_rrule, name="scipy.special.logsumexp")
    # logsumexp(a, b=w) reaches the transformable pullback as logsumexp(a, None, w): a
    # differentiated weight by keyword (transform/keyword_positions.py)
    rule.extra["positional_names"] = ("a", "axis", "b", "keepdims", "return_sign")
    rule.extra["positional_defaults"] = {"axis": None, "b": None, "keepdims": False}
    r.rule(sc.softmax, _softmax_rule(sc.softmax, False), name="scipy.special.softmax")
    r.rule(sc.log_softmax, _softmax_rule(sc.log_softmax, True), name="scipy.special.log_softmax")
    from . import scipy_special_transformable as t

    reg.set_pullback_function(sc.logsumexp, t.logsumexp_pullback)
    reg.set_pullback_function(sc.softmax, t.softmax_pullback)
    reg.set_pullback_function(sc.log_softmax, t.log_softmax_pullback)
