"""scipy.stats parameters passed by keyword are differentiated (loc=, scale=, shape
keywords; frozen distributions made with keywords), float64 and float32, against finite
differences; the keyword cotangents equal the positional ones."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, rng, spd

st = pytest.importorskip("scipy.stats")

from pullback import default_registry  # noqa: E402
from pullback.testing import check_grads  # noqa: E402


def norm_keywords(x, m, s):
    return np.sum(st.norm.logpdf(x, loc=m, scale=s))


def gamma_shape_keyword(a, s, x):
    return np.sum(st.gamma.logpdf(x, a=a, loc=0.1, scale=s))


def beta_mixed(a, b, s, x):
    return np.sum(st.beta.cdf(x, a, b=b, scale=s)) + np.sum(st.beta.logsf(x, a, b, scale=s))


def t_quantiles(df, m, q):
    return np.sum(st.t.ppf(q, df=df, loc=m) ** 2)


def poisson_keyword(mu, k):
    return np.sum(st.poisson.logpmf(k, mu=mu)) + np.sum(st.poisson.cdf(k, mu=mu))


def binom_keyword(p, k):
    return np.sum(st.binom.logsf(k, n=9, p=p))


def frozen_norm_keywords(m, s, x):
    d = st.norm(loc=m, scale=s)
    return np.sum(d.logpdf(x)) + np.sum(d.cdf(x))


def frozen_gamma_keywords(a, s, x):
    return np.sum(st.gamma(a=a, scale=s).logcdf(x))


def frozen_beta_mixed(a, b, x):
    return np.sum(st.beta(a, b=b, loc=0.0).pdf(x))


def frozen_poisson_keyword(mu, k):
    return np.sum(st.poisson(mu=mu).logpmf(k))


def frozen_mvn_keywords(mean, cov, x):
    return np.sum(st.multivariate_normal(mean=mean, cov=cov).logpdf(x))


def mvn_keywords(mean, cov, x):
    return np.sum(st.multivariate_normal.logpdf(x, mean=mean, cov=cov))


def mvn_pdf_mean_positional_cov_keyword(mean, cov, x):
    return np.sum(st.multivariate_normal.pdf(x, mean, cov=cov * 1.5))


def frozen_dirichlet_keyword(alpha, x):
    return np.sum(st.dirichlet(alpha=alpha).logpdf(x))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_keyword_parameters_are_differentiated(dtype):
    g = rng(11)
    x = np.asarray(g.normal(size=(2, 3)), dtype)
    m = np.asarray(g.normal(size=3), dtype)
    s = np.asarray(g.uniform(0.8, 1.5, (2, 1)), dtype)
    check_grads(norm_keywords, x, m, s, wrt=(0, 1, 2))
    check_grads(norm_keywords, x, dtype(0.2), dtype(1.3), wrt=(0, 1, 2))
    pos = np.asarray(g.uniform(0.5, 3.0, 5), dtype)
    check_grads(gamma_shape_keyword, dtype(2.3), dtype(1.2), pos, wrt=(0, 1, 2))
    u = np.asarray(g.uniform(0.1, 0.8, 4), dtype)
    check_grads(beta_mixed, dtype(2.5), dtype(3.2), dtype(1.1), u, wrt=(0, 1, 2, 3))
    q = np.asarray(g.uniform(0.2, 0.8, 4), dtype)
    check_grads(t_quantiles, dtype(4.5), dtype(0.3), q, wrt=(0, 1, 2))
    k = np.array([0, 1, 3, 6])
    check_grads(poisson_keyword, np.asarray([2.5, 3.0, 3.5, 4.0], dtype), k)
    check_grads(binom_keyword, dtype(0.35), k)
    pts = np.asarray(g.normal(size=(4, 3)), dtype)
    mean = np.asarray(g.normal(size=3), dtype)
    check_grads(mvn_keywords, mean, spd(3, dtype), pts, wrt=(0, 1, 2))
    check_grads(mvn_pdf_mean_positional_cov_keyword, mean, spd(3, dtype), pts, wrt=(0, 1, 2))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_frozen_distributions_made_with_keywords(dtype):
    g = rng(12)
    x = np.asarray(g.normal(size=5), dtype)
    check_grads(frozen_norm_keywords, dtype(0.2), dtype(1.4), x, wrt=(0, 1, 2))
    pos = np.asarray(g.uniform(0.5, 3.0, 5), dtype)
    check_grads(frozen_gamma_keywords, dtype(2.3), dtype(1.2), pos, wrt=(0, 1, 2))
    u = np.asarray(g.uniform(0.1, 0.8, 4), dtype)
    check_grads(frozen_beta_mixed, dtype(2.5), dtype(3.2), u, wrt=(0, 1, 2))
    check_grads(frozen_poisson_keyword, dtype(3.2), np.array([0, 2, 5]))
    pts = np.asarray(g.normal(size=(4, 3)), dtype)
    check_grads(
        frozen_mvn_keywords, np.asarray(g.normal(size=3), dtype), spd(3, dtype), pts, wrt=(0, 1, 2)
    )
    simplex = np.array([[0.2, 0.5], [0.3, 0.1], [0.5, 0.4]])  # float32 sums miss 1
    # alpha (the keyword); x must stay on the simplex, which finite differences leave
    check_grads(frozen_dirichlet_keyword, np.asarray([1.5, 2.0, 3.5], dtype), simplex)


@pytest.mark.parametrize(
    "fn,positional,keywords",
    [
        (st.norm.logpdf, (0.3, 1.7), {"loc": 0.3, "scale": 1.7}),
        (st.gamma.cdf, (2.3, 0.1, 1.2), {"a": 2.3, "loc": 0.1, "scale": 1.2}),
        (st.beta.logpdf, (2.5, 3.2), {"b": 3.2, "a": 2.5}),
        (st.nbinom.logsf, (4.5, 0.4), {"n": 4.5, "p": 0.4}),
        (st.multivariate_normal.logpdf, (0.3, 1.7), {"mean": 0.3, "cov": 1.7}),
    ],
)
def test_keyword_cotangents_equal_the_positional_ones(fn, positional, keywords):
    rule = default_registry().lookup(fn)
    assert set(keywords) <= set(rule.extra["keyword_cotangents"])
    first = np.array([0.2, 0.4, 0.6]) if "nbinom" not in rule.name else np.array([0, 2, 5])
    y, back = rule.rrule(first, *positional)
    dy = rng(3).normal(size=np.shape(y))
    want = back(dy)
    y_kw, back_kw = rule.rrule(first, **keywords)
    np.testing.assert_array_equal(y_kw, y)
    got = back_kw(dy)
    assert len(got) == 2 and isinstance(got[1], dict)  # x, then the keyword cotangents
    names = rule.extra["keyword_cotangents"]
    for name, value in got[1].items():
        np.testing.assert_array_equal(value, want[1 + names.index(name)])


def weighted_norm_keywords(x, m, s):
    return np.sum(st.norm.logpdf(x, loc=m, scale=s) * WEIGHTS) + np.sum(st.norm.cdf(x, scale=s))


def t_loc_scale_keywords(x, df, m, s):
    return np.sum(st.t.logsf(x, df, loc=m, scale=s) * WEIGHTS)


def t_shape_keyword(x, df, m):
    return np.sum(st.t.logpdf(x, df=df, loc=m) * WEIGHTS)


WEIGHTS = np.array([0.3, -1.2, 0.7])


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_second_order_through_loc_and_scale_keywords(dtype):
    # loc=/scale= reach the transformable pullback (its cotangent read at the parameter's
    # place): reverse over reverse, wrt x and each keyword, and all at once
    x = np.asarray([0.1, -0.4, 0.9], dtype)
    for wrt in ((0,), (1,), (2,), (0, 1, 2)):
        how = check_grads(weighted_norm_keywords, x, dtype(0.2), dtype(1.3), wrt=wrt, order=2)
        assert how == "reverse over reverse", wrt
    how = check_grads(
        t_loc_scale_keywords, x, dtype(4.5), dtype(0.2), dtype(1.3), wrt=(0, 1, 2, 3), order=2
    )
    assert how == "reverse over reverse"


def test_forward_mode_through_keywords():
    # the keyword tangents reach the rule: through the transformable pullback (loc/scale)
    # and through the closure (a shape named by keyword), against central differences
    from pullback import jvp

    x = np.array([0.1, -0.4, 0.9])
    for fn, args in (
        (weighted_norm_keywords, (x, 0.2, 1.3)),
        (t_shape_keyword, (x, 4.5, 0.2)),
    ):
        v = (np.array([0.3, 0.1, -0.2]), 1.0, 0.5)
        _, dy = jvp(fn, args, v)
        eps = 1e-6
        plus = fn(*(a + eps * d for a, d in zip(args, v, strict=True)))
        minus = fn(*(a - eps * d for a, d in zip(args, v, strict=True)))
        np.testing.assert_allclose(dy, (plus - minus) / (2 * eps), rtol=1e-6)


def test_second_order_with_a_shape_keyword_is_reverse_over_reverse():
    # a shape by keyword (df=) is passed by position (transform/keyword_positions.py), so
    # the second derivative runs through the transformable pullback
    x = np.array([0.1, -0.4, 0.9])
    how = check_grads(t_shape_keyword, x, 4.5, 0.2, wrt=(1, 2), order=2)
    assert how == "reverse over reverse"


def mvn_mean_keyword(x, mean):
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    return st.multivariate_normal.logpdf(x, mean=mean, cov=cov)


def mvn_both_keywords(x, mean, cov):
    return np.sum(st.multivariate_normal.pdf(x, mean=mean, cov=cov))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_multivariate_normal_mean_and_cov_by_keyword(dtype):
    x = np.asarray([0.4, -0.3], dtype)
    mean = np.asarray([0.1, 0.2], dtype)
    check_grads(mvn_mean_keyword, x, mean, wrt=(0, 1))
    cov = np.asarray([[1.5, 0.2], [0.2, 0.8]], dtype)
    check_grads(
        mvn_both_keywords, np.asarray([[0.4, -0.3], [0.1, 0.5]], dtype), mean, cov, wrt=(0, 1, 2)
    )


def test_multivariate_normal_keyword_cotangents_equal_the_positional_ones():
    from pullback import grad, jvp

    # hand-derived: d/dmean logpdf = cov^-1 (x - mean)
    x, mean = np.array([0.4, -0.3]), np.array([0.1, 0.2])
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    got = grad(mvn_mean_keyword, wrt=1)(x, mean)
    np.testing.assert_allclose(got, np.linalg.solve(cov, x - mean), rtol=1e-12)
    rule = default_registry().lookup(st.multivariate_normal.logpdf)
    _, back = rule.rrule(x, mean, cov)
    _, back_kw = rule.rrule(x, mean=mean, cov=cov)
    want, kw = back(1.0), back_kw(1.0)
    np.testing.assert_allclose(kw[1]["mean"], want[1])
    np.testing.assert_allclose(kw[1]["cov"], want[2])
    v = (np.array([0.3, -0.1]), np.array([1.0, 0.5]))
    _, dy = jvp(mvn_mean_keyword, (x, mean), v)
    eps = 1e-6
    fd = (
        mvn_mean_keyword(x + eps * v[0], mean + eps * v[1])
        - mvn_mean_keyword(x - eps * v[0], mean - eps * v[1])
    ) / (2 * eps)
    np.testing.assert_allclose(dy, fd, rtol=1e-6)
