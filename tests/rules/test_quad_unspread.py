"""quad's one-pass gradient with Python float parameters passed to the integrand's adjoint
as they are, not spread into vectors over the nodes (_quad_nodes._unspread): the same
node derivatives as the spread pass, the spread pass where it does not serve (a parameter
the integrand does not read), and the kept adjoint rebuilt when what it was built from
changes (a global function rebound, another registry)."""

from __future__ import annotations

import numpy as np
import pytest

si = pytest.importorskip("scipy.integrate")

from test_quad_plain_args import answers_of  # noqa: E402 - (a function's answers)
from test_quad_usual_call import central  # noqa: E402 - (differences in c and k)

import pullback  # noqa: E402
from pullback.rules import _quad_nodes  # noqa: E402

ACT = np.cos  # a global function the integrand calls: rebound by a test


def gauss_act(x, c, k):
    return np.exp(-c * x * x) * ACT(k * x)


def reads_c_only(x, c, k):
    return np.exp(-c * x)


def loss_of(f):
    def loss(c, k):
        return si.quad(f, 0.0, 3.0, args=(c, k))[0]

    return loss


def gradient(loss, c, k):
    return np.array([float(v) for v in pullback.grad(loss, wrt=(0, 1))(c, k)])


def spy(monkeypatch):
    """What each unspread pass answered (``None``: the spread pass took over)."""
    return answers_of(monkeypatch, _quad_nodes, "_unspread")


def spread_gradient(monkeypatch, loss, c, k):
    with monkeypatch.context() as m:
        m.setattr(_quad_nodes, "_unspread", lambda *a: None)
        return gradient(loss, c, k)


@pytest.mark.parametrize("c, k", [(0.7, 1.3), (1.5, -0.8)])
def test_unspread_pass_gives_the_spread_pass_derivatives(monkeypatch, c, k):
    answers = spy(monkeypatch)
    loss = loss_of(gauss_act)
    g = gradient(loss, c, k)
    assert answers and all(a is not None for a in answers)
    assert np.allclose(g, spread_gradient(monkeypatch, loss, c, k), rtol=1e-13, atol=1e-15)
    assert np.allclose(g, central(loss, c, k), rtol=1e-6, atol=1e-9)


def test_first_and_later_gradients_agree(monkeypatch):
    """The adjoint is built by the first unspread pass itself: the first gradient is
    computed the way every later one is."""
    answers = spy(monkeypatch)

    def fresh(x, c, k):
        return np.sin(c * x) * np.exp(-k * x)

    loss = loss_of(fresh)
    first = gradient(loss, 0.4, 0.9)
    assert answers[0] is not None
    assert np.array_equal(first, gradient(loss, 0.4, 0.9))


def test_parameter_not_read_takes_the_spread_pass(monkeypatch):
    answers = spy(monkeypatch)
    loss = loss_of(reads_c_only)
    g = gradient(loss, 0.7, 1.3)
    assert answers and answers[0] is None  # (k's cotangent is no vector)
    assert g[1] == 0.0
    assert np.allclose(g, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)


def test_global_function_rebound_changes_the_gradient(monkeypatch):
    loss = loss_of(gauss_act)
    before = gradient(loss, 0.7, 1.3)
    monkeypatch.setattr(__import__(__name__), "ACT", np.sin)
    after = gradient(loss, 0.7, 1.3)
    assert not np.allclose(after, before)
    assert np.allclose(after, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)


def test_other_registry_builds_its_own_adjoint():
    """A rule registered in another registry for the integrand's ufunc is used there (the
    kept adjoint is per registry and version), and not outside it."""
    loss = loss_of(gauss_act)
    plain = gradient(loss, 0.7, 1.3)
    mine = pullback.default_registry().copy()

    def doubled_exp(x):
        def pullback_(dy):
            return (2.0 * dy * np.exp(x),)  # a deliberately different derivative

        return np.exp(x), pullback_

    mine.register(np.exp, doubled_exp)
    with pullback.use_registry(mine):
        changed = gradient(loss, 0.7, 1.3)
    assert np.allclose(changed[0], 2.0 * plain[0], rtol=1e-9)
    assert np.array_equal(gradient(loss, 0.7, 1.3), plain)
