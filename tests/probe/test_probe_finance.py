# ruff: noqa: B006, B007, B008, B905 - written the way public code is written
"""Probe: finance code written the way public repositories write it.

Black-Scholes prices and greeks, Monte Carlo with a fixed seed, binomial trees filled in
loops, portfolio statistics, a GARCH(1,1) likelihood, yield-curve bootstrapping. Each
function's gradient (and for some jvp, hvp and the Hessian) is checked against central
finite differences of the function itself.
"""

import math
from functools import partial

import numpy as np
import pytest
from probe_harness import check_probe
from scipy.stats import norm

TRADING_DAYS = 252
RISK_FREE = 0.02


def _d1_d2(S, K, T, r, sigma):
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    return d1, d2


def bs_call(S, K, T, r, sigma):
    d1, d2 = _d1_d2(S, K, T, r, sigma)
    return S * norm.cdf(d1) - K * np.exp(-r * T) * norm.cdf(d2)


def bs_put_math(sigma, S, K, T, r):
    # the math-module style with an erf-based normal cdf
    def ncdf(x):
        return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))

    d1 = (math.log(S / K) + (r + sigma * sigma / 2.0) * T) / (sigma * math.sqrt(T))
    d2 = d1 - sigma * math.sqrt(T)
    return K * math.exp(-r * T) * ncdf(-d2) - S * ncdf(-d1)


def bs_price_book(spots, strikes, T, r, sigma):
    # vectorized over a book of options, summed
    d1 = (np.log(spots / strikes) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    calls = spots * norm.cdf(d1) - strikes * np.exp(-r * T) * norm.cdf(d2)
    return calls.sum()


def bs_delta_gamma(S, K, T, r, sigma):
    d1, _ = _d1_d2(S, K, T, r, sigma)
    delta = norm.cdf(d1)
    gamma = norm.pdf(d1) / (S * sigma * np.sqrt(T))
    return delta + 10.0 * gamma


def bs_vega_theta(sigma, S, K, T, r):
    d1, d2 = _d1_d2(S, K, T, r, sigma)
    vega = S * norm.pdf(d1) * np.sqrt(T)
    theta = -S * norm.pdf(d1) * sigma / (2 * np.sqrt(T)) - r * K * np.exp(-r * T) * norm.cdf(d2)
    return vega + theta


def bs_params_dict(params, S, K):
    r, sigma, T = params["r"], params["sigma"], params["T"]
    d1, d2 = _d1_d2(S, K, T, r, sigma)
    return S * norm.cdf(d1) - K * np.exp(-r * T) * norm.cdf(d2)


def bs_from_dict_vol(sigma, S, K, conf={"T": 1.0, "r": 0.03}):
    T = conf["T"]
    r = conf["r"]
    return bs_call(S, K, T, r, sigma)


def implied_vol_newton(price, S, K, T, r):
    # Newton iterations with a convergence test: the root depends on price
    sigma = 0.3
    for _ in range(50):
        d1, d2 = _d1_d2(S, K, T, r, sigma)
        diff = S * norm.cdf(d1) - K * np.exp(-r * T) * norm.cdf(d2) - price
        vega = S * norm.pdf(d1) * np.sqrt(T)
        sigma = sigma - diff / vega
        if abs(diff) < 1e-12:
            break
    return sigma


def mc_european_call(S0, K=100.0, T=1.0, r=0.05, sigma=0.2, n_paths=2000):
    rng = np.random.default_rng(0)
    z = rng.standard_normal(n_paths)
    ST = S0 * np.exp((r - 0.5 * sigma ** 2) * T + sigma * np.sqrt(T) * z)
    payoff = np.maximum(ST - K, 0.0)
    return np.exp(-r * T) * payoff.mean()


def mc_asian_paths(sigma, S0=100.0, K=100.0, r=0.03, T=1.0, n_steps=12, n_paths=500):
    rng = np.random.default_rng(0)
    dt = T / n_steps
    z = rng.standard_normal((n_paths, n_steps))
    increments = (r - 0.5 * sigma ** 2) * dt + sigma * np.sqrt(dt) * z
    paths = S0 * np.exp(np.cumsum(increments, axis=1))
    avg = paths.mean(axis=1)
    return np.exp(-r * T) * np.mean(np.maximum(avg - K, 0))


def mc_loop_paths(S0, sigma=0.25, r=0.01, T=1.0, steps=10):
    rng = np.random.default_rng(0)
    dt = T / steps
    S = np.full(200, S0)
    for t in range(steps):
        dW = rng.normal(0.0, np.sqrt(dt), size=S.shape)
        S = S * (1 + r * dt + sigma * dW)
    return np.mean(S ** 2)


def binomial_european(S0, K=97.0, T=1.0, r=0.05, sigma=0.2, N=20):
    dt = T / N
    u = np.exp(sigma * np.sqrt(dt))
    d = 1 / u
    q = (np.exp(r * dt) - d) / (u - d)
    disc = np.exp(-r * dt)
    S = np.zeros(N + 1)
    S[0] = S0 * d ** N
    for j in range(1, N + 1):
        S[j] = S[j - 1] * u / d
    C = np.zeros(N + 1)
    for j in range(0, N + 1):
        C[j] = max(0, S[j] - K)
    for i in np.arange(N, 0, -1):
        for j in range(0, i):
            C[j] = disc * (q * C[j + 1] + (1 - q) * C[j])
    return C[0]


def binomial_american_put(sigma, S0=100.0, K=105.0, T=1.0, r=0.03, N=25):
    dt = T / N
    u = np.exp(sigma * np.sqrt(dt))
    d = 1.0 / u
    p = (np.exp(r * dt) - d) / (u - d)
    disc = np.exp(-r * dt)
    ST = S0 * u ** np.arange(N, -1, -1) * d ** np.arange(0, N + 1)
    V = np.maximum(K - ST, 0.0)
    for i in range(N - 1, -1, -1):
        ST = S0 * u ** np.arange(i, -1, -1) * d ** np.arange(0, i + 1)
        V = disc * (p * V[:-1] + (1 - p) * V[1:])
        V = np.maximum(V, K - ST)
    return V[0]


def binomial_tree_matrix(S0, K=95.0, T=0.5, r=0.02, sigma=0.3, n=15):
    dt = T / n
    up = np.exp(sigma * np.sqrt(dt))
    prices = np.zeros((n + 1, n + 1))
    for i in range(n + 1):
        for j in range(i + 1):
            prices[i, j] = S0 * (up ** (i - j)) * ((1 / up) ** j)
    p = (np.exp(r * dt) - 1 / up) / (up - 1 / up)
    values = np.zeros((n + 1, n + 1))
    values[n, :] = np.maximum(prices[n, :] - K, 0)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1):
            values[i, j] = np.exp(-r * dt) * (p * values[i + 1, j] + (1 - p) * values[i + 1, j + 1])
    return values[0, 0]


def binomial_slices_inplace(S0, K=97.0, T=1.0, r=0.04, sigma=0.2, N=30):
    dt = T / N
    u = np.exp(sigma * np.sqrt(dt))
    d = 1.0 / u
    p = (np.exp(r * dt) - d) / (u - d)
    fs = np.zeros(N + 1)
    fs2 = np.asarray([S0 * u ** j * d ** (N - j) for j in range(N + 1)])
    fs[:] = np.maximum(fs2 - K, 0.0)
    for i in range(N - 1, -1, -1):
        fs[:-1] = np.exp(-r * dt) * (p * fs[1:] + (1 - p) * fs[:-1])
    return fs[0]


def portfolio_variance(w, cov):
    return w.T @ cov @ w


def portfolio_volatility_annual(w, returns):
    cov = np.cov(returns, rowvar=False)
    return np.sqrt(np.dot(w, np.dot(cov, w)) * TRADING_DAYS)


def sharpe_ratio(w, returns, rf=RISK_FREE):
    mu = returns.mean(axis=0) * TRADING_DAYS
    cov = np.cov(returns.T) * TRADING_DAYS
    port_ret = np.sum(mu * w)
    port_vol = np.sqrt(w @ cov @ w)
    return (port_ret - rf) / port_vol


def neg_sharpe_normalized(w, returns):
    w = w / np.sum(w)
    return -sharpe_ratio(w, returns)


def sortino_ratio(w, returns, target=0.0):
    port = returns @ w
    downside = np.where(port < target, port - target, 0.0)
    dd = np.sqrt(np.mean(downside ** 2))
    return np.mean(port) / dd


def risk_parity_objective(w, cov):
    port_var = w @ cov @ w
    marginal = cov @ w
    contrib = w * marginal / port_var
    target = np.ones(len(w)) / len(w)
    return np.sum((contrib - target) ** 2)


def garch_loglik(params, data):
    mu, omega, alpha, beta = params
    sig2 = np.zeros(len(data))
    epsilon = data - mu
    sig2[0] = np.var(data)
    for i in range(1, len(data)):
        sig2[i] = omega + alpha * epsilon[i - 1] ** 2 + beta * sig2[i - 1]
    lik = -0.5 * (np.log(2 * np.pi) + np.log(sig2) + epsilon ** 2 / sig2)
    return -np.sum(lik)


def garch_nlogl_reparam(param, u):
    omega, alpha, beta = param ** 2
    n = len(u)
    v = np.ones(n)
    for i in range(1, n):
        v[i] = omega + alpha * u[i - 1] ** 2 + beta * v[i - 1]
    return 0.5 * ((np.log(v) + u ** 2 / v).sum() + n * np.log(2 * np.pi))


def garch_scalar_loop(w_a_b, x, var_0=1.0):
    w, a, b = w_a_b
    var_t = var_0
    pi2 = 2 * np.pi
    sum_log_p = 0
    for x_t in x:
        var_t = w + a * x_t ** 2 + b * var_t
        sum_log_p += -0.5 * (math.log(pi2 * var_t) + x_t ** 2 / var_t)
    return -sum_log_p


def garch_list_append(params, res):
    omega = params[0]
    alpha = params[1]
    beta = params[2]
    sigma2 = [omega / (1 - alpha - beta)]
    for t in range(1, len(res)):
        sigma2.append(omega + alpha * res[t - 1] ** 2 + beta * sigma2[t - 1])
    s = np.array(sigma2)
    return np.sum(np.log(s) + res ** 2 / s)


def bootstrap_zero_rates(coupons, maturities=(1, 2, 3, 4), face=100.0):
    # par bonds priced at face; solve discount factors one maturity at a time
    dfs = []
    for i, (c, m) in enumerate(zip(coupons, maturities)):
        annuity = sum(dfs)
        df = (face - c * face * annuity) / (face + c * face)
        dfs.append(df)
    dfs = np.array(dfs)
    zeros = -np.log(dfs) / np.array(maturities)
    return np.sum(zeros ** 2)


def bootstrap_while(rates, tenor=0.5):
    discount = np.ones(len(rates))
    i = 0
    acc = 0.0
    while i < len(rates):
        discount[i] = (1 - rates[i] * tenor * acc) / (1 + rates[i] * tenor)
        acc += discount[i]
        i += 1
    return discount @ np.arange(1, len(rates) + 1)


def nelson_siegel_fit_error(beta, taus, yields, lam=1.5):
    b0, b1, b2 = beta
    x = taus / lam
    f1 = (1 - np.exp(-x)) / x
    f2 = f1 - np.exp(-x)
    model = b0 + b1 * f1 + b2 * f2
    return np.mean((model - yields) ** 2)


def bond_price_ytm(y, cashflows, times):
    return sum(cf / (1 + y) ** t for cf, t in zip(cashflows, times))


def macaulay_duration(y, cashflows, times):
    pv = np.array([cf * math.exp(-y * t) for cf, t in zip(cashflows, times)])
    return np.sum(pv * np.asarray(times)) / np.sum(pv)


def max_drawdown_soft(w, prices, temp=50.0):
    port = prices @ w
    running_max = np.maximum.accumulate(port)
    dd = (running_max - port) / running_max
    return np.log(np.sum(np.exp(temp * dd))) / temp


def ewma_volatility(lam, returns):
    var = returns[0] ** 2
    for r in returns[1:]:
        var = lam * var + (1 - lam) * r ** 2
    return np.sqrt(var)


def cvar_smooth(w, scenarios, alpha=0.95, beta=30.0):
    losses = -scenarios @ w
    var = np.quantile(losses, alpha)
    excess = np.logaddexp(0.0, beta * (losses - var)) / beta
    return var + excess.mean() / (1 - alpha)


_rng = np.random.default_rng(42)
RETURNS = 0.001 + 0.01 * _rng.standard_normal((60, 4))
COV = np.cov(RETURNS, rowvar=False) * 1e4
W4 = np.array([0.3, 0.2, 0.4, 0.1])
SERIES = 0.5 * _rng.standard_normal(40)
PRICES = np.cumprod(1 + 0.01 * _rng.standard_normal((30, 3)), axis=0)
SCEN = 0.02 * _rng.standard_normal((100, 3))

PROBES = {
    "bs_call": (bs_call, (100.0, 95.0, 0.75, 0.03, 0.25), True),
    "bs_put_math": (bs_put_math, (0.3, 100.0, 110.0, 0.5, 0.02), True),
    "bs_price_book": (bs_price_book, (np.array([90.0, 100.0, 110.0]),
                                      np.array([100.0, 100.0, 100.0]), 1.0, 0.01, 0.2), True),
    "bs_delta_gamma": (bs_delta_gamma, (100.0, 100.0, 1.0, 0.05, 0.2), False),
    "bs_vega_theta": (bs_vega_theta, (0.2, 100.0, 100.0, 1.0, 0.05), False),
    "bs_params_dict": (bs_params_dict, ({"r": 0.03, "sigma": 0.2, "T": 1.0}, 100.0, 90.0), False),
    "bs_from_dict_vol": (bs_from_dict_vol, (0.2, 100.0, 90.0), False),
    "implied_vol_newton": (implied_vol_newton, (10.0, 100.0, 100.0, 1.0, 0.01), False),
    "mc_european_call": (mc_european_call, (100.0,), True),
    "mc_asian_paths": (mc_asian_paths, (0.2,), False),
    "mc_loop_paths": (mc_loop_paths, (100.0,), False),
    "binomial_european": (binomial_european, (100.0,), False),
    "binomial_american_put": (binomial_american_put, (0.25,), False),
    "binomial_tree_matrix": (binomial_tree_matrix, (100.0,), False),
    "binomial_slices_inplace": (binomial_slices_inplace, (100.0,), False),
    "portfolio_variance": (portfolio_variance, (W4, COV), True),
    "portfolio_volatility_annual": (portfolio_volatility_annual, (W4, RETURNS), True),
    "sharpe_ratio": (sharpe_ratio, (W4, RETURNS), True),
    "neg_sharpe_normalized": (neg_sharpe_normalized, (W4, RETURNS), False),
    "sortino_ratio": (sortino_ratio, (W4, RETURNS), False),
    "risk_parity_objective": (risk_parity_objective, (W4, COV), True),
    "garch_loglik": (garch_loglik, (np.array([0.01, 0.05, 0.1, 0.8]), SERIES), True),
    "garch_nlogl_reparam": (garch_nlogl_reparam, (np.array([0.3, 0.3, 0.9]), SERIES), False),
    "garch_scalar_loop": (garch_scalar_loop, (np.array([0.05, 0.1, 0.85]), SERIES), True),
    "garch_list_append": (garch_list_append, (np.array([0.05, 0.1, 0.8]), SERIES), False),
    "bootstrap_zero_rates": (bootstrap_zero_rates, (np.array([0.02, 0.025, 0.03, 0.032]),), True),
    "bootstrap_while": (bootstrap_while, (np.array([0.02, 0.025, 0.03, 0.035]),), False),
    "nelson_siegel_fit_error": (nelson_siegel_fit_error, (
        np.array([0.04, -0.02, 0.01]), np.array([0.5, 1, 2, 5, 10.0]),
        np.array([0.02, 0.022, 0.025, 0.03, 0.033])), True),
    "bond_price_ytm": (bond_price_ytm, (0.04, [5.0, 5.0, 105.0], [1, 2, 3]), True),
    "macaulay_duration": (macaulay_duration, (0.04, [5.0, 5.0, 105.0], [1.0, 2.0, 3.0]), False),
    "ewma_volatility": (ewma_volatility, (0.94, SERIES), True),
    "cvar_smooth": (cvar_smooth, (np.array([0.5, 0.3, 0.2]), SCEN), False),
    "partial_bs": (partial(bs_vega_theta, S=100.0, K=95.0, T=0.5, r=0.01), (0.3,), False),
    # np.maximum.accumulate (the numpy_accumulate family)
    "max_drawdown_soft": (max_drawdown_soft, (np.array([0.5, 0.3, 0.2]), PRICES), True),
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_probe(name):
    f, args, second = PROBES[name]
    check_probe(f, *args, second=second)
