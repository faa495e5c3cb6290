"""grad's fused sweeps release values after their last use (pullback.transform.release):
the gradients stay those of the two sweeps, the peak memory of an elementwise gradient
drops, and nothing is released that a later statement, a branch or a closure reads."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

from pullback import grad, vjp
from pullback.transform.code import Compound, Line
from pullback.transform.release import release_dead

# gc.collect() and gc.get_objects() here scan only this file's objects (see conftest).
pytestmark = pytest.mark.usefixtures("own_heap")


def texts(block):
    return [item.text if isinstance(item, Line) else item.header for item in block]


def test_release_after_the_last_mention_only():
    body = [
        Line("a = f(x)"),
        Compound("if a:", [Line("b = a + 1")], [Line("b = 2")]),
        Line("c = b * a"),
        Line("d = c + 1"),
        Line("return d, c"),
    ]
    out = texts(release_dead(body, lambda name: True))
    # a and b after their last reader; c is returned; d is read by the return
    assert out == ["a = f(x)", "if a:", "c = b * a", "a = b = None", "d = c + 1", "return d, c"]
    # what the predicate refuses stays
    out = texts(release_dead(body, lambda name: name != "a"))
    assert "b = None" in out and "a = b = None" not in out


@pytest.mark.parametrize(
    "line", ["g = lambda: a", "def g():", "del a", "v = locals()", "nonlocal a"]
)
def test_nothing_released_where_a_name_may_be_read_out_of_sight(line):
    body = [Line("a = f(x)"), Line(line), Line("b = a + 1"), Line("c = b"), Line("return c")]
    assert release_dead(body, lambda name: True) is body


def elementwise(x):
    return np.sum(np.sin(x) * x)


def branches(x, flag):
    y = np.cos(x)
    if flag > 0:
        z = y * x
    else:
        z = y + 1.0
    w = z * z
    return np.sum(w) + np.sum(y)


def loop(x, n):
    acc = x * 0.0
    t = np.tanh(x)
    for k in range(n):
        acc = acc + t * k
    return np.sum(acc * x)


@pytest.mark.parametrize(
    "fn, args",
    [
        (elementwise, (np.linspace(0.1, 1.0, 7),)),
        (branches, (np.linspace(0.1, 1.0, 5), 1.0)),
        (branches, (np.linspace(0.1, 1.0, 5), -1.0)),
        (loop, (np.linspace(-1.0, 1.0, 6), 3)),
    ],
)
def test_fused_gradients_are_those_of_the_sweeps(fn, args):
    g = grad(fn)
    _, back = vjp(fn, *args, wrt=0)
    want = back(1.0)
    for _ in range(4):  # the first call, the one that builds the entry, and after
        np.testing.assert_array_equal(g(*args), want)
    adj = g.adjoint(*args)
    fused, _ = adj.fused_sweeps()
    assert fused is not None


def _peak(fn):
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_elementwise_gradient_peak_memory():
    x = np.linspace(0.0, 1.0, 400_000)
    g = grad(elementwise)
    g(x[:10])  # built on a small array; the calls below are the second and later ones
    for _ in range(2):
        peak = _peak(lambda: g(x))
        # sin(x) and its product forward; then the two cotangents and cos(x): three
        # arrays of x's size at the peak (five while every value lived to the end)
        assert peak < 3.3 * x.nbytes
    np.testing.assert_allclose(g(x), np.cos(x) * x + np.sin(x), rtol=1e-12, atol=1e-12)
