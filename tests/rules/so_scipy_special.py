"""Second-order cases of the scipy_special family (see second_order_table.py): every
elementwise rule (its derivative functions are differentiated again: gammaln' = digamma,
digamma' = polygamma(1, .), ...), the rules with transformable pullbacks, and the
derivative kernels of scipy_special_series (whose own second derivatives are not
available: ``NOT_YET``)."""

from __future__ import annotations

import numpy as np
from second_order_table import case

NOT_YET = (
    "pullback.rules.scipy_special_series.gammainc_da",
    "pullback.rules.scipy_special_series.betainc_partials",
    "pullback.rules.scipy_special_series.vonmises_cdf_dkappa",
)


def _u(lo, hi, shape=(4,), seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


# name: domain of each argument (an int: a constant integer argument)
ELEMENTWISE = {
    "gamma": [(0.5, 3.0)],
    "gammaln": [(0.5, 3.0)],
    "rgamma": [(0.5, 3.0)],
    "psi": [(0.5, 3.0)],
    "polygamma": [1, (0.5, 3.0)],
    "beta": [(0.5, 3.0), (0.5, 3.0)],
    "betaln": [(0.5, 3.0), (0.5, 3.0)],
    "erf": [(-1.5, 1.5)],
    "erfc": [(-1.5, 1.5)],
    "erfcx": [(-1.0, 2.0)],
    "erfinv": [(-0.8, 0.8)],
    "erfcinv": [(0.2, 1.8)],
    "expit": [(-3.0, 3.0)],
    "log_expit": [(-3.0, 3.0)],
    "logit": [(0.1, 0.9)],
    "ndtr": [(-2.0, 2.0)],
    "log_ndtr": [(-2.0, 2.0)],
    "ndtri": [(0.1, 0.9)],
    "xlogy": [(-1.0, 1.0), (0.3, 2.0)],
    "xlog1py": [(-1.0, 1.0), (-0.5, 2.0)],
    "entr": [(0.1, 2.0)],
    "rel_entr": [(0.2, 2.0), (0.2, 2.0)],
    "i0": [(-2.0, 2.0)],
    "i1": [(-2.0, 2.0)],
    "i0e": [(0.2, 3.0)],
    "i1e": [(0.2, 3.0)],
    "j0": [(-3.0, 3.0)],
    "j1": [(-3.0, 3.0)],
    "y0": [(0.3, 3.0)],
    "y1": [(0.3, 3.0)],
    "multigammaln": [(2.0, 4.0), 3],
    "kl_div": [(0.2, 2.0), (0.2, 2.0)],
    "exp1": [(0.3, 2.0)],
    "expi": [(0.3, 2.0)],
    "expn": [2, (0.3, 2.0)],
    "poch": [(0.5, 2.0), (0.5, 2.0)],
    "binom": [(3.0, 5.0), (0.5, 2.0)],
}


def _args(domains, dtype=np.float64):
    out = []
    for k, d in enumerate(domains):
        out.append(d if isinstance(d, int) else np.asarray(_u(*d, seed=k), dtype))
    return out


def _fill():
    for name, domains in ELEMENTWISE.items():
        case(f"scipy.special.{name}", *_args(domains))
        if name in ("gammaln", "psi", "erf", "expit", "xlogy", "i1", "ndtri"):
            case(f"scipy.special.{name}", *_args(domains, np.float32))
    x = np.random.default_rng(1).normal(size=(3, 4))
    case("scipy.special.logsumexp", x)
    case("scipy.special.logsumexp", x, axis=1)
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=(3, 4))
    # b (by position, as this table's probe passes it: differentiated too), return_sign
    # (the keyword forms: tests/test_second_order_call_forms.py)
    case("scipy.special.logsumexp", x, 1, w)
    case("scipy.special.logsumexp", x, 0, w, True)
    case("scipy.special.logsumexp", x, None, w * np.array([1.0, -1.0, 1.0, 1.0]), False, True)
    case("scipy.special.softmax", x, axis=0)
    case("scipy.special.log_softmax", x, axis=-1)
    orders = np.array([0, 1, 2])
    for name, (lo, hi) in (
        ("iv", (-3.0, 3.0)),
        ("ive", (0.2, 3.0)),
        ("kv", (0.3, 3.0)),
        ("kve", (0.3, 3.0)),
        ("jv", (-3.0, 3.0)),
        ("yv", (0.3, 3.0)),
        ("yn", (0.3, 3.0)),
    ):
        case(f"scipy.special.{name}", orders, _u(lo, hi, (2, 3)))
    a = np.array([0.5, 2.0, 7.5])
    x = np.array([[0.2, 1.5, 4.0], [3.0, 6.0, 14.0]])  # both sides of the series switch
    case("scipy.special.gammainc", a, x)
    case("scipy.special.gammaincc", a, x)
    b = np.array([1.5, 3.0, 0.8])
    u = np.array([[0.2, 0.5, 0.9], [0.05, 0.7, 0.4]])
    case("scipy.special.betainc", a, b, u)
    case("scipy.special.zeta", _u(1.5, 5.0, (2, 1)), _u(0.5, 2.0))
    case("scipy.special.zeta", _u(-1.5, 0.6))  # Riemann's, continued below 1
    case("pullback.rules.scipy_special_zeta.zeta_log_moment", 2, _u(1.5, 5.0), _u(0.5, 2.0))
    case("pullback.rules.scipy_special_series.gammainc_da", a, x)
    case("pullback.rules.scipy_special_series.betainc_partials", a, b, u)
    case("pullback.rules.scipy_special_series.vonmises_cdf_dkappa", _u(-2.0, 2.0), _u(0.5, 3.0))


try:
    import scipy.special  # noqa: F401
except ImportError:  # scipy is optional: no cases without it
    pass
else:
    _fill()
