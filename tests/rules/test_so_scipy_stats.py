"""Second derivatives through the scipy.stats rules: reverse over reverse at every case of
so_scipy_stats.py, and each transformable pullback agrees with its rule's closure.

Every case costs a few transformations (one per differentiated argument), so by default
one method per distribution runs (the methods rotate, so each method and each
distribution is covered); PULLBACK_SECOND_ORDER=all runs every case."""

from __future__ import annotations

import os

import numpy as np
import pytest
from sweeps import sweep

st = pytest.importorskip("scipy.stats")
import so_scipy_stats  # noqa: E402
from scipy.special import softmax  # noqa: E402
from second_order_table import CASES, COVERAGE_CASES  # noqa: E402
from so_scipy_check import (  # noqa: E402
    assert_agrees_with_the_closure,
    assert_reverse_over_reverse,
)

from pullback.testing import check_grads  # noqa: E402


def _constructor(name):
    """Whether ``name`` is a frozen distribution's constructor (``scipy.stats.norm``)."""
    parts = name.split(".")
    return len(parts) == 3 and (
        parts[2] in so_scipy_stats.CONTINUOUS
        or parts[2] in so_scipy_stats.DISCRETE
        or parts[2] in so_scipy_stats.MULTIVARIATE
    )


FAMILY = sorted(
    (name, k) for name, cases in CASES.items() if name.startswith("scipy.stats.")
    and not _constructor(name)
    for k in range(len(cases))
)
CONSTRUCTORS = sorted(
    n
    for n in CASES
    if n.startswith("scipy.stats.")
    and _constructor(n)
    and n.split(".")[2] not in so_scipy_stats.MULTIVARIATE
)


def _default(name, k):
    """One case per distribution, the method rotating with the distribution's place."""
    parts = name.split(".")
    if parts[2] in so_scipy_stats.CONTINUOUS:
        methods = so_scipy_stats.CONTINUOUS_METHODS
        place = list(so_scipy_stats.CONTINUOUS).index(parts[2])
    elif parts[2] in so_scipy_stats.DISCRETE:
        methods = so_scipy_stats.DISCRETE_METHODS
        place = list(so_scipy_stats.DISCRETE).index(parts[2])
    else:
        return k == 0
    return k == 0 and parts[3] == methods[place % len(methods)]


SELECTED = [
    c for c in FAMILY if os.environ.get("PULLBACK_SECOND_ORDER") == "all" or _default(*c)
]


@pytest.mark.parametrize("name,k", SELECTED, ids=[f"{n}-{k}" for n, k in SELECTED])
def test_reverse_over_reverse(name, k):
    assert_reverse_over_reverse(name, CASES[name][k], so_scipy_stats.NOT_YET)


AGREE = sweep(FAMILY, quick=len(FAMILY) // 2)  # every case under pytest --long


@pytest.mark.parametrize("name,k", AGREE, ids=[f"{n}-{k}" for n, k in AGREE])
def test_pullback_function_agrees_with_the_closure(name, k):
    # the closure calls the pullback function: they agree to the last bit
    assert_agrees_with_the_closure(name, CASES[name][k], so_scipy_stats.NOT_YET, seed=k)


def dirichlet_of_logits(z, alpha):
    x = softmax(z, axis=0)
    return np.sum(st.dirichlet.logpdf(x, alpha) * WEIGHTS) + np.sum(st.dirichlet.pdf(x, alpha))


def dirichlet_short(z, alpha):
    x = softmax(z, axis=0)[:-1]  # scipy completes the last component
    return np.sum(st.dirichlet.logpdf(x, alpha) * WEIGHTS)


def multinomial_of_logits(z):
    p = softmax(z, axis=-1)
    return np.sum(st.multinomial.logpmf(COUNTS, 6, p) * WEIGHTS[:2]) + np.sum(
        st.multinomial.pmf(COUNTS, 6, p)
    )


WEIGHTS = np.array([0.7, -1.2, 0.4, 1.5])
COUNTS = np.array([[1, 2, 3], [0, 4, 2]])


def test_points_of_a_simplex():
    # x (dirichlet) and p (multinomial) through a softmax, which keeps them on the simplex
    g = np.random.default_rng(14)
    alpha = np.array([1.5, 2.5, 3.0])
    how = check_grads(dirichlet_of_logits, g.normal(size=(3, 4)), alpha, wrt=(0, 1), order=2)
    assert how == "reverse over reverse"
    how = check_grads(dirichlet_short, g.normal(size=(3, 4)), alpha, wrt=(0, 1), order=2)
    assert how == "reverse over reverse"
    assert check_grads(multinomial_of_logits, g.normal(size=3), order=2) == (
        "reverse over reverse"
    )


def test_every_rule_with_a_pullback_function_has_a_case():
    from pullback import default_registry

    # multinomial's (p on the simplex) and frozen_parameters' (a frozen object) cases are
    # coverage cases, which test_second_order_coverage.py runs
    missing = [
        r.name
        for r in default_registry().rules()
        if r.family == "scipy_stats"
        and r.pullback_fn is not None
        and r.name not in CASES
        and r.name not in COVERAGE_CASES
    ]
    assert missing == []


# -- frozen distributions: the constructor and its methods, differentiated twice ------------
# Two methods each (every method's rule has cases of its own above): the constructor's
# tuple cotangent and the mixed terms are what these check.
def frozen_of_2(x, dist, a, b):
    d = dist(a, b)
    return np.sum(d.logpdf(x) * x) + np.sum(d.cdf(x))


def frozen_of_3(x, dist, a, b, c):
    d = dist(a, b, c)
    return np.sum(d.logpdf(x) * x) + np.sum(d.sf(x))


def frozen_of_4(x, dist, a, b, c, e):
    d = dist(a, b, c, e)
    return np.sum(d.logpdf(x) * x) + np.sum(d.ppf(Q))


def discrete_of_1(k, dist, a):
    d = dist(a)
    return np.sum(d.logpmf(k)) + np.sum(d.cdf(k))


def discrete_of_2(k, dist, a, b):
    d = dist(a, b)
    return np.sum(d.pmf(k)) + np.sum(d.logsf(k))


Q = np.array([0.25, 0.6])
CONTINUOUS_PROBES = {2: frozen_of_2, 3: frozen_of_3, 4: frozen_of_4}
DISCRETE_PROBES = {1: discrete_of_1, 2: discrete_of_2}


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", CONSTRUCTORS)
def test_frozen_distributions_twice(name, dtype):
    # d = dist(*params); d.logpdf(x), d.cdf(x), ...: second derivatives in x and in every
    # float parameter, the mixed ones through the frozen object's tuple cotangent
    dist = getattr(st, name.split(".")[2])
    (params, _, _), = CASES[name]
    params = [p if isinstance(p, int) else dtype(p) for p in params]
    floats = tuple(2 + k for k, p in enumerate(params) if not isinstance(p, int))
    if name.split(".")[2] in so_scipy_stats.CONTINUOUS:
        # off the median: laplace's density has a kink at loc
        x = np.asarray(dist(*params).ppf(np.array([0.2, 0.45, 0.7])), dtype)
        probe, wrt = CONTINUOUS_PROBES[len(params)], (0, *floats)
    else:
        x = so_scipy_stats.DISCRETE[name.split(".")[2]][1]
        probe, wrt = DISCRETE_PROBES[len(params)], floats
    how = check_grads(probe, x, dist, *params, wrt=wrt, order=2)
    assert how == "reverse over reverse"


# -- frozen multivariate distributions: constructor and methods, differentiated twice -------
def frozen_mvn(mean, cov, x):
    d = st.multivariate_normal(mean, cov)
    return np.sum(d.logpdf(x) * WEIGHTS) + np.sum(d.pdf(x))


def frozen_mvn_one_point(mean, cov, x):
    d = st.multivariate_normal(mean, cov)
    return d.logpdf(x) * d.pdf(x)


def frozen_dirichlet(alpha, z):
    # points without their last component (scipy completes them): a float32 softmax sums
    # to 1 less closely than scipy asks of a full point
    d = st.dirichlet(alpha)
    x = softmax(z, axis=0)[:-1]
    return np.sum(d.logpdf(x) * WEIGHTS) + np.sum(d.pdf(x))


def frozen_dirichlet_full(alpha, z):
    d = st.dirichlet(alpha)
    x = softmax(z, axis=0)
    return np.sum(d.logpdf(x) * WEIGHTS) + np.sum(d.pdf(x))


def frozen_multinomial(z):
    # p in float64 (np.float64 promotes float32 logits): scipy asks p to sum to 1 within
    # float64's eps
    d = st.multinomial(6, softmax(z * np.float64(1.0)))
    return np.sum(d.logpmf(COUNTS) * WEIGHTS[:2]) + np.sum(d.pmf(COUNTS[0]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_frozen_multivariate_twice(dtype):
    # d = dist(*params); d.logpdf(x), d.pdf(x): second derivatives in x and every float
    # parameter, the mixed ones through the frozen object's tuple cotangent
    g = np.random.default_rng(5)
    a = g.standard_normal((3, 3))
    cov = np.asarray(a @ a.T / 3 + np.eye(3), dtype)
    mean, x = np.asarray(g.normal(size=3), dtype), np.asarray(g.normal(size=(4, 3)), dtype)
    assert check_grads(frozen_mvn, mean, cov, x, wrt=(0, 1, 2), order=2) == (
        "reverse over reverse"
    )
    # a scalar or diagonal cov (scipy normalizes them), one point
    for m, c in ((mean, dtype(1.7)), (mean, np.asarray([1.2, 0.8, 1.5], dtype))):
        how = check_grads(frozen_mvn_one_point, m, c, x[0], wrt=(0, 1, 2), order=2)
        assert how == "reverse over reverse"
    alpha = np.asarray([1.5, 2.5, 3.0], dtype)
    z = np.asarray(g.normal(size=(3, 4)), dtype)
    assert check_grads(frozen_dirichlet, alpha, z, wrt=(0, 1), order=2) == (
        "reverse over reverse"
    )
    if dtype == np.float64:
        how = check_grads(frozen_dirichlet_full, alpha, z, wrt=(0, 1), order=2)
        assert how == "reverse over reverse"
    z = np.asarray(g.normal(size=3), dtype)
    assert check_grads(frozen_multinomial, z, order=2) == "reverse over reverse"
