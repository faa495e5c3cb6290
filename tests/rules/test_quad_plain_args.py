"""The usual quad call with a float64 array among its ``args`` (a closure's array, passed on
by the rewrite of its call, or an array given in ``args``) read at constant indices:
_quad_nodes.plain_args_cotangents answers it directly (the array spread over the nodes,
one pass), without the general layers. Checked against central differences and against
the general way it replaces; the cases it leaves to the general way (an array read whole,
float32 values) still answer, and a rebound global function changes the answer."""

from __future__ import annotations

import numpy as np
import pytest

si = pytest.importorskip("scipy.integrate")

from test_quad_nodes import without_first_step  # noqa: E402 - (the node pass alone)
from test_quad_usual_call import central  # noqa: E402 - (central differences in c, k)

import pullback  # noqa: E402
from pullback.rules import scipy_quad  # noqa: E402

ACT = np.cos  # a global function the integrands call (rebound by a test)


def closure_loss(c, k):
    p = np.array([c, k])
    return si.quad(lambda x: np.exp(-p[0] * x * x) * ACT(p[1] * x), 0.0, 3.0)[0]


def flipped_loss(c, k):
    p = np.array([c, k])
    return si.quad(lambda x: np.exp(-p[0] * x) * ACT(p[1] * x), 2.0, -0.5)[0]


def mixed(x, p, k):
    return np.exp(-p[0] * x * x) * ACT(k * x) + p[1] * x


def mixed_loss(c, k):
    return si.quad(mixed, 0.0, 3.0, args=(np.array([c, 0.5 * k]), k))[0]


def whole(x, p):
    return np.exp(-np.sum(p) * x)  # (p read whole: not proved elementwise)


def whole_loss(c, k):
    return si.quad(whole, 0.0, 2.0, args=(np.array([c, k]),))[0]


def gradient(loss, c, k):
    value, g = pullback.value_and_grad(loss, wrt=(0, 1))(c, k)
    assert value == loss(c, k)  # quad's own value
    return np.array([float(v) for v in g])


def answers_of(monkeypatch, owner, name):
    """What each call of ``owner.name`` answered, in a list that grows with the calls
    (``None``: the way after it took over; the first step, which answers smooth integrals
    before these ways, left out: test_quad_nodes.without_first_step)."""
    without_first_step(monkeypatch)
    answers = []
    real = getattr(owner, name)

    def counted(*a):
        answers.append(real(*a))
        return answers[-1]

    monkeypatch.setattr(owner, name, counted)
    return answers


def spy(monkeypatch):
    return answers_of(monkeypatch, scipy_quad, "plain_args_cotangents")


def general_gradient(monkeypatch, loss, c, k):
    with monkeypatch.context() as m:
        m.setattr(scipy_quad, "plain_args_cotangents", lambda *a: None)
        return gradient(loss, c, k)


@pytest.mark.parametrize("loss", [closure_loss, flipped_loss, mixed_loss], ids=lambda f: f.__name__)
def test_direct_answer_is_the_general_ways(monkeypatch, loss):
    answers = spy(monkeypatch)
    g = gradient(loss, 0.7, 1.3)
    assert answers and all(a is not None for a in answers)
    assert np.allclose(g, general_gradient(monkeypatch, loss, 0.7, 1.3), rtol=1e-13, atol=1e-15)
    assert np.allclose(g, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)


def test_array_cotangent_has_the_arrays_shape(monkeypatch):
    """The direct way's cotangent of the array in ``args`` (what vjp of quad gives it)."""
    p = np.array([0.7, 1.3])
    _, back = pullback.vjp(lambda q: si.quad(mixed, 0.0, 3.0, args=(q, 1.1))[0], p)
    (d,) = back(1.0)
    assert type(d) is np.ndarray and d.shape == (2,) and d.dtype == np.float64
    h = 1e-6
    for j in range(2):
        e = np.zeros(2)
        e[j] = h
        fd = (
            (si.quad(mixed, 0.0, 3.0, args=(p + e, 1.1))[0])
            - si.quad(mixed, 0.0, 3.0, args=(p - e, 1.1))[0]
        )
        assert np.isclose(d[j], fd / (2 * h), rtol=1e-6, atol=1e-9)


def test_array_read_whole_takes_the_general_way(monkeypatch):
    answers = spy(monkeypatch)
    g = gradient(whole_loss, 0.7, 1.3)
    assert answers == [None]
    assert np.allclose(g, central(whole_loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)


def test_float32_values_take_the_general_way(monkeypatch):
    answers = spy(monkeypatch)
    c, k = np.float32(0.7), np.float32(1.3)
    value, g = pullback.value_and_grad(closure_loss, wrt=(0, 1))(c, k)
    assert not answers  # (a float32 array is not the usual call's)
    assert all(np.asarray(v).dtype == np.float32 for v in g)
    expected = central(closure_loss, 0.7, 1.3)
    assert np.allclose(np.array(g, dtype=float), expected, rtol=1e-5, atol=1e-6)


def test_global_function_rebound_changes_the_gradient(monkeypatch):
    before = gradient(closure_loss, 0.7, 1.3)
    monkeypatch.setattr(__import__(__name__), "ACT", np.sin)
    after = gradient(closure_loss, 0.7, 1.3)
    assert not np.allclose(after, before)
    assert np.allclose(after, central(closure_loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)
