# ruff: noqa: B006, B007, B008, B905 - written the way public code is written
"""Probe: statistics and econometrics code written the way public repositories write it.

GLM log-likelihoods (logistic, Poisson, negative binomial), a Gaussian mixture with
logsumexp, ARMA recursions, a Kalman filter loop, robust and quantile losses, kernel density
estimates. Each gradient (and for a third jvp, hvp and the Hessian) is checked against
central finite differences of the function itself.
"""

import math

import numpy as np
import pytest
from probe_harness import check_probe
from scipy.special import expit, gammaln, logsumexp
from scipy.stats import norm

LOG_2PI = np.log(2 * np.pi)
EPS = 1e-12


def logistic_nll(beta, X, y):
    z = X @ beta
    p = 1.0 / (1.0 + np.exp(-z))
    p = np.clip(p, EPS, 1 - EPS)
    return -np.sum(y * np.log(p) + (1 - y) * np.log(1 - p))


def logistic_nll_stable(beta, X, y, l2=0.1):
    z = X.dot(beta)
    return np.sum(np.logaddexp(0, z) - y * z) + 0.5 * l2 * beta @ beta


def logistic_expit_loop(w, X, y):
    ll = 0.0
    for xi, yi in zip(X, y):
        p = expit(np.dot(w, xi))
        ll += yi * math.log(p) + (1 - yi) * math.log(1 - p)
    return -ll / len(y)


def poisson_nll(beta, X, counts):
    eta = X @ beta
    mu = np.exp(eta)
    return np.sum(mu - counts * eta + gammaln(counts + 1))


def poisson_offset(beta, X, counts, exposure):
    log_mu = np.log(exposure) + X @ beta
    return -np.sum(counts * log_mu - np.exp(log_mu))


def negbin_nll(params, X, y):
    beta, log_alpha = params[:-1], params[-1]
    alpha = np.exp(log_alpha)
    mu = np.exp(X @ beta)
    r = 1.0 / alpha
    ll = (gammaln(y + r) - gammaln(r) - gammaln(y + 1)
          + r * np.log(r / (r + mu)) + y * np.log(mu / (r + mu)))
    return -ll.sum()


def gmm_loglik(means, x, weights=np.array([0.3, 0.7]), sigmas=np.array([0.5, 1.0])):
    # log sum_k w_k N(x | m_k, s_k), points along axis 0, components along axis 1
    z = (x[:, np.newaxis] - means[np.newaxis, :]) / sigmas
    log_comp = np.log(weights) - 0.5 * z ** 2 - np.log(sigmas) - 0.5 * LOG_2PI
    return logsumexp(log_comp, axis=1).sum()


def gmm_manual_lse(params, x):
    mu1, mu2, log_s = params
    s = np.exp(log_s)
    a = -0.5 * ((x - mu1) / s) ** 2
    b = -0.5 * ((x - mu2) / s) ** 2
    m = np.maximum(a, b)
    return -np.sum(m + np.log(np.exp(a - m) + np.exp(b - m)) - np.log(s))


def gmm_responsibilities(means, x):
    d = -0.5 * (x.reshape(-1, 1) - means) ** 2
    d_max = d.max(axis=1, keepdims=True)
    resp = np.exp(d - d_max)
    resp /= resp.sum(axis=1, keepdims=True)
    return np.sum(resp[:, 0] * x)


def arma11_css(params, y):
    phi, theta = params
    e = np.zeros_like(y)
    for t in range(1, len(y)):
        e[t] = y[t] - phi * y[t - 1] - theta * e[t - 1]
    return 0.5 * np.sum(e ** 2)


def ar_p_loglik(coefs, y, sigma2=1.0):
    p = len(coefs)
    resid = []
    for t in range(p, len(y)):
        pred = sum(coefs[k] * y[t - k - 1] for k in range(p))
        resid.append(y[t] - pred)
    resid = np.array(resid)
    n = len(resid)
    return -0.5 * n * np.log(2 * np.pi * sigma2) - 0.5 * np.sum(resid ** 2) / sigma2


def ma_q_residuals(theta, y):
    q = theta.shape[0]
    eps = np.zeros(len(y) + q)
    for t in range(len(y)):
        eps[t + q] = y[t] - np.dot(theta, eps[t:t + q][::-1])
    return np.sum(eps[q:] ** 2)


def kalman_local_level(params, y):
    sigma_eps2, sigma_eta2 = np.exp(params)
    a, P = 0.0, 1e4
    loglik = 0.0
    for t in range(len(y)):
        v = y[t] - a
        F = P + sigma_eps2
        K = P / F
        a = a + K * v
        P = P * (1 - K) + sigma_eta2
        loglik += -0.5 * (np.log(2 * np.pi) + np.log(F) + v ** 2 / F)
    return -loglik


def kalman_matrix(q, ys, A=np.array([[1.0, 1.0], [0.0, 1.0]]), H=np.array([[1.0, 0.0]])):
    x = np.zeros((2, 1))
    P = np.eye(2)
    Q = q * np.eye(2)
    R = np.array([[0.5]])
    nll = 0.0
    for y in ys:
        x = A @ x
        P = A @ P @ A.T + Q
        S = H @ P @ H.T + R
        K = P @ H.T @ np.linalg.inv(S)
        innov = y - (H @ x)[0, 0]
        x = x + K * innov
        P = (np.eye(2) - K @ H) @ P
        nll += 0.5 * (np.log(S[0, 0]) + innov ** 2 / S[0, 0])
    return nll


def huber_loss(w, X, y, delta=1.0):
    r = y - X @ w
    quad = 0.5 * r ** 2
    lin = delta * (np.abs(r) - 0.5 * delta)
    return np.mean(np.where(np.abs(r) <= delta, quad, lin))


def huber_mask(w, X, y, delta=0.5):
    r = X @ w - y
    small = np.abs(r) < delta
    loss = np.empty_like(r)
    loss[small] = 0.5 * r[small] ** 2
    loss[~small] = delta * np.abs(r[~small]) - 0.5 * delta ** 2
    return loss.sum()


def pseudo_huber(w, X, y, delta=0.7):
    r = X @ w - y
    return np.sum(delta ** 2 * (np.sqrt(1 + (r / delta) ** 2) - 1))


def quantile_loss(w, X, y, tau=0.3):
    r = y - X @ w
    return np.mean(np.maximum(tau * r, (tau - 1) * r))


def pinball_multi(preds, y, quantiles=(0.1, 0.5, 0.9)):
    total = 0.0
    for i, q in enumerate(quantiles):
        err = y - preds[:, i]
        total += np.mean(np.where(err >= 0, q * err, (q - 1) * err))
    return total


def kde_gaussian(points, grid, bandwidth=0.4):
    diffs = (grid[:, None] - points[None, :]) / bandwidth
    dens = np.exp(-0.5 * diffs ** 2).sum(axis=1) / (len(points) * bandwidth * np.sqrt(2 * np.pi))
    return np.sum(np.log(dens))


def kde_loo_score(log_h, x):
    h = np.exp(log_h)
    n = len(x)
    d = x[:, None] - x[None, :]
    K = norm.pdf(d / h) / h
    np.fill_diagonal(K, 0.0)
    return -np.sum(np.log(K.sum(axis=1) / (n - 1)))


def kde_epanechnikov_smooth(x, grid, h=1.5):
    u = (grid.reshape(-1, 1) - x.reshape(1, -1)) / h
    k = np.where(np.abs(u) < 1, 0.75 * (1 - u ** 2), 0.0)
    return np.sum(k.mean(axis=1) ** 2)


def student_t_nll(params, x):
    loc, log_scale, log_df = params
    scale, df = np.exp(log_scale), np.exp(log_df)
    z = (x - loc) / scale
    ll = (gammaln((df + 1) / 2) - gammaln(df / 2) - 0.5 * np.log(df * np.pi) - np.log(scale)
          - (df + 1) / 2 * np.log1p(z ** 2 / df))
    return -np.sum(ll)


def probit_nll(beta, X, y):
    q = 2 * y - 1
    return -np.sum(norm.logcdf(q * (X @ beta)))


def ols_ridge_closed_form(lam, X, y):
    n_features = X.shape[1]
    beta = np.linalg.solve(X.T @ X + lam * np.eye(n_features), X.T @ y)
    resid = y - X @ beta
    return resid @ resid


def weighted_least_squares(w, X, y):
    W = np.diag(w)
    beta = np.linalg.inv(X.T @ W @ X) @ X.T @ W @ y
    return np.sum(beta ** 2)


def mle_normal_dict(theta, x):
    mu, log_sigma = theta["mu"], theta["log_sigma"]
    sigma = np.exp(log_sigma)
    return np.sum(0.5 * ((x - mu) / sigma) ** 2 + log_sigma)


def softmax_regression(W, X, labels):
    scores = X @ W
    scores -= scores.max(axis=1, keepdims=True)
    log_probs = scores - np.log(np.sum(np.exp(scores), axis=1, keepdims=True))
    return -np.mean(log_probs[np.arange(len(labels)), labels])


def beta_binomial_nll(log_ab, k, n):
    a, b = np.exp(log_ab)
    from scipy.special import betaln
    return -np.sum(betaln(k + a, n - k + b) - betaln(a, b))


def iterated_reweighting(w0, X, y, n_iter=3):
    w = w0
    for it in range(n_iter):
        r = y - X @ w
        weights = 1.0 / np.sqrt(1.0 + r ** 2)
        Xw = X * weights[:, None]
        w = np.linalg.solve(X.T @ Xw + 1e-3 * np.eye(X.shape[1]), Xw.T @ y)
    return np.sum(w ** 2)


_r = np.random.default_rng(7)
XD = np.column_stack([np.ones(25), _r.standard_normal((25, 2))])
YB = (_r.random(25) < 0.5).astype(float)
YC = _r.poisson(2.0, 25).astype(float)
YR = XD @ np.array([0.5, -1.0, 2.0]) + _r.standard_normal(25)
SER = _r.standard_normal(30).cumsum() * 0.3
X1 = _r.standard_normal(20)
B3 = np.array([0.1, -0.2, 0.3])

PROBES = {
    "logistic_nll": (logistic_nll, (B3, XD, YB), True),
    "logistic_nll_stable": (logistic_nll_stable, (B3, XD, YB), True),
    "logistic_expit_loop": (logistic_expit_loop, (B3, XD, YB), False),
    "poisson_nll": (poisson_nll, (B3 * 0.5, XD, YC), True),
    "poisson_offset": (poisson_offset, (B3 * 0.5, XD, YC, np.full(25, 2.0)), False),
    "negbin_nll": (negbin_nll, (np.array([0.3, 0.1, -0.1, -0.5]), XD, YC), True),
    "gmm_loglik": (gmm_loglik, (np.array([-0.5, 0.8]), X1), True),
    "gmm_manual_lse": (gmm_manual_lse, (np.array([-0.5, 0.8, 0.1]), X1), False),
    "gmm_responsibilities": (gmm_responsibilities, (np.array([-0.5, 0.8]), X1), False),
    "arma11_css": (arma11_css, (np.array([0.5, 0.2]), SER), True),
    "ar_p_loglik": (ar_p_loglik, (np.array([0.5, -0.2, 0.1]), SER), False),
    "ma_q_residuals": (ma_q_residuals, (np.array([0.3, -0.1]), SER), False),
    "kalman_local_level": (kalman_local_level, (np.array([-1.0, -2.0]), SER), True),
    "kalman_matrix": (kalman_matrix, (0.1, SER[:12]), False),
    "huber_loss": (huber_loss, (B3, XD, YR), False),
    "huber_mask": (huber_mask, (B3, XD, YR), False),
    "pseudo_huber": (pseudo_huber, (B3, XD, YR), True),
    "quantile_loss": (quantile_loss, (B3, XD, YR), False),
    "pinball_multi": (pinball_multi, (np.column_stack([YR - 1, YR + 0.1, YR + 1]) + 0.05, YR),
                      False),
    "kde_gaussian": (kde_gaussian, (X1[:8], np.linspace(-2, 2, 9)), True),
    "kde_loo_score": (kde_loo_score, (np.log(0.5), X1), False),
    "kde_epanechnikov_smooth": (kde_epanechnikov_smooth, (X1[:6], np.linspace(-1, 1, 7)), False),
    "student_t_nll": (student_t_nll, (np.array([0.1, -0.2, 1.2]), X1), True),
    "probit_nll": (probit_nll, (B3, XD, YB), False),
    "ols_ridge_closed_form": (ols_ridge_closed_form, (0.7, XD, YR), True),
    "weighted_least_squares": (weighted_least_squares, (np.linspace(0.5, 1.5, 25), XD, YR),
                               False),
    "mle_normal_dict": (mle_normal_dict, ({"mu": 0.2, "log_sigma": -0.1}, X1), False),
    "softmax_regression": (softmax_regression, (np.arange(9.0).reshape(3, 3) / 10, XD,
                                                np.arange(25) % 3), False),
    "beta_binomial_nll": (beta_binomial_nll, (np.array([0.3, 0.5]), np.array([2.0, 5, 7]),
                                              np.array([10.0, 10, 10])), False),
    "iterated_reweighting": (iterated_reweighting, (B3, XD, YR), False),
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_probe(name):
    f, args, second = PROBES[name]
    check_probe(f, *args, second=second)
