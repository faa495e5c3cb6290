"""``functools.partial`` of a nested ``def`` that reads the function's variables, bound once
and only called (transform/local_partials.py, closures.lifting_refusal): each call calls the
nested function with the partial's values first, so it is lifted and what it captures is read
when the call runs, as Python's closure reads it. Against central differences (float64 and
float32), forward mode and second order; a partial that escapes keeps its refusal."""

from __future__ import annotations

import functools
from functools import partial

import numpy as np
import pytest
from closures_s29_checks import check_all, check_hessian

from pullback import grad
from pullback.errors import UnsupportedSyntaxError

X = np.array([0.3, -0.8, 1.2])
P = np.array([0.7, -0.4])


def keyword_bound(x, p):
    def f(t, k):
        return p[0] * np.sin(t * k) + p[1] * t

    g = functools.partial(f, k=p[1] + 2.0)
    return np.sum(g(x) ** 2)


def positional_bound(x, p):
    def f(k, t):
        return np.exp(k * t) * p[1]

    g = partial(f, p[0])
    return np.sum(g(x)) + np.sum(g(2.0 * x))


def late_binding(x, p):
    w = p[0]

    def f(s, t):
        return w * s * t

    g = partial(f, 2.0)
    w = p[1] * p[0]  # the closure reads w when g is called: this value
    return np.sum(g(x))


def with_default(x, p):
    def f(t, c=3.0):
        return p[0] * t**2 + c * p[1]

    g = partial(f, c=1.5)
    return np.sum(g(x)) + np.sum(g(x, c=0.5))  # the call's keyword wins


def in_a_loop(x, p):
    total = 0.0
    for k in range(3):

        def f(a, t):
            return a * np.cos(p[0] * t + k)

        g = partial(f, p[1])
        total = total + np.sum(g(x))
    return total


CASES = [keyword_bound, positional_bound, late_binding, with_default, in_a_loop]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_matches_finite_differences_float32_forward_and_second_order(f):
    check_all(f, X, P, (np.array([1.0, -0.5, 0.2]), np.array([0.3, 0.9])), np.array([0.3, -1.0]))


def test_late_binding_value_is_pythons():
    assert np.isclose(late_binding(X, P), np.sum(P[1] * P[0] * 2.0 * X))


def partial_returned(x, p):
    def f(k, t):
        return k * t * p[0]

    g = partial(f, p[1])
    return np.sum(g(x)), g


def partial_stored(x, p):
    def f(k, t):
        return k * t * p[0]

    gs = [partial(f, p[1])]
    return np.sum(gs[0](x))


@pytest.mark.parametrize("f", [partial_returned, partial_stored], ids=lambda f: f.__name__)
def test_an_escaping_partial_keeps_its_refusal(f):
    with pytest.raises(UnsupportedSyntaxError, match="PB405|PB301"):
        grad(lambda x, p: f(x, p)[0] if f is partial_returned else f(x, p), wrt=1)(X, P)


def test_full_hessian():
    check_hessian(late_binding, X, P)
