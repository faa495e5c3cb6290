"""scipy.special, continued: Bessel functions of any order (iv, ive, kv, kve, jv, yv, yn),
the regularized incomplete gamma and beta functions (gammainc, gammaincc, betainc),
multigammaln, zeta, kl_div; factorial, comb and gammasgn are non-differentiable.

Bessel functions are differentiated with respect to the argument by the recurrences
(``C_v' = (C_(v-1) -+ C_(v+1)) / 2``; the exponentially scaled ones add the derivative of
their scale). With respect to the order there is no closed form: an integer order gets no
tangent; differentiating with respect to a float order raises NotDifferentiableError (a
float order held constant is fine). Likewise ``zeta(x, q)`` with respect to ``x``.

``gammainc``/``gammaincc`` with respect to ``a`` and ``betainc`` with respect to ``a`` and
``b`` use the series and quadrature of :mod:`.scipy_special_series`. Arguments are real.
"""

from __future__ import annotations

import numpy as np

from ._util import Registrar
from .scipy_special_series import betainc_partials, gammainc_da
from .scipy_stats_common import f64, method_rrule, refused

FAMILY = "scipy_special"
REQUIRES = "scipy.special"


def _order(name, v):
    """The partial for a Bessel order: none for integers (the caller's NO_TANGENT), a
    refusal for floats (no closed form)."""
    return refused(
        f"scipy.special.{name} with respect to its order v",
        "the derivative of a Bessel function with respect to a non-integer order has no "
        "closed form",
    )


def _bessel(name, dz):
    """Partials ``[order, argument]`` of ``name(v, z)`` with ``dz(v, z, y)``."""

    def partials_of(y, args, kwargs):
        v, z = f64(args[0]), f64(args[1])
        with np.errstate(all="ignore"):
            return [_order(name, v), dz(v, z, f64(y))]

    return partials_of


def _dx_gammainc(a, x):
    """``d gammainc(a, x) / dx``: the gamma density ``x^(a-1) e^-x / Gamma(a)``."""
    from scipy.special import gammaln

    with np.errstate(all="ignore"):
        d = np.exp((a - 1.0) * np.log(x) - x - gammaln(a))
    return np.where(x > 0, d, np.where(a == 1.0, 1.0, 0.0))


def _gammainc_partials(sign):
    def partials_of(y, args, kwargs):
        a, x = np.broadcast_arrays(f64(args[0]), f64(args[1]))
        return [sign * gammainc_da(a, x), sign * _dx_gammainc(a, x)]

    return partials_of


def _betainc_partials(y, args, kwargs):
    return list(betainc_partials(*(f64(v) for v in args[:3])))


def _zeta_partials(y, args, kwargs):
    import scipy.special as sc

    x = f64(args[0])
    q = f64(args[1] if len(args) > 1 else kwargs.get("q", 1.0))
    what = refused(
        "scipy.special.zeta with respect to x",
        "d/dx zeta(x, q) = -sum log(k + q) (k + q)^-x has no scipy function",
    )
    return [what, -x * sc.zeta(x + 1.0, q)]


def register(reg):
    try:
        import scipy.special as sc
    except ImportError:  # pragma: no cover - scipy is optional
        return
    r = Registrar(reg, FAMILY)

    def rule(fn, partials_of, notes=""):
        name = f"scipy.special.{fn.__name__}"
        r.rule(fn, method_rrule(fn, partials_of, fn.__name__), name=name, notes=notes)

    order = "wrt z; an integer order has no tangent, a float order is refused"
    rule(sc.iv, _bessel("iv", lambda v, z, y: 0.5 * (sc.iv(v - 1, z) + sc.iv(v + 1, z))), order)
    rule(
        sc.ive,
        _bessel(
            "ive",
            lambda v, z, y: 0.5 * (sc.ive(v - 1, z) + sc.ive(v + 1, z)) - np.sign(z) * y,
        ),
        order,
    )
    rule(sc.kv, _bessel("kv", lambda v, z, y: -0.5 * (sc.kv(v - 1, z) + sc.kv(v + 1, z))), order)
    rule(
        sc.kve,
        _bessel("kve", lambda v, z, y: y - 0.5 * (sc.kve(v - 1, z) + sc.kve(v + 1, z))),
        order,
    )
    rule(sc.jv, _bessel("jv", lambda v, z, y: 0.5 * (sc.jv(v - 1, z) - sc.jv(v + 1, z))), order)
    rule(sc.yv, _bessel("yv", lambda v, z, y: 0.5 * (sc.yv(v - 1, z) - sc.yv(v + 1, z))), order)
    rule(
        sc.yn,
        _bessel("yn", lambda v, z, y: 0.5 * (sc.yv(v - 1, z) - sc.yv(v + 1, z))),
        "integer order n",
    )
    rule(sc.gammainc, _gammainc_partials(1.0), "wrt a by series / quadrature")
    rule(sc.gammaincc, _gammainc_partials(-1.0), "wrt a by series / quadrature")
    rule(sc.betainc, _betainc_partials, "wrt a, b by series")
    rule(sc.zeta, _zeta_partials, "wrt q; wrt x refused")

    def s(fn, *derivatives):
        r.scalar(fn, *derivatives, holomorphic=False, name=f"scipy.special.{fn.__name__}")

    s(sc.multigammaln, _multigammaln_da)
    s(
        sc.kl_div,
        lambda y, x, z: np.log(x / z),
        lambda y, x, z: 1.0 - x / z,
    )
    from . import scipy_special_kernels

    scipy_special_kernels.register(r)
    r.nondiff(
        sc.factorial,
        sc.comb,
        sc.gammasgn,
        names=[f"scipy.special.{f.__name__}" for f in (sc.factorial, sc.comb, sc.gammasgn)],
        notes="integer-valued or piecewise constant",
    )


def _multigammaln_da(y, a, d):
    """``d/da log Gamma_d(a) = sum_(j < d) digamma(a - j/2)``."""
    import scipy.special as sc

    return np.sum(
        sc.digamma(np.multiply.outer(a, np.ones(int(d))) - np.arange(int(d)) / 2.0), axis=-1
    )
