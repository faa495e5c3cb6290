"""Loops and comprehensions over itertools.accumulate and itertools.chain
(transform/loop_iterables.py): accumulate's running value is a variable of the loop,
updated at each step as the iterator updates it; chain(a, b) reads the items of
(*a, *b), chain.from_iterable(xss) and chain(*xss) read xss[i][j] by position.
Gradients against central differences (float64, float32), forward mode, Hessians against
differences of the gradient, and the refusals of the other forms with the written fix."""

from __future__ import annotations

import itertools
import operator

import numpy as np
import pytest
from fd import numerical_grad

from pullback import grad, hessian, jvp, value_and_grad
from pullback.errors import UnsupportedSyntaxError

X = np.array([0.5, -1.2, 2.0, 0.7])
V = np.array([1.0, -0.5, 0.25, 2.0])


def central(f, x, h=1e-6):
    """Central differences of ``f`` at ``x`` (tests/fd.py)."""
    return numerical_grad(f, (x,), 0, eps=h)


def running_sums(x):
    total = 0.0
    for s in itertools.accumulate(x):
        total += s * s
    return total


def running_products(x):
    return sum(p for p in itertools.accumulate(x, operator.mul))


def running_max_with_initial(x):
    # max picks a different running value at each step; initial= comes first
    return sum(np.sin(m) for m in itertools.accumulate(x**2, max, initial=0.3))


def lambda_step(x):
    out = 0.0
    for k, s in enumerate(itertools.accumulate(x, lambda a, b: 0.5 * a + b * b)):
        out += (k + 1) * s
    return out


def accumulate_beside_items(x):
    return sum(
        s * v for s, v in zip(itertools.accumulate(x, func=operator.mul), x[::-1], strict=True)
    )


def accumulate_with_break(x):
    total = 0.0
    for s in itertools.accumulate(x):
        if s > 1.0:
            break
        total = total + np.exp(s)
    return total


def accumulate_rows(x):
    rows = x.reshape(2, 2)
    return np.sum(np.array([np.tanh(r) for r in itertools.accumulate(rows)]) ** 2)


def chained(x):
    total = 0.0
    for v in itertools.chain(x, x[:2] * 3.0, [x[3], 1.0]):
        total += v**3
    return total


def chained_pairs(x):
    return sum(a * b for a, b in itertools.chain(zip(x[:-1], x[1:], strict=True), [(x[0], x[3])]))


def flattened(x):
    rows = [x[:3], x[1:] ** 2, []]
    return sum(np.cos(v) * k for k, v in enumerate(itertools.chain.from_iterable(rows)))


def flattened_matrix(x):
    m = np.outer(x[:2], x[2:])
    return sum(v**2 for v in itertools.chain(*m))


def positive_running_sums(x):
    return sum(s for s in itertools.accumulate(x, initial=None) if s > 0)


def products_of_a_list(x):
    xs = [x[0], 2.0, x[1]]
    return sum(s * s for s in itertools.accumulate(xs, operator.mul))


def skipped_step(x):
    total = 0.0
    for k, s in enumerate(itertools.accumulate(x)):
        if k == 1:
            continue  # (the running value is updated before the body: still counted on)
        total += s**2
    return total


def nested_accumulates(x):
    t = 0.0
    for s in itertools.accumulate(x):
        for r in itertools.accumulate(x[:2], initial=s):
            t = t + s * r
    return t


CASES = [
    positive_running_sums,
    products_of_a_list,
    skipped_step,
    nested_accumulates,
    running_sums,
    running_products,
    running_max_with_initial,
    lambda_step,
    accumulate_beside_items,
    accumulate_with_break,
    accumulate_rows,
    chained,
    chained_pairs,
    flattened,
    flattened_matrix,
]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_gradient_matches_finite_differences(f):
    np.testing.assert_allclose(grad(f)(X), central(f, X), rtol=1e-6, atol=1e-8)
    value, _ = value_and_grad(f)(X)
    assert value == f(X)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_float32(f):
    g32 = grad(f)(X.astype(np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, central(f, X), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_forward_mode_and_hessian(f):
    _, t = jvp(f, (X,), (V,))
    np.testing.assert_allclose(t, np.dot(central(f, X), V), rtol=1e-6, atol=1e-8)
    g = grad(f)
    want = np.array([central(lambda z, i=i: g(z)[i], X, h=1e-5) for i in range(X.size)])
    np.testing.assert_allclose(hessian(f)(X), want, rtol=1e-5, atol=1e-6)


def test_hand_derived_running_sums():
    # sum_k (x_0 + ... + x_k)^2: d/dx_j = 2 * sum_{k >= j} s_k
    s = np.cumsum(X)
    np.testing.assert_allclose(grad(running_sums)(X), 2 * np.cumsum(s[::-1])[::-1])


def test_the_accumulated_function_runs_as_the_iterator_runs_it():
    calls = []

    def step(a, b):
        calls.append(1)
        return a * b

    def f(x):
        total = 0.0
        for p in itertools.accumulate(x, step):
            total += p
            if total > 0.4:
                break
        return total

    calls.clear()
    want = f(X)
    n_primal = len(calls)
    calls.clear()
    value, g = value_and_grad(f)(X)
    assert value == want and len(calls) == n_primal
    np.testing.assert_allclose(g, central(f, X), rtol=1e-6, atol=1e-8)


def kept_running_sums(x):
    return sum(itertools.accumulate(x))


def reversed_running_sums(x):
    return sum(s * s for s in reversed(list(itertools.accumulate(x))))


def pairs_of_running_sums(x):
    return sum(a * b for a, b in itertools.pairwise(itertools.accumulate(x)))


STEPS = {"mul": operator.mul}


def step_from_a_call(x):
    return sum(s for s in itertools.accumulate(x, STEPS["mul"]))


def kept_chain(x):
    return sum(itertools.chain(x, x))


@pytest.mark.parametrize(
    "f, says",
    [
        (kept_running_sums, "for s in itertools.accumulate(xs):"),
        (pairs_of_running_sums, "for s in itertools.accumulate(xs):"),
        (step_from_a_call, "accumulate(xs, operator.mul)"),
        (kept_chain, "for v in itertools.chain(a, b):"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_other_forms_are_refused_with_the_fix(f, says):
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f)(X)
    message = str(info.value)
    assert "PB301" in message and says in message


def step_rebound_in_the_loop(x):
    step = operator.mul
    total = 0.0
    for s in itertools.accumulate(x, step):
        total += s
        step = operator.add  # the iterator keeps operator.mul: not followed, refused
    return total


def test_a_step_function_rebound_in_the_loop_is_refused():
    with pytest.raises(UnsupportedSyntaxError, match="PB301"):
        grad(step_rebound_in_the_loop)(X)


def test_a_local_step_function_bound_once():
    def f(x):
        def step(a, b):
            return a * np.cos(b)

        return sum(s**2 for s in itertools.accumulate(x, step))

    np.testing.assert_allclose(grad(f)(X), central(f, X), rtol=1e-6, atol=1e-8)
    g = grad(f)
    want = np.array([central(lambda z, i=i: g(z)[i], X, h=1e-5) for i in range(X.size)])
    np.testing.assert_allclose(hessian(f)(X), want, rtol=1e-5, atol=1e-6)


def test_running_sums_consumed_whole():
    # reversed(list(accumulate(x))): list() consumes it whole, as the comprehension over it
    # (iteration.loop_itertools); sum of squared running sums: d/dx_k = 2 sum_{j>=k} s_j
    s = np.cumsum(X)
    want = 2 * np.cumsum(s[::-1])[::-1]
    np.testing.assert_allclose(grad(reversed_running_sums)(X), want)
