# ruff: noqa: B006, B007, B008, B905, E731 - written the way public code is written
"""Probe: SciPy in finance and statistics code.

VaR from norm.ppf, Student-t and gamma likelihoods with their shape parameters, special
functions, smoothing by np.convolve, spectral power, a Markov generator's expm, Cholesky
solves, Black-Scholes cdfs in a loop, frozen distributions (multivariate normal made with
keywords: its jvp was 0), quad pricing with args= and with a closure, minimize of a
closure. Each probe against central differences or an exact value; the refusal asserted
with its reason (lfilter has no rule).
"""

import math

import numpy as np
import pytest
from probe_harness import check_probe
from scipy import integrate, linalg, optimize, signal, special, stats

import pullback


def norm_ppf_var(sigma, alpha=0.99, mu=0.001):
    return -(mu + sigma * stats.norm.ppf(1 - alpha))


def t_logpdf_df(params, x):
    df, loc, scale = params
    return -np.sum(stats.t.logpdf(x, df, loc, scale))


def gamma_logpdf(params, x):
    a, scale = params
    return -np.sum(stats.gamma.logpdf(x, a, 0.0, scale))


def special_mix(x):
    return np.sum(
        special.erfc(x) + special.xlogy(x ** 2, x ** 2 + 1) + special.log_ndtr(x) + special.expit(x)
    )


def convolve_smooth(w, y):
    s = np.convolve(y, w / np.sum(w), mode="valid")
    return np.sum(np.diff(s) ** 2)


def fft_power(x):
    F = np.fft.rfft(x)
    return np.sum(np.abs(F) ** 2)


def expm_markov(q):
    Q = np.array([[-q[0], q[0], 0.0], [q[1], -q[1] - q[2], q[2]], [0.0, 0.0, 0.0]])
    P = linalg.expm(Q * 2.0)
    return P[0, 2] + P[1, 2]


def cho_solve_quad(x, A=np.array([[4.0, 1.0], [1.0, 3.0]])):
    c = linalg.cho_factor(A + np.outer(x, x))
    sol = linalg.cho_solve(c, np.array([1.0, 2.0]))
    return sol @ sol


def norm_cdf_loop(sig):
    total = 0.0
    for k in [90.0, 100.0, 110.0]:
        d1 = (math.log(100.0 / k) + 0.5 * sig ** 2) / sig
        total += stats.norm.cdf(d1) * k
    return total


def mvn_frozen(mu, X):
    d = stats.multivariate_normal(mean=mu, cov=np.eye(2))
    return -np.sum(d.logpdf(X))


def poisson_logpmf(lam, k=np.array([0.0, 2.0, 5.0])):
    return -np.sum(stats.poisson.logpmf(k, lam))


def beta_fn(ab):
    return special.betaln(ab[0], ab[1]) + special.digamma(ab[0]) * ab[1]


def quad_price(sigma, S=100.0, K=100.0, r=0.01, T=1.0):
    def integrand(z):
        ST = S * np.exp((r - 0.5 * sigma ** 2) * T + sigma * np.sqrt(T) * z)
        return max(ST - K, 0.0) * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)
    val, err = integrate.quad(integrand, -8, 8, points=[0.0])
    return np.exp(-r * T) * val


def lfilter_ar(phi, y):
    e = signal.lfilter([1.0, -phi[0], -phi[1]], [1.0], y)
    return np.sum(e ** 2)


def minimize_inner(theta):
    res = optimize.minimize(
        lambda w: np.sum((w - theta) ** 2) + np.sum(w ** 4), np.zeros(2), jac=None
    )
    return np.sum(res.x)


def _payoff_density(z, sigma, S, K, r, T):
    ST = S * np.exp((r - 0.5 * sigma ** 2) * T + sigma * np.sqrt(T) * z)
    return max(ST - K, 0.0) * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)


def quad_price_fixed(sigma, S=100.0, K=100.0, r=0.01, T=1.0):
    val, err = integrate.quad(
        _payoff_density, -8, 8, args=(sigma, S, K, r, T), points=[0.0], epsabs=1e-13, epsrel=1e-13
    )
    return np.exp(-r * T) * val



_rng = np.random.default_rng(3)
Y = _rng.standard_normal(30)
X2 = _rng.standard_normal((5, 2))
P3 = np.array([0.3, -0.7, 1.1])

# first order only: fft_power (np.abs of a complex value has no second derivative here),
# mvn_frozen (a frozen distribution built with keywords: HigherOrderError, its jvp is checked
# in tests/test_forward_frozen_distributions.py)
PROBES = {
    "norm_ppf_var": (norm_ppf_var, (0.2,), True),
    "t_logpdf_df": (t_logpdf_df, (np.array([4.0, 0.1, 1.3]), Y), True),
    "gamma_logpdf": (gamma_logpdf, (np.array([2.0, 1.5]), np.abs(Y) + 0.1), True),
    "special_mix": (special_mix, (P3,), True),
    "convolve_smooth": (convolve_smooth, (np.array([1.0, 2.0, 1.0]), Y), True),
    "fft_power": (fft_power, (Y[:8],), False),
    "expm_markov": (expm_markov, (np.array([0.1, 0.2, 0.05]),), True),
    "cho_solve_quad": (cho_solve_quad, (np.array([0.3, -0.2]),), True),
    "norm_cdf_loop": (norm_cdf_loop, (0.2,), True),
    "mvn_frozen": (mvn_frozen, (np.array([0.1, -0.2]), X2), False),
    "poisson_logpmf": (poisson_logpmf, (2.5,), True),
    "beta_fn": (beta_fn, (np.array([2.0, 3.0]),), True),
    "quad_price_fixed": (quad_price_fixed, (0.2,), False),
    "lfilter_ar": (lfilter_ar, (np.array([0.5, -0.2]), Y), True),  # refused until stop 33
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_probe(name):
    f, args, second = PROBES[name]
    check_probe(f, *args, second=second)


# Closures given to solvers take what they read through args (solver_closures.py). At
# quad's and minimize's default tolerances central differences carry the solver's error
# over the step (about 1e-3 here), so these compare with what is exact instead.


def test_quad_price_closure_agrees_with_the_args_form():
    # the same integral with what the closure reads passed as args= (checked against
    # central differences at tight tolerances above)
    got = pullback.grad(quad_price)(0.2)
    np.testing.assert_allclose(got, pullback.grad(quad_price_fixed)(0.2), rtol=1e-6)


def test_minimize_closure_against_the_implicit_function_theorem():
    # per component 2 (w - theta) + 4 w^3 = 0 at the optimum: dw/dtheta = 2 / (2 + 12 w^2)
    theta = np.array([0.5, -1.0])
    w = optimize.minimize(lambda w: np.sum((w - theta) ** 2) + np.sum(w ** 4), np.zeros(2)).x
    got = pullback.grad(minimize_inner)(theta)
    np.testing.assert_allclose(got, 2 / (2 + 12 * w ** 2), rtol=1e-6)

