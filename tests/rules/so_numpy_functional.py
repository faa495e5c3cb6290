"""Second-order cases of the NumPy rules that call user functions (np.apply_along_axis,
np.piecewise): their pullbacks call the user function's vjp in a form pullback can
differentiate again, so a Hessian through them is the user function's own."""

from __future__ import annotations

import numpy as np
from rule_inputs import make
from second_order_table import case
from test_numpy_functional import Vectorized


def softmax_1d(v):
    e = np.exp(v - np.max(v))
    return e / np.sum(e)


def weighted_norm(v, w):
    return np.sqrt(np.sum(w * v * v) + 1.0)


def poly(t):
    return t * t * t - 0.5 * t


def scaled_tanh(t, s):
    return np.tanh(s * t)


M = make("real", (3, 4))
X = make("real", (5,), seed=1)

# -- apply_along_axis -------------------------------------------------------------------
case("numpy.apply_along_axis", softmax_1d, 1, M, wrt=(2,))
case("numpy.apply_along_axis", softmax_1d, 0, M, wrt=(2,))
case("numpy.apply_along_axis", weighted_norm, -1, M, make("positive", (4,), seed=2), wrt=(2, 3))
case("numpy.apply_along_axis", np.sum, 0, make("real", (2, 3, 2), seed=3), wrt=(2,))

# -- piecewise --------------------------------------------------------------------------
case("numpy.piecewise", X, [X < 0.1], [poly, np.sin], wrt=(0,))
case("numpy.piecewise", X, [X < -0.3, X > 0.4], [poly, softmax_1d, np.tanh], wrt=(0,))
case("numpy.piecewise", X, [X < 0.2], [scaled_tanh, lambda t, s: s * t * t], 1.3, wrt=(0, 4))
case("numpy.piecewise", M, [M > 0.0], [np.cos, 0.5], wrt=(0,))


def branchy(t, s):
    if t > 0.0:
        return s * t * t
    return np.sin(s * t)


# -- np.vectorize objects ---------------------------------------------------------------
case("numpy.vectorize.__call__", Vectorized(branchy), X, 1.3, wrt=(1, 2))
case("numpy.vectorize.__call__", Vectorized(branchy), M, make("real", (4,), seed=4), wrt=(1, 2))
case("numpy.vectorize.__call__", Vectorized(poly), X, wrt=(1,))
