"""scipy.stats multivariate_normal, dirichlet and multinomial (plain and frozen) against
finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, rng, spd

st = pytest.importorskip("scipy.stats")
from scipy.special import softmax  # noqa: E402

import pullback  # noqa: E402
from pullback.testing import check_grads, check_rrule  # noqa: E402

MVN = ("logpdf", "pdf")


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("method", MVN)
def test_multivariate_normal(method, dtype):
    fn = getattr(st.multivariate_normal, method)
    g = rng(11)
    mean = np.asarray(g.normal(size=3), dtype)
    cov = spd(3, dtype)
    for x in (g.normal(size=3), g.normal(size=(4, 3)), g.normal(size=(2, 1, 3))):
        x = np.asarray(x, dtype)
        check_rrule(fn, x, mean, cov)  # a 2-D cov: scipy reads its lower triangle
        check_rrule(fn, x, mean, np.asarray(np.diag(cov), dtype))  # a diagonal
        check_rrule(fn, x, mean, dtype(1.7))  # c * identity
        # cov= by keyword is differentiated too (tests/rules/test_scipy_stats_keywords.py)
        check_grads(lambda m, c, x=x: np.sum(fn(x, m, cov=c)), mean, cov, wrt=(0, 1))
    check_rrule(fn, np.asarray(g.normal(size=5), dtype), dtype(0.3), dtype(2.0))  # 1-D
    check_rrule(fn, np.zeros((0, 3), dtype), mean, cov)


def test_singular_covariance_is_refused():
    cov = np.array([[1.0, 1.0], [1.0, 1.0]])
    y, back = pullback.default_registry().lookup(st.multivariate_normal.logpdf).rrule(
        np.array([0.5, 0.5]), np.zeros(2), cov, True
    )
    with pytest.raises(pullback.NotDifferentiableError, match="singular"):
        back(1.0)


def gaussian_log_likelihood(mean, cov, data):
    return np.sum(st.multivariate_normal.logpdf(data, mean, cov))


def gaussian_from_factor(mean, factor, data):
    cov = factor @ factor.T + np.eye(3)
    return np.mean(st.multivariate_normal.logpdf(data, mean, cov))


def frozen_gaussian(mean, cov, data):
    d = st.multivariate_normal(mean, cov)
    return np.sum(d.logpdf(data)) + np.sum(d.pdf(data))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_gaussian_log_likelihood(dtype):
    g = rng(12)
    mean = np.asarray(g.normal(size=3), dtype)
    data = np.asarray(g.normal(size=(5, 3)), dtype)
    check_grads(gaussian_log_likelihood, mean, spd(3, dtype), data, wrt=(0, 1, 2))
    factor = np.asarray(g.normal(size=(3, 3)), dtype)
    check_grads(gaussian_from_factor, mean, factor, data, wrt=(0, 1))
    check_grads(frozen_gaussian, mean, spd(3, dtype), data, wrt=(0, 1, 2))
    check_grads(frozen_gaussian, mean, np.asarray([1.0, 2.0, 1.5], dtype), data, wrt=1)
    check_grads(frozen_gaussian, mean, dtype(1.3), data, wrt=1)


# Points on the simplex: scipy refuses x (dirichlet) or p (multinomial) off it, so finite
# differences go through a softmax and the cotangents are checked along the simplex.


def dirichlet_of_logits(z, alpha):
    x = softmax(z, axis=0)
    return np.sum(st.dirichlet.logpdf(x, alpha)) + np.sum(st.dirichlet(alpha).pdf(x))


def dirichlet_alpha(alpha, x):
    return np.sum(st.dirichlet.logpdf(x, alpha) * np.arange(1.0, 5.0))


def dirichlet_short(z, alpha):
    x = softmax(z, axis=0)[:-1]  # scipy completes the last component
    return np.sum(st.dirichlet.logpdf(x, alpha))


def multinomial_of_logits(z, counts):
    p = softmax(z, axis=-1)
    d = st.multinomial(6, p)
    return np.sum(st.multinomial.logpmf(counts, 6, p)) + np.sum(d.pmf(counts) + d.logpmf(counts))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_dirichlet(dtype):
    g = rng(13)
    alpha = np.asarray([1.5, 2.5, 3.0], dtype)
    # scipy's simplex tolerance (1e-9) is below float32's resolution: x stays float64
    x = g.dirichlet([1.5, 2.5, 3.0], size=4).T.copy()
    check_grads(dirichlet_alpha, alpha, x)
    check_grads(dirichlet_of_logits, g.normal(size=(3, 4)), alpha, wrt=(0, 1))
    check_grads(dirichlet_short, g.normal(size=(3, 2)), alpha, wrt=(0, 1))


def test_multinomial():
    g = rng(14)
    counts = np.array([[1, 2, 3], [0, 4, 2]])
    check_grads(multinomial_of_logits, g.normal(size=3), counts)
    check_grads(multinomial_of_logits, g.normal(size=(2, 3)), counts)
    y, back = pullback.default_registry().lookup(st.multinomial.logpmf).rrule(
        counts, 6, np.array([0.2, 0.3, 0.5])
    )
    dx, dn, dp = back(np.ones(2))
    assert dx is pullback.NO_TANGENT and dn is pullback.NO_TANGENT
    np.testing.assert_allclose(dp, [1 / 0.2, 6 / 0.3, 5 / 0.5])
