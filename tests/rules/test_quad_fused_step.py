"""quad's first step through the integrand's fused sweeps and the pass kept per interval
(rules/_quad_first.py: ``_float_pass``, ``float_step_cotangents``): the same value, to the
bit, and the same gradient as the two sweeps run apart, and nothing kept ever answers for
an integrand that changed."""

from __future__ import annotations

import math

import numpy as np
import pytest

si = pytest.importorskip("scipy.integrate")

from test_quad_usual_call import central  # noqa: E402 - (central differences in c, k)

import pullback  # noqa: E402
from pullback.rules import _quad_first, scipy_quad  # noqa: E402
from pullback.rules._elementwise_recheck import recheck_of  # noqa: E402
from pullback.rules._user_vjp import user_vjp_of  # noqa: E402
from pullback.transform.build import Adjoint  # noqa: E402

WAVE = np.sin  # a global function an integrand calls (rebound by a test)
SCALE = 1.5  # a global scalar it reads


def gauss_cos(x, c, k):
    return np.exp(-c * x * x) * np.cos(k * x)


def waved(x, c, k):
    return WAVE(k * x) * np.exp(-c * x) * SCALE


def loss_of(f, lo, hi):
    def loss(c, k):
        return si.quad(f, lo, hi, args=(c, k))[0]

    return loss


def value_and_gradient(loss, c, k):
    value, g = pullback.value_and_grad(loss, wrt=(0, 1))(c, k)
    return value, np.array([float(v) for v in g])


def test_the_kept_cotangents_are_those_of_the_two_sweeps():
    """The fused pass keeps the cotangents of ones the separate sweeps give, bit for bit."""
    step = _quad_first.first_step(gauss_cos, 0.0, 3.0, (0.7, 1.3), 1.49e-8, 1.49e-8, 50)
    assert step is not None and type(step.back) is tuple
    vjp = user_vjp_of(gauss_cos, (1, 2))
    adj = vjp.keyed(_quad_first._float_layout(2)[2])
    y, back = adj.forward(_quad_first.step_nodes(0.0, 3.0, 1.0, 1.0), 0.7, 1.3)
    apart = back(np.ones(23))
    assert np.array_equal(y, step.y)
    for fused, separate in zip(step.back, apart, strict=True):
        assert np.array_equal(fused, separate)
    assert step.ends == tuple(y[21:].tolist())


@pytest.mark.parametrize("limits", [(0.0, 3.0), (2.5, -0.5)])
def test_without_fused_sweeps_the_kept_pullback_answers_alike(monkeypatch, limits):
    """An adjoint without fused sweeps (a long integrand) keeps its pullback instead: the
    same value and gradient, and both agree with quad and central differences."""
    loss = loss_of(gauss_cos, *limits)
    fused = value_and_gradient(loss, 0.7, 1.3)
    user_vjp_of(gauss_cos, (1, 2)).steps.clear()
    monkeypatch.setattr(Adjoint, "fused_sweeps", lambda self: None)
    apart = value_and_gradient(loss, 0.7, 1.3)
    assert fused[0] == apart[0] == loss(0.7, 1.3)
    assert np.array_equal(fused[1], apart[1])
    assert np.allclose(apart[1], central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)


def test_a_rebound_global_is_seen_by_the_next_gradient(monkeypatch):
    """The pass kept for ``[lo, hi]`` answers only while the integrand's world is the one it
    was built in: a global function or scalar rebound between gradients is read anew."""
    loss = loss_of(waved, 0.0, 2.0)
    for wave, scale in ((np.sin, 1.5), (np.cos, 1.5), (np.cos, -0.25)):
        monkeypatch.setitem(globals(), "WAVE", wave)
        monkeypatch.setitem(globals(), "SCALE", scale)
        value, g = value_and_gradient(loss, 0.7, 1.3)
        assert value == loss(0.7, 1.3)
        assert np.allclose(g, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)


def test_limits_that_move_keep_a_bounded_number_of_passes():
    """An optimizer moving the limits makes a pass per interval: the oldest go."""
    steps = user_vjp_of(gauss_cos, (1, 2)).steps
    for hi in np.linspace(1.0, 3.0, 3 * _quad_first._PLANS_KEPT):
        loss = loss_of(gauss_cos, 0.0, float(hi))
        value, g = value_and_gradient(loss, 0.7, 1.3)
        assert value == loss(0.7, 1.3)
        assert len(steps) <= _quad_first._PLANS_KEPT
    assert np.allclose(g, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("reverse", [False, True])
def test_float_cotangents_are_the_scaled_totals(reverse):
    """The usual pullback's one function gives what step_totals and the rule's scaling
    give, bit for bit, with quad's tolerances and with tolerances that bisect."""
    step = _quad_first.first_step(gauss_cos, 0.0, 3.0, (0.7, 1.3), 1.49e-8, 1.49e-8, 50)
    g = -0.375
    for p in ({"epsabs": 1.49e-8, "epsrel": 1.49e-8, "limit": 50},
              {"epsabs": 1e-300, "epsrel": 1e-14, "limit": 50}):  # fmt: skip
        totals, fa, fb = _quad_first.step_totals(step, True, p, reverse)
        expected = (-g * fa, g * fb, tuple(g * t for t in totals))
        assert _quad_first.float_step_cotangents(g, step, reverse, p) == expected
    exact = si.quad(lambda x: -x * x * np.exp(-0.7 * x * x) * np.cos(1.3 * x), 0.0, 3.0)[0]
    assert math.isclose(expected[2][0] / g, -exact if reverse else exact, rel_tol=1e-9)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradient_by_the_fused_step(dtype):
    """float32 parameters (NumPy scalars, not Python floats) take the general way; float64
    ones and Python floats the fused step: all agree with central differences."""
    loss = loss_of(gauss_cos, 0.0, 3.0)
    grad = pullback.grad(loss, wrt=(0, 1))
    c, k = dtype(0.7), dtype(1.3)
    g = np.array([float(v) for v in grad(c, k)])
    tol = 1e-6 if dtype == np.float64 else 1e-3
    assert np.allclose(g, central(loss, 0.7, 1.3), rtol=tol, atol=tol * 1e-3)


def test_a_zero_limit_keeps_its_sign():
    """``0.0 == -0.0``: the pass kept for ``[0.0, hi]`` is not the one of ``[-0.0, hi]``
    (an integrand may tell them apart: ``1 / x``); each keeps its nodes, the limit first."""
    steps = user_vjp_of(gauss_cos, (1, 2)).steps
    steps.clear()
    for lo in (0.0, -0.0, 0.0):
        loss = loss_of(gauss_cos, lo, 3.0)
        value, _ = value_and_gradient(loss, 0.7, 1.3)
        assert value == loss(0.7, 1.3)
    assert len(steps) == 2
    for key, plan in steps.items():
        assert math.copysign(1.0, plan[4][21]) == math.copysign(1.0, key[1]) == key[3]


def test_a_scalar_rebound_to_a_narrower_float_goes_to_quadpack(monkeypatch):
    """The compiled recheck of the proof fails when a free scalar name holds a float32 (its
    arithmetic with quad's Python float is float32, with the array pass float64): the full
    proof then refuses the step, and QUADPACK answers, to the bit."""
    answers = []
    real = _quad_first.first_step
    monkeypatch.setattr(
        scipy_quad, "first_step", lambda *a: answers.append(real(*a)) or answers[-1]
    )
    loss = loss_of(waved, 0.0, 2.0)
    for scale in (1.5, np.float32(1.5), 1.5):
        monkeypatch.setitem(globals(), "SCALE", scale)
        value, g = value_and_gradient(loss, 0.7, 1.3)
        assert value == loss(0.7, 1.3)
        assert np.allclose(g, central(loss, 0.7, 1.3), rtol=1e-5, atol=1e-8)
    assert [a is not None for a in answers] == [True, False, True]


def test_a_rebound_closure_cell_is_seen():
    """A closure's cell rebound between gradients (``nonlocal``): read anew."""
    wave = np.sin

    def integrand(x, c, k):
        return wave(k * x) * np.exp(-c * x)

    loss = loss_of(integrand, 0.0, 2.0)
    for now in (np.sin, np.cos, np.tanh):
        wave = now
        value, g = value_and_gradient(loss, 0.7, 1.3)
        assert value == loss(0.7, 1.3)
        assert np.allclose(g, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)


def test_the_recheck_is_the_proofs_per_call_part():
    """What the compiled test reads: the code, each function by identity, each scalar's
    type; a name that is neither a global nor a cell gives no test (the full proof)."""
    vjp = user_vjp_of(waved, (1, 2))
    assert _quad_first.same_bits_in_x(waved, (0.7, 1.3), owner=vjp)
    holds = recheck_of(waved, vjp)
    assert holds() and "_G['WAVE'] is" in holds.source and "_G['SCALE'].__class__" in holds.source
    kept = vjp.proof[2]
    plan, fits, powers = kept
    try:  # (a builtin or an import inside the function: the proof's own lookup)
        vjp.proof[2] = ((("not_a_global", (), None), *plan), fits, powers)
        assert recheck_of(waved, vjp) is None
    finally:
        vjp.proof[2] = kept
