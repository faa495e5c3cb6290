"""Probe: statistics, finance and optimization code as analysis scripts write it.

``scipy.stats`` distributions frozen and unfrozen (positional and keyword ``loc``/``scale``,
the class imported by name), mixture log-likelihoods through ``logsumexp`` with ``b=`` and
``axis=``, a Kalman filter with ``np.linalg.solve``, ``cho_factor``/``cho_solve`` and
``slogdet``, an AR model by ``lstsq``-free recursion; Black-Scholes with ``norm.cdf``,
Monte Carlo with a fixed seed set inside the function, binomial trees filled in place,
Asian options; Armijo line search, projected gradient with ``np.clip``, a quadratic penalty
method and Adam unrolled. Differentiated against central differences (probe_harness.py).
"""

import math

import numpy as np
import scipy.linalg as sla
import scipy.stats as st
from probe_harness import probe_tests
from scipy.special import logsumexp
from scipy.stats import norm

LOG2PI = math.log(2 * math.pi)


# -- likelihoods ------------------------------------------------------------------------------

def frozen_loglik(theta, data):
    mu, log_sigma = theta
    dist = norm(mu, np.exp(log_sigma))
    return dist.logpdf(data).sum()


def frozen_keywords(theta, data):
    dist = st.norm(loc=theta[0], scale=np.exp(theta[1]))
    prior = st.norm(0.0, 10.0)
    return np.sum(dist.logpdf(data)) + prior.logpdf(theta[0]) + np.sum(dist.logcdf(data))


def unfrozen_mixed(theta, data):
    loc, s, df = theta[0], np.exp(theta[1]), 3.0
    ll = st.t.logpdf(data, df, loc, s).sum()
    ll += st.norm.logpdf(data, loc=loc, scale=s).sum()
    return ll + st.norm.logsf(data[0], loc, scale=s)


def gamma_regression(beta, X, y):
    mean = np.exp(X @ beta)
    shape = 2.0
    return -np.sum(st.gamma.logpdf(y, shape, scale=mean / shape))


def mixture_logsumexp(params, data, k=2):
    means = params[:k]
    log_sds = params[k:2 * k]
    logits = params[2 * k:]
    log_w = logits - logsumexp(logits)
    comp = (-0.5 * ((data[:, None] - means[None, :]) / np.exp(log_sds)) ** 2
            - log_sds - 0.5 * LOG2PI)
    return np.sum(logsumexp(comp + log_w, axis=1))


def mixture_weights_b(means, data, weights):
    comp = norm.logpdf(data[:, None], loc=means, scale=1.0)
    return logsumexp(comp, b=weights, axis=1).sum()


def mixture_loop_components(params, data):
    total = np.zeros_like(data)
    for m, s, w in zip(params[0::3], params[1::3], params[2::3], strict=True):
        total = total + w ** 2 * norm.pdf(data, m, abs(s))
    return np.sum(np.log(total))


def em_step_objective(means, data):
    """One E-step written out: responsibilities (held fixed by stop-free code) times the
    complete-data log-likelihood; the whole expression is differentiated."""
    lp = -0.5 * (data[:, None] - means[None, :]) ** 2
    resp = np.exp(lp - logsumexp(lp, axis=1, keepdims=True))
    return np.sum(resp * lp)


def kalman_loglik(q, ys, r=0.5):
    """Scalar-state local-level model written with 1x1 matrices and np.linalg.solve."""
    F = np.array([[1.0]])
    H = np.array([[1.0]])
    Q = np.array([[q]])
    R = np.array([[r]])
    x = np.zeros((1, 1))
    P = np.eye(1)
    ll = 0.0
    for y in ys:
        x = F @ x
        P = F @ P @ F.T + Q
        S = H @ P @ H.T + R
        v = y - (H @ x)[0, 0]
        K = np.linalg.solve(S.T, (P @ H.T).T).T
        x = x + K * v
        P = (np.eye(1) - K @ H) @ P
        ll += -0.5 * (LOG2PI + np.log(S[0, 0]) + v * v / S[0, 0])
    return ll


def kalman_2d(qs, ys):
    """Constant-velocity model, 2-D state, innovation covariance by cho_factor/cho_solve."""
    dt = 1.0
    F = np.array([[1.0, dt], [0.0, 1.0]])
    H = np.array([[1.0, 0.0]])
    Q = np.diag(np.exp(qs))
    R = np.array([[0.3]])
    x = np.zeros(2)
    P = np.eye(2)
    ll = 0.0
    for y in ys:
        x = F @ x
        P = F @ P @ F.T + Q
        S = H @ P @ H.T + R
        c = sla.cho_factor(S)
        v = np.atleast_1d(y) - H @ x
        sol = sla.cho_solve(c, v)
        K = sla.cho_solve(c, H @ P).T
        x = x + K @ v
        P = P - K @ S @ K.T
        sign, logdet = np.linalg.slogdet(S)
        ll -= 0.5 * (logdet + v @ sol)
    return ll


def mvn_by_hand(mu, X, cov):
    L = np.linalg.cholesky(cov)
    diff = X - mu
    z = sla.solve_triangular(L, diff.T, lower=True)
    return -0.5 * np.sum(z ** 2) - X.shape[0] * np.sum(np.log(np.diag(L)))


def mvn_scipy(mu, X, cov):
    return st.multivariate_normal(mean=mu, cov=cov).logpdf(X).sum()


def ar2_loglik(phi, y):
    resid = y[2:] - phi[0] * y[1:-1] - phi[1] * y[:-2]
    sigma2 = np.mean(resid ** 2)
    n = len(resid)
    return -0.5 * n * (np.log(2 * np.pi * sigma2) + 1)


# -- finance ----------------------------------------------------------------------------------

def bs_price(S, K, T, r, sigma, kind="call"):
    d1 = (np.log(S / K) + (r + sigma ** 2 / 2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    if kind == "call":
        return S * norm.cdf(d1) - K * np.exp(-r * T) * norm.cdf(d2)
    return K * np.exp(-r * T) * norm.cdf(-d2) - S * norm.cdf(-d1)


def bs_portfolio(sigmas, strikes):
    total = 0.0
    for i, (sig, k) in enumerate(zip(sigmas, strikes, strict=True)):
        total += bs_price(100.0, k, 0.5 + 0.25 * i, 0.01, sig, "put" if i % 2 else "call")
    return total


STRIKES = np.array([90.0, 100.0, 110.0])


def bs_vectorized(S, K=STRIKES):
    return np.sum(bs_price(S, K, 1.0, 0.02, 0.2))


def mc_seeded_legacy(sigma, S0=100.0, K=100.0, n=2000):
    np.random.seed(0)
    z = np.random.randn(n)
    ST = S0 * np.exp(-0.5 * sigma ** 2 + sigma * z)
    return np.mean(np.log1p(np.exp(ST - K)))


def mc_generator(params, n=1000):
    rng = np.random.default_rng(42)
    mu, sigma = params
    z = rng.standard_normal((n, 4))
    paths = np.cumsum((mu - 0.5 * sigma ** 2) * 0.25 + sigma * 0.5 * z, axis=1)
    avg = np.mean(np.exp(paths), axis=1)
    return np.mean(np.sqrt((avg - 1.0) ** 2 + 0.01))


def binomial_in_place(sigma, S0=100.0, K=100.0, r=0.03, T=1.0, n=20):
    dt = T / n
    u = np.exp(sigma * np.sqrt(dt))
    d = 1 / u
    p = (np.exp(r * dt) - d) / (u - d)
    values = np.zeros((n + 1, n + 1))
    for j in range(n + 1):
        values[n, j] = max(S0 * u ** j * d ** (n - j) - K, 0.0)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1):
            values[i, j] = np.exp(-r * dt) * (p * values[i + 1, j + 1] + (1 - p) * values[i + 1, j])
    return values[0, 0]


def bond_price(y, cashflows, times):
    return sum(cf * math.exp(-y * t) for cf, t in zip(cashflows, times, strict=True))


def duration_convexity(y):
    cfs = [5.0, 5.0, 5.0, 105.0]
    ts = [1.0, 2.0, 3.0, 4.0]
    p = bond_price(y, cfs, ts)
    return math.log(p)


def implied_vol_newton(price, S=100.0, K=100.0, T=1.0, r=0.01, iters=20):
    sigma = 0.3
    for _ in range(iters):
        d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T))
        vega = S * norm.pdf(d1) * np.sqrt(T)
        sigma = sigma - (bs_price(S, K, T, r, sigma) - price) / vega
    return sigma


def portfolio_variance(w, cov):
    w = w / w.sum()
    return w @ cov @ w - 0.5 * w @ np.diag(cov)


# -- optimization -----------------------------------------------------------------------------

def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def rosen_grad(x):
    g = np.zeros_like(x)
    g[:-1] = -400 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2 * (1 - x[:-1])
    g[1:] += 200 * (x[1:] - x[:-1] ** 2)
    return g


def armijo_descent(x0, steps=5):
    x = x0
    for _ in range(steps):
        g = rosen_grad(x)
        t = 1.0
        while rosen(x - t * g) > rosen(x) - 1e-4 * t * np.dot(g, g):
            t *= 0.5
        x = x - t * g
    return rosen(x)


def projected_gradient(c, lo=-0.5, hi=0.8, lr=0.1, iters=15):
    x = np.zeros_like(c)
    for _ in range(iters):
        x = np.clip(x - lr * 2 * (x - c), lo, hi)
    return np.sum(x * c)


def penalty_method(a, mu=10.0, iters=30):
    """min (x-a0)^2 + (y-a1)^2 s.t. x + y = 1 by a quadratic penalty, solved by gradient
    steps on the penalised objective."""
    x, y = 0.0, 0.0
    for _ in range(iters):
        viol = x + y - 1.0
        gx = 2 * (x - a[0]) + 2 * mu * viol
        gy = 2 * (y - a[1]) + 2 * mu * viol
        x, y = x - 0.02 * gx, y - 0.02 * gy
    return x * y + x ** 2


def adam_unrolled(w0, X, y, lr=0.05, steps=10, b1=0.9, b2=0.999, eps=1e-8):
    w = w0.copy()
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for t in range(1, steps + 1):
        g = 2 * X.T @ (X @ w - y) / len(y)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        mhat = m / (1 - b1 ** t)
        vhat = v / (1 - b2 ** t)
        w = w - lr * mhat / (np.sqrt(vhat) + eps)
    return np.mean((X @ w - y) ** 2)


def golden_section(a, lo=0.0, hi=3.0, iters=40):
    """Minimiser of (x - a)^2 + 0.1 x^4 by golden section: the interval ends depend on a
    only through comparisons, so the returned point carries no derivative; the value does."""
    invphi = (math.sqrt(5) - 1) / 2
    for _ in range(iters):
        c = hi - invphi * (hi - lo)
        d = lo + invphi * (hi - lo)
        if (c - a) ** 2 + 0.1 * c ** 4 < (d - a) ** 2 + 0.1 * d ** 4:
            hi = d
        else:
            lo = c
    x = 0.5 * (lo + hi)
    return (x - a) ** 2 + 0.1 * x ** 4


_r = np.random.default_rng(31)
DATA = _r.normal(0.5, 1.3, 25)
XR = _r.standard_normal((20, 3))
YR = np.exp(XR @ np.array([0.2, -0.1, 0.3])) * _r.gamma(2.0, 0.5, 20)
YS = np.cumsum(_r.standard_normal(12) * 0.5)
COV = np.array([[1.0, 0.3, 0.1], [0.3, 2.0, -0.2], [0.1, -0.2, 1.5]])
XMV = _r.standard_normal((8, 3))
YL = XR @ np.array([1.0, -2.0, 0.5]) + 0.1 * _r.standard_normal(20)

PROBES = {
    "frozen_loglik": (frozen_loglik, (np.array([0.3, 0.2]), DATA), True),
    "frozen_keywords": (frozen_keywords, (np.array([0.3, 0.2]), DATA), True),
    "unfrozen_mixed": (unfrozen_mixed, (np.array([0.3, 0.2]), DATA), True),
    "gamma_regression": (gamma_regression, (np.array([0.1, 0.2, -0.1]), XR, YR), True),
    "mixture_logsumexp": (mixture_logsumexp,
                          (np.array([-0.5, 1.0, 0.1, -0.2, 0.3, -0.1]), DATA), True),
    "mixture_weights_b": (mixture_weights_b, (np.array([-0.5, 1.0]), DATA,
                                              np.array([0.3, 0.7])), True),
    "mixture_loop_components": (mixture_loop_components,
                                (np.array([0.0, 1.0, 0.5, 1.0, 0.7, 0.8]), DATA), True),
    "em_step_objective": (em_step_objective, (np.array([-0.5, 1.2]), DATA), True),
    "kalman_loglik": (kalman_loglik, (0.4, YS), True),
    "kalman_2d": (kalman_2d, (np.array([-1.0, -2.0]), YS), True),
    "mvn_by_hand": (mvn_by_hand, (np.array([0.1, -0.2, 0.3]), XMV, COV), True),
    "mvn_scipy": (mvn_scipy, (np.array([0.1, -0.2, 0.3]), XMV, COV), True),
    "ar2_loglik": (ar2_loglik, (np.array([0.5, -0.2]), YS), True),
    "bs_price_spot": (bs_price, (105.0, 100.0, 1.0, 0.02, 0.25), True),
    "bs_price_put": (bs_price, (95.0, 100.0, 1.0, 0.02, 0.25, "put"), True),
    "bs_portfolio": (bs_portfolio, (np.array([0.2, 0.3, 0.25]), [95.0, 100.0, 110.0]), True),
    "bs_vectorized": (bs_vectorized, (102.0,), True),
    "mc_seeded_legacy": (mc_seeded_legacy, (0.25,), True),
    "mc_generator": (mc_generator, (np.array([0.05, 0.3]),), True),
    "binomial_in_place": (binomial_in_place, (0.27,), False),
    "duration_convexity": (duration_convexity, (0.04,), True),
    "implied_vol_newton": (implied_vol_newton, (10.0,), True),
    "portfolio_variance": (portfolio_variance, (np.array([0.3, 0.5, 0.2]), COV), True),
    "armijo_descent": (armijo_descent, (np.array([-0.5, 0.8, 0.3]),), False),
    "projected_gradient": (projected_gradient, (np.array([0.3, 1.4, -0.9, 0.2]),), True),
    "penalty_method": (penalty_method, (np.array([0.3, 0.9]),), True),
    "adam_unrolled": (adam_unrolled, (np.array([0.1, 0.2, 0.3]), XR, YL), False),
    # first order only: the bracket moves with a in steps, so differences of the gradient
    # see the staircase's slope, not the derivative of the function computed at a
    "golden_section": (golden_section, (1.1,), False),
}

test_probe, test_float32 = probe_tests(PROBES)
