"""scipy.stats discrete distributions against finite differences: every method with
respect to every float parameter, broadcasting, float64 and float32; counts carry no
gradient."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, rng

st = pytest.importorskip("scipy.stats")

import pullback  # noqa: E402
from pullback.registry import NONDIFF, default_registry  # noqa: E402
from pullback.testing import check_grads, check_rrule  # noqa: E402

METHODS = ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf")

# name: (shape parameters, counts inside the support where logs are finite)
CASES = {
    "poisson": ((3.3,), [0, 1, 2, 5]),
    "binom": ((7, 0.35), [0, 1, 3, 6]),
    "nbinom": ((4.5, 0.4), [0, 1, 2, 7]),
    "geom": ((0.3,), [1, 2, 3, 6]),
    "bernoulli": ((0.35,), [0, 0, 0, 0]),
}


def _params(name, dtype, broadcast):
    shapes, k = CASES[name]
    g = rng(7)
    out = []
    for s in shapes:
        if isinstance(s, int):  # binom's n: an integer count
            out.append(s)
        elif broadcast:
            out.append(np.asarray(s * g.uniform(0.9, 1.1, (3, 1)), dtype))
        else:
            out.append(dtype(s))
    return out, np.array(k)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_method_with_respect_to_every_parameter(name, method, dtype):
    fn = getattr(getattr(st, name), method)
    for broadcast in (True, False):
        shapes, k = _params(name, dtype, broadcast)
        check_rrule(fn, k, *shapes)
        check_rrule(fn, k, *shapes, 0)
        if method not in ("logpmf", "pmf"):
            # between two integers the cdf is flat in k and loc: zero cotangents
            check_rrule(fn, (k + 0.5).astype(dtype), *shapes, dtype(0.0))
    if name == "bernoulli" and method in ("pmf", "logpmf", "cdf", "sf"):
        check_rrule(fn, np.array([0, 1, 1]), dtype(0.35))


def test_ppf_is_non_differentiable():
    for name in CASES:
        assert default_registry().lookup(getattr(st, name).ppf).kind == NONDIFF


def poisson_regression(w, x, counts):
    rate = np.exp(x @ w)
    return -np.sum(st.poisson.logpmf(counts, rate))


def binomial_fit(logit, k):
    p = 1.0 / (1.0 + np.exp(-logit))
    return np.sum(st.binom.logpmf(k, 10, p)) + np.sum(st.binom.cdf(k, 10, p))


def frozen_nbinom(n, p, k):
    d = st.nbinom(n, p)
    return np.sum(d.logpmf(k)) + np.sum(d.logsf(k)) + np.sum(d.ppf(0.5))


def geometric_and_bernoulli(p, k):
    return np.sum(st.geom.logcdf(k + 1, p)) + np.sum(st.bernoulli.pmf(k % 2, p))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_user_functions(dtype):
    g = rng(9)
    x = np.asarray(g.normal(size=(6, 2)) * 0.5, dtype)
    counts = np.array([0, 1, 3, 2, 5, 1])
    check_grads(poisson_regression, np.asarray([0.3, -0.2], dtype), x, counts, wrt=(0, 1))
    k = np.array([1, 4, 7])
    check_grads(binomial_fit, np.asarray([0.2, -0.5, 1.0], dtype), k)
    check_grads(frozen_nbinom, dtype(3.5), dtype(0.4), k, wrt=(0, 1))
    check_grads(geometric_and_bernoulli, dtype(0.3), k)


def test_counts_are_not_differentiable():
    with pytest.raises(pullback.NotDifferentiableError):
        pullback.grad(binomial_fit, wrt=1)(np.array([0.2]), np.array([3]))
