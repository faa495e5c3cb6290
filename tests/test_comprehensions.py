"""Comprehensions, generator expressions and lists built with ``append``, differentiated
as written (against finite differences, float64 and float32, forward and reverse)."""

from __future__ import annotations

import numpy as np
import pytest

from pullback import grad, jvp, value_and_grad
from pullback.errors import UnsupportedSyntaxError
from pullback.testing import check_grads

X = np.array([0.3, -0.7, 1.1, 0.45])


def list_comp(x):
    return sum([x[i] ** 2 for i in range(len(x))])


def generator_sum(x):
    return sum(np.sin(x[i]) * x[i] for i in range(x.shape[0]))


def stacked(x):
    return np.sum(np.stack([x * k + np.cos(x) for k in range(3)]) ** 2)


def filtered(x):
    return sum([v * v for v in x if v > 0])


def nested_generators(x):
    return sum([a * b for a in x for b in x if a != b])


def nested_comprehensions(x):
    rows = [[x[i] * x[j] for j in range(len(x))] for i in range(len(x))]
    return np.sum(np.array(rows) ** 2)


def zipped(x):
    w = [1.0, 2.0, 3.0, 4.0]
    return sum([a * b for a, b in zip(x, w, strict=True)])


def enumerated(x):
    return sum([k * np.exp(v) for k, v in enumerate(x)])


def shadowing(x):
    # the comprehension's own x is not the parameter
    ys = [x * 2 for x in x]
    return sum(ys) * x[0]


def dict_comp(x):
    d = {k: x[k] * (k + 1) for k in range(len(x))}
    return d[0] * d[1] + d[3]


def set_of_constants(x):
    sizes = {len(x) for _ in range(2)}
    return np.sum(x) * len(sizes)


def appended(x):
    outs = []
    h = x
    for _ in range(3):
        h = np.tanh(h * 1.5)
        outs.append(h)
    return np.sum(np.stack(outs))


def recurrent(x):
    # reads the list while appending to it: every state is kept
    hs = [x]
    for _ in range(3):
        hs.append(np.sin(hs[-1]) * hs[0])
    return np.sum(hs[-1] + hs[1])


def appended_scalars(x):
    acc = []
    for i in range(len(x)):
        if x[i] > 0:
            acc.append(x[i] * x[i])
        else:
            acc.append(-x[i])
    return sum(acc)


def maxed(x):
    return max(v * v for v in x)


CASES = [
    list_comp,
    generator_sum,
    stacked,
    filtered,
    nested_generators,
    nested_comprehensions,
    zipped,
    enumerated,
    shadowing,
    dict_comp,
    set_of_constants,
    appended,
    recurrent,
    appended_scalars,
    maxed,
]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_against_finite_differences(fn, dtype):
    check_grads(fn, X.astype(dtype))


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_forward_mode_agrees(fn):
    v = np.array([0.2, -0.4, 0.9, 0.1])
    _, tangent = jvp(fn, (X,), (v,))
    np.testing.assert_allclose(tangent, np.dot(grad(fn)(X), v), rtol=1e-10, atol=1e-12)


def test_hand_derived_gradient():
    # sum_k (k x + cos x)^2 summed: d/dx = sum_k 2 (k x + cos x) (k - sin x)
    want = sum(2 * (k * X + np.cos(X)) * (k - np.sin(X)) for k in range(3))
    np.testing.assert_allclose(grad(stacked)(X), want, rtol=1e-12)


def test_the_value_is_the_primal_and_the_list_is_built_in_place():
    value, _ = value_and_grad(appended)(X)
    assert value == pytest.approx(appended(X))
    assert "list_append(" in grad(appended).source
    assert "list_appended(" in grad(recurrent).source  # its states are read again


def test_repeated_calls_give_the_same_gradient():
    g = grad(recurrent)
    first = g(X)
    np.testing.assert_array_equal(g(X), first)


def test_a_scalar_loop_with_broadcasting():
    def f(x, w):
        return np.sum(np.stack([w * x[i] for i in range(2)]))

    check_grads(f, np.array([0.5, 2.0]), np.ones((3, 1)) * 0.3, wrt=(0, 1))


def test_appending_a_differentiated_value_to_a_list_that_is_read_back_is_refused():
    log = []

    def f(x):
        log.append(x * 2.0)
        return np.sum(log[-1])

    with pytest.raises(UnsupportedSyntaxError, match="PB106"):
        grad(f)(X)


def test_appending_to_an_outside_list_that_is_not_read_back_runs_once():
    log = []

    def f(x):
        y = np.sum(x * x)
        log.append(y)
        log.append(len(x))
        return y

    np.testing.assert_allclose(grad(f)(X), 2 * X)
    assert len(log) == 2 and log[0] == pytest.approx(np.sum(X * X))


def generator_read_twice(x):
    gen = (v * v for v in x)
    first = sum(gen)
    second = sum(gen)  # Python: 0.0, the generator is used up
    return first + 10.0 * second


def generator_read_in_a_loop(x):
    gen = (np.sin(v) for v in x)
    total = 0.0
    for _ in range(2):
        total = total + sum(gen)
    return total


def generator_read_once(x):
    gen = (v * v for v in x)
    return sum(gen) * 2.0


def generator_made_each_pass(x):
    total = 0.0
    for k in range(2):
        gen = (v ** (k + 1) for v in x)
        total = total + sum(gen)
    return total


def map_read_twice(x):
    m = map(np.sin, x)
    return sum(m) + sum(m)


def filter_read_in_a_loop(x):
    kept = filter(lambda v: v > 0, x)
    total = 0.0
    for _ in range(2):
        total = total + sum(kept)
    return total


def map_read_once(x):
    m = map(np.sin, x)
    return sum(m) * 2.0


@pytest.mark.parametrize("f", [generator_read_twice, generator_read_in_a_loop, map_read_twice,
                               filter_read_in_a_loop])
def test_a_generator_expression_kept_and_read_again_is_refused(f):
    # it was read as a list each time: the gradient of the second pass was not zero
    with pytest.raises(UnsupportedSyntaxError, match="PB402"):
        grad(f)(np.array([0.3, -0.7, 1.2]))


@pytest.mark.parametrize("f", [generator_read_once, generator_made_each_pass, map_read_once])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_generator_expression_kept_and_read_once_is_differentiated(f, dtype):
    check_grads(f, np.array([0.3, -0.7, 1.2], dtype=dtype))


def generators_made_in_a_comprehension(x):
    gens = [(v * k for v in x) for k in range(1, 3)]  # Python: both run with k == 2
    return sum(sum(g) for g in gens)


def generator_kept_then_its_name_rebound(x):
    k = 1.0
    gen = (v * k for v in x)
    k = 3.0  # Python's generator reads k == 3.0
    return sum(gen)


@pytest.mark.parametrize("f", [generators_made_in_a_comprehension,
                               generator_kept_then_its_name_rebound])
def test_a_generator_expression_reading_a_name_rebound_before_it_runs_is_refused(f):
    # it ran where written, with the earlier values: a silently wrong gradient
    with pytest.raises(UnsupportedSyntaxError, match="PB402"):
        grad(f)(np.array([0.3, -0.7, 1.2]))


def generator_kept_then_name_rebound_after_use(x):
    k = 2.0
    gen = (v * k for v in x)
    total = sum(gen)
    k = 3.0
    return total * k


def generators_over_each_row(x):
    rows = [x, 2.0 * x]
    first = sum(sum(v * v for v in row) for row in rows)
    nested = [sum(v * k for v in x) for k in range(1, 3)]  # consumed where made
    flat = [a for k in range(1, 3) for a in (v * k for v in x)]
    return first + sum(nested) + sum(flat)


@pytest.mark.parametrize("f", [generator_kept_then_name_rebound_after_use,
                               generators_over_each_row])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_generator_expression_whose_names_stay_is_differentiated(f, dtype):
    check_grads(f, np.array([0.3, -0.7, 1.2], dtype=dtype))
