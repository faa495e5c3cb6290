"""Random number generation (``numpy.random`` functions, ``Generator`` and
``RandomState`` methods): outputs that carry no gradient.

Deferred until ``numpy.random`` is imported (``REQUIRES``): NumPy loads it lazily and it
costs every start that does not use it, and a function that calls ``np.random.normal``
imports it when the call is resolved, before its rule is looked up.
"""

from __future__ import annotations

import numpy as np

from ..registry import REFUSED_WHEN_VARIED
from ._util import Registrar

FAMILY = "numpy_random"
REQUIRES = "numpy.random"

RANDOM_FUNCTIONS = (
    "default_rng seed rand randn random random_sample sample ranf normal uniform "
    "standard_normal randint random_integers choice permutation shuffle exponential "
    "standard_exponential gamma standard_gamma beta binomial poisson lognormal "
    "multivariate_normal laplace logistic chisquare dirichlet geometric gumbel "
    "multinomial triangular weibull get_state set_state"
).split()

GENERATOR_METHODS = (
    "random normal uniform integers choice permutation permuted shuffle "
    "standard_normal exponential standard_exponential gamma standard_gamma beta "
    "binomial poisson lognormal multivariate_normal laplace logistic chisquare "
    "dirichlet geometric gumbel multinomial triangular weibull bytes spawn"
).split()

RANDOMSTATE_METHODS = (
    "rand randn random_sample normal uniform standard_normal randint choice "
    "permutation shuffle seed"
).split()


def register(reg):
    r = Registrar(reg, FAMILY)
    fns, names = [], []
    for name in RANDOM_FUNCTIONS:
        fn = getattr(np.random, name, None)
        if fn is not None and fn not in fns:
            fns.append(fn)
            names.append(f"numpy.random.{name}")
    for cls, methods in (
        (np.random.Generator, GENERATOR_METHODS),
        (np.random.RandomState, RANDOMSTATE_METHODS),
    ):
        for name in methods:
            fn = getattr(cls, name, None)
            if fn is not None and fn not in fns:
                fns.append(fn)
                names.append(f"numpy.random.{cls.__name__}.{name}")
    r.nondiff(*fns, names=names, notes="random numbers: no gradient")
    for fn in fns:
        name = getattr(fn, "__name__", "")
        if name in MOVING_DRAWS:
            rule = reg.lookup(fn)
            rule.extra[REFUSED_WHEN_VARIED] = _FIXES.get(name, _FIX)
            rule.notes = "random numbers: refused where a differentiated value reaches them"


# Draws that move with float parameters (or pick elements of their argument): with a seed
# fixed inside the function they are functions of those parameters, so a zero gradient
# would be wrong. A differentiated value reaching one is refused (PB506), with the form that
# works; draws of integers and standard variates carry no gradient.
MOVING_DRAWS = frozenset(
    "normal uniform lognormal exponential gamma standard_gamma beta chisquare dirichlet "
    "multivariate_normal laplace logistic gumbel triangular weibull standard_t vonmises "
    "wald pareto power rayleigh f noncentral_chisquare noncentral_f choice permutation "
    "permuted shuffle".split()
)
_FIX = (
    "draw standard variates and transform them, e.g. `mu + sigma * rng.standard_normal(n)` "
    "for `rng.normal(mu, sigma, n)`, `low + (high - low) * rng.random(n)` for "
    "`rng.uniform(low, high, n)`"
)
_FIXES = {
    "choice": "draw the indices and index: `x[rng.integers(0, len(x), size=n)]`",
    "permutation": "permute the indices: `x[rng.permutation(len(x))]`",
    "permuted": "permute the indices: `x[rng.permutation(len(x))]`",
    "shuffle": "permute the indices: `x = x[rng.permutation(len(x))]`",
    "multivariate_normal": "draw standard normals and transform them: "
    "`mean + rng.standard_normal((n, d)) @ np.linalg.cholesky(cov).T`",
}
