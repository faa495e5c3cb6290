"""Call forms whose second derivative was refused (HigherOrderError, or check_grads fell
back to finite differences of the gradient) while their first derivative was right:
``x.clip(min=, max=)``, ``np.diff(prepend=, append=)``, ``np.linalg.norm`` with ord 1,
inf, -inf (vectors) and 1, -1, inf, -inf (matrices), ``logsumexp`` with ``b`` and
``return_sign``, frozen distributions built by keyword (``norm(loc=, scale=)``,
``multivariate_normal(mean=, cov=)``, ``dirichlet(alpha=)``). Each now runs reverse over
reverse through a transformable pullback; its Hessian is checked against central
differences of the gradient (float64), against the float64 Hessian in float32, and
against a hand-derived Hessian where one is short."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as st

import pullback
from pullback.testing import check_grads

X = np.array([0.3, -1.2, 2.1, 0.7, -0.45])
M = np.array([[0.3, -1.2, 2.1], [0.7, 0.4, -0.9], [1.1, 0.2, 0.5]])
B = np.array([1.0, 2.0, 0.5, 3.0, 1.5])
B_SIGNED = np.array([1.0, -2.0, 3.0, -0.5, 1.5])


def clip_method(x):
    return np.sum(x.clip(min=-1.0, max=1.0) ** 3)


def clip_keywords(x):
    return np.sum(np.clip(x * 1.5, a_min=-1.0, a_max=1.0) ** 3)


def diff_edges(x):
    return np.sum(np.diff(x**2, prepend=0.5, append=np.array([1.0, -1.0])) ** 3)


def diff_edges_twice(x):
    return np.sum(np.diff(np.sin(x), n=2, prepend=np.array([0.2, 0.1])) ** 3)


def diff_edges_differentiated(x):
    return np.sum(np.diff(x**2, 1, -1, x[0:1] ** 3, x[1] * 2.0) ** 3)


def diff_matrix(m):
    return np.sum(np.diff(m**2, axis=0, prepend=0.3, append=np.ones((1, 3))) ** 3)


def norm_1(x):
    return np.linalg.norm(x**3, ord=1) ** 2


def norm_inf(x):
    return np.linalg.norm(x**3, ord=np.inf) ** 2


def norm_minus_inf(x):
    return np.linalg.norm(np.exp(x), -np.inf) ** 3


def matrix_norm_1(m):
    return np.linalg.norm(m**3, ord=1) ** 2


def matrix_norm_minus_1(m):
    return np.linalg.norm(m**3, ord=-1) ** 2


def matrix_norm_inf(m):
    return np.linalg.norm(m**3, ord=np.inf) ** 2


def matrix_norm_minus_inf(m):
    return np.linalg.norm(m**3, -np.inf) ** 2


def logsumexp_b(x):
    return sc.logsumexp(x**2, b=B, axis=0) ** 2


def logsumexp_b_matrix(m):
    return np.sum(sc.logsumexp(m**2, b=np.array([[1.0], [2.0], [0.5]]), axis=1) ** 2)


def logsumexp_b_differentiated(x):
    return sc.logsumexp(x, None, x**2 + 1.0) ** 2


def logsumexp_sign(x):
    value, sign = sc.logsumexp(x, b=B_SIGNED, return_sign=True)
    return value**2 * sign


def logsumexp_sign_axis(m):
    return np.sum(sc.logsumexp(m**2, axis=0, keepdims=True, return_sign=True)[0] ** 2)


CASES = [
    (clip_method, X),
    (clip_keywords, X),
    (diff_edges, X),
    (diff_edges_twice, X),
    (diff_edges_differentiated, X),
    (diff_matrix, M),
    (norm_1, X),
    (norm_inf, X),
    (norm_minus_inf, X),
    (matrix_norm_1, M),
    (matrix_norm_minus_1, M),
    (matrix_norm_inf, M),
    (matrix_norm_minus_inf, M),
    (logsumexp_b, X),
    (logsumexp_b_matrix, M),
    (logsumexp_b_differentiated, X),
    (logsumexp_sign, X),
    (logsumexp_sign_axis, M),
]
IDS = [f.__name__ for f, _ in CASES]


def fd_hessian(f, x, h=1e-5):
    """Central differences of pullback's (first-order, checked elsewhere) gradient."""
    g = pullback.grad(f)
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h
        e = e.reshape(x.shape)
        cols.append(np.ravel(g(x + e) - g(x - e)) / (2 * h))
    return np.stack(cols, axis=1).reshape(x.shape + x.shape)


@pytest.mark.parametrize(("f", "x"), CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_reverse_over_reverse(f, x, dtype):
    assert check_grads(f, x.astype(dtype), order=2) == "reverse over reverse"


@pytest.mark.parametrize(("f", "x"), CASES, ids=IDS)
def test_hessian_matches_finite_differences(f, x):
    got = pullback.hessian(f)(x)
    np.testing.assert_allclose(got, fd_hessian(f, x), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("f", "x"), CASES, ids=IDS)
def test_hessian_float32(f, x):
    got = pullback.hessian(f)(x.astype(np.float32))
    assert got.dtype == np.float32
    want = pullback.hessian(f)(x)
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3 * np.max(np.abs(want)))


def test_clip_method_by_hand():
    # sum(clip(x)^3): 6 x on the diagonal where -1 < x < 1, 0 where clipped
    want = np.diag(np.where(np.abs(X) < 1.0, 6.0 * X, 0.0))
    np.testing.assert_allclose(pullback.hessian(clip_method)(X), want, rtol=1e-12)


def test_norm_1_by_hand():
    # (sum |x|^3)^2 = S^2: gradient 2 S u with u = 3 x |x|; Hessian 2 u u^T + 2 S diag(6 |x|)
    s = np.sum(np.abs(X) ** 3)
    u = 3.0 * X * np.abs(X)
    want = 2.0 * np.outer(u, u) + 2.0 * s * np.diag(6.0 * np.abs(X))
    np.testing.assert_allclose(pullback.hessian(norm_1)(X), want, rtol=1e-12)


def test_logsumexp_b_by_hand():
    # log sum b e^x: gradient w = b e^x / sum b e^x; Hessian diag(w) - w w^T
    def f(x):
        return sc.logsumexp(x, b=B)

    w = B * np.exp(X) / np.sum(B * np.exp(X))
    want = np.diag(w) - np.outer(w, w)
    np.testing.assert_allclose(pullback.hessian(f)(X), want, rtol=1e-10, atol=1e-14)


C3 = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, 0.2], [0.1, 0.2, 1.0]])


def mvn_keywords(mean, cov, x):
    return st.multivariate_normal(mean=mean, cov=cov).logpdf(x)


def mvn_keywords_reversed(mean, cov, x):
    return st.multivariate_normal(cov=cov, mean=mean).pdf(x) * 10.0


def mvn_scalar_cov_keyword(x):
    return st.multivariate_normal(x * 0.5, cov=np.sum(x**2) + 1.0).logpdf(x[::-1])


@pytest.mark.parametrize("f", [mvn_keywords, mvn_keywords_reversed])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_frozen_mvn_by_keyword(f, dtype):
    args = (X[:3].astype(dtype), C3.astype(dtype), np.array([0.1, 0.2, -0.3], dtype))
    assert check_grads(f, *args, wrt=(0, 1, 2), order=2) == "reverse over reverse"


def test_frozen_mvn_by_keyword_hessian():
    x = X[:3]
    for dtype in (np.float64, np.float32):
        assert check_grads(mvn_scalar_cov_keyword, x.astype(dtype), order=2) == (
            "reverse over reverse"
        )
    got = pullback.hessian(mvn_scalar_cov_keyword)(x)
    np.testing.assert_allclose(got, fd_hessian(mvn_scalar_cov_keyword, x), rtol=1e-6, atol=1e-6)

    # the same as the positional form, whose second derivative was already checked
    def positional(x):
        return st.multivariate_normal(x * 0.5, np.sum(x**2) + 1.0).logpdf(x[::-1])

    np.testing.assert_allclose(got, pullback.hessian(positional)(x), rtol=1e-12)


def gamma_keywords(x):
    return np.sum(st.gamma(a=np.exp(x[0]), scale=np.exp(x[1])).logpdf(np.exp(x)))


def poisson_keyword(x):
    return np.sum(st.poisson(mu=np.exp(x[2])).logpmf(np.array([1, 2, 3])))


def t_mixed(x):
    return np.sum(st.t(np.exp(x[0]) + 1.0, loc=x[1]).logpdf(x) * x[2])


def norm_keywords_reversed(x):
    d = st.norm(scale=np.exp(x[1]), loc=x[0])
    return d.cdf(x[2]) + np.sum(d.logpdf(x))


def dirichlet_keyword(x):
    return np.sum(st.dirichlet(alpha=np.exp(x)).logpdf(np.array([0.2, 0.3, 0.5])))


def multinomial_keywords(x):
    p = np.exp(x) / np.sum(np.exp(x))
    return np.sum(st.multinomial(n=6, p=p).logpmf(np.array([1, 2, 3])))


UNIVARIATE = [
    gamma_keywords,
    poisson_keyword,
    t_mixed,
    norm_keywords_reversed,
    dirichlet_keyword,
    multinomial_keywords,
]


@pytest.mark.parametrize("f", UNIVARIATE, ids=[f.__name__ for f in UNIVARIATE])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_frozen_univariate_by_keyword(f, dtype):
    x = X[:3].astype(dtype)
    assert check_grads(f, x, order=2) == "reverse over reverse"


@pytest.mark.parametrize("f", UNIVARIATE, ids=[f.__name__ for f in UNIVARIATE])
def test_frozen_univariate_by_keyword_hessian(f):
    x = X[:3]
    np.testing.assert_allclose(pullback.hessian(f)(x), fd_hessian(f, x), rtol=1e-6, atol=1e-6)


def test_norm_by_keyword_matches_positional():
    # the frozen form by keyword and the unfrozen form with positional parameters (whose
    # second derivative tests/rules/test_so_scipy_stats.py checks) compute the same Hessian
    def frozen(x):
        return np.sum(st.norm(loc=x[0], scale=np.exp(x[1])).logpdf(x))

    def unfrozen(x):
        return np.sum(st.norm.logpdf(x, x[0], np.exp(x[1])))

    np.testing.assert_allclose(
        pullback.hessian(frozen)(X[:3]), pullback.hessian(unfrozen)(X[:3]), rtol=1e-12
    )
