# ruff: noqa: B006, B007, B008, B905, E731 - written the way public code is written
"""Probe: idioms of public numerical code across the domains, second round.

Seeded draws inside the function, interpolation and discounting, polynomial fits, in-place
writes on local arrays (fill_diagonal, masks, np.add.at, views), multivariate normal
likelihoods, closures, reduce/map/sorted with keys, walrus, piecewise/select, parameter
dicts. Each gradient (and where it has one, the second derivative) is checked against
central differences; refusals are asserted with their reason and fix, and the fixes the
messages give are probes too.
"""

import functools
import math

import numpy as np
import pytest
from probe_harness import check_probe, check_refusal
from scipy import optimize
from scipy.stats import multivariate_normal, norm


def legacy_seed(mu):
    np.random.seed(0)
    z = np.random.randn(100)
    return np.mean((mu + z) ** 2)


def interp_curve(yields, t=np.array([0.3, 1.7, 4.2]), knots=np.array([0.5, 1.0, 2.0, 5.0])):
    r = np.interp(t, knots, yields)
    return np.sum(np.exp(-r * t))


def cumprod_discount(rates, dt=0.5):
    df = np.cumprod(1.0 / (1.0 + rates * dt))
    return np.sum(df)


def trapz_integral(y, x=np.linspace(0, 1, 6)):
    return np.trapezoid(y ** 2, x)


def polyval_fit(c, x=np.linspace(-1, 1, 7)):
    return np.sum((np.polyval(c, x) - np.cos(x)) ** 2)


def fill_diag_local(x):
    K = np.outer(x, x)
    np.fill_diagonal(K, 1.0)
    return np.sum(K ** 2)


def mask_plus_equals(x):
    y = x.copy()
    y[y > 0] += 1.0
    y[y < 0] *= 2.0
    return np.sum(y ** 3)


def add_at(x, idx=np.array([0, 1, 1, 2])):
    out = np.zeros(3)
    np.add.at(out, idx, x)
    return np.sum(out ** 2)


def reversed_cumsum(x):
    return np.sum(x[::-1].cumsum()[::-1] ** 2)


def mvn_logpdf(mu, X, S=np.array([[1.0, 0.3], [0.3, 2.0]])):
    return -np.sum(multivariate_normal.logpdf(X, mean=mu, cov=S))


def chol_mvn(L_flat, X):
    L = np.array([[np.exp(L_flat[0]), 0.0], [L_flat[1], np.exp(L_flat[2])]])
    S = L @ L.T
    sign, logdet = np.linalg.slogdet(S)
    Sinv = np.linalg.inv(S)
    return 0.5 * len(X) * logdet + 0.5 * np.einsum("ni,ij,nj->", X, Sinv, X)


def item_tolist(x):
    s = np.sum(x ** 2)
    vals = (x * 2).tolist()
    return s.item() + sum(vals)


def searchsorted_lookup(y, t=1.3, knots=np.array([0.5, 1.0, 2.0, 5.0])):
    i = np.searchsorted(knots, t) - 1
    w = (t - knots[i]) / (knots[i + 1] - knots[i])
    return (1 - w) * y[i] + w * y[i + 1]


def einsum_ellipsis(x, A=np.arange(12.0).reshape(2, 2, 3)):
    return np.sum(np.einsum("...ij,j->...i", A, x) ** 2)


def dict_update_inside(p, x):
    params = dict(p)
    params["scale"] = params["scale"] * 2
    params.update(shift=params["shift"] + 1.0)
    return np.sum((params["scale"] * x + params["shift"]) ** 2)


def matmul_assign(x, A=np.array([[0.9, 0.1], [0.2, 0.8]])):
    v = np.array([x[0], x[1]])
    for _ in range(3):
        v = A @ v
    M = np.eye(2)
    M @= A
    return np.sum(v * x) + np.sum(M @ x)


def max_axis(X):
    return np.sum(np.max(X, axis=0)) + np.sum(X.min(axis=1))


def var_std_methods(x):
    return x.var(ddof=1) + x.std() + x.clip(min=0).sum() + x.mean(0)


def diff_prepend(x):
    d = np.diff(x, prepend=0.0)
    return np.sum(d ** 2)


def norm_ord(x):
    return np.linalg.norm(x, ord=1) + np.linalg.norm(x, np.inf) + np.linalg.norm(x)


def vectorize_scalar(x):
    f = np.vectorize(lambda v: v ** 3 if v > 0 else -v)
    return np.sum(f(x))


def reparam_normal(theta):
    mu, log_sigma = theta
    rng = np.random.default_rng(0)
    x = rng.normal(mu, np.exp(log_sigma), size=200)
    return np.mean(x ** 2)


def reparam_normal_kw(theta):
    rng = np.random.default_rng(1)
    x = rng.normal(loc=theta[0], scale=theta[1], size=50)
    return np.mean(np.sin(x))


def lognormal_sample(sigma):
    rng = np.random.default_rng(2)
    return np.mean(rng.lognormal(0.0, sigma, 100))


def view_row_inplace(x):
    M = np.zeros((3, 3))
    for i in range(3):
        row = M[i]
        row += x * (i + 1)
    return np.sum(M ** 2)


def brentq_implied(price, S=100.0, K=100.0, T=1.0, r=0.01):
    def f(sig):
        d1 = (math.log(S / K) + (r + 0.5 * sig ** 2) * T) / (sig * math.sqrt(T))
        d2 = d1 - sig * math.sqrt(T)
        return S * norm.cdf(d1) - K * math.exp(-r * T) * norm.cdf(d2) - price
    return optimize.brentq(f, 1e-4, 5.0)


def counter_in_closure(x):
    calls = [0]
    def f(v):
        calls[0] += 1
        return v * calls[0]
    return f(x[0]) + f(x[1])


def reduce_style(x):
    return functools.reduce(lambda a, b: a * b + 1.0, x, 1.0)


def map_style(x):
    return sum(map(lambda v: v ** 2, x)) + sum(list(map(math.sin, x)))


def sorted_key(x):
    pairs = sorted(zip(x, [3, 1, 2]), key=lambda p: p[1])
    return pairs[0][0] * 2 + pairs[2][0]


def max_with_key(x):
    best = max(range(len(x)), key=lambda i: x[i])
    return x[best] ** 2


def walrus_loop(x):
    total = 0.0
    for v in x:
        if (s := v * v) > 0.1:
            total += s
    return total


def nested_list_matrix(x):
    M = [[x[0], x[1]], [x[1] * 2, x[0] ** 2]]
    return np.linalg.det(np.array(M))


def fstring_unused(x):
    label = f"loss={x[0]:.3f}"
    return np.sum(x ** 2) + len(label) * 0.0


def np_piecewise(x):
    return np.sum(np.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2]))


def np_select(x):
    return np.sum(np.select([x < 0, x < 1], [x ** 2, 2 * x], default=np.sqrt(np.abs(x)) + 1))


def cumsum_inplace_view(x):
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, len(x)):
        out[i] = out[i - 1] + x[i]
    return np.dot(out, out)


def kron_outer(x):
    return np.sum(np.kron(x, x[::-1]) * np.arange(9.0))


def einsum_trace(x):
    M = np.outer(x, x) + np.eye(3)
    return np.einsum("ii", M @ M)


def string_dict_loop(p):
    total = 0.0
    for key in ("a", "b"):
        total += p[key] ** 2
    for key, val in p.items():
        total += val
    return total


def make_loss(w):
    def loss(x):
        return np.sum(w * x ** 2)
    return loss


def reparam_normal_fixed(theta):
    # reparam_normal as PB506 says: the same numbers, standard variates transformed
    mu, log_sigma = theta
    rng = np.random.default_rng(0)
    x = mu + np.exp(log_sigma) * rng.standard_normal(200)
    return np.mean(x ** 2)


def view_row_fixed(x):
    # view_row_inplace as the message says when the change should reach the array
    M = np.zeros((3, 3))
    for i in range(3):
        M[i] += x * (i + 1)
    return np.sum(M ** 2)


def _bs_gap(sig, price, S, K, T, r):
    d1 = (math.log(S / K) + (r + 0.5 * sig ** 2) * T) / (sig * math.sqrt(T))
    d2 = d1 - sig * math.sqrt(T)
    return S * norm.cdf(d1) - K * math.exp(-r * T) * norm.cdf(d2) - price


def brentq_fixed(price, S=100.0, K=100.0, T=1.0, r=0.01):
    # brentq_implied as PB405 says: what the function reads passed as its parameters
    return optimize.brentq(_bs_gap, 1e-4, 5.0, args=(price, S, K, T, r))


def min_of_pairs(x):
    return min(zip(x, x ** 2))[1] + max(list(zip(x, [1.0, 2.0, 3.0])))[0]


P2 = np.array([0.3, -0.2])
P3 = np.array([0.3, -0.7, 1.1])
X2 = np.random.default_rng(0).standard_normal((6, 2))

PROBES = {
    # a closure given to brentq takes what it reads through args (solver_closures.py)
    "brentq_implied": (brentq_implied, (10.0,), True),
    "legacy_seed": (legacy_seed, (0.4,), True),
    "interp_curve": (interp_curve, (np.array([0.01, 0.02, 0.025, 0.03]),), True),
    "cumprod_discount": (cumprod_discount, (np.array([0.01, 0.02, 0.025]),), True),
    "trapz_integral": (trapz_integral, (np.linspace(0, 1, 6) ** 2,), True),
    "polyval_fit": (polyval_fit, (np.array([0.1, -0.5, 0.0, 1.0]),), True),
    "fill_diag_local": (fill_diag_local, (P3,), True),
    "mask_plus_equals": (mask_plus_equals, (P3,), True),
    "add_at": (add_at, (np.array([1.0, 2.0, 3.0, 4.0]),), True),
    "reversed_cumsum": (reversed_cumsum, (P3,), True),
    "mvn_logpdf": (mvn_logpdf, (P2, X2), True),
    "chol_mvn": (chol_mvn, (P3, X2), True),
    "item_tolist": (item_tolist, (P3,), True),
    "searchsorted_lookup": (searchsorted_lookup, (np.array([1.0, 2.0, 4.0, 3.0]),), True),
    "einsum_ellipsis": (einsum_ellipsis, (P3,), True),
    "dict_update_inside": (dict_update_inside, ({"scale": 1.5, "shift": 0.2}, P3), False),
    "matmul_assign": (matmul_assign, (P2,), True),
    "max_axis": (max_axis, (X2,), True),
    # first order only: their second derivatives are refused (HigherOrderError: x.clip with
    # keywords, np.diff with prepend=, np.linalg.norm with ord=, np.vectorize)
    "var_std_methods": (var_std_methods, (P3,), False),
    "diff_prepend": (diff_prepend, (P3,), False),
    "norm_ord": (norm_ord, (P3,), False),
    "vectorize_scalar": (vectorize_scalar, (P3,), False),
    "reparam_normal_fixed": (reparam_normal_fixed, (P2,), True),
    "view_row_fixed": (view_row_fixed, (P3,), True),
    "brentq_fixed": (brentq_fixed, (10.0,), False),
    "counter_in_closure": (counter_in_closure, (P3,), True),
    "reduce_style": (reduce_style, (P3,), True),
    "map_style": (map_style, (P3,), True),
    "sorted_key": (sorted_key, (P3,), True),
    "max_with_key": (max_with_key, (P3,), True),
    "walrus_loop": (walrus_loop, (P3,), True),
    "nested_list_matrix": (nested_list_matrix, (P3[:2],), True),
    "fstring_unused": (fstring_unused, (P3,), True),
    "np_piecewise": (np_piecewise, (P3,), True),
    "np_select": (np_select, (P3,), True),
    "cumsum_inplace_view": (cumsum_inplace_view, (P3,), True),
    "kron_outer": (kron_outer, (P3,), True),
    "einsum_trace": (einsum_trace, (P3,), True),
    "string_dict_loop": (string_dict_loop, ({"a": 0.5, "b": -1.5},), False),
    "closure_loss": (make_loss(np.array([1.0, 2.0, 3.0])), (P3,), True),
    "min_of_pairs": (min_of_pairs, (P3,), True),
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_probe(name):
    f, args, second = PROBES[name]
    check_probe(f, *args, second=second)


REFUSED = {
    "reparam_normal": (reparam_normal, (P2,), ("PB506", "Generator.normal",
                                               "mu + sigma * rng.standard_normal(n)")),
    "lognormal_sample": (lognormal_sample, (0.3,), ("PB506", "Generator.lognormal")),
    "reparam_normal_kw": (reparam_normal_kw, (np.array([0.3, 0.8]),),
                          ("PB506", "rng.standard_normal(n)")),
    "view_row_inplace": (view_row_inplace, (P3,), ("'row += ...' ran on a ndarray",
                                                   "(`x[i] += ...` for `row = x[i]`)")),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused(name):
    f, args, says = REFUSED[name]
    check_refusal(f, *args, says=says)
