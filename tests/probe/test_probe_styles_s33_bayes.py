"""Probe: log-probability functions as emcee and by-hand PyMC users write them.

A line fit with an underestimated variance (``m, b, log_f = theta``, a flat prior
returning ``-np.inf`` outside its box, ``if not np.isfinite(lp): return -np.inf``),
hierarchical models with ``scipy.stats`` log-densities, a Gaussian mixture through
``logsumexp``, an HMM forward pass with per-step scaling, Gaussian-process marginal
likelihoods with ``cho_factor``/``cho_solve``, Poisson and Student-t likelihoods, a
parameter sampled on the log scale with its Jacobian. Each differentiated with respect to
its first argument against central differences (probe_harness.py).
"""

import numpy as np
from probe_harness import probe_tests
from scipy import stats
from scipy.linalg import cho_factor, cho_solve
from scipy.special import gammaln, logsumexp

# -- emcee's line fit --------------------------------------------------------------------------


def log_likelihood(theta, x, y, yerr):
    m, b, log_f = theta
    model = m * x + b
    sigma2 = yerr**2 + model**2 * np.exp(2 * log_f)
    return -0.5 * np.sum((y - model) ** 2 / sigma2 + np.log(sigma2))


def log_prior(theta):
    m, b, log_f = theta
    if -5.0 < m < 0.5 and 0.0 < b < 10.0 and -10.0 < log_f < 1.0:
        return 0.0
    return -np.inf


def log_probability(theta, x, y, yerr):
    lp = log_prior(theta)
    if not np.isfinite(lp):
        return -np.inf
    return lp + log_likelihood(theta, x, y, yerr)


def log_prob_gaussian_prior(theta, x, y, yerr):
    m, b, log_f = theta
    lp = -0.5 * ((m + 1.0) ** 2 / 0.5**2 + (b - 4.0) ** 2 / 2.0**2)
    if log_f > 1.0:
        lp = -np.inf
    if not np.isfinite(lp):
        return -np.inf
    return lp + log_likelihood(theta, x, y, yerr)


def lnprob_list_params(p, x, y, yerr):
    """Parameters taken as a list, the prior in one expression."""
    m, b = p[0], p[1]
    lnf = p[2]
    if not (-5 < m < 0.5 and 0 < b < 10 and -10 < lnf < 1):
        return -np.inf
    inv_sigma2 = 1.0 / (yerr**2 + (m * x + b) ** 2 * np.exp(2 * lnf))
    return -0.5 * (np.sum((y - (m * x + b)) ** 2 * inv_sigma2 - np.log(inv_sigma2)))


# -- hierarchical models with scipy.stats ------------------------------------------------------


def eight_schools_logp(params, y, sigma):
    mu, log_tau = params[0], params[1]
    eta = params[2:]
    tau = np.exp(log_tau)
    theta = mu + tau * eta
    lp = stats.norm.logpdf(mu, 0, 5)
    lp += stats.halfcauchy.logpdf(tau, 0, 5) + log_tau  # the Jacobian of tau = exp(log_tau)
    lp += np.sum(stats.norm.logpdf(eta, 0, 1))
    lp += np.sum(stats.norm.logpdf(y, theta, sigma))
    return lp


def hierarchical_groups(theta, data, groups, n_groups):
    mu, log_sigma, log_tau = theta[:3]
    alpha = theta[3:]
    sigma, tau = np.exp(log_sigma), np.exp(log_tau)
    logp = stats.norm.logpdf(mu, loc=0.0, scale=10.0)
    logp += stats.gamma.logpdf(sigma, a=2.0, scale=1.0) + log_sigma
    logp += stats.expon.logpdf(tau, scale=1.0) + log_tau
    logp += stats.norm(mu, tau).logpdf(alpha).sum()
    for j in range(n_groups):
        yj = data[groups == j]
        logp += stats.norm.logpdf(yj, loc=alpha[j], scale=sigma).sum()
    return logp


def beta_binomial_logp(theta, k, n):
    logit_p = theta
    p = 1 / (1 + np.exp(-logit_p))
    lp = stats.beta.logpdf(p, 2.0, 3.0) + np.log(p) + np.log1p(-p)
    return np.sum(lp + stats.binom.logpmf(k, n, p))


# -- mixtures, HMMs ----------------------------------------------------------------------------


def mixture_loglik(means, x, weights, sigmas):
    comp = np.log(weights)[None, :] + stats.norm.logpdf(x[:, None], means[None, :],
                                                        sigmas[None, :])
    return np.sum(logsumexp(comp, axis=1))


def mixture_by_hand(params, x):
    K = len(params) // 3
    mus = params[:K]
    log_sigmas = params[K:2 * K]
    logits = params[2 * K:]
    log_w = logits - logsumexp(logits)
    ll = np.zeros((len(x), K))
    for k in range(K):
        s = np.exp(log_sigmas[k])
        ll[:, k] = (log_w[k] - 0.5 * np.log(2 * np.pi) - log_sigmas[k]
                    - 0.5 * ((x - mus[k]) / s) ** 2)
    m = ll.max(axis=1, keepdims=True)
    return np.sum(m.ravel() + np.log(np.sum(np.exp(ll - m), axis=1)))


def hmm_forward_scaled(log_A, pi, B, obs):
    A = np.exp(log_A)
    A = A / A.sum(axis=1, keepdims=True)
    T = len(obs)
    alpha = pi * B[:, obs[0]]
    c = alpha.sum()
    alpha = alpha / c
    loglik = np.log(c)
    for t in range(1, T):
        alpha = (alpha @ A) * B[:, obs[t]]
        c = alpha.sum()
        alpha /= c
        loglik += np.log(c)
    return loglik


def hmm_forward_table(B, A, pi, obs):
    N = A.shape[0]
    T = len(obs)
    alpha = np.zeros((T, N))
    scale = np.zeros(T)
    alpha[0, :] = pi * B[:, obs[0]]
    scale[0] = np.sum(alpha[0, :])
    alpha[0, :] = alpha[0, :] / scale[0]
    for t in range(1, T):
        for j in range(N):
            alpha[t, j] = np.dot(alpha[t - 1, :], A[:, j]) * B[j, obs[t]]
        scale[t] = np.sum(alpha[t, :])
        alpha[t, :] /= scale[t]
    return np.sum(np.log(scale))


def hmm_log_space(log_B, log_A, log_pi, obs):
    log_alpha = log_pi + log_B[:, obs[0]]
    for t in range(1, len(obs)):
        log_alpha = logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, obs[t]]
    return logsumexp(log_alpha)


# -- Gaussian processes ------------------------------------------------------------------------


def gp_neg_log_marginal(log_params, X, y):
    ell, sf, sn = np.exp(log_params)
    d = X[:, None, :] - X[None, :, :]
    K = sf**2 * np.exp(-0.5 * np.sum(d**2, axis=-1) / ell**2) + sn**2 * np.eye(len(X))
    L = cho_factor(K, lower=True)
    alpha = cho_solve(L, y)
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(L[0]))) + 0.5 * len(X) * np.log(2 * np.pi)


def gp_numpy_cholesky(theta, X, y):
    ell, sf2, noise = np.exp(theta[0]), np.exp(theta[1]), np.exp(theta[2])
    sqdist = np.sum(X**2, 1).reshape(-1, 1) + np.sum(X**2, 1) - 2 * np.dot(X, X.T)
    K = sf2 * np.exp(-0.5 / ell**2 * sqdist) + noise * np.eye(X.shape[0])
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return -0.5 * np.dot(y, alpha) - np.sum(np.log(np.diagonal(L))) - X.shape[0] / 2 * np.log(
        2 * np.pi)


def gp_predictive_mean(Xs, X, y, ell=0.7):
    def kern(a, b):
        return np.exp(-0.5 * (a[:, None, 0] - b[None, :, 0]) ** 2 / ell**2)

    K = kern(X, X) + 0.1 * np.eye(len(X))
    c, low = cho_factor(K)
    mean = kern(Xs, X) @ cho_solve((c, low), y)
    return np.sum(np.sin(mean))


# -- other likelihoods -------------------------------------------------------------------------


def poisson_regression_logp(beta, X, counts):
    eta = X @ beta
    mu = np.exp(eta)
    lp = np.sum(counts * eta - mu - gammaln(counts + 1))
    lp += np.sum(stats.norm.logpdf(beta, 0, 2.5))
    return lp


def student_t_regression(theta, x, y):
    a, b, log_s, log_nu = theta
    s, nu = np.exp(log_s), np.exp(log_nu) + 1.0
    resid = (y - (a + b * x)) / s
    ll = (gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * np.log(nu * np.pi) - np.log(s)
          - (nu + 1) / 2 * np.log1p(resid**2 / nu))
    return np.sum(ll) + stats.t.logpdf(b, df=3)


def log_posterior_logistic(w, X, y, prior_scale=2.0):
    z = X @ w
    log_lik = np.sum(y * z - np.logaddexp(0, z))
    log_prior = -0.5 * np.sum(w**2) / prior_scale**2
    return log_lik + log_prior


def mvn_logp(mu, X, cov):
    return np.sum(stats.multivariate_normal.logpdf(X, mean=mu, cov=cov))


_r = np.random.default_rng(33)
XL = np.sort(10 * _r.random(8))
YERR = 0.1 + 0.5 * _r.random(8)
YL = -0.9594 * XL + 4.294 + YERR * _r.standard_normal(8)
THETA = np.array([-1.0, 4.4, np.log(0.5)])
Y8 = np.array([28.0, 8.0, -3.0, 7.0])
S8 = np.array([15.0, 10.0, 16.0, 11.0])
DATA = _r.standard_normal(9) + np.repeat([0.0, 1.0, -1.0], 3)
GROUPS = np.repeat([0, 1, 2], 3)
XM = np.concatenate([_r.standard_normal(5) - 2, _r.standard_normal(5) + 2])
A3 = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.3, 0.5]])
B3 = np.array([[0.5, 0.4, 0.1], [0.1, 0.3, 0.6], [0.3, 0.3, 0.4]])
PI3 = np.array([0.5, 0.3, 0.2])
OBS = np.array([0, 2, 1, 2, 0])
XGP = _r.standard_normal((5, 2))
YGP = np.sin(XGP[:, 0]) + 0.1 * _r.standard_normal(5)
XP = np.column_stack([np.ones(6), _r.standard_normal(6)])
COUNTS = np.array([1, 0, 3, 2, 5, 1])
YT = 0.5 + 2.0 * XL / 10 + _r.standard_t(3, 8) * 0.3
YLOG = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0])

PROBES = {
    "log_likelihood": (log_likelihood, (THETA, XL, YL, YERR), True),
    "log_probability": (log_probability, (THETA, XL, YL, YERR), True),
    "log_prob_gaussian_prior": (log_prob_gaussian_prior, (THETA, XL, YL, YERR), True),
    "lnprob_list_params": (lnprob_list_params, (THETA, XL, YL, YERR), True),
    "eight_schools_logp": (eight_schools_logp,
                           (np.array([4.0, 1.0, 0.3, -0.2, 0.5, 0.1]), Y8, S8), False),
    "hierarchical_groups": (hierarchical_groups,
                            (np.array([0.1, -0.2, 0.3, 0.2, 0.9, -1.1]), DATA, GROUPS, 3), False),
    "beta_binomial_logp": (beta_binomial_logp, (np.array([0.2, -0.4, 1.0]),
                                                np.array([3, 1, 7]), np.array([10, 8, 9])), False),
    "mixture_loglik": (mixture_loglik, (np.array([-1.5, 2.2]), XM, np.array([0.4, 0.6]),
                                        np.array([1.0, 0.8])), True),
    "mixture_by_hand": (mixture_by_hand, (np.array([-1.5, 2.2, 0.1, -0.2, 0.3, -0.3]), XM), False),
    "hmm_forward_scaled": (hmm_forward_scaled, (np.log(A3), PI3, B3, OBS), True),
    "hmm_forward_table": (hmm_forward_table, (B3, A3, PI3, OBS), False),
    "hmm_log_space": (hmm_log_space, (np.log(B3), np.log(A3), np.log(PI3), OBS), True),
    "gp_neg_log_marginal": (gp_neg_log_marginal, (np.array([0.1, 0.2, -1.0]), XGP, YGP), False),
    "gp_numpy_cholesky": (gp_numpy_cholesky, (np.array([0.1, 0.2, -1.0]), XGP, YGP), False),
    "gp_predictive_mean": (gp_predictive_mean, (XGP[:3] + 0.3, XGP, YGP), True),
    "poisson_regression_logp": (poisson_regression_logp, (np.array([0.2, 0.4]), XP, COUNTS),
                                True),
    "student_t_regression": (student_t_regression, (np.array([0.4, 0.2, np.log(0.3), 1.0]),
                                                    XL / 10, YT), False),
    "log_posterior_logistic": (log_posterior_logistic, (np.array([0.1, -0.3]), XP, YLOG), True),
    "mvn_logp": (mvn_logp, (np.array([0.1, -0.2]), XGP, np.array([[1.0, 0.3], [0.3, 0.5]])),
                 True),
}

test_probe, test_float32 = probe_tests(PROBES, quick=6)
