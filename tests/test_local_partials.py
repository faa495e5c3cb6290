"""``functools.partial`` made inside the differentiated function and only called there
(transform/local_partials.py): each call is the call of the function with the bound
values first and the partial's keywords under the call's own. Checked against finite
differences (float64, float32), forward mode, and to second order."""

from __future__ import annotations

import functools
from functools import partial

import numpy as np
import pytest
from fd import check_grad

from pullback import grad, hessian, jvp
from pullback.errors import UnsupportedSyntaxError
from pullback.testing import check_grads

X = np.array([0.3, -0.7, 1.1])
DATA = np.array([1.0, 2.0, 3.0])


def loss(data, w, scale=1.0, shift=0.0):
    return np.sum((data * w - shift) ** 2) * scale


def positional_and_keyword(x):
    f = partial(loss, DATA, scale=x[0])
    return f(x) + f(2.0 * x, scale=0.5)  # the call's keyword wins, as in functools


def partial_of_a_rule(x):
    total = functools.partial(np.sum, axis=0)
    return total(np.sin(x) * x)


def partial_of_a_nested_function(x):
    def inner(a, b):
        return a * np.cos(b)

    g = partial(inner, x[0])
    return np.sum(g(x))


def partial_in_a_loop(x):
    step = partial(loss, DATA, shift=0.5)
    total = 0.0
    for k in range(3):
        total = total + step(x * (k + 1.0))
    return total


def partial_bound_to_a_local_value(x):
    w = x * x
    f = partial(loss, w)  # the bound value carries a gradient too
    return f(x)


CASES = [
    positional_and_keyword,
    partial_of_a_rule,
    partial_of_a_nested_function,
    partial_in_a_loop,
    partial_bound_to_a_local_value,
]


@pytest.mark.parametrize("f", CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_local_partial_against_finite_differences(f, dtype):
    x = X.astype(dtype)
    check_grads(f, x)
    check_grad(f, x)


@pytest.mark.parametrize("f", CASES)
def test_local_partial_forward_and_second_order(f):
    v = np.array([0.5, -1.0, 0.25])
    _, t = jvp(f, (X,), (v,))
    assert np.isclose(t, grad(f)(X) @ v)
    assert check_grads(f, X, order=2) == "reverse over reverse"


def test_local_partial_values():
    x = X
    expected = loss(DATA, x, scale=x[0]) + loss(DATA, 2.0 * x, scale=0.5)
    assert np.isclose(positional_and_keyword(x), expected)
    # d/dx of sum((x*x*x)^2) = 6 x^5
    assert np.allclose(grad(partial_bound_to_a_local_value)(x), 6 * x**5)
    h = hessian(partial_bound_to_a_local_value)(x)
    assert np.allclose(h, np.diag(30 * x**4))


def partial_stored(x):
    g = partial(loss, x)
    kept = [g]
    return kept[0](x)


def test_a_stored_partial_is_a_record_of_what_it_binds():
    # (transform/closure_cells.py: functools.partial as a record)
    for order in (1, 2):
        check_grads(partial_stored, X, order=order)


def partial_stored_with_a_keyword(x):
    g = partial(loss, x, scale=x[0])
    kept = [g]
    return kept[0](x)


def test_a_stored_partial_binding_a_differentiated_keyword_is_refused_with_the_rewrite():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(partial_stored_with_a_keyword)(X)
    (d,) = info.value.diagnostics
    assert d.code == "PB301"
    assert d.line == partial_stored_with_a_keyword.__code__.co_firstlineno + 1
    assert "stored, passed on or bound more than once" in d.message
    assert "`g = partial(loss, ...); g(x)`" in d.fix
