"""Forward mode through frozen SciPy distributions made inside the function: the tangent of
``stats.norm(mu, s)`` is the tuple of its parameters' tangents, the layout of its
cotangent, which the frozen methods' rules pair with their receiver (found by probe_fin:
``jvp`` was 0 for parameters passed by keyword and crashed with 'unsupported operand
type(s) for *: float and rv_continuous_frozen' for positional ones)."""

import numpy as np
import pytest
from fd import check_jvp
from scipy import stats

import pullback

X2 = np.random.default_rng(3).standard_normal((5, 2))
XS = X2[:, 0]


def norm_keywords(p):
    dist = stats.norm(loc=p[0], scale=np.exp(p[1]))
    return -np.sum(dist.logpdf(XS)) + dist.cdf(0.3)


def norm_positional(p):
    dist = stats.norm(p[0], np.exp(p[1]))
    return np.sum(dist.sf(XS)) + dist.ppf(0.9)


def gamma_mixed(p):
    dist = stats.gamma(np.exp(p[0]), scale=np.exp(p[1]))
    return -np.sum(dist.logpdf(np.abs(XS) + 0.1))


def mvn_keywords(p):
    dist = stats.multivariate_normal(mean=p[:2], cov=np.array([[1.0, 0.2], [0.2, 0.8]]))
    return -np.sum(dist.logpdf(X2))


def mvn_scalar_cov(p):
    dist = stats.multivariate_normal(p[:2], np.exp(p[2]))
    return -np.sum(dist.logpdf(X2))


def mvn_diagonal_cov(p):
    dist = stats.multivariate_normal(mean=np.zeros(2), cov=np.exp(p[1:]))
    return -np.sum(dist.logpdf(X2))


def poisson_frozen(p):
    dist = stats.poisson(np.exp(p[0]))
    return -np.sum(dist.logpmf(np.array([0, 2, 5])))


CASES = [
    (norm_keywords, np.array([0.1, -0.2])),
    (norm_positional, np.array([0.1, -0.2])),
    (gamma_mixed, np.array([0.5, 0.2])),
    (mvn_keywords, np.array([0.1, -0.2])),
    (mvn_scalar_cov, np.array([0.1, -0.2, 0.3])),
    (mvn_diagonal_cov, np.array([0.0, 0.3, -0.4])),
    (poisson_frozen, np.array([0.7])),
]


@pytest.mark.parametrize("f,p", CASES, ids=[f.__name__ for f, _ in CASES])
def test_jvp_through_a_frozen_distribution(f, p):
    t = np.linspace(1.0, -0.5, p.size)
    got = check_jvp(f, (p,), (t,))
    np.testing.assert_allclose(got, pullback.grad(f)(p) @ t, rtol=1e-9)
