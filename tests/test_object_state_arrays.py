"""Array fields of an object the function owns written in place (transform/object_arrays.py):
``self.buf[i] = v`` in a method called in a loop, ``s.state[:, k] = x`` in the function,
``self.acc[i] += v``, where only the object can reach the array, are stores of a written
copy, new versions of the object. Checked against central differences (float64 and
float32), with jvp, Hessian-vector products and the Hessian against the Jacobian of the
gradient; the value is the primal's. Where another name, a view, an argument or another
field may hold the array, the write stays refused when it runs, at its line, with a fix
that works (checked too)."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_hessian_is_jacobian_of_grad
from probe.probe_harness import check_float32, check_probe, check_refusal

import pullback

P3 = np.array([0.3, -0.2, 0.7])


class Buffer:
    def __init__(self, n):
        self.buf = np.zeros(n)
        self.count = 0

    def put(self, i, v):
        self.buf[i] = v
        self.count += 1

    def energy(self):
        return np.sum(self.buf**2) + self.buf[0] * self.buf[-1]


def method_in_a_loop(p):
    b = Buffer(3)
    for i in range(3):
        b.put(i, p[i] * p[(i + 1) % 3])
    return b.energy()


def written_in_the_body(p):
    b = Buffer(3)
    for i in range(3):
        b.buf[i] = np.sin(p[i]) + b.buf[i - 1] * 0.5
    return np.sum(b.buf * p)


class Columns:
    def __init__(self, n):
        self.state = np.zeros((2, n))

    def set_column(self, k, v):
        self.state[:, k] = v

    def bump(self, k, v):
        self.state[0, k] += v


def columns(p):
    c = Columns(3)
    for k in range(3):
        c.set_column(k, np.array([p[k], p[k] ** 2]))
        c.bump(k, np.cos(p[k]))
    return np.sum(np.sin(c.state)) + np.max(c.state) * p[0]


class Smoother:
    """Keeps the last two inputs in a ring written in place."""

    def __init__(self, a):
        self.a = a
        self.ring = np.zeros(2)

    def step(self, x, k):
        y = self.a * x + 0.3 * self.ring[(k + 1) % 2]
        self.ring[k % 2] = y
        return y


def ring_buffer(p):
    s = Smoother(p[0])
    total = 0.0
    for k, x in enumerate([0.5, -0.3, 0.8, 0.1]):
        y = s.step(x * p[1], k)
        total = total + y * y
    return total + np.sum(s.ring) * p[2]


CASES = {
    "method_in_a_loop": method_in_a_loop,
    "written_in_the_body": written_in_the_body,
    "columns": columns,
    "ring_buffer": ring_buffer,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_differences(name):
    check_probe(CASES[name], P3, second=True)
    check_float32(CASES[name], P3)


@pytest.mark.parametrize("name", sorted(CASES))
def test_hessian_is_jacobian_of_grad_and_value_is_the_primal(name):
    f = CASES[name]
    check_hessian_is_jacobian_of_grad(f, P3)
    value, _ = pullback.value_and_grad(f)(P3)
    assert value == pytest.approx(f(P3), rel=1e-12)


# -- where something else may reach the array: refused when it runs, at the write ---------


class Given:
    def __init__(self, w):
        self.w = w  # the caller's array, not a new one

    def put(self, i, v):
        self.w[i] = v


def array_from_outside(p, w0):
    g = Given(w0)
    g.put(0, p[0] * 2.0)
    return np.sum(g.w * p)


class Viewed:
    def __init__(self, n):
        self.buf = np.zeros(n)

    def put(self, i, v):
        self.buf[i] = v

    def view(self):
        return self.buf  # a second holder of the array


def read_as_a_whole(p):
    o = Viewed(3)
    before = o.view()
    o.put(1, p[1] * 3.0)
    return np.sum(before * p)


def test_writes_that_may_alias_stay_refused():
    w0 = np.ones(3)
    write = f"{__file__}:{Given.put.__code__.co_firstlineno + 1}:9"
    check_refusal(array_from_outside, P3, w0, says=(f"{write}: PB101", "obj.w = w"))
    assert np.all(w0 == 1.0)  # refused before the write
    write = f"{__file__}:{Viewed.put.__code__.co_firstlineno + 1}:9"
    check_refusal(read_as_a_whole, P3, says=(f"{write}: PB101", "Fix:"))


class GivenFixed(Given):
    def put(self, i, v):
        w = self.w.copy()  # the message's fix
        w[i] = v
        self.w = w


def array_from_outside_fixed(p, w0):
    g = GivenFixed(w0)
    g.put(0, p[0] * 2.0)
    return np.sum(g.w * p)


def test_the_fix_works():
    w0 = np.ones(3)
    check_probe(array_from_outside_fixed, P3, w0, second=True)
    check_float32(array_from_outside_fixed, P3, w0)
    assert np.all(w0 == 1.0)
