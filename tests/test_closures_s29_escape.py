"""Nested closures that escape their ``def`` and are called within the differentiated
function: returned by a nested factory (``g = make(a); g(x)``), passed to a module-level
helper that calls it (``apply(f, x)``, twice, a lambda written in the call). Against
central differences (float64, float32), forward mode and second order; closures that a
helper stores, factories whose closures are put in a list and dicts of closures stay
refused, naming the line, and the fix each refusal names is checked to differentiate."""

from __future__ import annotations

import numpy as np
import pytest
from closures_s29_checks import check_all

from pullback import grad
from pullback.errors import UnsupportedSyntaxError

X = np.array([0.3, -0.8, 1.2])
P = np.array([0.7, -0.4])


def apply(f, x):
    return f(x)


def apply_twice(f, x):
    return f(f(x))


def keep_and_call(f, x):
    fs = [f]
    return fs[0](x)


def keep_and_call_with(f, x, p):
    fs = [f]
    return fs[0](x, p)


def factory_def(x, p):
    def make(k):
        def f(t):
            return k * np.sin(t) + p[1] * t

        return f

    g = make(p[0] ** 2)
    return np.sum(g(x) + g(2.0 * x) ** 2)


def factory_lambda(x, p):
    def make(k):
        return lambda t: np.exp(k * t)

    g = make(p[0])
    return np.sum(g(x) * p[1])


def def_to_a_helper(x, p):
    def f(t):
        return np.tanh(p[0] * t) * p[1]

    return np.sum(apply(f, x)) + np.sum(apply_twice(f, x))


def lambda_to_a_helper(x, p):
    return np.sum(apply(lambda t: p[0] * t * t + p[1], x))


CASES = [factory_def, factory_lambda, def_to_a_helper, lambda_to_a_helper]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_matches_finite_differences_float32_forward_and_second_order(f):
    check_all(f, X, P, (np.array([1.0, -0.5, 0.2]), np.array([0.3, 0.9])), np.array([0.3, -1.0]))


def helper_stores(x, p):
    def f(t):
        return p[0] * t

    return np.sum(keep_and_call(f, x))


def helper_stores_fixed(x, p):
    def f(t, p):
        return p[0] * t

    return np.sum(keep_and_call_with(f, x, p))


def factory_in_a_list(x, p):
    def make(k):
        def f(t):
            return k * t * p[0]

        return f

    fs = []
    for i in range(3):
        fs.append(make(i))
    return np.sum(fs[2](x))


def factory_in_a_list_fixed(x, p):
    def make(k):
        def f(t, p):
            return k * t * p[0]

        return f

    fs = []
    for i in range(3):
        fs.append(make(i))
    return np.sum(fs[2](x, p))


def dict_of_closures(x, p):
    d = {"s": lambda t: p[1] * t}
    return np.sum(d["s"](x))


def dict_of_closures_fixed(x, p):
    d = {"s": lambda t, p: p[1] * t}
    return np.sum(d["s"](x, p))


@pytest.mark.parametrize(
    ("refused", "fixed", "line"),
    [(factory_in_a_list, factory_in_a_list_fixed, 2)],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_refused_at_the_closure_and_the_fix_differentiates(refused, fixed, line):
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(refused, wrt=(0, 1))(X, P)
    (d,) = info.value.diagnostics
    assert d.code in ("PB404", "PB405")
    assert d.line == refused.__code__.co_firstlineno + line
    assert "parameters" in d.fix  # make what it reads parameters, pass them at each call
    assert np.isclose(fixed(X, P), refused(X, P))
    check_all(fixed, X, P, (np.array([1.0, -0.5, 0.2]), np.array([0.3, 0.9])), np.array([0.3, 1.0]))


@pytest.mark.parametrize("f", [helper_stores, dict_of_closures], ids=lambda v: v.__name__)
def test_closures_kept_by_a_helper_or_a_dict_are_records_of_their_cells(f):
    # (transform/closure_cells.py; they were refused, their fixes differentiate too)
    check_all(f, X, P, (np.array([1.0, -0.5, 0.2]), np.array([0.3, 0.9])), np.array([0.3, 1.0]))
