"""scipy.integrate.quad: limits by the fundamental theorem, args under the integral sign,
checked against central finite differences of the integral."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rule_inputs import FLOATS, make

si = pytest.importorskip("scipy.integrate")

import pullback  # noqa: E402
from pullback.errors import UnsupportedCallError, UnsupportedSyntaxError  # noqa: E402
from pullback.testing import check_grads, check_rrule  # noqa: E402

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
# abserr carries no gradient: the output cotangent leaves it out
VALUE_ONLY = (1.3, 0.0)


def bump(x, c, k):
    return np.exp(-c * x * x) * np.sin(k * x)


def poly(x, theta):
    return np.sum(theta * x ** np.arange(3.0))


def power(x, n, c):
    """An integer parameter (no tangent) next to a float one."""
    return c * x**n


@D
def test_limits_and_scalar_args(dtype):
    a, b = dtype(0.2), dtype(1.5)
    check_rrule(si.quad, bump, a, b, (dtype(0.7), dtype(1.3)), output_cotangent=VALUE_ONLY)
    # reversed limits and a Python float next to a NumPy scalar
    check_rrule(si.quad, bump, b, a, (0.7, dtype(1.3)), output_cotangent=VALUE_ONLY)


@D
@pytest.mark.parametrize("n", [1, 3])
def test_array_parameter(n, dtype):
    theta = make("real", (n,), dtype)
    check_rrule(si.quad, poly, dtype(-0.5), dtype(1.0), (theta,), output_cotangent=VALUE_ONLY)


@D
def test_integer_argument_has_no_tangent(dtype):
    check_rrule(
        si.quad, power, dtype(0.1), dtype(2.0), (3, dtype(0.6)), output_cotangent=VALUE_ONLY
    )


@D
def test_infinite_limit_and_empty_interval(dtype):
    check_rrule(
        si.quad, bump, dtype(0.3), np.inf, (dtype(0.9), dtype(2.0)), output_cotangent=VALUE_ONLY
    )
    check_rrule(
        si.quad, bump, dtype(0.4), dtype(0.4), (dtype(0.9), dtype(2.0)), output_cotangent=VALUE_ONLY
    )


def test_no_args():
    check_rrule(si.quad, np.cos, 0.1, 1.2, output_cotangent=VALUE_ONLY)


# -- through grad, with args= by keyword -----------------------------------------------------
def loss_keyword(c, k):
    v, err = si.quad(bump, 0.0, 2.0, args=(c, k))
    return v * v + 0.0 * err


def loss_named_tuple(c, k):
    params = (c, k)
    return si.quad(bump, 0.0, 2.0, args=params)[0] ** 2


def loss_limits(a, b, c):
    return si.quad(bump, a=a, b=b, args=(c, 2.0))[0] ** 2


def loss_vector(theta):
    return np.sin(si.quad(poly, -1.0, 0.5, args=(theta,), epsabs=1e-12)[0])


@pytest.mark.parametrize("loss", [loss_keyword, loss_named_tuple])
def test_grad_through_keyword_args(loss):
    check_grads(loss, 0.7, 1.3, wrt=(0, 1))
    g = pullback.grad(loss, wrt=(0, 1))(0.7, 1.3)
    h = 1e-6
    fd = (loss(0.7 + h, 1.3) - loss(0.7 - h, 1.3)) / (2 * h)
    assert g[0] == pytest.approx(fd, rel=1e-6)


def test_grad_limits_by_keyword_and_vector_args():
    check_grads(loss_limits, 0.1, 1.2, 0.5, wrt=(0, 1, 2))
    check_grads(loss_vector, np.array([0.5, 1.0, -2.0]))


def test_other_keywords_are_still_refused():
    def loss(c):
        return si.quad(bump, 0.0, 1.0, args=(c, 1.0), epsabs=c)[0]

    with pytest.raises(UnsupportedSyntaxError, match="PB502"):
        pullback.grad(loss)(0.5)


@pytest.mark.parametrize("option", [{"full_output": 1}, {"weight": "cos", "wvar": 2.0}])
def test_refused_options(option):
    rule = pullback.default_registry().lookup(si.quad)
    with pytest.raises(UnsupportedCallError, match=next(iter(option))):
        rule.rrule(bump, 0.0, 1.0, (0.5, 1.0), **option)


def test_second_derivative_through_keyword_args():
    # (second order in depth: test_so_scipy_calculus.py)
    assert check_grads(loss_keyword, 0.7, 1.3, wrt=(0, 1), order=2) == "reverse over reverse"


# -- the gradient on quad's own subintervals -------------------------------------------------
def scalar_only(x, c):
    """An integrand for scalars only (math and a branch): the general path."""
    if x < 0.5:
        return math.exp(-c * x)
    return math.exp(-c * x) * (1.0 + 0.0 * x)


def near_singular(x, c):
    """sqrt(x + c) with a small c: its c-derivative 1 / (2 sqrt(x + c)) is sharper than the
    integrand, so the subintervals quad chose must be bisected for it."""
    return np.sqrt(x + c)


def spy_node_path(monkeypatch):
    """Count the reverse passes over nodes, and make the general path fail if taken."""
    from pullback.rules import _quad_leibniz, _quad_nodes

    calls = []
    real = _quad_nodes._node_derivatives

    def counted(*a):
        calls.append(a[3].size)  # (the nodes, the fourth argument)
        return real(*a)

    def general(*a):
        raise AssertionError("the general path was taken")

    monkeypatch.setattr(_quad_nodes, "_node_derivatives", counted)
    monkeypatch.setattr(_quad_leibniz, "parameter_integral", general)
    return calls


@D
def test_node_path_is_taken_for_vectorizable_integrands(monkeypatch, dtype):
    calls = spy_node_path(monkeypatch)
    a, b = dtype(0.2), dtype(1.5)
    check_rrule(si.quad, bump, a, b, (dtype(0.7), 1.3), output_cotangent=VALUE_ONLY)
    check_rrule(si.quad, bump, b, -a, (dtype(0.7), dtype(4.0)), output_cotangent=VALUE_ONLY)
    assert calls  # and the general path never ran


def test_node_path_with_break_points(monkeypatch):
    spy_node_path(monkeypatch)
    check_rrule(si.quad, bump, 0.0, 3.0, (0.7, 6.0), points=[1.0, 2.5], output_cotangent=VALUE_ONLY)


def test_node_path_bisects_for_the_derivative(monkeypatch):
    calls = spy_node_path(monkeypatch)
    check_rrule(
        si.quad, near_singular, 0.0, 1.0, (0.02,), output_cotangent=VALUE_ONLY, fd_step=1e-5
    )
    assert len(calls) > 1  # refined beyond quad's own subintervals
    rule = pullback.default_registry().lookup(si.quad)
    _, back = rule.rrule(near_singular, 0.0, 1.0, (0.02,))
    (dc,) = back((1.0, 0.0))[3]
    exact = math.sqrt(1.02) - math.sqrt(0.02)  # d/dc of the closed form
    assert dc == pytest.approx(exact, rel=1e-7)


def test_scalar_only_integrand_takes_the_general_path():
    check_rrule(si.quad, scalar_only, 0.0, 2.0, (0.8,), output_cotangent=VALUE_ONLY)


def test_quad_warning_is_still_given():
    rule = pullback.default_registry().lookup(si.quad)
    with pytest.warns(si.IntegrationWarning):
        rule.rrule(bump, 0.0, 50.0, (0.0, 40.0), limit=2)


def ignores_k(x, c, k):
    """A parameter the integrand does not read: its derivative is zero at every node."""
    return np.exp(-c * x) * x


@D
def test_node_path_with_a_parameter_not_read(monkeypatch, dtype):
    calls = spy_node_path(monkeypatch)
    check_rrule(si.quad, ignores_k, 0.0, 2.0, (dtype(0.7), dtype(3.0)), output_cotangent=VALUE_ONLY)
    assert calls
    _, back = pullback.default_registry().lookup(si.quad).rrule(ignores_k, 0.0, 2.0, (0.7, 3.0))
    assert back((1.0, 0.0))[3][1] == 0.0
