"""scipy.special, continued: Bessel functions of any order (iv, ive, kv, kve, jv, yv, yn),
the regularized incomplete gamma and beta functions (gammainc, gammaincc, betainc),
multigammaln, zeta, kl_div, the exponential integrals (exp1, expi, expn in x), poch and the
real binom; factorial, comb and gammasgn are non-differentiable.

Bessel functions are differentiated with respect to the argument by the recurrences
(``C_v' = (C_(v-1) -+ C_(v+1)) / 2``; the exponentially scaled ones add the derivative of
their scale). With respect to the order there is no closed form: an integer order gets no
tangent; differentiating with respect to a float order raises NotDifferentiableError (a
float order held constant is fine). ``zeta(x, q)`` is differentiated in both arguments,
in ``x`` by its log-moments (:mod:`.scipy_special_zeta`).

``gammainc``/``gammaincc`` with respect to ``a`` and ``betainc`` with respect to ``a`` and
``b`` use the series and quadrature of :mod:`.scipy_special_series` (whose own rules,
:mod:`.scipy_special_kernels`, give the next derivative). The pullbacks are transformable
functions (:mod:`.scipy_special_transformable`): second derivatives run through them.
Arguments are real.
"""

from __future__ import annotations

import numpy as np

from ..registry import transformable
from ._util import Registrar
from .transformable import rule_from_pullback

FAMILY = "scipy_special"
REQUIRES = "scipy.special"


@transformable
def _expn_dx(y, n, x):
    """``d/dx E_n(x) = -E_(n-1)(x)``; ``E_0(x) = exp(-x) / x`` has no ``E_(-1)``: its
    derivative is ``-exp(-x) (1 + x) / x^2``."""
    import scipy.special as sc

    n_below = np.maximum(n - 1, 0)
    return np.where(n == 0, -y * (1.0 + x) / x, -sc.expn(n_below, x))


def register(reg):
    try:
        import scipy.special as sc
    except ImportError:  # pragma: no cover - scipy is optional
        return
    r = Registrar(reg, FAMILY)

    from . import scipy_special_transformable as t

    def rule(fn, pullback_fn, notes=""):
        name = f"scipy.special.{fn.__name__}"
        r.rule(fn, rule_from_pullback(fn, pullback_fn), name=name, notes=notes)
        reg.set_pullback_function(fn, pullback_fn)

    r.nondiff(t.refused_order)
    order = "wrt z; an integer order has no tangent, a float order is refused"
    for fn, pullback_fn in (
        (sc.iv, t.iv_pullback),
        (sc.ive, t.ive_pullback),
        (sc.kv, t.kv_pullback),
        (sc.kve, t.kve_pullback),
        (sc.jv, t.jv_pullback),
        (sc.yv, t.yv_pullback),
    ):
        rule(fn, pullback_fn, order)
    rule(sc.yn, t.yv_pullback, "integer order n")
    rule(sc.gammainc, t.gammainc_pullback, "wrt a by series / quadrature")
    rule(sc.gammaincc, t.gammaincc_pullback, "wrt a by series / quadrature")
    rule(sc.betainc, t.betainc_pullback, "wrt a, b by series")
    from . import scipy_special_zeta

    scipy_special_zeta.register(r, reg)

    def s(fn, *derivatives):
        r.scalar(fn, *derivatives, holomorphic=False, name=f"scipy.special.{fn.__name__}")

    @transformable
    def multigammaln_da(y, a, d):
        """``d/da log Gamma_d(a) = sum_(j < d) digamma(a - j/2)``."""
        total = 0.0 * a
        for j in range(d):
            total = total + sc.digamma(a - 0.5 * j)
        return total

    s(sc.multigammaln, multigammaln_da)
    s(
        sc.kl_div,
        lambda y, x, z: np.log(x / z),
        lambda y, x, z: 1.0 - x / z,
    )
    # exponential integrals, Pochhammer's symbol and the real binomial coefficient
    s(sc.exp1, lambda y, x: -np.exp(-x) / x)
    s(sc.expi, lambda y, x: np.exp(x) / x)
    s(sc.expn, None, _expn_dx)
    s(
        sc.poch,
        lambda y, z, m: y * (sc.digamma(z + m) - sc.digamma(z)),
        lambda y, z, m: y * sc.digamma(z + m),
    )
    s(
        sc.binom,
        lambda y, n, k: y * (sc.digamma(n + 1.0) - sc.digamma(n - k + 1.0)),
        lambda y, n, k: y * (sc.digamma(n - k + 1.0) - sc.digamma(k + 1.0)),
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
