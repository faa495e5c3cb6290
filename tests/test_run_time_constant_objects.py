"""An object a rule made from constants (``interp1d(K, Y)`` of module data), handed to a
function found at run time (``fn = CALLERS[k]; fn(f, q)``), is a constant to that
function: the call site's activity analysis knows the argument carries no gradient
(``CallSite.constants``), so the callee may read any attribute of it (``f.x``,
``f.fill_value``) as the primal does. Made from differentiated values, the same object is
differentiated through its declared data, and an attribute the rule does not declare is
refused at the user's line (it was a silent zero before)."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad

import pullback
from pullback import grad
from pullback.errors import UnsupportedCallError
from pullback.testing import check_grads

interpolate = pytest.importorskip("scipy.interpolate")

K = np.linspace(0.0, 3.0, 7)
Y = np.sin(K)
Q = np.array([0.4, 1.7, 2.2])


def scaled_by_last_knot(f, q):
    return np.sum(f(q)) * f.x[-1] + f.fill_value


def spline_with_knots(s, q):
    return np.sum(s(q) * q) * s.c.shape[0] + s.x[0]


CALLERS = {"interp": scaled_by_last_knot, "spline": spline_with_knots}


def constant_interp(q):
    fn = CALLERS["interp"]
    return fn(interpolate.interp1d(K, Y, bounds_error=False, fill_value=0.5), q)


def constant_spline(q):
    fn = CALLERS["spline"]
    return fn(interpolate.CubicSpline(K, Y), q)


def differentiated_interp(y, q):
    fn = CALLERS["interp"]
    return fn(interpolate.interp1d(K, y, bounds_error=False, fill_value=0.5), q)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("loss", [constant_interp, constant_spline])
def test_a_constant_object_is_read_as_the_primal_reads_it(loss, dtype):
    q = Q.astype(dtype)
    g = grad(loss)
    for _ in range(2):  # (the general path, then the hot entry)
        check_grad(loss, q)
        assert g(q).dtype == dtype


def test_the_same_object_of_differentiated_data_is_refused_never_zero():
    with pytest.raises(UnsupportedCallError, match="attribute 'fill_value' of a differentiated"):
        grad(differentiated_interp)(Y, Q)


@pytest.mark.parametrize("loss", [constant_interp, constant_spline])
def test_second_order_reads_the_constant_object_too(loss):
    assert check_grads(loss, Q, order=2) == "reverse over reverse"
    h = pullback.hessian(loss)(Q)
    forward = pullback.jvp(pullback.grad(loss), (Q,), (np.ones(3),))[1]
    np.testing.assert_allclose(forward, h @ np.ones(3), rtol=1e-9, atol=1e-12)
