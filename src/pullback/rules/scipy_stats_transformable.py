"""Pullbacks of the scipy.stats multivariate rules (multivariate_normal, dirichlet,
multinomial) written as plain, transformable functions, so that second derivatives
(Hessians of Gaussian log-likelihoods) run through them (the univariate distributions get
theirs from :mod:`.scipy_stats_pullbacks`). The formulas are those of
:mod:`.scipy_stats_multivariate`.

Imported only by :func:`register` of the scipy.stats families (that is, once scipy.stats
has been imported), because the functions refer to ``scipy.stats`` by a global name.
Each must agree with its rule's closure pullback (tests/rules/test_scipy_stats_second_order.py).
"""

from __future__ import annotations

import numpy as np
import scipy.special as sc
import scipy.stats as st

from ..errors import NotDifferentiableError
from ..registry import transformable
from ..tangents import NO_TANGENT, unbroadcast
from .user_function_calls import has_tangent


def mvn_dimension(mean, cov):
    """The dimension scipy gives a multivariate normal: ``mean``'s size, else ``cov``'s."""
    if mean is not None:
        return int(np.size(mean))
    return int(np.shape(cov)[0]) if np.ndim(cov) == 2 else 1


def refuse_singular(full):
    """Raise a NotDifferentiableError for a singular ``cov`` (``allow_singular=True``)."""
    try:
        np.linalg.cholesky(full)
    except np.linalg.LinAlgError:
        raise NotDifferentiableError(
            "pullback cannot differentiate scipy.stats.multivariate_normal with a singular "
            "covariance (allow_singular=True): its density lives on a subspace.\n"
            "Fix: add a small multiple of the identity to cov."
        ) from None


@transformable
def mvn_logpdf_pullback(dy, x, mean=None, cov=1, allow_singular=False):
    # every form scipy takes: no mean or a scalar one, a scalar (c I), 1-D (diagonal) or
    # 2-D cov, one point (also a scalar), a stack of points (d == 1: a vector of them)
    d = mvn_dimension(mean, cov)
    if np.ndim(cov) == 0:
        full = cov * np.eye(d)
    elif np.ndim(cov) == 1:
        full = np.diag(cov)
    else:
        # scipy reads the lower triangle of cov: the cotangent lives there too
        full = np.tril(cov) + np.transpose(np.tril(cov, -1))
    if allow_singular:
        refuse_singular(full)
    center = 0.0
    if mean is not None:
        center = mean
    points = np.reshape(x, (-1, d))
    w = np.reshape(dy, (-1, 1))
    a = np.transpose(np.linalg.solve(full, np.transpose(points - center)))
    wa = w * a
    g = 0.5 * (np.transpose(a) @ wa - np.sum(w) * np.linalg.inv(full))
    dmean = NO_TANGENT
    if has_tangent(mean):
        dmean = unbroadcast(np.sum(wa, axis=0), mean)
    dcov = NO_TANGENT
    if has_tangent(cov):
        if np.ndim(cov) == 0:
            dcov = unbroadcast(np.sum(np.diagonal(g)), cov)
        elif np.ndim(cov) == 1:
            dcov = unbroadcast(np.diagonal(g), cov)
        else:
            dcov = unbroadcast(2.0 * np.tril(g) - np.diag(np.diagonal(g)), cov)
    dx = NO_TANGENT
    if has_tangent(x):
        dx = unbroadcast(np.reshape(-wa, np.shape(x)), x)
    return dx, dmean, dcov, NO_TANGENT


@transformable
def mvn_pdf_pullback(dy, x, mean=None, cov=1, allow_singular=False):
    # pdf = exp(logpdf): the logpdf's pullback of dy * pdf
    y = st.multivariate_normal.pdf(x, mean, cov, allow_singular)
    return mvn_logpdf_pullback(dy * y, x, mean, cov, allow_singular)


@transformable
def dirichlet_logpdf_pullback(dy, x, alpha):
    # scipy completes a point given without its last component (short x)
    short = np.shape(x)[0] + 1 == np.shape(alpha)[0]
    full = x
    if short:
        full = np.concatenate([x, 1.0 - np.sum(x, axis=0, keepdims=True)])
    w = np.reshape(dy, np.shape(full)[1:])
    a = np.reshape(alpha, (-1,) + (1,) * (np.ndim(full) - 1))
    dfull = w * (a - 1.0) / full
    dx = dfull
    if short:
        dx = dfull[:-1] - dfull[-1:]
    logs = np.sum(np.reshape(np.log(full) * w, (np.shape(full)[0], -1)), axis=1)
    dalpha = np.sum(w) * (sc.digamma(np.sum(alpha)) - sc.digamma(alpha)) + logs
    return unbroadcast(dx, x), unbroadcast(dalpha, alpha)


@transformable
def dirichlet_pdf_pullback(dy, x, alpha):
    return dirichlet_logpdf_pullback(dy * st.dirichlet.pdf(x, alpha), x, alpha)


@transformable
def multinomial_logpmf_pullback(dy, x, n, p):
    out = np.broadcast_shapes(np.shape(x), np.shape(p))[:-1]
    w = np.reshape(dy, out + (1,))
    nonzero = x != 0
    ratio = np.where(nonzero, x / np.where(nonzero, p, 1.0), 0.0)
    return NO_TANGENT, NO_TANGENT, unbroadcast(w * ratio, p)


@transformable
def multinomial_pmf_pullback(dy, x, n, p):
    return multinomial_logpmf_pullback(dy * st.multinomial.pmf(x, n, p), x, n, p)


def register(reg):
    reg.non_differentiable(mvn_dimension, refuse_singular, family="scipy_stats", trusted=True)
    for fn, pullback_fn in (
        (st.multivariate_normal.logpdf, mvn_logpdf_pullback),
        (st.multivariate_normal.pdf, mvn_pdf_pullback),
        (st.dirichlet.logpdf, dirichlet_logpdf_pullback),
        (st.dirichlet.pdf, dirichlet_pdf_pullback),
        (st.multinomial.logpmf, multinomial_logpmf_pullback),
        (st.multinomial.pmf, multinomial_pmf_pullback),
    ):
        if reg.lookup(fn) is not None:
            reg.set_pullback_function(fn, pullback_fn)
