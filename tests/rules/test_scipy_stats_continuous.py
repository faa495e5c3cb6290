"""scipy.stats continuous distributions against finite differences: every method with
respect to x (q) and every float parameter, broadcasting, float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, rng

st = pytest.importorskip("scipy.stats")

from so_scipy_stats import CONTINUOUS  # noqa: E402

import pullback  # noqa: E402
from pullback.testing import check_grads, check_rrule  # noqa: E402

METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf")

# name: the shape parameters (scalars; arrays are made around them)
SHAPES = CONTINUOUS


def _inputs(name, method, dtype, broadcast):
    """(first argument, shapes, loc, scale): x inside the support (from ppf) or q."""
    g = rng(3)
    shape = (2, 3) if broadcast else ()
    shapes = [np.float64(s) for s in SHAPES[name]]
    loc, scale = np.float64(0.3), np.float64(1.7)
    if broadcast:
        shapes = [s * g.uniform(0.9, 1.1, 3) for s in shapes]
        loc = g.uniform(-0.5, 0.5, 3)
        scale = g.uniform(0.8, 1.6, (2, 1))
    q = g.uniform(0.15, 0.85, shape)
    first = q if method == "ppf" else st.__dict__[name].ppf(q, *shapes, loc, scale)
    cast = (lambda v: np.asarray(v, dtype=dtype)) if broadcast else (lambda v: float(v))
    shapes = [cast(s) for s in shapes]
    return cast(first), shapes, cast(loc), cast(scale)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_method_with_respect_to_every_parameter(name, method, dtype):
    fn = getattr(getattr(st, name), method)
    first, shapes, loc, scale = _inputs(name, method, dtype, broadcast=True)
    check_rrule(fn, first, *shapes, loc, scale)
    first, shapes, loc, scale = _inputs(name, method, dtype, broadcast=False)
    check_rrule(fn, first, *shapes, loc, scale)
    check_rrule(fn, first, *shapes)  # loc and scale left to their defaults
    if name == "norm":
        check_rrule(fn, first, loc)


def test_degenerate_sizes_and_outside_the_support():
    check_rrule(st.norm.logpdf, np.zeros((0, 3)), np.ones(3), 2.0)
    # outside the support the functions are flat: zero cotangents, not NaN
    for method in ("logpdf", "pdf", "cdf", "sf"):
        _, back = pullback.default_registry().lookup(getattr(st.gamma, method)).rrule(
            np.array([-1.0, 0.5]), 2.0, 0.0, 1.0
        )
        dx, da, dloc, dscale = back(np.ones(2))
        assert np.all(np.isfinite(dx)) and dx[0] == 0.0 and np.isfinite(da)


def vonmises_cdf(kappa, x):
    return np.sum(st.vonmises.cdf(x, kappa)) + np.sum(st.vonmises.ppf([0.2, 0.7], kappa))


def test_vonmises_cdf_with_respect_to_kappa():
    # by quadrature; scipy's cdf grows by one per turn, its derivative is periodic
    x = np.array([0.3, -1.0, 4.0, -7.5])
    check_grads(vonmises_cdf, 1.3, x, wrt=(0, 1))
    check_grads(vonmises_cdf, 6.0, x, wrt=(0, 1))


# -- end to end: user functions through the engine ----------------------------------------


def student_t_loss(df, loc, scale, x):
    z = st.t.logpdf(x, df, loc, scale)
    return -np.mean(z) + np.sum(st.t.cdf(x, df, loc, scale))


def gamma_quantiles(a, scale, q):
    return np.sum(st.gamma.ppf(q, a, 0.0, scale) ** 2)


def frozen_norm(mu, sigma, x):
    d = st.norm(mu, sigma)
    return np.sum(d.logpdf(x)) + np.sum(d.cdf(x)) + np.sum(d.logsf(x)) + np.sum(d.ppf(0.3))


def frozen_beta(a, b, x):
    d = st.beta(a, b)
    return np.sum(d.pdf(x) * d.logcdf(x))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_user_functions(dtype):
    g = rng(5)
    x = np.asarray(g.normal(size=6), dtype)
    check_grads(student_t_loss, dtype(4.5), dtype(0.2), dtype(1.3), x, wrt=(0, 1, 2, 3))
    q = np.asarray(g.uniform(0.1, 0.9, 4), dtype)
    check_grads(gamma_quantiles, dtype(2.5), dtype(1.5), q, wrt=(0, 1, 2))
    mu = np.asarray(g.normal(size=6), dtype)
    check_grads(frozen_norm, mu, dtype(1.4), x, wrt=(0, 1, 2))
    check_grads(frozen_norm, dtype(0.1), dtype(1.4), x, wrt=(0, 1))
    u = np.asarray(g.uniform(0.1, 0.9, 5), dtype)
    check_grads(frozen_beta, dtype(2.5), dtype(3.5), u, wrt=(0, 1, 2))


def norm_logpdf_sum(mu, x):
    return np.sum(st.norm.logpdf(x, mu, 1.5))


def test_second_order_through_a_rule():
    # the rule's pullback is a transformable function: reverse over reverse
    how = check_grads(norm_logpdf_sum, 0.3, np.array([0.1, 0.9]), wrt=0, order=2)
    assert how == "reverse over reverse"
