"""scipy.special Bessel functions of any order, incomplete gamma and beta functions,
multigammaln, zeta, kl_div, exp1, expi, expn, poch and binom against finite differences
(float64 and float32)."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make

sc = pytest.importorskip("scipy.special")

import pullback  # noqa: E402
from pullback.registry import NONDIFF, default_registry  # noqa: E402
from pullback.testing import check_grads, check_rrule  # noqa: E402

ORDERS = np.array([0, 1, 2])
BESSEL = [
    (sc.iv, (-3.0, 3.0)),
    (sc.ive, (0.2, 3.0)),
    (sc.ive, (-3.0, -0.2)),
    (sc.kv, (0.3, 3.0)),
    (sc.kve, (0.3, 3.0)),
    (sc.jv, (-3.0, 3.0)),
    (sc.yv, (0.3, 3.0)),
    (sc.yn, (0.3, 3.0)),
]


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn,domain", BESSEL, ids=lambda v: getattr(v, "__name__", str(v)))
def test_bessel_with_respect_to_the_argument(fn, domain, dtype):
    check_rrule(fn, ORDERS, make(domain, (2, 3), dtype))  # broadcast orders
    check_rrule(fn, 3, make(domain, (4,), dtype, seed=1))
    check_rrule(fn, 1, float(make(domain, (), seed=2)))


def bessel_float_order(v, z):
    return np.sum(sc.jv(v, z))


def test_bessel_float_order():
    z = np.array([0.5, 1.5])
    with pytest.raises(pullback.NotDifferentiableError, match="order"):
        pullback.grad(bessel_float_order)(1.5, z)
    check_grads(bessel_float_order, 1.5, z, wrt=1)  # a constant float order is fine
    check_grads(bessel_float_order, 2, z, wrt=1)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_incomplete_gamma(dtype):
    # both sides of the switch between the series (x <= a + 1) and the quadrature
    a = np.asarray([0.5, 2.0, 7.5], dtype)
    x = np.asarray([[0.2, 1.5, 4.0], [3.0, 6.0, 14.0]], dtype)
    for fn in (sc.gammainc, sc.gammaincc):
        check_rrule(fn, a, x)
        check_rrule(fn, dtype(30.0), np.asarray([20.0, 31.5, 45.0], dtype))
        check_rrule(fn, 2.5, 0.7)


def test_incomplete_gamma_far_tail_keeps_relative_accuracy():
    # Q(3, 60) ~ 1e-23: its derivative must not drown in the cancellation of 1 - P
    _, back = default_registry().lookup(sc.gammaincc).rrule(3.0, 60.0)
    da = back(1.0)[0]
    h = 1e-5
    fd = (sc.gammaincc(3.0 + h, 60.0) - sc.gammaincc(3.0 - h, 60.0)) / (2 * h)
    np.testing.assert_allclose(da, fd, rtol=1e-6)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_betainc(dtype):
    a = np.asarray([0.7, 2.0, 5.0], dtype)
    b = np.asarray([[1.5], [0.6]], dtype)
    x = np.asarray([[0.1, 0.5, 0.9], [0.3, 0.7, 0.95]], dtype)
    check_rrule(sc.betainc, a, b, x)
    check_rrule(sc.betainc, 2.0, 3.0, 0.8)  # the flipped series


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_multigammaln_zeta_kl_div(dtype):
    check_rrule(sc.multigammaln, make((2.0, 5.0), (3,), dtype), 3)
    check_rrule(sc.multigammaln, 2.5, 1)
    check_rrule(sc.kl_div, make("positive", (2, 3), dtype), make("positive", (3,), dtype, seed=1))
    q = make((0.5, 3.0), (3,), dtype)
    check_rrule(sc.zeta, 3, q)
    check_rrule(sc.zeta, np.array([2, 3, 4]), q)
    # with respect to x too (its log-moments), Hurwitz's and Riemann's, broadcast
    check_rrule(sc.zeta, make((1.5, 6.0), (2, 1), dtype), q)
    check_rrule(sc.zeta, make((-1.9, 0.6), (4,), dtype, seed=1))  # Riemann's, below 1
    check_rrule(sc.zeta, make((1.5, 6.0), (3,), dtype, seed=2))
    check_rrule(sc.zeta, 2.5, 1.5)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_exponential_integrals_poch_binom(dtype):
    x = make((0.3, 2.0), (2, 3), dtype)
    check_rrule(sc.exp1, x)
    check_rrule(sc.expi, x)
    check_rrule(sc.expn, 2, x)
    check_rrule(sc.expn, np.array([0, 1, 3]), x)  # E_0 = exp(-x) / x has its own derivative
    check_rrule(sc.poch, make((0.5, 2.0), (3,), dtype), make((0.5, 2.0), (2, 3), dtype, seed=1))
    check_rrule(sc.binom, make((3.0, 5.0), (3,), dtype), make((0.5, 2.0), (3,), dtype, seed=1))


def test_non_differentiable_entries():
    for fn in (sc.factorial, sc.comb, sc.gammasgn):
        assert default_registry().lookup(fn).kind == NONDIFF


def gamma_cdf_loss(a, x):
    return np.sum(sc.gammainc(a, x) ** 2) + np.sum(sc.betainc(a, 2.0, x / 20.0))


def test_user_function():
    check_grads(gamma_cdf_loss, np.array([1.5, 4.0]), np.array([0.7, 9.0]), wrt=(0, 1))


def kl_loss(p, q):
    return np.sum(sc.kl_div(p, q))


def test_second_order_through_kl_div():
    p, q = np.array([0.2, 0.5, 0.3]), np.array([0.3, 0.3, 0.4])
    assert check_grads(kl_loss, p, q, wrt=(0, 1), order=2) == "reverse over reverse"


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_derivative_kernels_have_rules(dtype):
    # the kernels the stats and special pullbacks call: their rules give the next
    # derivative (second derivatives in the parameters by the same series)
    from pullback.rules.scipy_special_series import (
        betainc_partials,
        gammainc_da,
        vonmises_cdf_dkappa,
    )

    a = np.asarray([0.5, 2.0, 7.5], dtype)
    x = np.asarray([[0.2, 1.5, 4.0], [3.0, 6.0, 14.0]], dtype)  # series and quadrature
    check_rrule(gammainc_da, a, x)
    b = np.asarray([1.5, 3.0, 0.8], dtype)
    u = np.asarray([[0.2, 0.5, 0.9], [0.05, 0.7, 0.4]], dtype)  # direct and flipped series
    check_rrule(betainc_partials, a, b, u)
    z = np.asarray([-2.0, 0.3, 1.0, 2.5], dtype)
    check_rrule(vonmises_cdf_dkappa, z, np.asarray([0.5, 1.0, 3.0, 8.0], dtype))


def test_zeta_log_moments_against_known_values():
    from pullback.rules.scipy_special_zeta import zeta_log_moment

    # zeta'(2) = pi^2/6 (gamma + log(2 pi) - 12 log A), A Glaisher's constant; zeta'(0) =
    # -log(2 pi)/2; zeta'(-1) = 1/12 - log(A) (A = 1.28242712910062263687...); H_1 = -zeta'

    log_a = np.log(1.28242712910062263687)
    euler = 0.57721566490153286061
    expected = -(np.pi**2) / 6 * (euler + np.log(2 * np.pi) - 12 * log_a)
    np.testing.assert_allclose(zeta_log_moment(1, 2.0), expected, rtol=1e-13)
    np.testing.assert_allclose(zeta_log_moment(1, 0.0), 0.5 * np.log(2 * np.pi), rtol=1e-13)
    np.testing.assert_allclose(zeta_log_moment(1, -1.0), log_a - 1 / 12, rtol=1e-12)
    # H_p is the p-th log-moment: sum log(k + q)^p (k + q)^-x by brute force where it
    # converges fast (x = 12: the terms past k = 2000 are below 1e-39)
    k = np.arange(2000.0)
    for p in (1, 2, 3):
        for q in (0.3, 2.0):
            direct = np.sum(np.log(k + q) ** p * (k + q) ** -12.0)
            np.testing.assert_allclose(zeta_log_moment(p, 12.0, q), direct, rtol=1e-13)
    # SciPy's zeta is nan for x < 1 with q given, and complex logs for q <= 0: nan too
    assert np.isnan(zeta_log_moment(1, 0.5, 1.0)) and np.isnan(zeta_log_moment(1, 3.0, -0.5))
    assert zeta_log_moment(1, np.float32(3.0), np.float32(2.0)).dtype == np.float32


def zeta_in_x(x):
    return np.sum(sc.zeta(x, 1.5) * x) + sc.zeta(x[0] + 1.0)


def test_zeta_gradient_and_hessian_in_x():
    x = np.array([2.5, 4.0])
    check_grads(zeta_in_x, x, order=2)


def riemann_zeta_low(x):
    return sc.zeta(x)


def test_riemann_zeta_below_minus_two_is_refused():
    with pytest.raises(pullback.NotDifferentiableError, match="below -2") as info:
        pullback.grad(riemann_zeta_low)(-3.0)
    assert "Fix:" in str(info.value)
    assert pullback.grad(riemann_zeta_low)(-1.5) == pytest.approx(
        (sc.zeta(-1.5 + 1e-6) - sc.zeta(-1.5 - 1e-6)) / 2e-6, rel=1e-7
    )
