"""odeint and solve_ivp by the adjoint method, against central finite differences of the
solution (tight solver tolerances, so that the solution is smooth in its inputs)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rule_inputs import FLOATS

si = pytest.importorskip("scipy.integrate")

import pullback  # noqa: E402
from pullback.errors import UnsupportedCallError, UnsupportedSyntaxError  # noqa: E402
from pullback.testing import check_grads, check_rrule  # noqa: E402

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
TIGHT = {"rtol": 1e-11, "atol": 1e-11}


def damped(y, t, k, c):
    return np.array([y[1], -k * y[0] - c * y[1]])


def damped_tfirst(t, y, k, c):
    return damped(y, t, k, c)


def forced(t, y, p):
    return np.array([y[1], -p[0] * y[0] - p[1] * y[1] + p[2] * np.sin(t)])


def decay(y, t, rate, n):
    """A scalar state, a float and an integer parameter."""
    return -rate * y**n


@D
def test_odeint_rule(dtype):
    y0 = np.array([1.0, 0.2], dtype=dtype)
    t = np.linspace(0.0, 3.0, 5).astype(dtype)
    args = (dtype(1.3), dtype(0.2))
    check_rrule(si.odeint, damped, y0, t, args, fkwargs=TIGHT)
    check_rrule(si.odeint, damped_tfirst, y0, t, args, fkwargs=dict(TIGHT, tfirst=True))


@D
def test_odeint_scalar_state_and_integer_argument(dtype):
    t = np.array([0.5, 1.0, 2.0], dtype=dtype)
    check_rrule(si.odeint, decay, dtype(1.5), t, (dtype(0.7), 2), fkwargs=TIGHT)


def test_odeint_single_time_point():
    check_rrule(si.odeint, damped, np.array([1.0, 0.0]), np.array([0.3]), (1.0, 0.1), fkwargs=TIGHT)


def no_backward_solve(monkeypatch):
    """Fail if the augmented system is solved backwards (the general path)."""
    from pullback.rules import scipy_ode_adjoint

    def general(*a):
        raise AssertionError("the augmented system was solved")

    monkeypatch.setattr(scipy_ode_adjoint, "adjoint_sweep", general)


def pendulum_scalar(y, t, k):
    """A right-hand side for one state at a time (math and float()): the augmented system."""
    return [y[1], -k * math.sin(float(y[0]))]


@D
def test_odeint_adjoint_on_interpolants(dtype, monkeypatch):
    # odeint keeps no interpolants: solve_ivp's LSODA gives them (odeint_trajectory)
    no_backward_solve(monkeypatch)
    y0 = np.array([1.0, 0.2], dtype=dtype)
    args = (dtype(1.3), dtype(0.2))
    for t in (np.linspace(0.0, 3.0, 5), np.linspace(3.0, 0.5, 4)):  # forwards, backwards
        check_rrule(si.odeint, damped, y0, t.astype(dtype), args, fkwargs=TIGHT)
    check_rrule(si.odeint, damped, y0, np.linspace(0.0, 3.0, 5), args, fkwargs={"hmax": 0.1})


def test_odeint_scalar_right_hand_side_takes_the_augmented_system(monkeypatch):
    from pullback.rules import scipy_ode_adjoint

    called = []
    real = scipy_ode_adjoint.adjoint_sweep
    monkeypatch.setattr(scipy_ode_adjoint, "adjoint_sweep", lambda *a: called.append(1) or real(*a))
    check_rrule(si.odeint, pendulum_scalar, np.array([0.5, 0.0]), T, (2.0,), fkwargs=TIGHT)
    assert called


@D
@pytest.mark.parametrize("method", ["RK45", "DOP853", "LSODA", "BDF"])
def test_solve_ivp_rule(method, dtype, monkeypatch):
    # (DOP853's interpolants cost more solver stages: the pullback solves again for them)
    no_backward_solve(monkeypatch)
    y0 = np.array([1.0, 0.2], dtype=dtype)
    p = np.array([1.3, 0.2, 0.5], dtype=dtype)
    t_eval = np.linspace(0.2, 1.8, 4).astype(dtype)
    dy = {"y": np.linspace(-1.0, 1.0, 8).reshape(2, 4)}
    # every float argument by position: t_span, y0, t_eval and args
    args = (forced, (dtype(0.0), dtype(2.0)), y0, method, t_eval, False, None, False, (p,))
    check_rrule(si.solve_ivp, *args, fkwargs=TIGHT, output_cotangent=dy)


@pytest.mark.parametrize(
    "method, span",
    [
        pytest.param("RK45", (0.0, 2.0), id="up-RK45"),
        pytest.param("RK45", (2.0, 0.0), id="down-RK45"),
        pytest.param("RK23", (0.0, 2.0), id="up-RK23"),
        # (backwards in time: RK45's case by default, RK23's too under pytest --long)
        pytest.param("RK23", (2.0, 0.0), id="down-RK23", marks=pytest.mark.long),
    ],
)
def test_solve_ivp_rule_runge_kutta_interpolants(method, span, monkeypatch):
    # the adjoint evaluates the Runge-Kutta interpolants in one product (fast_interpolant)
    from pullback.rules.scipy_ode_dense import fast_interpolant

    no_backward_solve(monkeypatch)
    y0, p = np.array([1.0, 0.2]), np.array([1.3, 0.2, 0.5])
    sol = si.solve_ivp(forced, span, y0, method, args=(p,), dense_output=True, **TIGHT)
    at = fast_interpolant(sol.sol)
    assert at is not sol.sol
    tau = np.concatenate((np.linspace(0.0, 2.0, 101), sol.t))  # the steps' ends too
    np.testing.assert_allclose(at(tau), sol.sol(tau), rtol=1e-13, atol=1e-15)
    t_eval = np.linspace(span[0], span[1], 6)[1:-1]  # inside t_span when perturbed
    dy = {"y": np.linspace(-1.0, 1.0, 8).reshape(2, 4)}
    args = (forced, span, y0, method, t_eval, False, None, False, (p,))
    check_rrule(si.solve_ivp, *args, fkwargs=TIGHT, output_cotangent=dy)


# -- through grad: keywords, sol.y, sol["y"] ---------------------------------------------------
T = np.linspace(0.1, 2.8, 5)


def odeint_loss(y0, k):
    ys = si.odeint(damped, y0, T, args=(k, 0.3), rtol=1e-11, atol=1e-11)
    return np.sum(ys**2)


def ivp_loss(y0, p, t_eval):
    sol = si.solve_ivp(forced, (0.0, 3.0), y0, t_eval=t_eval, args=(p,), rtol=1e-11, atol=1e-11)
    return np.sum(sol.y**2) + np.sum(sol.t)


def ivp_loss_by_item(y0, p, t_span):
    sol = si.solve_ivp(forced, t_span, y0=y0, args=(p,), method="DOP853", rtol=1e-11, atol=1e-11)
    return np.sum(sol["y"][:, -1] ** 2)


def test_grad_odeint_keyword_args():
    check_grads(odeint_loss, np.array([1.0, 0.2]), 1.3, wrt=(0, 1))


def test_grad_solve_ivp_attribute_and_keywords():
    y0, p = np.array([1.0, 0.2]), np.array([1.3, 0.2, 0.5])
    check_grads(ivp_loss, y0, p, T, wrt=(0, 1, 2))
    check_grads(ivp_loss_by_item, y0, p, (0.0, 2.0), wrt=(0, 1, 2))


def test_other_attributes_are_still_refused():
    def loss(p):
        sol = si.solve_ivp(forced, (0.0, 1.0), np.ones(2), args=(p,))
        return np.sum(sol.y_events)

    with pytest.raises(UnsupportedSyntaxError, match="PB501"):
        pullback.grad(loss)(np.ones(3))


def test_other_keywords_are_still_refused():
    def loss(p):
        return np.sum(si.odeint(damped, np.ones(2), T, args=(p, 0.1), hmax=p)[-1])

    with pytest.raises(UnsupportedSyntaxError, match="PB502"):
        pullback.grad(loss)(0.5)


@pytest.mark.parametrize(
    "fn, options",
    [
        (si.solve_ivp, {"events": lambda t, y, p: y[0]}),
        (si.solve_ivp, {"dense_output": True}),
        (si.odeint, {"full_output": 1}),
    ],
)
def test_refused_options(fn, options):
    rule = pullback.default_registry().lookup(fn)
    if fn is si.odeint:
        call = (damped, np.ones(2), T, (1.0, 0.1))
    else:
        call = (forced, (0.0, 1.0), np.ones(2))
        options = dict(options, args=(np.ones(3),))
    with pytest.raises(UnsupportedCallError, match=next(iter(options))):
        rule.rrule(*call, **options)


def test_failed_solve_is_refused():
    def blow_up(t, y):
        return y * y

    rule = pullback.default_registry().lookup(si.solve_ivp)
    with pytest.raises(UnsupportedCallError, match="did not"):
        rule.rrule(blow_up, (0.0, 5.0), np.ones(1))


# -- the adjoint on the forward solve's own steps (scipy_ode_dense) ----------------------------
def scalar_only(t, y, k):
    """A right-hand side for one state at a time (math, float()): the general path."""
    return [y[1], -k * float(y[0]) - 0.1 * y[1] + math.sin(t)]


@pytest.mark.parametrize("method", ["RK45", "RK23", "Radau", "BDF", "LSODA", "DOP853"])
def test_forward_steps_agree_with_the_backward_solve(method, monkeypatch):
    """The two ways to the same adjoint agree (to the solver's tolerances)."""
    from pullback.rules import scipy_ode_adjoint

    def loss(y0, p):
        sol = si.solve_ivp(
            forced, (0.0, 3.0), y0, method=method, t_eval=T, args=(p,), rtol=1e-9, atol=1e-9
        )
        return np.sum(sol.y * sol.y)

    y0, p = np.array([1.0, 0.2]), np.array([1.3, 0.2, 0.5])
    fast = pullback.grad(loss, wrt=(0, 1))(y0, p)
    monkeypatch.setattr(scipy_ode_adjoint, "linear_adjoint", lambda *a: None)
    general = pullback.grad(loss, wrt=(0, 1))(y0, p)
    for f, g in zip(fast, general, strict=True):
        np.testing.assert_allclose(f, g, rtol=1e-6)


@pytest.mark.parametrize(
    "t_span, t_eval",
    [
        ((0.0, 2.0), None),  # the solver's own steps are the outputs
        ((0.0, 2.0), np.array([0.0, 0.5, 2.0])),  # outputs at both ends
        ((2.0, -0.5), np.array([1.5, 0.0, -0.4])),  # backwards in time
    ],
    ids=["steps", "ends", "backwards"],
)
def test_solve_ivp_on_forward_steps_times(t_span, t_eval, monkeypatch, request):
    kind = request.node.callspec.id
    no_backward_solve(monkeypatch)

    def loss(y0, k, c, t_span, t_eval):
        sol = si.solve_ivp(
            damped_tfirst, t_span, y0, t_eval=t_eval, args=(k, c), rtol=1e-11, atol=1e-11
        )
        # (the first and last states: the number of solver steps moves with the inputs)
        return np.sum(np.sin(sol.y[:, 0])) + np.sum(np.sin(sol.y[:, -1]) * sol.y[:, -1])

    # (the times move only where no output sits at an end of t_span)
    wrt = {"steps": (0, 1, 2, 3), "ends": (0, 1, 2), "backwards": (0, 1, 2, 4)}[kind]
    check_grads(loss, np.array([1.0, 0.2]), 1.3, 0.2, t_span, t_eval, wrt=wrt)


def test_large_systems_take_the_augmented_system(monkeypatch):
    """Past MAX_FLOATS (the Jacobians of every step held at once) the backward solve,
    whose memory does not grow with the number of steps."""
    from pullback.rules import scipy_ode_adjoint, scipy_ode_dense

    called = []
    real = scipy_ode_adjoint.adjoint_sweep
    monkeypatch.setattr(scipy_ode_adjoint, "adjoint_sweep", lambda *a: called.append(1) or real(*a))
    monkeypatch.setattr(scipy_ode_dense, "MAX_FLOATS", 100)
    y0, p = np.array([1.0, 0.2]), np.array([1.3, 0.2, 0.5])
    dy = {"y": np.linspace(-1.0, 1.0, 6).reshape(2, 3)}
    args = (forced, (0.0, 2.0), y0, "RK45", np.array([0.3, 1.0, 1.7]), False, None, False, (p,))
    check_rrule(si.solve_ivp, *args, fkwargs=TIGHT, output_cotangent=dy)
    check_rrule(si.odeint, damped, y0, np.linspace(0.0, 2.0, 4), (1.3, 0.2), fkwargs=TIGHT)
    assert len(called) >= 2


def test_solve_ivp_scalar_only_right_hand_side():
    y0 = np.array([1.0, 0.2])
    dy = {"y": np.linspace(-1.0, 1.0, 6).reshape(2, 3)}
    t_eval = np.array([0.3, 1.0, 1.7])
    args = (scalar_only, (0.0, 2.0), y0, "RK45", t_eval, False, None, False, (1.3,))
    check_rrule(si.solve_ivp, *args, fkwargs=TIGHT, output_cotangent=dy)


def test_solve_ivp_forward_steps_bisected_at_loose_tolerance(monkeypatch):
    """rtol 1e-3: the adjoint is still checked step by step, against finite differences of
    a solve at tight tolerances."""
    no_backward_solve(monkeypatch)

    def loss(p, rtol):
        sol = si.solve_ivp(forced, (0.0, 6.0), np.array([1.0, 0.0]), args=(p,), rtol=rtol)
        return sol.y[0, -1]

    p = np.array([2.0, 0.3, 0.8])
    g = pullback.grad(loss)(p, 1e-3)
    h = 1e-5
    fd = [(loss(p + h * e, 1e-12) - loss(p - h * e, 1e-12)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(g, fd, rtol=2e-2)
