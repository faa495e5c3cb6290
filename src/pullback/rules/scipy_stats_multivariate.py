"""scipy.stats multivariate distributions: ``logpdf``/``pdf`` of multivariate_normal (with
respect to ``x``, ``mean`` and ``cov``; ``mean=``/``cov=`` by keyword too, their cotangents in
a dict after the positional ones) and dirichlet (``x`` and ``alpha``), ``logpmf``/``pmf`` of
multinomial (``p``), these given positionally. multivariate_normal's ``cdf``/``logcdf``
have a module of their own (scipy_stats_mvn_cdf.py), registered from here.

multivariate_normal, with ``r = x - mean`` and ``a = cov^-1 r`` (Cholesky solves):
``d/dx = -a``, ``d/dmean = a``, ``d/dcov = (a a^T - cov^-1) / 2``. scipy reads the lower
triangle of a 2-D ``cov`` (its eigendecomposition does), so the cotangent of a 2-D ``cov``
lives on that triangle, like ``numpy.linalg.cholesky``'s: for a symmetric ``cov`` built
from other values this is the same as the symmetric gradient. A scalar ``cov`` (``c I``)
gets the trace, a 1-D one (a diagonal) the diagonal. ``allow_singular=True`` with a
singular ``cov`` is refused (NotDifferentiableError).

dirichlet and multinomial take points on the simplex; their cotangents are the partial
derivatives of the formula (``(alpha - 1) / x`` for dirichlet's ``x``, ``x / p`` for
multinomial's ``p``), which give the right directional derivative along the simplex
(the only directions in which scipy accepts a change).
"""

from __future__ import annotations

import numpy as np

from ..errors import NotDifferentiableError
from .scipy_stats_common import bind_params, f64, pull

FAMILY = "scipy_stats"
REQUIRES = "scipy.stats"


def _dy(dy, y, pdf, shape):
    """``dy`` as float64 of ``shape`` (scipy squeezes outputs), times the pdf for pdf."""
    d = np.asarray(dy, dtype=np.float64)
    if pdf:
        d = d * y
    return np.reshape(d, shape)


# -- multivariate normal ------------------------------------------------------------------


def mvn_parts(x, mean, cov):
    """``(r, a, cov_inv, points_shape)`` for the formulas above."""
    from scipy.linalg import LinAlgError, cho_factor, cho_solve

    cov = f64(cov)
    mean = f64(0.0 if mean is None else mean)
    d = max(np.size(mean), 1 if cov.ndim == 0 else cov.shape[0])
    if cov.ndim == 0:
        full = cov * np.eye(d)
    elif cov.ndim == 1:
        full = np.diag(cov)
    else:
        full = np.tril(cov) + np.tril(cov, -1).T  # what scipy reads: the lower triangle
    x = f64(x)
    if x.ndim == 0:
        x = x[None]
    if x.ndim == 1:
        x = x[:, None] if d == 1 else x[None, :]
    try:
        factor = cho_factor(full, lower=True)
    except LinAlgError:
        raise NotDifferentiableError(
            "pullback cannot differentiate scipy.stats.multivariate_normal with a singular "
            "covariance (allow_singular=True): its density lives on a subspace.\n"
            "Fix: add a small multiple of the identity to cov."
        ) from None
    r = x - np.broadcast_to(mean, (d,))
    a = cho_solve(factor, np.reshape(r, (-1, d)).T).T
    return r, np.reshape(a, r.shape), cho_solve(factor, np.eye(d)), x.shape[:-1]


def _cov_cotangent(g, cov):
    """The cotangent of ``cov`` in its own form from the symmetric gradient ``g``."""
    cov = np.asarray(cov)
    if cov.ndim == 0:
        return np.trace(g)
    if cov.ndim == 1:
        return np.diagonal(g).copy()
    return 2.0 * np.tril(g) - np.diag(np.diagonal(g))


def mvn_partials(dy, y, x, mean, cov, pdf):
    """The cotangents (dense, float64) of ``x``, ``mean``, ``cov`` of logpdf (pdf)."""
    r, a, cov_inv, points = mvn_parts(x, mean, cov)
    w = _dy(dy, y, pdf, points)
    wa = w[..., None] * a
    dx = np.reshape(-wa, np.shape(x)) if np.size(x) == wa.size else -wa
    dmean = np.sum(np.reshape(wa, (-1, a.shape[-1])), axis=0)
    flat = np.reshape(a, (-1, a.shape[-1]))
    g = 0.5 * (flat.T @ (np.reshape(w, -1)[:, None] * flat) - np.sum(w) * cov_inv)
    return dx, dmean, _cov_cotangent(g, 1.0 if cov is None else cov)


_MVN_PARAMS = ("mean", "cov")  # after x; also by keyword (Rule.extra["keyword_cotangents"])


def _mvn_rrule(pdf):
    def mvn_rrule(x, *args, **kwargs):
        import scipy.stats as st

        fn = st.multivariate_normal.pdf if pdf else st.multivariate_normal.logpdf
        y = fn(x, *args, **kwargs)
        mean, cov = bind_params(args, kwargs, _MVN_PARAMS, (None, 1.0))
        passed = [n for n in _MVN_PARAMS if n in kwargs]

        def mvn_pullback(dy):
            parts = lambda: mvn_partials(dy, y, x, mean, cov, pdf)  # noqa: E731
            full = tuple(pull_dense(dy, (x, mean, cov, *args[2:]), parts))
            if not passed:
                return full[: 1 + len(args)]
            # mean=/cov= by keyword: their cotangents in a dict after the positional ones
            return full[: 1 + len(args)] + ({n: full[1 + _MVN_PARAMS.index(n)] for n in passed},)

        return y, mvn_pullback

    return mvn_rrule


def pull_dense(dy, args, cotangents):
    """Like :func:`pull`, for rules that compute whole cotangents (``cotangents()`` gives
    one per leading argument) rather than elementwise partials."""
    from ._util import ZERO

    if dy is ZERO:
        return pull(dy, args, [])
    return pull(1.0, args, list(cotangents()))


# -- dirichlet ---------------------------------------------------------------------------------


def dirichlet_partials(dy, y, x, alpha, pdf):
    from scipy.special import digamma

    alpha = f64(alpha)
    x = f64(x)
    short = x.shape[0] + 1 == alpha.shape[0]  # scipy completes the last component
    full = np.concatenate([x, 1.0 - np.sum(x, axis=0, keepdims=True)]) if short else x
    w = _dy(dy, y, pdf, full.shape[1:])
    shape = (-1,) + (1,) * (full.ndim - 1)
    a = np.reshape(alpha, shape)
    dfull = w * (a - 1.0) / full
    dx = dfull[:-1] - dfull[-1:] if short else dfull
    logs = np.reshape(np.log(full) * w, (full.shape[0], -1)).sum(axis=1)
    dalpha = np.sum(w) * (digamma(np.sum(alpha)) - digamma(alpha)) + logs
    return dx, dalpha


def _dirichlet_rrule(pdf):
    def dirichlet_rrule(x, alpha):
        import scipy.stats as st

        y = (st.dirichlet.pdf if pdf else st.dirichlet.logpdf)(x, alpha)

        def dirichlet_pullback(dy):
            return pull_dense(dy, (x, alpha), lambda: dirichlet_partials(dy, y, x, alpha, pdf))

        return y, dirichlet_pullback

    return dirichlet_rrule


# -- multinomial -------------------------------------------------------------------------------


def multinomial_partials(dy, y, x, p, pmf):
    x, p = f64(x), f64(p)
    out_shape = np.broadcast_shapes(x.shape, p.shape)[:-1]
    w = _dy(dy, y, pmf, out_shape)
    with np.errstate(all="ignore"):
        ratio = np.where(x == 0, 0.0, x / p)
    return None, None, w[..., None] * ratio


def _multinomial_rrule(pmf):
    def multinomial_rrule(x, n, p):
        import scipy.stats as st

        y = (st.multinomial.pmf if pmf else st.multinomial.logpmf)(x, n, p)

        def multinomial_pullback(dy):
            return pull_dense(dy, (x, n, p), lambda: multinomial_partials(dy, y, x, p, pmf))

        return y, multinomial_pullback

    return multinomial_rrule


def register(reg):
    try:
        import scipy.stats as st
    except ImportError:  # pragma: no cover - scipy is optional
        return
    from ._util import Registrar

    r = Registrar(reg, FAMILY)
    for pdf, name in ((False, "logpdf"), (True, "pdf")):
        mvn = r.rule(
            getattr(st.multivariate_normal, name),
            _mvn_rrule(pdf),
            name=f"scipy.stats.multivariate_normal.{name}",
        )
        mvn.extra["keyword_cotangents"] = _MVN_PARAMS
        r.rule(
            getattr(st.dirichlet, name), _dirichlet_rrule(pdf), name=f"scipy.stats.dirichlet.{name}"
        )
    for pmf, name in ((False, "logpmf"), (True, "pmf")):
        r.rule(
            getattr(st.multinomial, name),
            _multinomial_rrule(pmf),
            name=f"scipy.stats.multinomial.{name}",
        )
    # multivariate_normal.cdf/logcdf: transformable pullbacks of their own
    from . import scipy_stats_mvn_cdf

    scipy_stats_mvn_cdf.register(reg)
