"""Pullbacks of scipy.stats multivariate rules written as plain, transformable functions,
so that second derivatives (Hessians of Gaussian log-likelihoods) run through them (the
univariate distributions get theirs from :mod:`.scipy_stats_pullbacks`).

Imported only by :func:`register` of the scipy.stats families (that is, once scipy.stats
has been imported), because the functions refer to ``scipy.stats`` by a global name.
Each must agree with its rule's closure pullback (tests/rules/test_scipy_stats_second_order.py).
"""

from __future__ import annotations

import numpy as np
import scipy.stats as st

from ..registry import transformable
from ..tangents import NO_TANGENT, unbroadcast
from .transformable import by_rule

_SQRT_2PI = float(np.sqrt(2.0 * np.pi))


@transformable
def mvn_logpdf_pullback(dy, x, mean=None, cov=1, allow_singular=False):
    # Other forms (no mean, a scalar or diagonal cov, one point, stacks) go to the rule.
    # One test per `if`: the transformation mishandles `a or b or c` (see the report).
    simple = mean is not None
    if simple:
        simple = np.ndim(cov) == 2
    if simple:
        simple = np.ndim(x) == 2
    if simple:
        simple = not allow_singular
    if not simple:
        return by_rule(st.multivariate_normal.logpdf, dy, x, mean, cov, allow_singular)
    # scipy reads the lower triangle of cov: the cotangent lives there too
    full = np.tril(cov) + np.transpose(np.tril(cov, -1))
    w = np.reshape(dy, (-1, 1))
    a = np.transpose(np.linalg.solve(full, np.transpose(x - mean)))
    wa = w * a
    g = 0.5 * (np.transpose(a) @ wa - np.sum(w) * np.linalg.inv(full))
    dcov = 2.0 * np.tril(g) - np.diag(np.diagonal(g))
    return -wa, unbroadcast(np.sum(wa, axis=0), mean), dcov, NO_TANGENT


def register(reg):
    for fn, pullback_fn in (
        (st.multivariate_normal.logpdf, mvn_logpdf_pullback),
    ):
        if reg.lookup(fn) is not None:
            reg.set_pullback_function(fn, pullback_fn)
