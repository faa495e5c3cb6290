"""Effects that carry no gradient run once, at every order, or the derivative is refused.

A second derivative pulls back through a call of a user function by running its forward
sweep again (transform/replay.py). What the call did only for its effect on the world --
``print``, an append to a module-level list, a logger object's method, a module-level
counter bound again -- ran once, for the primal, and the recompute leaves it out; a list
of counts a method appends to is given back to the recompute as the call found it
(recompute_state.py, on a copy, reset for each recompute: escapes.fresh_copies). Where the
recompute needs what an effect gave (a counter read back, a random draw), it is refused
(PB107) rather than differentiate another function. Each case counts the executions under
hessian, hvp, grad of grad, jvp of the gradient and a third derivative, and checks values
against central differences (float64 and float32, a number and an array).
"""

from __future__ import annotations

import numpy as np
import pytest
from fd import central_jacobian
from hypothesis import given, settings
from hypothesis import strategies as st
from sweeps import sweep

import pullback
from pullback.errors import UnsupportedCallError

CALLS = []


class Logger:
    def __init__(self):
        self.lines = []

    def log(self, text):
        self.lines.append(text)


LOG = Logger()


def cube(x):
    CALLS.append(1)
    print("cube ran")
    LOG.log("cube")
    return x**3


def by_helper(x):
    return np.sum(cube(x)) * 2.0


def by_loop(x):
    acc = 0.0
    for k in range(3):
        acc = acc + np.sum(cube(x)) * (k + 1.0)
    return acc


def _closure():
    seen = []

    def inner(x):
        seen.append(1)
        CALLS.append(3)
        return x**3

    def by_closure(x):
        return np.sum(inner(x) * 2.0)

    return by_closure


class Model:
    def __init__(self):
        self.w = 2.0

    def apply(self, x):
        CALLS.append(5)
        LOG.log("apply")
        return x**3 * self.w


def by_method(x):
    return np.sum(Model().apply(x))


# (name, f, d2/dx2 of f at x as a function of x, executions of the effects per primal run)
# (A helper that calls another one with effects, recursion, a call found at run time: the
# recompute runs the inner call as the primal does, its effects included: not yet here.)
CASES = [
    ("a helper", by_helper, lambda x: 12.0 * x, 1),
    ("a loop of calls", by_loop, lambda x: 36.0 * x, 3),
    ("a closure", _closure(), lambda x: 12.0 * x, 1),
    ("a method", by_method, lambda x: 12.0 * x, 1),
]
IDS = [c[0] for c in CASES]


def _count(run):
    CALLS.clear()
    LOG.lines.clear()
    out = run()
    return out, len(CALLS), len(LOG.lines)


@pytest.mark.parametrize("name, f, d2, n", sweep(CASES, quick=3), ids=sweep(IDS, quick=3))
def test_effects_run_once_at_every_order(name, f, d2, n, capsys):
    _, calls, logged = _count(lambda: f(0.7))
    printed = capsys.readouterr().out.count("cube ran")
    assert calls == n
    x = np.array([0.7, -1.3])
    v = np.array([0.4, 2.0])
    want = np.diag(d2(x))
    runs = {
        "hessian": lambda: pullback.hessian(f)(x),
        "hvp": lambda: pullback.hvp(f)(x, v),
        "grad of grad": lambda: pullback.grad(pullback.grad(f))(0.7),
        "jvp of grad": lambda: pullback.jvp(pullback.grad(f), (x,), (v,))[1],
        "third order": lambda: pullback.hessian(pullback.grad(f))(0.7),
    }
    expected = {
        "hessian": want,
        "hvp": want @ v,
        "grad of grad": d2(0.7),
        "jvp of grad": want @ v,
        "third order": d2(1.0),  # (d3 of c x**3 is 6 c, and d2 is 6 c x)
    }
    for what, run in runs.items():
        got, c, lg = _count(run)
        assert (c, lg) == (calls, logged), what
        assert capsys.readouterr().out.count("cube ran") == printed, what
        np.testing.assert_allclose(got, expected[what], rtol=1e-10, err_msg=what)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, f, d2, n", CASES[:2] + CASES[-1:], ids=IDS[:2] + IDS[-1:])
def test_against_differences(name, f, d2, n, dtype):
    rtol = 1e-6 if dtype == np.float64 else 1e-4
    x = np.array([0.7, -1.3], dtype=dtype)
    h = pullback.hessian(f)(x)
    assert h.dtype == dtype
    fd = central_jacobian(pullback.grad(f), x.astype(float), 1e-5)
    np.testing.assert_allclose(h, fd, rtol=1e-4)
    np.testing.assert_allclose(h, np.diag(d2(x.astype(float))), rtol=rtol)
    g = pullback.grad(f)
    hs = pullback.hessian(f)(dtype(0.7))
    np.testing.assert_allclose(hs, (g(0.7 + 1e-5) - g(0.7 - 1e-5)) / 2e-5, rtol=1e-4)


class History:
    def __init__(self):
        self.hist = []
        self.w = 2.0

    def step(self, x):
        self.hist.append(len(self.hist))
        return x**2 * self.w * len(self.hist)


def by_history(x, m):
    y = m.step(x)
    y = m.step(y) * len(m.hist)
    return np.sum(y)


def test_a_history_of_counts_read_back():
    # y1 = 2 x^2 (one entry), y2 = 4 y1^2 = 16 x^4, times len(hist) = 2: 32 x^4
    for x in (0.7, np.array([0.7, -1.3]), np.float32(0.7)):
        m = History()
        h = pullback.hessian(by_history)(x, m)
        assert m.hist == [0, 1]
        x64 = np.asarray(x, dtype=float)
        want = 384.0 * x64**2
        np.testing.assert_allclose(h, np.diag(want) if x64.ndim else want, rtol=1e-6)
        g = pullback.grad(lambda x: by_history(x, History()))
        fd = central_jacobian(g, np.atleast_1d(x64), 1e-5)
        np.testing.assert_allclose(np.atleast_2d(h), fd, rtol=1e-4)
    m = History()
    np.testing.assert_allclose(pullback.grad(pullback.grad(by_history))(0.7, m), 384.0 * 0.49)
    assert m.hist == [0, 1]
    third = pullback.hessian(pullback.grad(by_history))(0.7, History())
    np.testing.assert_allclose(third, 768.0 * 0.7, rtol=1e-10)


N = 0


def counted(x):
    global N
    N += 1
    return x**3


def counted_read(x):
    global N
    N += 1
    return x**3 * N


def test_a_counter_counts_once():
    global N
    N = 0
    f = lambda x: counted(x) * 2.0  # noqa: E731
    np.testing.assert_allclose(pullback.hessian(f)(0.7), 8.4)
    assert N == 1
    np.testing.assert_allclose(pullback.grad(pullback.grad(f))(0.7), 8.4)
    assert N == 2


def test_a_counter_read_back_is_refused():
    global N
    N = 0
    f = lambda x: counted_read(x) * 2.0  # noqa: E731
    with pytest.raises(UnsupportedCallError) as e:
        pullback.hessian(f)(0.7)
    text = str(e.value)
    assert "test_effects_once.py:" in text
    assert "PB107 this reads the module-level 'N', which the function also changes" in text
    assert "Fix: update 'N' outside the differentiated function" in text


def noisy(x):
    return x**3 + np.random.normal() * x


def test_a_random_draw_is_refused_and_the_stream_kept():
    f = lambda x: noisy(x) * 2.0  # noqa: E731
    np.random.seed(3)
    pullback.grad(f)(0.7)
    after_one = np.random.normal()
    np.random.seed(3)
    with pytest.raises(UnsupportedCallError) as e:
        pullback.hessian(f)(0.7)
    text = str(e.value)
    assert "PB107 'noisy' draws random numbers" in text
    assert "Fix: draw the numbers outside the differentiated function" in text
    assert np.random.normal() == after_one  # the primal's one draw, no more


@settings(max_examples=5, deadline=None)
@given(
    st.lists(st.sampled_from(["helper", "method", "log"]), min_size=1, max_size=4),
    st.floats(0.3, 1.5),
)
def test_random_programs_run_their_effects_once(calls, x0):
    def program(x):
        acc = 0.0
        for name in calls:
            if name == "helper":
                acc = acc + cube(x) * 0.5
            elif name == "method":
                acc = acc - Model().apply(x)
            else:
                LOG.log("program")
                acc = acc + x
        return acc

    _, primal, logged = _count(lambda: program(x0))
    got, c, lg = _count(lambda: pullback.hessian(program)(x0))
    assert (c, lg) == (primal, logged)
    want = sum({"helper": 3.0, "method": -12.0, "log": 0.0}[n] for n in calls) * x0
    np.testing.assert_allclose(got, want, rtol=1e-8)


class Buffers:
    def __init__(self):
        self.w = np.array([2.0])
        self.scratch = np.zeros(3)

    def scaled(self, x):
        return np.sum(x**3) * self.w[0]

    def touch(self):
        self.scratch[0] += 1.0

    def bump_w(self):
        self.w[0] += 1.0


def by_buffers(x, b):
    y = b.scaled(x)
    b.touch()  # (an array the method does not read, changed in place after the call)
    return y


def test_an_array_the_callee_does_not_read_may_change():
    # the record copies only what the callee's code may read (recompute_state)
    for dtype in (np.float64, np.float32):
        x = np.array([0.7, -1.3], dtype=dtype)
        h = pullback.hessian(by_buffers)(x, Buffers())
        np.testing.assert_allclose(h, np.diag(12.0 * x.astype(float)), rtol=1e-6)
    g = pullback.grad(lambda x: by_buffers(x, Buffers()))
    np.testing.assert_allclose(
        pullback.hessian(by_buffers)(0.7, Buffers()),
        (g(0.7 + 1e-5) - g(0.7 - 1e-5)) / 2e-5,
        rtol=1e-5,
    )


def by_read_buffer(x, b):
    y = b.scaled(x)
    b.bump_w()  # (the array the method reads, changed in place)
    return y


def test_an_array_the_callee_reads_changed_in_place_is_refused():
    with pytest.raises(UnsupportedCallError) as e:
        pullback.hessian(by_read_buffer)(0.7, Buffers())
    assert "PB107 a second derivative pulls back through this call of 'Buffers.scaled'" in str(
        e.value
    )
