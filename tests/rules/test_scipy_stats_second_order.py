"""scipy.stats rules whose pullback is a transformable function: it agrees with the rule,
and second derivatives run through it (reverse over reverse)."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import rng, spd

st = pytest.importorskip("scipy.stats")

from pullback import default_registry, hessian  # noqa: E402
from pullback.testing import check_grads  # noqa: E402

G = rng(21)
X = G.normal(size=(4, 3))
CALLS = [
    (st.norm.logpdf, (X, 0.3, 1.7)),
    (st.norm.logpdf, (X, G.normal(size=3), G.uniform(1, 2, (4, 1)))),
    (st.norm.logpdf, (X,)),
    (st.norm.cdf, (X, 0.3, 1.7)),
    (st.norm.cdf, (X, G.normal(size=3))),
    (st.multivariate_normal.logpdf, (X, G.normal(size=3), spd(3))),
]


@pytest.mark.parametrize("fn,args", CALLS)
def test_pullback_function_agrees_with_the_rule(fn, args):
    rule = default_registry().lookup(fn)
    assert rule.pullback_fn is not None
    y, pullback = rule.rrule(*args)
    dy = G.normal(size=np.shape(y))
    want = pullback(dy)
    got = rule.pullback_fn(dy, *args)
    for w, g in zip(want, got[: len(args)], strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-12)


def gaussian_nll(mu, log_sigma, x):
    return -np.sum(st.norm.logpdf(x, mu, np.exp(log_sigma))) + np.sum(st.norm.cdf(x, mu))


def mvn_nll(mean, cov, x):
    return -np.sum(st.multivariate_normal.logpdf(x, mean, cov))


def test_second_derivatives_run_through_them():
    x = G.normal(size=5)
    how = check_grads(gaussian_nll, 0.2, 0.1, x, wrt=(0, 1, 2), order=2)
    assert how == "reverse over reverse"
    how = check_grads(mvn_nll, G.normal(size=3), spd(3), X, wrt=(0, 1), order=2)
    assert how == "reverse over reverse"
    # the Hessian of a Gaussian negative log-likelihood in its mean: n / sigma^2
    h = hessian(gaussian_nll)(0.2, np.log(2.0), x)
    np.testing.assert_allclose(h, 5 / 4.0 + np.sum(-(x - 0.2) * np.exp(-0.5 * (x - 0.2) ** 2))
                               / np.sqrt(2 * np.pi), rtol=1e-8)
