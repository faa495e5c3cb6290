"""Higher-order builtins over user functions and lambdas: ``functools.reduce`` (the loop
it computes), ``sorted``/``max``/``min`` with ``key=`` (the key chooses, the values carry
the gradient), the ``operator`` module's functions. Checked against finite differences in
float64 and float32, in reverse and forward mode, and to second order where a gradient
flows through the construct."""

from __future__ import annotations

import functools
import operator
from functools import reduce

import numpy as np
import pytest
from fd import check_grad

import pullback
from pullback import grad, hessian, jvp
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


def square(v):
    return v * v


def weighted_step(acc, v):
    return 0.5 * acc + np.sin(v)


# -- functools.reduce ---------------------------------------------------------------------


def product(x):
    return functools.reduce(lambda a, b: a * b, [x[0], x[1], x[2]])


def product_with_init(x, scale):
    return reduce(operator.mul, [x[0], x[1], x[2]], scale)


def running(xs):
    return functools.reduce(weighted_step, xs, 0.0)


def sum_of_squares(x):
    return functools.reduce(lambda acc, v: acc + square(v), x, 0.0)


def total_of_arrays(a, b, c):
    return np.sum(functools.reduce(operator.add, [a, b * b, c]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_with_a_lambda_an_operator_and_a_user_function(dtype):
    x = np.array([0.5, -1.5, 2.0], dtype=dtype)
    check_grads(product, x)
    check_grad(product, x)
    check_grads(product_with_init, x, dtype(1.5), wrt=(0, 1))
    check_grads(running, x)
    check_grad(running, [dtype(0.3), dtype(1.2), dtype(-0.4)])
    check_grads(sum_of_squares, x)
    a, b, c = (np.linspace(-1.0, 1.0, 4).astype(dtype) * k for k in (1.0, 2.0, 3.0))
    check_grads(total_of_arrays, a, b, c, wrt=(0, 1, 2))
    check_grad(total_of_arrays, a, b, c, wrt=(0, 1, 2))
    assert grad(product)(x).dtype == dtype


def test_reduce_forward_mode_and_second_order():
    x = np.array([0.5, -1.5, 2.0])
    t = np.array([1.0, 0.5, -0.25])
    _, dy = jvp(product, (x,), (t,))
    assert dy == pytest.approx(float(grad(product)(x) @ t))
    _, dy = jvp(running, ([0.3, 1.2],), ([1.0, -1.0],))
    assert dy == pytest.approx(0.5 * np.cos(0.3) - np.cos(1.2))
    assert check_grads(product, x, order=2) == "reverse over reverse"
    assert check_grads(sum_of_squares, x, order=2) == "reverse over reverse"
    np.testing.assert_allclose(
        hessian(product)(x), [[0.0, 2.0, -1.5], [2.0, 0.0, 0.5], [-1.5, 0.5, 0.0]]
    )


# -- sorted / max / min with key= ------------------------------------------------------------


def nearest(xs, t):
    target = 2.0 * t
    return min(xs, key=lambda v: (v - target) ** 2) * t


def largest_square(xs):
    return max(xs, key=square) + 0.0 * xs[0]


def best_pair(pairs):
    return max(pairs, key=operator.itemgetter(1))[0]


def top_two(x):
    ys = sorted(x, key=lambda v: v * v, reverse=True)
    return ys[0] * ys[1] + np.sin(ys[2])


def by_abs(xs):
    ys = sorted(xs, key=abs)
    return 2.0 * ys[0] + ys[-1] * ys[-1]


@pytest.mark.parametrize("dtype", DTYPES)
def test_keyed_choice_carries_the_values_gradient(dtype):
    xs = [dtype(1.0), dtype(3.1), dtype(5.0)]
    check_grad(nearest, xs, dtype(1.4), wrt=(0, 1))
    check_grads(nearest, xs, dtype(1.4), wrt=(0, 1))
    check_grads(largest_square, np.array([1.0, -3.0, 2.0], dtype=dtype))
    pairs = [(dtype(1.0), dtype(2.0)), (dtype(3.0), dtype(5.0))]
    check_grad(best_pair, pairs)
    check_grads(best_pair, pairs)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sorted_with_key_permutes_the_gradient(dtype):
    x = np.array([1.0, -3.0, 2.0, 0.25], dtype=dtype)
    check_grads(top_two, x)
    check_grad(top_two, x)
    g = grad(top_two)(x)
    assert g.dtype == dtype
    check_grads(by_abs, [dtype(1.0), dtype(-3.0), dtype(2.0)])
    check_grad(by_abs, (dtype(1.0), dtype(-3.0), dtype(2.0)))
    _, dy = jvp(top_two, (x.astype(np.float64),), (np.ones(4),))
    assert dy == pytest.approx(float(np.sum(grad(top_two)(x.astype(np.float64)))))


def test_keyed_second_order():
    # The permutation's reverse, written for a gradient differentiated again, is
    # star_call_vjp, whose rule differentiates it (rules/star_call_rules.py): reverse over
    # reverse, against finite differences of the gradient inside check_grads.
    x = np.array([1.0, -3.0, 2.0, 0.25])
    assert check_grads(top_two, x, order=2) == "reverse over reverse"
    for f, arg in ((top_two, x), (largest_square, np.array([1.0, -3.0, 2.0]))):
        h = hessian(f)(arg)
        fd = np.array([
            (grad(f)(arg + 1e-6 * e) - grad(f)(arg - 1e-6 * e)) / 2e-6 for e in np.eye(len(arg))
        ])
        np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-6)


# -- the operator module ---------------------------------------------------------------------


def with_operators(a, b):
    return operator.mul(a, b) + operator.add(a, b) - operator.truediv(a, b)


def picked(p):
    return operator.itemgetter(1)(p) * 2.0 + operator.getitem(p, 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_operator_functions(dtype):
    a, b = np.array([0.5, 1.5], dtype=dtype), np.array([2.0, -1.0], dtype=dtype)
    check_grads(lambda a, b: np.sum(with_operators(a, b)), a, b, wrt=(0, 1))
    check_grads(with_operators, dtype(0.5), dtype(2.0), wrt=(0, 1))
    check_grad(picked, (dtype(1.0), dtype(4.0)))
    check_grads(picked, (dtype(1.0), dtype(4.0)))
    _, dy = jvp(picked, ((1.0, 4.0),), ((0.5, 1.0),))
    assert dy == pytest.approx(2.5)


def test_reduce_of_a_lambda_that_is_not_simple_stays_refused():
    def uses_default(xs):
        return functools.reduce(lambda a, b=1.0: a * b, xs)

    with pytest.raises(pullback.UnsupportedSyntaxError, match="PB404"):
        grad(uses_default)([1.0, 2.0])


# Horner's rule as Rosetta Code writes it (found by probe3): the reversed coefficients are
# consumed whole by the loop reduce runs, like `for c in reversed(coeffs)`.
def horner_reduce(coeffs, x):
    return reduce(lambda acc, c: acc * x + c, reversed(coeffs), 0)


def zipped_reduce(w, x):
    return reduce(lambda acc, p: acc + p[0] * np.sin(p[1]), zip(w, x, strict=True), 0.0)


def enumerated_reduce(w):
    return reduce(lambda acc, p: acc * 0.5 + p[0] * p[1] ** 2, enumerate(w), 1.0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_over_an_iterator_made_in_the_call(dtype):
    c = np.array([-19.0, 7.0, -4.0, 6.0], dtype=dtype)
    check_grad(horner_reduce, c, dtype(0.7))
    check_grad(horner_reduce, c, dtype(0.7), wrt=1)
    check_grad(zipped_reduce, c, c[::-1] * 0.1)
    check_grad(enumerated_reduce, c * 0.1)
    _, t = jvp(horner_reduce, (c, dtype(0.7)), (np.ones_like(c), 0.0))
    np.testing.assert_allclose(t, np.sum(grad(horner_reduce)(c, dtype(0.7))), rtol=1e-5)
