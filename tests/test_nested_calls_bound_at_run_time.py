"""A nested function called with ``*args``/``**kwargs`` at the call (``f(*x)``), or with a
call Python itself refuses, keeps the form of its calls: Python binds the arguments when
the call runs (what the function captures is passed first), so the gradient follows the
binding and a wrong call raises Python's TypeError when it runs, not before. Also: a lambda
on a line of a call that spans lines is found in its source."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_jvp

import pullback
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


def star_all(x):
    def f(a, b, c):
        return a * b * c

    return f(*x)


def star_rest(x):
    def f(a, b, c=2.0):
        return a * b + c * np.sin(a)

    return f(x[0], *x[1:2]) + f(*x[1:])


def captured_and_keywords(x):
    s = x[2] * 2.0

    def f(a, b):
        return a * b * s

    opts = {"a": x[0], "b": np.tanh(x[1])}
    return f(*x[:2]) + f(**opts)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", [star_all, star_rest, captured_and_keywords])
def test_against_finite_differences(f, dtype):
    check_grad(f, np.array([0.5, -1.2, 0.8], dtype=dtype))


@pytest.mark.parametrize("f", [star_all, captured_and_keywords])
def test_forward_and_second_order(f):
    x = np.array([0.5, -1.2, 0.8])
    check_jvp(f, (x,), (np.array([1.0, 0.3, -2.0]),))
    check_grads(f, x, order=2)


def test_a_call_python_refuses_raises_when_it_runs():
    def sometimes_wrong(x):
        def f(a, b):
            return a * b

        if x[0] > 100.0:
            return f(x[0])  # never runs here
        return f(x[0], x[1])

    x = np.array([0.5, -1.2, 0.8])
    np.testing.assert_allclose(pullback.grad(sometimes_wrong)(x), [-1.2, 0.5, 0.0])
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        pullback.grad(sometimes_wrong)(np.array([200.0, 1.0, 0.0]))


def test_a_star_call_of_a_function_with_a_computed_default_is_refused_with_a_fix():
    def computed_default(x):
        s = x[2]

        def f(a, b=s):
            return a * b

        return f(*x[:1])

    with pytest.raises(pullback.UnsupportedSyntaxError, match="PB405") as e:
        pullback.grad(computed_default)(np.ones(3))
    assert "is called with *args" in str(e.value) and "constant default" in str(e.value)


def _cube_sum(x):
    return np.sum(x**3)


def test_a_lambda_on_a_line_of_a_call_that_spans_lines():
    x = np.array([1.0, 2.0, 0.5])
    np.testing.assert_allclose(
        pullback.grad(lambda v: pullback.grad(_cube_sum)(v)[1])(x), [0.0, 12.0, 0.0], rtol=1e-12
    )
    got = pullback.grad(
        lambda v: np.sum(v * v),
    )(x)
    np.testing.assert_allclose(got, 2 * x)


def _sum_sin(v):
    return np.sum(np.sin(v) * v)


CASES_WITH_LAMBDAS = [
    ("cube", _cube_sum, (1.0,)),
    ("sin", _sum_sin, (2.0,)), ("scaled", lambda v: 3.0 * _sum_sin(v), (3.0,))]


def test_a_lambda_inside_a_display_on_the_last_line_of_a_statement():
    # inspect gives only the last line, `("sin", ...), ("scaled", lambda v: ..., (3.0,))]`,
    # which does not parse alone: the lambda is found as the expression it is
    x = np.array([1.0, 2.0, 0.5])
    scaled = CASES_WITH_LAMBDAS[2][1]
    np.testing.assert_allclose(
        pullback.grad(scaled)(x), 3.0 * (np.cos(x) * x + np.sin(x)), rtol=1e-12
    )
    check_grads(scaled, x, order=2)
