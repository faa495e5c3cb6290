"""Random number generation (``numpy.random`` functions, ``Generator`` and
``RandomState`` methods): outputs that carry no gradient.

Deferred until ``numpy.random`` is imported (``REQUIRES``): NumPy loads it lazily and it
costs every start that does not use it, and a function that calls ``np.random.normal``
imports it when the call is resolved, before its rule is looked up.
"""

from __future__ import annotations

import numpy as np

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
