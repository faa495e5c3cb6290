"""Probe: statistical models in the styles applied code writes them.

Likelihoods through ``scipy.stats`` (frozen and unfrozen distributions, ``loc=``/``scale=``
keywords, broadcasting over data), a Gaussian-process marginal likelihood with
``cho_factor``/``cho_solve``, mixture models through ``logsumexp``, and log densities as an
MCMC sampler's target writes them, a Laplace approximation's evidence, and
likelihoods written with ``gammaln``. Gradients (and for some jvp, hvp and the Hessian) are
checked against central differences (probe_harness.py).
"""

import numpy as np
from probe_harness import probe_tests
from scipy import linalg, special, stats
from scipy.linalg import cho_factor, cho_solve
from scipy.special import logsumexp


def normal_nll_unfrozen(theta, data):
    mu, log_sigma = theta[0], theta[1]
    return -np.sum(stats.norm.logpdf(data, loc=mu, scale=np.exp(log_sigma)))


def normal_nll_frozen(theta, data):
    dist = stats.norm(theta[0], np.exp(theta[1]))
    return -dist.logpdf(data).sum()


def normal_nll_positional(mu, data, sigma):
    return -stats.norm.logpdf(data, mu, sigma).sum()


def student_t_nll(theta, data):
    df = 2.0 + np.exp(theta[0])
    return -np.sum(stats.t.logpdf(data, df, loc=theta[1], scale=theta[2]))


def gamma_loglik(shape_rate, counts):
    shape, rate = shape_rate
    return np.sum(stats.gamma.logpdf(counts, a=shape, scale=1.0 / rate))


def probit_loglik(beta, X, y):
    z = X @ beta
    p = stats.norm.cdf(z)
    return np.sum(y * np.log(p) + (1 - y) * np.log1p(-p))


def probit_logcdf(beta, X, y):
    z = X @ beta
    return np.sum(y * stats.norm.logcdf(z) + (1 - y) * stats.norm.logcdf(-z))


def censored_normal(theta, obs, censored, limit):
    mu, sigma = theta
    dens = stats.norm.logpdf(obs[~censored], mu, sigma).sum()
    tail = stats.norm.logsf(limit, mu, sigma) * censored.sum()
    return -(dens + tail)


def broadcast_grid(locs, xs):
    # (n, 1) points against (m,) centres: an (n, m) table of densities
    table = stats.norm.pdf(xs[:, None], loc=locs[None, :], scale=0.7)
    return np.log(table.mean(axis=1)).sum()


def beta_binomial_prior(p, heads, tails):
    prior = stats.beta(2.0, 3.0)
    return prior.logpdf(p) + heads * np.log(p) + tails * np.log(1 - p)


def mvn_frozen(mean, pts, cov):
    return stats.multivariate_normal(mean=mean, cov=cov).logpdf(pts).sum()


def mvn_unfrozen_cov(cov, pts, mean):
    return np.sum(stats.multivariate_normal.logpdf(pts, mean, cov))


def kernel_matrix(x1, x2, ell, amp):
    sq = (x1[:, None] - x2[None, :]) ** 2
    return amp ** 2 * np.exp(-0.5 * sq / ell ** 2)


def gp_nlml(hyp, x, y):
    ell, amp, noise = np.exp(hyp)
    K = kernel_matrix(x, x, ell, amp) + noise ** 2 * np.eye(len(x))
    c, low = cho_factor(K, lower=True)
    alpha = cho_solve((c, low), y)
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(c))) + 0.5 * len(x) * np.log(2 * np.pi)


def gp_nlml_cholesky(hyp, x, y):
    ell, amp, noise = np.exp(hyp)
    K = kernel_matrix(x, x, ell, amp) + noise ** 2 * np.eye(len(x))
    L = np.linalg.cholesky(K)
    tmp = linalg.solve_triangular(L, y, lower=True)
    alpha = linalg.solve_triangular(L.T, tmp, lower=False)
    return 0.5 * np.dot(y, alpha) + np.log(np.diag(L)).sum()


def gp_predict_mean(x_train, y_train, x_test, hyp):
    ell, amp, noise = hyp
    K = kernel_matrix(x_train, x_train, ell, amp) + noise * np.eye(len(x_train))
    Ks = kernel_matrix(x_test, x_train, ell, amp)
    factor = cho_factor(K)
    return Ks @ cho_solve(factor, y_train)


def gp_predict_loss(x_train, y_train, x_test, hyp):
    return np.sum(gp_predict_mean(x_train, y_train, x_test, hyp) ** 2)


def gmm_logsumexp(means, x, log_w, sig):
    # (n, k) table of component log densities, reduced over k
    comp = stats.norm.logpdf(x[:, None], means[None, :], sig)
    return -np.sum(logsumexp(comp + log_w, axis=1))


def gmm_by_logits(logits, x, means, sig):
    log_w = logits - logsumexp(logits)
    comp = -0.5 * ((x[:, None] - means) / sig) ** 2 - np.log(sig * np.sqrt(2 * np.pi))
    return -logsumexp(comp + log_w, axis=-1).mean()


def gmm_loop_components(means, x, weights, sig):
    terms = []
    for k in range(len(means)):
        terms.append(np.log(weights[k]) + stats.norm.logpdf(x, means[k], sig))
    return -special.logsumexp(np.stack(terms), axis=0).sum()


def gmm_responsibilities_em(means, x, weights, sig):
    # one E-step and the expected complete log-likelihood, responsibilities held fixed
    log_r = np.log(weights) + stats.norm.logpdf(x[:, None], means, sig)
    log_r = log_r - logsumexp(log_r, axis=1, keepdims=True)
    resp = np.exp(log_r)
    return -np.sum(resp * stats.norm.logpdf(x[:, None], means, sig))


def log_prob_banana(q):
    x, y = q[0], q[1]
    return -0.5 * (x ** 2 / 4.0 + (y - 0.5 * x ** 2) ** 2)


def log_prob_hierarchical(params, groups):
    mu, log_tau = params[0], params[1]
    thetas = params[2:]
    tau = np.exp(log_tau)
    lp = stats.norm.logpdf(mu, 0.0, 5.0) + stats.halfcauchy.logpdf(tau, scale=2.5) + log_tau
    lp += np.sum(stats.norm.logpdf(thetas, mu, tau))
    for j, ys in enumerate(groups):
        lp += np.sum(stats.norm.logpdf(ys, thetas[j], 1.0))
    return lp


def potential_energy(q, data):
    # the negative log posterior Hamiltonian Monte Carlo differentiates
    w, b = q[:-1], q[-1]
    logits = data[:, :-1] @ w + b
    labels = data[:, -1]
    loglik = np.sum(labels * logits - np.logaddexp(0.0, logits))
    logprior = -0.5 * np.sum(q ** 2) / 10.0
    return -(loglik + logprior)


def leapfrog_end_energy(q, p, data, step=0.05, n_steps=3):
    # the energy after a few leapfrog steps, with the potential's gradient by hand
    def grad_u(qq):
        w, b = qq[:-1], qq[-1]
        logits = data[:, :-1] @ w + b
        resid = special.expit(logits) - data[:, -1]
        return np.append(data[:, :-1].T @ resid, resid.sum()) + qq / 10.0

    p = p - 0.5 * step * grad_u(q)
    for _ in range(n_steps):
        q = q + step * p
        p = p - step * grad_u(q)
    return potential_energy(q, data) + 0.5 * p @ p


def poisson_glm(beta, X, counts):
    rate = np.exp(X @ beta)
    return -stats.poisson.logpmf(counts, rate).sum()


def lognormal_scale(s, xs):
    return -stats.lognorm.logpdf(xs, s, scale=np.exp(0.3)).sum()


def frozen_by_keyword(theta, data):
    d = stats.norm(loc=theta[0], scale=np.exp(theta[1]))
    return -np.sum(d.logpdf(data))

def expon_rate(rate, data):
    return -stats.expon(scale=1.0 / rate).logpdf(data).sum()

def t_frozen_cdf(df, xs):
    return np.sum(stats.t(df).cdf(xs))

def mvn_kw(mean, pts, cov):
    return np.sum(stats.multivariate_normal.logpdf(pts, mean=mean, cov=cov))

def negbin_ll(theta, counts):
    r, p = np.exp(theta[0]), special.expit(theta[1])
    ll = special.gammaln(counts + r) - special.gammaln(r) - special.gammaln(counts + 1)
    ll = ll + r * np.log(p) + counts * np.log1p(-p)
    return -ll.sum()

def dirichlet_ll(alpha, probs):
    return stats.dirichlet.logpdf(probs, alpha)

def mixture_weights_softmax(logits, x):
    w = special.softmax(logits)
    dens = np.array([stats.norm.pdf(x, m, 1.0) for m in (-1.0, 0.0, 2.0)])
    return -np.log(w @ dens).sum()

def laplace_approx(theta, X, y):
    # log marginal via a Laplace approximation at a fixed mode
    w = np.zeros(X.shape[1]) + theta
    p = special.expit(X @ w)
    H = X.T @ (X * (p * (1 - p))[:, None]) + np.eye(X.shape[1])
    _, logdet = np.linalg.slogdet(H)
    return np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)) - 0.5 * logdet

def gp_solve_chol(ell, x, y):
    K = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / ell ** 2) + 1e-2 * np.eye(len(x))
    L = linalg.cholesky(K, lower=True)
    a = linalg.cho_solve((L, True), y)
    return y @ a + 2 * np.log(np.diag(L)).sum()

def trunc_lik(mu, xs):
    a, b = (0.0 - mu) / 1.0, (3.0 - mu) / 1.0
    return -stats.truncnorm.logpdf(xs, a, b, loc=mu, scale=1.0).sum()

def weibull_fit(theta, xs):
    return -stats.weibull_min.logpdf(xs, np.exp(theta[0]), scale=np.exp(theta[1])).sum()

def invgamma_prior(s2, xs):
    return stats.invgamma.logpdf(s2, 2.0, scale=1.5) + stats.norm.logpdf(xs, 0, np.sqrt(s2)).sum()


_g = np.random.default_rng(7)
DATA = _g.normal(0.4, 1.3, 12)
X_DESIGN = _g.standard_normal((15, 3))
Y_BITS = (_g.random(15) < 0.5).astype(float)
CENS = DATA > 1.0
GP_X = np.linspace(-1.0, 1.0, 7)
GP_Y = np.sin(2.5 * GP_X) + 0.1 * _g.standard_normal(7)
MIX_X = np.concatenate([_g.normal(-1, 0.5, 8), _g.normal(1.5, 0.6, 8)])
MVN_COV = np.array([[1.2, 0.3], [0.3, 0.8]])
MVN_PTS = _g.standard_normal((5, 2))
GROUPS = [_g.normal(0.3, 1.0, 4), _g.normal(-0.2, 1.0, 3), _g.normal(0.8, 1.0, 5)]
HMC_DATA = np.column_stack([_g.standard_normal((10, 2)), (_g.random(10) < 0.5).astype(float)])

PROBES = {
    "normal_nll_unfrozen": (normal_nll_unfrozen, (np.array([0.2, 0.1]), DATA), True),
    "normal_nll_frozen": (normal_nll_frozen, (np.array([0.2, 0.1]), DATA), True),
    "normal_nll_positional": (normal_nll_positional, (0.3, DATA, 1.1), True),
    "student_t_nll": (student_t_nll, (np.array([0.5, 0.2, 1.1]), DATA), False),
    "gamma_loglik": (gamma_loglik, (np.array([2.0, 1.5]), np.abs(DATA) + 0.1), False),
    "probit_loglik": (probit_loglik, (np.array([0.2, -0.3, 0.1]), X_DESIGN, Y_BITS), True),
    "probit_logcdf": (probit_logcdf, (np.array([0.2, -0.3, 0.1]), X_DESIGN, Y_BITS), True),
    "censored_normal": (censored_normal, (np.array([0.3, 1.2]), DATA, CENS, 1.0), False),
    "broadcast_grid": (broadcast_grid, (np.array([-0.5, 0.2, 0.9]), DATA), True),
    "beta_binomial_prior": (beta_binomial_prior, (0.35, 7, 5), True),
    "mvn_frozen": (mvn_frozen, (np.array([0.1, -0.2]), MVN_PTS, MVN_COV), True),
    "mvn_unfrozen_cov": (mvn_unfrozen_cov, (MVN_COV, MVN_PTS, np.array([0.1, -0.2])), False),
    "gp_nlml": (gp_nlml, (np.log(np.array([0.6, 1.1, 0.2])), GP_X, GP_Y), True),
    "gp_nlml_cholesky": (gp_nlml_cholesky, (np.log(np.array([0.6, 1.1, 0.2])), GP_X, GP_Y),
                         False),
    "gp_predict_loss": (gp_predict_loss, (GP_X, GP_Y, np.array([-0.3, 0.45]),
                                          (0.6, 1.1, 0.05)), False),
    "gmm_logsumexp": (gmm_logsumexp, (np.array([-0.8, 1.2]), MIX_X,
                                      np.log(np.array([0.4, 0.6])), 0.6), True),
    "gmm_by_logits": (gmm_by_logits, (np.array([0.1, -0.2, 0.3]), MIX_X,
                                      np.array([-1.0, 0.5, 1.5]), 0.7), True),
    "gmm_loop_components": (gmm_loop_components, (np.array([-0.8, 1.2]), MIX_X,
                                                  np.array([0.4, 0.6]), 0.6), False),
    "gmm_responsibilities_em": (gmm_responsibilities_em, (np.array([-0.8, 1.2]), MIX_X,
                                                          np.array([0.4, 0.6]), 0.6), False),
    "log_prob_banana": (log_prob_banana, (np.array([0.7, -0.4]),), True),
    "log_prob_hierarchical": (log_prob_hierarchical,
                              (np.array([0.2, -0.1, 0.3, -0.2, 0.5]), GROUPS), True),
    "potential_energy": (potential_energy, (np.array([0.3, -0.2, 0.1]), HMC_DATA), True),
    "leapfrog_end_energy": (leapfrog_end_energy, (np.array([0.3, -0.2, 0.1]),
                                                  np.array([0.5, 0.1, -0.4]), HMC_DATA), False),
    "poisson_glm": (poisson_glm, (np.array([0.1, 0.2, -0.1]), X_DESIGN,
                                  _g.poisson(1.5, 15)), True),
    "lognormal_scale": (lognormal_scale, (0.8, np.abs(DATA) + 0.2), True),
    "frozen_by_keyword": (frozen_by_keyword, (np.array([0.2, 0.1]), DATA), True),
    "expon_rate": (expon_rate, (1.3, np.abs(DATA)), True),
    "t_frozen_cdf": (t_frozen_cdf, (4.5, DATA), True),
    "mvn_kw": (mvn_kw, (np.array([0.1, 0.2]), X_DESIGN[:, :2], MVN_COV), True),
    "negbin_ll": (negbin_ll, (np.array([0.5, 0.2]), _g.poisson(2.0, 10).astype(float)), True),
    "dirichlet_ll": (dirichlet_ll, (np.array([1.5, 2.0, 3.0]), np.array([0.2, 0.3, 0.5])),
                     True),
    "mixture_weights_softmax": (mixture_weights_softmax, (np.array([0.1, 0.3, -0.2]), DATA),
                                True),
    "laplace_approx": (laplace_approx, (np.array([0.3, -0.2]), X_DESIGN[:, :2], Y_BITS), True),
    "gp_solve_chol": (gp_solve_chol, (0.7, np.linspace(0, 1, 6), np.sin(np.linspace(0, 3, 6))),
                      True),
    "trunc_lik": (trunc_lik, (0.8, np.abs(DATA) % 3), True),
    "weibull_fit": (weibull_fit, (np.array([0.3, 0.2]), np.abs(DATA) + 0.1), True),
    "invgamma_prior": (invgamma_prior, (0.9, DATA), True),
}


test_probe, test_float32 = probe_tests(PROBES)
