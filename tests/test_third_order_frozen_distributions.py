"""Third derivatives through frozen scipy.stats distributions (``norm(mu, s).logpdf(x)``,
``multivariate_normal(mean, cov).logpdf(x)``, ``t``, ``gamma``, ``poisson``,
``dirichlet``, ``multinomial``), where the frozen
object carries differentiated parameters, against central finite differences of the
second derivative; float64, and float32 for the univariate ones.

The reverse of a frozen method's pullback (runtime_call_pullbacks.receiver_method_reverse)
is the vjp of that pullback's form in the parameters, ``norm.logpdf(x, loc, scale)``'s
pullback: a third derivative runs through the unfrozen rules' own, and a fourth once."""

from __future__ import annotations

import numpy as np
import pytest
from sweeps import sweep
from test_third_order_runtime_calls import _fd, _nth

st = pytest.importorskip("scipy.stats")


def norm_in_loc_and_scale(mu):
    d = st.norm(mu, 1.3 + 0.2 * mu)
    return d.logpdf(0.4) + d.cdf(mu * 0.5)


def norm_in_x(mu):
    return st.norm(0.3, 1.7).logpdf(mu) * mu + st.norm(mu, 2.0).logsf(0.1)


def t_in_every_parameter(s):
    return st.t(3.0 + s, s, 1.5 + 0.1 * s).logpdf(0.4 * s)


def gamma_in_shape_and_scale(a):
    return st.gamma(a, 0.1, 2.0 + a).logpdf(1.7) + st.gamma(a).logpdf(1.2 * a)


def mvn_in_mean_cov_and_x(s):
    mean = np.array([s, 0.5 * s])
    cov = np.array([[1.0 + s * s, 0.3], [0.3, 2.0]])
    return st.multivariate_normal(mean, cov).logpdf(np.array([0.2, s]))


def mvn_pdf_of_points(s):
    d = st.multivariate_normal(np.array([0.1, -s]), np.array([1.5 + s, 0.7]))
    return np.sum(d.pdf(np.array([[0.2, s], [s * s, -0.4]])))


def dirichlet_in_alpha(s):
    # two methods of one object: in the second derivative's code the cotangent of one
    # may be ZERO where the third runs it (dynamic_vjps.method_vjp, output_zeros)
    d = st.dirichlet(np.array([1.5 + s, 2.5, 3.0 * s]))
    return d.logpdf(np.array([0.2, 0.3, 0.5])) + d.pdf(np.array([0.5, 0.1, 0.4]))


def dirichlet_product(s):
    alpha = np.array([1.5 + s, 2.5, 3.0 * s])
    return st.dirichlet(alpha).logpdf(np.array([0.2, 0.3, 0.5])) * st.dirichlet(alpha).pdf(
        np.array([0.5, 0.1, 0.4])
    )


def multinomial_in_p(s):
    # n and the counts are integers: the vjp of the method's pullback gives them
    # NO_TANGENT (runtime.vjp_zero), which a third derivative adds to others
    p = np.exp(np.array([s, 0.3, -s * s]))
    d = st.multinomial(6, p / np.sum(p))
    return d.logpmf(np.array([1, 2, 3])) + d.pmf(np.array([2, 2, 2]))


def poisson_in_mu(m):
    # a discrete one, one shape: its pullback's standardized method is poisson's own arity
    return st.poisson(m * m + 0.5).logpmf(3) + st.poisson(m).pmf(2)


UNIVARIATE = [norm_in_loc_and_scale, norm_in_x, t_in_every_parameter, gamma_in_shape_and_scale]
UNIVARIATE += [poisson_in_mu]
MULTIVARIATE = [mvn_in_mean_cov_and_x, mvn_pdf_of_points, dirichlet_in_alpha, dirichlet_product]
MULTIVARIATE += [multinomial_in_p]
CASES = UNIVARIATE + MULTIVARIATE
T = 0.7


@pytest.mark.parametrize("f", sweep(CASES, quick=5))
def test_third_derivative_against_finite_differences(f):
    third = _nth(f, 3)(T)
    want = _fd(_nth(f, 2), T, 1e-5)
    np.testing.assert_allclose(third, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("f", sweep(UNIVARIATE, quick=2))
def test_third_derivative_in_float32(f):
    third = _nth(f, 3)(np.float32(T))
    want = _fd(_nth(f, 2), T, 1e-5)
    np.testing.assert_allclose(third, want, rtol=2e-3, atol=2e-3)


def test_second_derivative_through_the_parameter_form_agrees_with_the_unfrozen_one():
    # the frozen and unfrozen spellings of one function: the same derivatives
    def frozen(mu):
        return st.norm(mu, 1.3).logpdf(0.4)

    def unfrozen(mu):
        return st.norm.logpdf(0.4, mu, 1.3)

    assert _nth(frozen, 2)(0.7) == pytest.approx(-1.0 / 1.3**2, rel=1e-12)
    for n in (1, 2, 3):
        assert _nth(frozen, n)(0.7) == pytest.approx(_nth(unfrozen, n)(0.7), rel=1e-12, abs=1e-12)


@pytest.mark.long
def test_fourth_derivative_against_finite_differences():
    f = norm_in_loc_and_scale
    fourth = _nth(f, 4)(T)
    np.testing.assert_allclose(fourth, _fd(_nth(f, 3), T, 1e-4), rtol=1e-5, atol=1e-5)
