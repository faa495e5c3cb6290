"""quad, odeint and solve_ivp keep their rule's closure in a gradient (the forward's
subintervals, solution and interpolants serve the pullback: no second solve), while code
differentiated again calls their transformable pullback functions: gradients against
central finite differences, the number of forward solves, and second derivatives."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS

si = pytest.importorskip("scipy.integrate")

import pullback  # noqa: E402
from pullback.rules import scipy_ode_adjoint, scipy_quad  # noqa: E402
from pullback.testing import check_grads  # noqa: E402

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
TIMES = np.linspace(0.5, 3.0, 6)


def bump(x, c, k):
    return np.exp(-c * x * x) * np.cos(k * x)


def quad_loss(c, k):
    return si.quad(bump, 0.0, 2.0, args=(c, k))[0] ** 2


def quad_limits_by_keyword(a, b, c):
    return si.quad(bump, a=a, b=b, args=(c, 2.0))[0]


def quad_in_a_loop(c, ks):
    total = 0.0
    for k in ks:  # one closure per iteration, kept on the loop's tape
        total = total + si.quad(bump, 0.0, 2.0, args=(c, k))[0] * k
    return total


def forced(t, y, p):
    return np.array([y[1], -p[0] * y[0] - p[1] * y[1] + p[2] * np.sin(t)])


def ivp_loss(p):
    sol = si.solve_ivp(
        forced, (0.0, 3.0), np.array([1.0, 0.0]), t_eval=TIMES, args=(p,), rtol=1e-10, atol=1e-10
    )
    return np.sum(sol.y[0] ** 2)


def decay(y, t, k):
    return -k * y


def odeint_loss(k, y0):
    return np.sum(si.odeint(decay, y0, TIMES, args=(k,), rtol=1e-11, atol=1e-11))


def count(monkeypatch, module, name):
    calls = []
    real = getattr(module, name)

    def counted(*a, **kw):
        calls.append(name)
        return real(*a, **kw)

    monkeypatch.setattr(module, name, counted)
    return calls


@D
def test_quad_gradient_runs_quad_once(monkeypatch, dtype):
    calls = count(monkeypatch, scipy_quad, "subintervals")
    c, k = dtype(0.7), dtype(1.3)
    check_grads(quad_loss, c, k, wrt=(0, 1))
    calls.clear()
    _, back = pullback.vjp(quad_loss, c, k)
    assert calls == ["subintervals"]  # the forward's, with its subintervals
    back(1.0)
    assert calls == ["subintervals"]  # and no other


def test_quad_limits_by_keyword_keep_the_closure():
    check_grads(quad_limits_by_keyword, 0.1, 1.2, 0.5, wrt=(0, 1, 2))
    source = pullback.grad(quad_limits_by_keyword, wrt=(0, 1, 2)).source_for(0.1, 1.2, 0.5)
    assert "closure_cotangents" in source


def test_quad_closures_in_a_loop():
    check_grads(quad_in_a_loop, 0.7, np.array([0.5, 1.3, 2.0]), wrt=(0, 1))
    assert check_grads(quad_in_a_loop, 0.7, np.array([0.5, 1.3]), order=2) == "reverse over reverse"


def test_solve_ivp_gradient_solves_once(monkeypatch):
    calls = count(monkeypatch, scipy_ode_adjoint, "solve_ivp_forward")
    p = np.array([2.0, 0.3, 0.8])
    check_grads(ivp_loss, p)
    calls.clear()
    _, back = pullback.vjp(ivp_loss, p)
    assert calls == ["solve_ivp_forward"]  # the forward's, keeping its interpolants
    back(1.0)
    assert calls == ["solve_ivp_forward"]


def test_odeint_gradient_keeps_the_closure():
    check_grads(odeint_loss, 0.7, np.array([1.0, 2.0]), wrt=(0, 1))
    source = pullback.grad(odeint_loss, wrt=(0, 1)).source_for(0.7, np.array([1.0, 2.0]))
    assert "closure_cotangents" in source


def test_second_derivatives_still_run_through_the_pullback_functions():
    # the differentiable-again code calls the transformable pullbacks (Line.alt)
    assert check_grads(quad_loss, 0.7, 1.3, wrt=(0, 1), order=2) == "reverse over reverse"
    h = pullback.hessian(odeint_loss)(0.7, np.array([1.0, 2.0]))
    s = TIMES - TIMES[0]  # odeint starts at the first time point
    exact = np.sum(s**2 * np.exp(-0.7 * s)) * 3.0  # d2/dk2 of sum_i y0_i exp(-k s)
    assert h == pytest.approx(exact, rel=1e-6)
