"""``pullback.vjp`` keeps a plan per (function, ``wrt``, argument kinds) on the function
(api._planned_vjp): what it reads at every call (``wrt`` as names, the adjoint) is reused
only while the function's code, defaults, globals and the registry are those it was made
with, so a plan never changes an answer. Results against central differences (float64,
float32) and against the general path; the refusals stay those of the general path."""

import numpy as np
import pytest

import pullback
from pullback import ArgumentError, PullbackError

X = np.array([0.3, -0.7, 1.2])
Y = np.array([1.5, 0.4, -0.9])
SCALE = 2.0


def f(x, y):
    return np.sum(np.sin(x) * y) * SCALE


def vector_out(x, y, k):
    return np.tanh(x * y) * k


def with_default(x, c=3.0):
    return np.sum(x ** 2) * c


def _differences(fn, args, i, eps=1e-6):
    args = list(args)
    x = args[i]
    out = np.zeros_like(x, dtype=float)
    for j in range(x.size):
        e = np.zeros_like(x)
        e.flat[j] = eps
        hi = fn(*args[:i], x + e, *args[i + 1 :])
        lo = fn(*args[:i], x - e, *args[i + 1 :])
        out.flat[j] = np.sum(hi - lo) / (2 * eps)
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_repeated_calls_against_differences(dtype):
    x, y = X.astype(dtype), Y.astype(dtype)
    tol = 1e-7 if dtype == np.float64 else 1e-4
    for _ in range(3):
        value, back = pullback.vjp(f, x, y)
        dx, dy = back(1.0)
        assert value == pytest.approx(f(x, y))
        assert dx.dtype == dtype and dy.dtype == dtype
        np.testing.assert_allclose(dx, _differences(f, (X, Y), 0), rtol=tol, atol=tol)
        np.testing.assert_allclose(dy, _differences(f, (X, Y), 1), rtol=tol, atol=tol)


@pytest.mark.parametrize("wrt", [0, 1, "y", (0, 1), [1, 0], ("x",), None])
def test_every_form_of_wrt(wrt):
    for _ in range(2):
        _, back = pullback.vjp(f, X, Y, wrt=wrt)
        got = back(1.0)
        picks = {None: (0, 1), "y": 1, ("x",): (0,)}.get(
            wrt if not isinstance(wrt, list) else None, wrt
        )
        if isinstance(wrt, list):
            picks = tuple(wrt)
        if isinstance(picks, (tuple, list)):
            assert isinstance(got, tuple) and len(got) == len(picks)
            for g, i in zip(got, picks, strict=True):
                np.testing.assert_allclose(g, _differences(f, (X, Y), i), rtol=1e-7)
        else:
            np.testing.assert_allclose(got, _differences(f, (X, Y), picks), rtol=1e-7)


def test_a_vector_output_with_an_integer_argument():
    v = np.array([1.0, -2.0, 0.5])
    for k in (2, 3):
        y, back = pullback.vjp(vector_out, X, Y, k, wrt=(0, 1))
        np.testing.assert_allclose(y, vector_out(X, Y, k))
        dx, dy = back(v)

        def along(x, y, k=k):
            return np.sum(vector_out(x, y, k) * v)

        np.testing.assert_allclose(dx, _differences(along, (X, Y), 0), rtol=1e-7)
        np.testing.assert_allclose(dy, _differences(along, (X, Y), 1), rtol=1e-7)


def test_a_changed_global_code_or_default_is_seen():
    global SCALE
    first = pullback.vjp(f, X, Y)[1](1.0)[0]
    try:
        SCALE = 5.0
        np.testing.assert_allclose(pullback.vjp(f, X, Y)[1](1.0)[0], first * 2.5, rtol=1e-12)
    finally:
        SCALE = 2.0

    def g(x):
        return np.sum(x ** 2)

    np.testing.assert_allclose(pullback.vjp(g, X)[1](1.0)[0], 2 * X)
    g.__code__ = (lambda x: np.sum(x ** 3)).__code__
    with pytest.raises(pullback.SourceUnavailableError, match="no longer matches"):
        pullback.vjp(g, X)  # new code: its plan is not reused (the source is read again)
    np.testing.assert_allclose(pullback.vjp(with_default, X, wrt=0)[1](1.0), 6 * X)
    with_default.__defaults__ = (4.0,)
    try:
        np.testing.assert_allclose(pullback.vjp(with_default, X, wrt=0)[1](1.0), 8 * X)
    finally:
        with_default.__defaults__ = (3.0,)


def test_a_new_rule_is_seen():
    def inner(x):
        return x * 2.0

    def outer(x):
        return np.sum(inner(x))

    np.testing.assert_allclose(pullback.vjp(outer, X, wrt=0)[1](1.0), 2.0 * np.ones(3))

    @pullback.rrule(inner)
    def _(x):
        return inner(x), lambda d: (d * 7.0,)

    try:
        np.testing.assert_allclose(pullback.vjp(outer, X, wrt=0)[1](1.0), 7.0 * np.ones(3))
    finally:
        pullback.default_registry().remove(inner)
    np.testing.assert_allclose(pullback.vjp(outer, X, wrt=0)[1](1.0), 2.0 * np.ones(3))


def test_refusals_stay_those_of_the_general_path():
    pullback.vjp(f, X, Y)  # a plan for float arguments
    with pytest.raises(PullbackError, match="no gradient"):
        pullback.vjp(f, np.arange(3), Y, wrt=0)
    with pytest.raises(ArgumentError):
        pullback.vjp(f, X, Y, wrt=True)
    with pytest.raises(ArgumentError):
        pullback.vjp(f, X, Y, wrt="z")
    _, back = pullback.vjp(f, X, Y)
    with pytest.raises(pullback.ShapeMismatchError, match="shape"):
        back(np.ones(2))
