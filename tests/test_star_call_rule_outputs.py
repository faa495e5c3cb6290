"""Second derivatives of NumPy rules called with ``**opts`` (a star-call): the rule's
pullback function gives a cotangent for each of its positional parameters, also those
not passed (``np.max``'s ``initial``); the reverse of the star-call pads the ones it did
not keep with zeros (``star_runtime.unpassed_outputs``). An integer option moved to its
position (``ddof=1``) carries no tangent (``dynamic_vjps._no_tangent``). Checked against
central differences of the gradient, float64 and float32, and against the same call
written without the star."""

from __future__ import annotations

import numpy as np
import pytest

import pullback

NONE = {}
AXIS0 = {"axis": 0}
DDOF = {"ddof": 1}
AXIS_DDOF = {"axis": -1, "ddof": 1}
BOUNDS = {"a_min": -0.1, "a_max": 1.0}


def star_max(x):
    return np.max(x * x * x, **NONE)


def star_sum(x):
    return np.sum(x * x * x, **NONE)


def star_prod(x):
    return np.prod(x * x, **NONE)


def star_mean_axis(x):
    return np.sum(np.mean(x * x, **AXIS0) ** 2)


def star_std_ddof(x):
    return np.std(x * x, **DDOF)


def star_var_axis_ddof(x):
    return np.sum(np.var(x**3, **AXIS_DDOF))


def star_clip(x):
    return np.sum(np.clip(x**3, **BOUNDS))


def star_cumsum(x):
    return np.sum(np.cumsum(x**3, **NONE) ** 2)


def plain_max(x):
    return np.max(x * x * x)


def plain_mean_axis(x):
    return np.sum(np.mean(x * x, axis=0) ** 2)


def plain_std_ddof(x):
    return np.std(x * x, ddof=1)


def plain_var_axis_ddof(x):
    return np.sum(np.var(x**3, axis=-1, ddof=1))


def plain_clip(x):
    return np.sum(np.clip(x**3, a_min=-0.1, a_max=1.0))


STARRED = [
    star_max,
    star_sum,
    star_prod,
    star_mean_axis,
    star_std_ddof,
    star_var_axis_ddof,
    star_clip,
    star_cumsum,
]
WRITTEN_OUT = {
    star_max: plain_max,
    star_mean_axis: plain_mean_axis,
    star_std_ddof: plain_std_ddof,
    star_var_axis_ddof: plain_var_axis_ddof,
    star_clip: plain_clip,
}
POINTS = [np.array([0.3, 1.2, -0.5]), np.array([[0.3, 1.2], [-0.5, 2.0]])]


def gradient_differences(f, x, eps=1e-6):
    grad_f = pullback.grad(f)
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        e = e.reshape(x.shape)
        cols.append(((grad_f(x + e) - grad_f(x - e)) / (2 * eps)).ravel())
    return np.stack(cols)


@pytest.mark.parametrize("point", range(len(POINTS)))
@pytest.mark.parametrize("f", STARRED, ids=lambda f: f.__name__)
def test_hessian_of_a_rule_called_with_options(f, point):
    x = POINTS[point]
    h = np.asarray(pullback.hessian(f)(x)).reshape(x.size, x.size)
    np.testing.assert_allclose(h, gradient_differences(f, x), rtol=1e-6, atol=1e-6)
    if f in WRITTEN_OUT:
        want = np.asarray(pullback.hessian(WRITTEN_OUT[f])(x)).reshape(x.size, x.size)
        np.testing.assert_allclose(h, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", [star_max, star_std_ddof, star_cumsum], ids=lambda f: f.__name__)
def test_float32(f):
    x = POINTS[0].astype(np.float32)
    h = pullback.hessian(f)(x)
    assert h.dtype == np.float32
    np.testing.assert_allclose(h, gradient_differences(f, POINTS[0]), rtol=2e-3, atol=2e-3)
