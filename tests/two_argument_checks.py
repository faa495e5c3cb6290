"""Shared checks of the closure and generator tests: a function of ``(x, w)`` against
finite differences with respect to both, and its forward mode against its gradient."""

from __future__ import annotations

import numpy as np

from pullback import grad, jvp
from pullback.testing import check_grads

X = np.array([0.3, -0.7, 1.1])
W = np.array([0.8, -0.3, 0.5])


def check_both_arguments(fn, dtype):
    check_grads(fn, X.astype(dtype), W.astype(dtype), wrt=(0, 1))


def check_forward_against_reverse(fn):
    vx = np.array([1.0, 0.5, -2.0])
    vw = np.array([-0.3, 0.2, 0.4])
    y, t = jvp(fn, (X, W), (vx, vw))
    gx, gw = grad(fn, wrt=(0, 1))(X, W)
    np.testing.assert_allclose(y, fn(X, W), rtol=1e-12)
    np.testing.assert_allclose(t, gx @ vx + gw @ vw, rtol=1e-9, atol=1e-12)
