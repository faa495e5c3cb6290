"""Closures given to ``np.vectorize`` (transform/vectorize_closures.py) and a name bound to
a list of closures given to ``np.piecewise`` (transform/solver_closures.py): what they read
of the function reaches them as arguments of the call, so the gradient flows to it. Each
case against central differences (float64 and float32), forward mode and second order;
forms that are not converted keep their refusal."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_hvp, check_jvp

from pullback import grad, hessian
from pullback.errors import NotDifferentiableError, UnsupportedSyntaxError

X = np.array([0.2, -0.7, 1.1, 0.45])


def vec_lambda_scalar(x, p):
    return np.sum(np.vectorize(lambda t: np.sin(p * t) + t * t)(x))


def vec_def_array(x, p):
    def inner(t):
        return p[0] * np.exp(p[1] * t) + t

    return np.sum(np.vectorize(inner)(x) ** 2)


def vec_named_two_calls(x, p):
    scale = p[0] * p[1]
    v = np.vectorize(lambda t: np.tanh(scale * t) * p[1])
    return np.sum(v(x)) + np.sum(v(2.0 * x) * x)


def vec_two_parameters(x, p):
    v = np.vectorize(lambda t, s: p[0] * t * s + np.cos(p[1] * s), otypes=[float])
    return np.sum(v(x, x[::-1]))


def vec_late_binding(x, p):
    w = p[0]
    v = np.vectorize(lambda t: w * t)
    w = p[1] * 3.0  # Python's closure reads w when v is called: this value
    return np.sum(v(x))


def vec_in_loop(x, p):
    total = 0.0
    for k in range(3):
        c = p[0] + k * p[1]
        total = total + np.sum(np.vectorize(lambda t: np.sin(c * t))(x))
    return total


def vec_decorated_def(x, p):
    @np.vectorize
    def inner(t):
        return p[0] * np.exp(p[1] * t) if t > 0.0 else p[0] * t

    return np.sum(inner(x) * x) + np.sum(inner(x[::-1]))


def vec_decorated_with_otypes_in_loop(x, p):
    total = 0.0
    for k in range(2):

        @np.vectorize(otypes=[float])
        def inner(t):
            return np.sin(p[k] * t)

        total = total + np.sum(inner(x))
    return total


def piecewise_named_list(x, p):
    a, b = p[0], p[1]
    fs = [lambda t: a * t, lambda t: b * t * t + a]
    return np.sum(np.piecewise(x, [x < 0.3, x >= 0.3], fs) ** 2)


def piecewise_named_defs(x, p):
    def low(t):
        return np.exp(p[0] * t)

    def high(t):
        return p[1] * t

    pieces = (low, high)
    return np.sum(np.piecewise(x, [x < 0.3], pieces))


CASES = [
    vec_lambda_scalar,
    vec_def_array,
    vec_named_two_calls,
    vec_two_parameters,
    vec_late_binding,
    vec_in_loop,
    vec_decorated_def,
    vec_decorated_with_otypes_in_loop,
    piecewise_named_list,
    piecewise_named_defs,
]


def scalar_p(f):
    return f is vec_lambda_scalar


def params(f, dtype=np.float64):
    p = 1.3 if scalar_p(f) else np.array([0.8, -0.6])
    return X.astype(dtype), (dtype(p) if scalar_p(f) else p.astype(dtype))


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_gradient_matches_finite_differences(f):
    check_grad(f, *params(f), wrt=(0, 1))


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_float32(f):
    x, p = params(f, np.float32)
    g = grad(f, wrt=(0, 1))(x, p)
    g64 = grad(f, wrt=(0, 1))(*params(f))
    for got, want in zip(g, g64, strict=True):
        assert np.asarray(got).dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_forward_mode(f):
    x, p = params(f)
    check_jvp(f, (x, p), (np.linspace(-1.0, 1.0, x.size), np.ones_like(p) * 0.7), rel=1e-5)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_second_order(f):
    x, p = params(f)
    if scalar_p(f):
        h = hessian(lambda q: f(x, q))(p)
        g = grad(lambda q: f(x, q))
        np.testing.assert_allclose(h, (g(p + 1e-5) - g(p - 1e-5)) / 2e-5, rtol=1e-5)
    else:
        check_hvp(lambda q: f(x, q), p, np.array([0.3, -1.0]), rtol=1e-5, atol=1e-7)


def test_late_binding_value_is_pythons():
    x, p = params(vec_late_binding)
    assert np.isclose(vec_late_binding(x, p), np.sum(p[1] * 3.0 * x))
    np.testing.assert_allclose(grad(vec_late_binding, wrt=1)(x, p), [0.0, 3.0 * np.sum(x)])


def decorated_capturing_nothing(x):
    @np.vectorize
    def inner(t):
        return np.sin(t) * t

    return np.sum(inner(x))


def test_a_decorated_def_that_captures_nothing():
    check_grad(decorated_capturing_nothing, X)
    check_hvp(decorated_capturing_nothing, X, np.array([1.0, 0.0, -1.0, 0.5]), rtol=1e-5)


def vec_decorated_and_passed_on(x, p):
    @np.vectorize
    def inner(t):
        return p[0] * t

    fs = [inner]
    return np.sum(fs[0](x))


def vec_stored(x, p):
    fs = [np.vectorize(lambda t: p[0] * t)]
    return np.sum(fs[0](x))


def vec_reads_its_object(x, p):
    v = np.vectorize(lambda t: p[0] * t if t > 1.0 else v(t + 1.0))  # noqa: F821
    return np.sum(v(x))


def piecewise_list_read_twice(x, p):
    fs = [lambda t: p[0] * t, lambda t: p[1] * t]
    y = np.piecewise(x, [x < 0.3], fs)
    return np.sum(y) + fs[0](1.0)


@pytest.mark.parametrize(
    "f",
    [vec_stored, vec_reads_its_object, vec_decorated_and_passed_on],
    ids=lambda f: f.__name__,
)
def test_not_converted_keeps_its_refusal(f):
    with pytest.raises(UnsupportedSyntaxError, match="PB40[45]"):
        grad(f, wrt=1)(*params(f))


def test_a_list_of_closures_given_to_piecewise_and_read_is_refused_when_called():
    # the list read twice is no piecewise funclist: its closures are records of their
    # cells (closure_cells.py), which np.piecewise would call natively, losing p's gradient
    with pytest.raises(NotDifferentiableError, match="numpy.*does not differentiate through"):
        grad(piecewise_list_read_twice, wrt=1)(*params(piecewise_list_read_twice))


def _shifted(t, q):
    return np.exp(q[0] * t) * q[1]


def vec_excluded_by_the_user(x, p):
    return np.sum(np.vectorize(_shifted, excluded={1})(x, p) * x)


def vec_negative_excluded_is_not_excluded(x, p):
    # NumPy compares positions with excluded as they are: -1 excludes nothing
    return np.sum(np.vectorize(lambda t, s: t * s, excluded={-1})(x, p[0] * x))


@pytest.mark.parametrize(
    "f", [vec_excluded_by_the_user, vec_negative_excluded_is_not_excluded], ids=lambda f: f.__name__
)
def test_excluded_positions_written_by_the_user(f):
    x, p = params(f)
    check_grad(f, x, p, wrt=(0, 1))
    check_hvp(lambda q: f(x, q), p, np.array([0.3, -1.0]), rtol=1e-5, atol=1e-7)
