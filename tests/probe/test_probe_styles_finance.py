"""Probe: bond and option pricing in the styles of finance course work.

Bond prices by a list comprehension of discount factors, by loops over a yield curve and
over coupon dates; Black-Scholes through ``scipy.stats.norm`` with a call/put switch, with a
helper for the normal cdf, and inside a try/except; a Heston price by a complex midpoint
sum of the characteristic function; and a Heston price that hands a lambda over the
volatility to ``scipy.integrate.quad_vec``, refused with its reason. Checked against central
differences (probe_harness.py).
"""

import numpy as np
import scipy.integrate
import scipy.stats
from probe_harness import probe_tests, refusal_test
from scipy.stats import norm


def std_cdf(z):
    return scipy.stats.norm.cdf(z, 0.0, 1.0)


def call_value(spot, strike, expiry, rate, vol):
    root_t = expiry ** 0.5
    upper = (np.log(spot / strike) + (rate + 0.5 * vol ** 2) * expiry) / (vol * root_t)
    lower = (np.log(spot / strike) + (rate - 0.5 * vol ** 2) * expiry) / (vol * root_t)
    return spot * std_cdf(upper) - strike * np.exp(-rate * expiry) * std_cdf(lower)


def call_value_by_vol(vol, spot, strike, expiry, rate):
    return call_value(spot, strike, expiry, rate, vol)


def option_by_kind(spot, strike, expiry, rate, vol, kind):
    # the precedence slip of the tutorials is kept on purpose: the quotient is
    # multiplied by sqrt(T) instead of divided by it; the gradient is of what runs
    z1 = (np.log(spot / strike) + (rate + vol ** 2 / 2) * expiry) / vol * np.sqrt(expiry)
    z2 = z1 - vol * np.sqrt(expiry)
    if kind == "call":
        return spot * norm.cdf(z1) - strike * np.exp(-rate * expiry) * norm.cdf(z2)
    if kind == "put":
        return strike * np.exp(-rate * expiry) * norm.cdf(-z2) - spot * norm.cdf(-z1)


def guarded_price(rate, spot, strike, expiry, vol, flavour="C"):
    z1 = (np.log(spot / strike) + (rate + vol ** 2) / 2 * expiry) / (vol * np.sqrt(expiry))
    z2 = vol * np.sqrt(expiry)
    paid = strike * np.exp(-rate * expiry)
    try:
        if flavour == "C":
            value = spot * norm.cdf(z1, 0, 1) - paid * norm.cdf(z2, 0, 1)
        elif flavour == "P":
            value = paid * norm.cdf(-z2, 0, 1) - spot * norm.cdf(-z1, 0, 1)
        return value
    except ValueError:
        print("check the option inputs")


def guarded_put_by_vol(vol, rate, spot, strike, expiry):
    return guarded_price(rate, spot, strike, expiry, vol, flavour="P")


def heston_cf(u, spot, var0, speed, level, volvol, corr, premium, horizon, rate):
    # characteristic function of the log price under Heston, the "little trap" form
    a = speed * level
    b = speed + premium
    mix = corr * volvol * u * 1j
    d = np.sqrt((mix - b) ** 2 + (u * 1j + u ** 2) * volvol ** 2)
    g = (b - mix + d) / (b - mix - d)
    grow = np.exp(d * horizon)
    drift = np.exp(rate * u * 1j * horizon)
    power = spot ** (u * 1j) * ((1 - g * grow) / (1 - g)) ** (-2 * a / volvol ** 2)
    tail = np.exp(a * horizon * (b - mix + d) / volvol ** 2
                  + var0 * (b - mix + d) * ((1 - grow) / (1 - g * grow)) / volvol ** 2)
    return drift * power * tail


def heston_midpoint(spot, strike, var0, speed, level, volvol, corr, premium, horizon, rate):
    params = (spot, var0, speed, level, volvol, corr, premium, horizon, rate)
    total, top, count = 0, 100, 4000
    step = top / count
    for n in range(1, count):
        u = step * (n + 0.5)
        num = (np.exp(rate * horizon) * heston_cf(u - 1j, *params)
               - strike * heston_cf(u, *params))
        total += step * num / (1j * u * strike ** (1j * u))
    return np.real((spot - strike * np.exp(-rate * horizon)) / 2 + total / np.pi)


def heston_by_var0(var0):
    return heston_midpoint(100.0, 100.0, var0, 1.6, 0.04, 0.3, -0.6, 0.5, 1.0, 0.03)


SPEED, LEVEL, VOLVOL, CORR, RATE, SPOT = 2.5, 0.1, 0.05, 0.5, 0.03, 150.0


def lewis_cf(u, horizon, var):
    alpha = -0.5 * u * (u + 1j)
    beta = SPEED - 1j * u * VOLVOL * CORR
    gamma = 0.5 * VOLVOL ** 2
    d = np.sqrt(beta ** 2 - 4 * alpha * gamma)
    g = (beta - d) / (beta + d)
    decay = np.exp(-d * horizon)
    a_part = SPEED * LEVEL / VOLVOL ** 2 * ((beta - d) * horizon
                                           - 2 * np.log((g * decay - 1) / (g - 1)))
    b_part = (beta - d) / VOLVOL ** 2 * (1 - decay) / (1 - g * decay)
    return np.exp(a_part + b_part * var)


def lewis_call(var, strike=150.0, horizon=0.25):
    moneyness = np.log(SPOT / strike) + RATE * horizon
    integrand = lambda u: np.real(np.exp((1j * u + 0.5) * moneyness)  # noqa: E731
                                  * lewis_cf(u - 0.5j, horizon, var)) / (u ** 2 + 0.25)
    area, _ = scipy.integrate.quad_vec(integrand, 0, np.inf)
    return SPOT - strike * np.exp(-RATE * horizon) / np.pi * area


def bond_by_comprehension(ytm, par, coupon, years, freq=1):
    dates = np.arange(1, freq * years + 1)
    factor = 1 / (1 + ytm / freq)
    discounts = [factor ** n for n in dates]
    return coupon * par / freq * sum(discounts) + discounts[-1] * par


def bond_on_curve(curve, par, coupon):
    acc = 0
    pay = coupon * par
    for n, rate in enumerate(curve):
        disc = (1 + rate) ** (-(n + 1))
        acc += disc * pay
    return acc + disc * par


def bond_by_loop(ytm, par, coupon, years, freq=1):
    acc = 0
    pay = coupon * par
    for n in range(1, freq * years + 1):
        disc = (1 + ytm / freq) ** -n
        acc += disc * pay / freq
    return acc + disc * par


PROBES = {
    "call_value": (call_value, (100.0, 95.0, 0.5, 0.02, 0.25), True),
    "call_value_by_vol": (call_value_by_vol, (0.25, 100.0, 95.0, 0.5, 0.02), False),
    "option_by_kind": (option_by_kind, (100.0, 95.0, 0.5, 0.02, 0.25, "put"), True),
    "guarded_put_by_vol": (guarded_put_by_vol, (0.3, 0.01, 30.0, 40.0, 240 / 365), False),
    "heston_by_var0": (heston_by_var0, (0.04,), False),
    "bond_by_comprehension": (bond_by_comprehension, (0.03, 100.0, 0.04, 10), True),
    "bond_on_curve": (bond_on_curve, (np.array([0.010, 0.014, 0.021, 0.024, 0.031]), 100.0,
                                      0.04), True),
    "bond_by_loop": (bond_by_loop, (0.03, 100.0, 0.04, 10, 2), True),
}


test_probe, test_float32 = probe_tests(PROBES)


# Refused: quad_vec has no rule, and the integrand lambda that reads `var` is handed to it
# (SciPy's args= is the fix the message names).
REFUSED = {
    "lewis_call": (lewis_call, (0.5,), ("PB301", "quad_vec", "PB404")),
}


test_refused = refusal_test(REFUSED)
