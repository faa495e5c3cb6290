"""Forward mode: the tangent of ``a + b`` or ``a - b`` with one varied operand has the
result's shape (found by the finance probe: ``epsilon = data - mu`` in a GARCH likelihood
then ``epsilon[i - 1]`` crashed with 'invalid index to scalar variable')."""

import numpy as np
import pytest
from fd import check_jvp

import pullback

DATA = np.array([0.3, -1.2, 0.8, 2.0])


def centered_read(p, data):
    mu = p[0]
    epsilon = data - mu
    return epsilon[1] ** 2 + p[1] * epsilon[3]


def shifted_slice(mu, data):
    e = data + mu
    return np.sum(e[1:] ** 2)


def constant_minus(mu, data):
    e = data - mu
    f = 1.0 - e
    return f[2] * f[0]


def row_shift(v, m):
    shifted = m - v  # v of shape (3,), m of shape (2, 3): rows shifted
    return np.sum(shifted[1] ** 2)


def loop_read(mu, data):
    eps = data - mu
    s = 0.0
    for i in range(1, len(data)):
        s = s + eps[i - 1] * eps[i]
    return s


CASES = [
    (centered_read, (np.array([0.4, 1.5]), DATA)),
    (shifted_slice, (0.7, DATA)),
    (constant_minus, (0.7, DATA)),
    (row_shift, (np.array([0.1, 0.2, 0.3]), np.arange(6.0).reshape(2, 3))),
    (loop_read, (0.1, DATA)),
]


@pytest.mark.parametrize("f,args", CASES, ids=[c[0].__name__ for c in CASES])
def test_jvp_of_a_broadcast_sum(f, args):
    x = args[0]
    t = np.linspace(0.5, -1.0, np.size(x)).reshape(np.shape(x)) if np.ndim(x) else 0.75
    got = check_jvp(f, args, (t, np.zeros_like(args[1])))
    g = pullback.grad(f)(*args)
    np.testing.assert_allclose(got, np.sum(g * t), rtol=1e-9, atol=1e-12)


def test_the_tangent_has_the_result_shape():
    _, t = pullback.jvp(lambda mu, data: data - mu, (0.5, DATA), (2.0, pullback.ZERO))
    np.testing.assert_array_equal(t, np.full(4, -2.0))


def test_stacked_directions_through_a_broadcast_sum():
    stack = np.array([1.0, -2.0, 0.5])
    _, ts = pullback.stacked_jvp(shifted_slice, (0.7, DATA), (stack, None))
    g = pullback.grad(shifted_slice)(0.7, DATA)
    np.testing.assert_allclose(ts, g * stack, rtol=1e-12)


# The same for lists and tuples: `a + b` with one constant side is a concatenation, whose
# tangent has ZERO at the constant side's places (found by probe_fin: jvp of a slice store
# `buf[1:4] = [...]` into a local list put the new items' tangents at the first places).
def list_slice_store(x):
    buf = [0.0] * 5
    buf[1:4] = [x[0], x[1] * 2, x[2] ** 2]
    return sum(buf) * buf[2]


def constant_prefix(x):
    xs = [1.0, 2.0] + [x[0] * x[1], x[2]]
    return xs[2] + 3.0 * xs[3] + xs[0]


def tuple_suffix(x):
    t = (x[0], x[1] ** 2) + (4.0,)
    return t[1] * t[2] + t[0]


@pytest.mark.parametrize("f", [list_slice_store, constant_prefix, tuple_suffix])
def test_jvp_of_a_concatenation_with_a_constant_side(f):
    x = np.array([0.3, -0.7, 1.1])
    t = np.array([0.5, -1.0, 0.25])
    got = check_jvp(f, (x,), (t,))
    np.testing.assert_allclose(got, pullback.grad(f)(x) @ t, rtol=1e-9, atol=1e-12)


# np.dot(W, h) in a loop whose h has no tangent on the first pass: the varied name's tangent
# is ZERO when the line first runs, and np.dot(W, ZERO) once took ZERO for a scalar (a (3, 3)
# "tangent" of a (3, 1) value: a silently wrong jvp, found by probe3 on min-char-rnn).
def dot_recurrence(W, h0):
    h = h0
    for _ in range(3):
        h = np.dot(W, h)
    return np.sum(h)


def dot_recurrence_with_input(W, h0):
    h = h0
    for t in range(3):
        x = np.zeros((4, 1))
        x[t] = 1.0
        h = np.tanh(np.dot(np.ones((3, 4)), x) + np.dot(W, h))
    return np.sum(h)


def kron_outer_recurrence(W, h0):
    acc = h0[:, 0]
    for _ in range(2):
        acc = np.kron(W[0], acc)[:3] + np.outer(W[1], acc)[0]
    return np.sum(acc**2)


@pytest.mark.parametrize("f", [dot_recurrence, dot_recurrence_with_input, kron_outer_recurrence])
def test_jvp_of_a_bilinear_call_whose_tangent_starts_as_zero(f):
    rng = np.random.default_rng(0)
    W, h0 = 0.5 * rng.standard_normal((3, 3)), rng.standard_normal((3, 1))
    V = rng.standard_normal((3, 3))
    got = check_jvp(f, (W, h0), (V, pullback.ZERO))  # h0 gets no tangent at all
    np.testing.assert_allclose(got, np.sum(pullback.grad(f)(W, h0) * V), rtol=1e-9)
