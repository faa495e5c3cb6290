"""Second-order cases of the scipy_stats family (see second_order_table.py): every method
of every univariate distribution with respect to every float parameter (broadcasting,
float64; float32 for a few), and the multivariate rules.

Not expressible as ``fn(*args)`` with finite differences in every float argument, and so
checked in test_so_scipy_stats.py instead: the frozen-distribution constructors (they
return an object: their cases are checked through the methods of what they return),
dirichlet's ``x`` and multinomial's ``p`` (points of a simplex, which finite differences
leave: scipy refuses them or moves them back). multinomial's ``p`` is also checked here,
as an ``OnSimplex`` argument that the harness's probe normalizes (and, for the frozen
methods, a ``Built`` distribution the probe makes from it): coverage cases, which
test_second_order_coverage.py runs."""

from __future__ import annotations

import numpy as np
from second_order_table import case, coverage_case

from pullback.testing.second_order import Built, OnSimplex

# Rules of this family with cases whose pullback is a closure only: reverse over reverse
# is refused for them.
NOT_YET = ()

CONTINUOUS = {
    "norm": (),
    "t": (4.5,),
    "beta": (2.5, 3.2),
    "gamma": (2.3,),
    "chi2": (3.3,),
    "expon": (),
    "laplace": (),
    "logistic": (),
    "cauchy": (),
    "lognorm": (0.7,),
    "uniform": (),
    "pareto": (2.5,),
    "gumbel_r": (),
    "gumbel_l": (),
    "vonmises": (1.3,),
    "truncnorm": (-0.8, 1.5),
    "halfnorm": (),
    "halfcauchy": (),
    "invgamma": (2.7,),
    "weibull_min": (1.8,),
}
CONTINUOUS_METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf")

# name: (shape parameters (an int is a count without tangent), counts in the support)
DISCRETE = {
    "poisson": ((3.3,), [0, 1, 2, 5]),
    "binom": ((7, 0.35), [0, 1, 3, 6]),
    "nbinom": ((4.5, 0.4), [0, 1, 2, 7]),
    "geom": ((0.3,), [1, 2, 3, 6]),
    "bernoulli": ((0.35,), [0, 1, 0, 1]),
}
DISCRETE_METHODS = ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf")


def continuous_inputs(name, method, dtype=np.float64, seed=3):
    """``(first, *shapes, loc, scale)``: x inside the support (from ppf) or q, shapes
    and loc along the last axis, scale along the first (broadcasting)."""
    import scipy.stats as st

    g = np.random.default_rng(seed)
    shapes = [s * g.uniform(0.9, 1.1, 3) for s in CONTINUOUS[name]]
    loc = g.uniform(-0.5, 0.5, 3)
    scale = g.uniform(0.8, 1.6, (2, 1))
    q = g.uniform(0.15, 0.85, (2, 3))
    first = q if method == "ppf" else getattr(st, name).ppf(q, *shapes, loc, scale)
    return tuple(np.asarray(v, dtype) for v in (first, *shapes, loc, scale))


def discrete_inputs(name, seed=7):
    """``(k, *shapes)``: integer counts and float shapes along the first axis."""
    shapes, k = DISCRETE[name]
    g = np.random.default_rng(seed)
    values = [s if isinstance(s, int) else s * g.uniform(0.9, 1.1, (3, 1)) for s in shapes]
    return (np.array(k), *values)


def _fill():
    for name in CONTINUOUS:
        for method in CONTINUOUS_METHODS:
            case(f"scipy.stats.{name}.{method}", *continuous_inputs(name, method))
    for name in ("norm", "gamma", "beta"):
        for method in ("logpdf", "cdf"):
            case(f"scipy.stats.{name}.{method}", *continuous_inputs(name, method, np.float32))
    case("scipy.stats.norm.logpdf", np.linspace(-1.0, 1.0, 4))  # loc and scale by default
    case("scipy.stats.norm.cdf", 0.3, 0.1, 1.4)  # scalars
    for name in DISCRETE:
        for method in DISCRETE_METHODS:
            case(f"scipy.stats.{name}.{method}", *discrete_inputs(name))

    import scipy.stats as st

    g = np.random.default_rng(21)
    x = g.normal(size=(4, 3))
    a = g.standard_normal((3, 3))
    cov = a @ a.T / 3 + np.eye(3)
    mean = g.normal(size=3)
    case("scipy.stats.multivariate_normal.logpdf", x, mean, cov)
    case("scipy.stats.multivariate_normal.pdf", x, mean, cov)
    # the cdf in two dimensions (exact in scipy: finite differences see no QMC noise)
    x2, mean2, cov2 = x[:3, :2], mean[:2], cov[:2, :2]
    case("scipy.stats.multivariate_normal.cdf", x2, mean2, cov2)
    case("scipy.stats.multivariate_normal.logcdf", x2, mean2, cov2)
    # a box (inclusion-exclusion over its corners): a keyword, which
    # test_second_order_coverage.py's runner takes
    low = np.min(x2, axis=0) - 0.5
    coverage_case("scipy.stats.multivariate_normal.cdf", x2, mean2, cov2, lower_limit=low)
    coverage_case("scipy.stats.multivariate_normal.logcdf", x2, mean2, cov2, lower_limit=low)
    simplex = np.array([0.2, 0.3, 0.5])
    alpha = np.array([1.5, 2.0, 3.5])
    case("scipy.stats.dirichlet.logpdf", simplex, alpha, wrt=(1,))
    case("scipy.stats.dirichlet.pdf", simplex, alpha, wrt=(1,))
    _fill_frozen()
    _fill_frozen_multivariate(x, mean, cov, alpha)
    for method in ("cdf", "logcdf"):
        rule = f"scipy.stats.multivariate_normal_frozen.{method}"
        case(rule, st.multivariate_normal(mean2, cov2), x2)  # a stack of points
        case(rule, st.multivariate_normal(mean2, cov2), x2[1])  # one point


#: The frozen multivariate distributions (their constructors' cases are checked through
#: their methods in test_so_scipy_stats.py::test_frozen_multivariate_twice).
MULTIVARIATE = ("multivariate_normal", "dirichlet", "multinomial")


def _fill_frozen_multivariate(x, mean, cov, alpha):
    import scipy.stats as st

    mvn = st.multivariate_normal(mean, cov)
    for method in ("logpdf", "pdf"):
        rule = f"scipy.stats.multivariate_normal_frozen.{method}"
        case(rule, mvn, x)  # a stack of points
        case(rule, mvn, x[1])  # one point
        case(rule, st.multivariate_normal(0.2, 1.5), np.array([0.3, -0.7, 1.1]))  # d == 1
        # a point given without its last component (scipy completes it), which finite
        # differences may move: a full point would leave the simplex
        rule = f"scipy.stats.dirichlet_frozen.{method}"
        case(rule, st.dirichlet(alpha), np.array([[0.2, 0.35], [0.3, 0.4]]))
    # the constructors (test_so_scipy_stats.py checks them through their methods)
    case("scipy.stats.multivariate_normal", mean, cov)
    case("scipy.stats.multivariate_normal", mean=mean, cov=cov)  # by keyword
    case("scipy.stats.dirichlet", alpha)
    case("scipy.stats.multinomial", 6, np.array([0.2, 0.3, 0.5]))
    # multinomial(x; n, p) along the simplex of p: one count vector and a stack of them;
    # frozen, the probe makes multinomial(6, p) from its parameter at each call
    p = OnSimplex(np.array([0.2, 0.3, 0.5]))
    frozen = Built(st.multinomial, 6, p)
    counts = (np.array([1, 2, 3]), np.array([[1, 2, 3], [0, 4, 2]]))
    for method in ("logpmf", "pmf"):
        for x in counts:
            coverage_case(f"scipy.stats.multinomial.{method}", x, 6, p)
            coverage_case(f"scipy.stats.multinomial_frozen.{method}", frozen, x)
    # the parameters the frozen methods' pullbacks read from the object they get
    params = "pullback.rules.scipy_stats_frozen_pullbacks.frozen_parameters"
    coverage_case(params, frozen)
    coverage_case(params, Built(st.multivariate_normal, mean, cov))
    coverage_case(params, Built(st.dirichlet, alpha))
    coverage_case(params, Built(st.gamma, 2.3, 0.1, 1.5))
    coverage_case(params, Built(st.poisson, 2.5))


#: The frozen methods' rules (``norm(loc, scale).logpdf(x)``): the rule of the method
#: shared by all frozen distributions, and the distributions it is checked with.
FROZEN_CONTINUOUS = {
    "rv_continuous_frozen.logpdf": ("gamma", "truncnorm"),
    "rv_continuous_frozen.pdf": ("beta", "norm"),
    "rv_frozen.cdf": ("t", "lognorm"),
    "rv_frozen.logcdf": ("logistic", "vonmises"),
    "rv_frozen.sf": ("gumbel_r", "pareto"),
    "rv_frozen.logsf": ("laplace", "chi2"),
    "rv_frozen.ppf": ("cauchy", "gumbel_l"),
}
FROZEN_DISCRETE = {
    "rv_discrete_frozen.logpmf": ("poisson", "nbinom"),
    "rv_discrete_frozen.pmf": ("binom", "geom"),
    "rv_frozen.cdf": ("bernoulli",),
}


def frozen_continuous(name, method, dtype=np.float64):
    """``(frozen distribution, x)`` with x inside the support (q for ppf)."""
    import scipy.stats as st

    first, *params = continuous_inputs(name, method, dtype)
    scalars = [dtype(np.ravel(p)[0]) for p in params]  # a frozen object's parameters
    dist = getattr(st, name)(*scalars)
    q = np.asarray([0.2, 0.55, 0.8], dtype)
    return dist, q if method == "ppf" else np.asarray(dist.ppf(q), dtype)


def _fill_frozen():
    import scipy.stats as st

    for rule, names in FROZEN_CONTINUOUS.items():
        method = rule.split(".")[1]
        for name in names:
            case(f"scipy.stats.{rule}", *frozen_continuous(name, method))
        case(f"scipy.stats.{rule}", *frozen_continuous(names[0], method, np.float32))
    for rule, names in FROZEN_DISCRETE.items():
        for name in names:
            k, *shapes = discrete_inputs(name)
            scalars = [s if isinstance(s, int) else float(np.ravel(s)[0]) for s in shapes]
            case(f"scipy.stats.{rule}", getattr(st, name)(*scalars), k)
    # the constructors (test_so_scipy_stats.py checks them through their methods)
    for name, shapes in CONTINUOUS.items():
        case(f"scipy.stats.{name}", *shapes, 0.1, 1.3)
    for name, (shapes, _) in DISCRETE.items():
        case(f"scipy.stats.{name}", *shapes)


try:
    import scipy.stats  # noqa: F401
except ImportError:  # scipy is optional: no cases without it
    pass
else:
    _fill()
