"""What stays refused next to the call shapes of test_run_time_call_shapes.py, as golden
text whose fix passes; and a clock kept on a solver object, which carries no gradient,
at second order.

* a lambda appended in a loop whose default is computed from a differentiated value
  (``lambda t, w=p[k]: w * t``): the default is kept in the function object, where no
  gradient follows it (PB404); the fix computes it in the body (``lambda t, k=k: ...``);
* a clock appended to a list on the object and read back by the same method at second
  order (the solver is differentiated whole there, so ``t += self.h`` is): PB106, fixed
  by a local list;
* the same clock appended and never read back by the method (``self.f(y)`` calls a
  callable held on the instance, the loop's next append only writes): it runs.
"""

from __future__ import annotations

import numpy as np
import pytest

import pullback
from pullback.testing import check_grads

X = np.array([0.5, 1.0, 1.5])
HERE = __file__


def defaults_from_the_input(p):
    fs = []
    for k in range(3):
        fs.append(lambda t, w=p[k]: w * t)
    return sum(f(2.0) for f in fs)


def defaults_fixed(p):
    fs = []
    for k in range(3):
        fs.append(lambda t, k=k: p[k] * t)
    return sum(f(2.0) for f in fs)


class Solver:
    def __init__(self, f, h):
        self.f = f
        self.h = h
        self.ts = []

    def run(self, y):
        t = 0.0
        for _ in range(4):
            y = y + self.h * self.f(y)
            t += self.h
            self.ts.append(t)
        return y

    def run_read_back(self, y):
        t = 0.0
        for _ in range(4):
            y = y + self.h * self.f(y)
            t += self.h
            self.ts.append(t)
        return y * self.ts[-1]

    def run_local(self, y):
        t = 0.0
        ts_local = []
        for _ in range(4):
            y = y + self.h * self.f(y)
            t += self.h
            ts_local.append(t)
        return y * ts_local[-1]


def clock_kept(y):
    return np.sum(Solver(np.sin, 0.1).run(y) ** 2)


def clock_read_back(y):
    return np.sum(Solver(np.sin, 0.1).run_read_back(y) ** 2)


def clock_local(y):
    return np.sum(Solver(np.sin, 0.1).run_local(y) ** 2)


def _line(fn, text):
    lines, first = __import__("inspect").getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def test_a_default_computed_from_a_differentiated_value_is_differentiated():
    # a record of its default since stop 34 (transform/closure_cells.py): refused before
    assert check_grads(defaults_from_the_input, X, order=2) == "reverse over reverse"
    np.testing.assert_allclose(
        pullback.grad(defaults_from_the_input)(X), pullback.grad(defaults_fixed)(X)
    )
    assert check_grads(defaults_fixed, X, order=2) == "reverse over reverse"
    np.testing.assert_allclose(pullback.grad(defaults_fixed)(X), [2.0, 2.0, 2.0])


def test_a_clock_read_back_from_the_object_at_second_order():
    # Refused at second order (PB106) until the second derivative's recompute ran on the
    # object as the call found it (recompute_state.py): the clock appended to self.ts and
    # read back is a number, and the Hessian is the one of differences of the gradient.
    check_grads(clock_read_back, X)
    g = pullback.grad(clock_read_back)
    step = 1e-5
    fd = np.array([(g(X + step * e) - g(X - step * e)) / (2 * step) for e in np.eye(len(X))])
    np.testing.assert_allclose(pullback.hessian(clock_read_back)(X), fd, rtol=1e-6, atol=1e-8)
    assert check_grads(clock_local, X, order=2) == "reverse over reverse"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_clock_kept_on_the_object_runs_at_second_order(dtype):
    assert check_grads(clock_kept, X, order=2) == "reverse over reverse"
    x = X.astype(dtype)
    tol = 1e-6 if dtype == np.float64 else 2e-3
    g = pullback.grad(clock_kept)
    step = 1e-5
    fd = np.array([(g(X + step * e) - g(X - step * e)) / (2 * step) for e in np.eye(3)])
    h = pullback.hessian(clock_kept)(x)
    assert h.dtype == dtype
    np.testing.assert_allclose(h, fd, rtol=10 * tol, atol=10 * tol)
    v = np.array([0.3, -1.0, 2.0])
    _, t = pullback.jvp(clock_kept, (x,), (v.astype(dtype),))
    want = (clock_kept(X + 1e-6 * v) - clock_kept(X - 1e-6 * v)) / 2e-6
    np.testing.assert_allclose(t, want, rtol=tol, atol=tol)
