"""The checks every converted closure case of tests/test_closures_s29_*.py passes: its
gradient against central differences in float64, float32 against float64 (dtype kept),
forward mode against central differences, and a Hessian-vector product (reverse over
reverse) against central differences of the gradient."""

from __future__ import annotations

import numpy as np
from fd import check_grad, check_hvp, check_jvp

from pullback import grad, hessian


def check_all(f, x, p, tangents, direction):
    """``f(x, p)`` differentiated in both arguments; ``tangents`` for forward mode (one per
    argument), ``direction`` for the Hessian-vector product in ``p``."""
    check_grad(f, x, p, wrt=(0, 1))
    g32 = grad(f, wrt=(0, 1))(x.astype(np.float32), np.asarray(p).astype(np.float32))
    g64 = grad(f, wrt=(0, 1))(x, p)
    for got, want in zip(g32, g64, strict=True):
        assert np.asarray(got).dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-4)
    check_jvp(f, (x, p), tangents, rel=1e-5)
    check_hvp(lambda q: f(x, q), p, direction, rtol=1e-5, atol=1e-7)


def check_hessian(f, x, p):
    """The full Hessian of ``f(x, p)`` in ``p`` against central differences of its gradient."""
    g = grad(lambda q: f(x, q))
    h = hessian(lambda q: f(x, q))(p)
    want = np.array([(g(p + 1e-5 * e) - g(p - 1e-5 * e)) / 2e-5 for e in np.eye(p.size)])
    np.testing.assert_allclose(h, want, rtol=1e-5, atol=1e-7)
