"""Closure factories defined inside the differentiated function (pullback/nested_factories.py):
``def make(a): ...; return inner`` called as ``h = make(...)`` and then ``h(...)``, with
gradients reaching what the factory computed and what the closure captures — against
finite differences in float64 and float32, forward mode and second order."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from fd import check_grad, check_jvp

import pullback
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


def def_closure(x):
    def make(a):
        c = 2.0 * a
        def inner(y):
            return c * y**2 + a
        return inner

    h = make(x[0])
    return np.sum(h(x))


def lambda_closure(x):
    def make(a, b=3.0):
        return lambda y: a * np.sin(y) + b

    h = make(x[1], b=x[2])
    return np.sum(h(x) * x)


def two_closures_of_one_factory(x):
    def scaler(k):
        def scale(v):
            return k * v
        return scale

    double = scaler(2.0)
    by_x = scaler(x[0] * x[1])
    return np.sum(double(x) * by_x(x))


def closure_reads_the_enclosing_function(x):
    w = np.tanh(x)

    def make(a):
        def inner(y):
            return np.dot(w, y) * a  # w: read when inner is called
        return inner

    h = make(x[2])
    w = w * 2.0  # Python's closure sees this value: so does the gradient
    return h(x)


def factory_in_a_loop(x):
    def make(a):
        s = a * a
        def inner(y):
            return s * y
        return inner

    total = 0.0
    for i in range(3):
        h = make(x[i])
        total = total + np.sum(h(x))
    return total


def names_that_clash(x):
    c = x[0] + 1.0  # the factory's own `c` and `a` are other variables

    def make(a):
        c = a * 3.0
        def inner(y):
            return c * y
        return inner

    a = x[1]
    h = make(x[2])
    return np.sum(h(x)) * c * a


def comprehension_in_the_closure(x):
    def make(a):
        def inner(y):
            return sum(a * t for t in y)  # `t` the generator's own; `a` the factory's
        return inner

    h = make(x[0])
    return h(x) ** 2


def factory_called_in_a_handler(x):
    def make(a):
        c = a * 0.5
        def inner(y):
            return c * np.sin(y) + a
        return inner

    v = x * 1.0
    try:
        if x[0] > 0.0:  # data-dependent: taken at x[0] = 0.7
            raise ValueError("big")
        v = v * x[1]
    except ValueError:
        h = make(x[2] * 2.0)  # a site in an except handler is inlined (was PB405)
        v = h(v)
    return np.sum(v * x)


def lambda_factory_called_in_a_handler(x):
    def make(a):
        return lambda y: np.tanh(a * y) * a

    try:
        v = x * [1.0, 2.0][int(x[0] > 0.0) + 1]
    except IndexError:
        h = make(x[1])
        v = h(x) + x
    return np.sum(v**2)


CASES = [
    def_closure,
    lambda_closure,
    two_closures_of_one_factory,
    closure_reads_the_enclosing_function,
    factory_in_a_loop,
    names_that_clash,
    comprehension_in_the_closure,
    factory_called_in_a_handler,
    lambda_factory_called_in_a_handler,
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", CASES)
def test_against_finite_differences(f, dtype):
    check_grad(f, np.array([0.7, -1.3, 0.4], dtype=dtype))


def test_hand_derived_gradient():
    # sum(2 a x**2 + a) with a = x0: d/dx0 = sum(2 x**2) + 3 + 4 a x0; d/dxi = 4 a xi
    x = np.array([0.7, -1.3, 0.4])
    a = x[0]
    want = 4 * a * x
    want[0] += np.sum(2 * x**2) + 3
    np.testing.assert_allclose(pullback.grad(def_closure)(x), want, rtol=1e-12)


@pytest.mark.parametrize("f", CASES)
def test_forward_and_second_order(f):
    x = np.array([0.7, -1.3, 0.4])
    check_jvp(f, (x,), (np.array([1.0, 0.3, -2.0]),))
    check_grads(f, x, order=2)


def test_values_are_the_functions_values():
    x = np.array([0.7, -1.3, 0.4])
    for f in CASES:
        value, _ = pullback.value_and_grad(f)(x)
        np.testing.assert_allclose(value, f(x), rtol=1e-12)


def test_a_closure_stored_in_a_list_is_a_record_of_its_cells():
    def stored(x):
        def make(a):
            def inner(y):
                return a * y
            return inner

        hs = [make(x[0]), make(x[1])]
        return np.sum(hs[0](x) + hs[1](x))

    x = np.array([0.7, -1.3, 0.4])
    check_grads(stored, x, order=1)
    check_grads(stored, x, order=2)


def test_a_factory_used_both_ways_differentiates_both():
    def both(x):
        def make(a):
            return lambda y: a * y

        h = make(x[0])
        return np.sum(h(x)) + np.sum(make(x[1])(x))

    x = np.array([0.7, -1.3, 0.4])
    check_grads(both, x, order=1)
    check_grads(both, x, order=2)


def test_the_check_reports_lines_in_the_factory_body():
    def bad(x):
        def make(a):
            def inner(y):
                with contextlib.nullcontext(y) as v:
                    return a * v
                return y

            return inner

        h = make(x[0])
        return np.sum(h(x))

    with pytest.raises(pullback.UnsupportedSyntaxError) as e:
        pullback.grad(bad)(np.ones(3))
    message = str(e.value)
    assert "PB202" in message and "test_nested_factories.py" in message


def test_a_try_in_the_factory_body_differentiates():
    def guarded(x):
        def make(a):
            def inner(y):
                try:
                    return a * y
                except ValueError:
                    return y

            return inner

        h = make(x[0])
        return np.sum(h(x))

    check_grad(guarded, np.array([0.5, -1.0, 2.0]))
