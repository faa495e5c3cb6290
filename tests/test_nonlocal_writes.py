"""Nested functions that write ``nonlocal`` variables of the differentiated function: lifted,
their new values returned and assigned back at each call (transform/closure_writes.py).
Gradients against central finite differences (float64 and float32) and hand-derived ones,
forward mode and second order (the refusals: test_nonlocal_writes_refused.py)."""

from __future__ import annotations

import numpy as np
import pytest
from two_argument_checks import W, X, check_both_arguments, check_forward_against_reverse

from pullback import grad, hessian, jacobian, jvp, value_and_grad
from pullback.check import check_function
from pullback.testing import check_grads


# -- what is lifted -------------------------------------------------------------------------
def accumulator(x, w):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v * w

    for i in range(3):
        add(x * i)
    return np.sum(total * total)


def counter_and_objective(x, w):
    calls = 0

    def objective(v):
        nonlocal calls
        calls += 1
        return np.sum(np.tanh(w * v))

    a = objective(x)
    b = objective(2.0 * x)
    return a * b + calls


def call_in_expression(x, w):
    total = x

    def bump(v):
        nonlocal total
        total = total * w + v
        return np.sin(v)

    # `total` is read before the call (the old value) and after it (the new one)
    y = total * 2.0 + bump(x) * total
    return np.sum(y + total)


def call_in_branches_and_returns(x, w):
    state = w

    def step(v):
        nonlocal state
        if np.sum(v) > 0:
            state = state * v
            return np.sum(state)
        state = state + v
        return 0.5 * np.sum(state)

    if step(x) > -10.0:
        r = step(-x)
    else:
        r = 0.0
    return r + np.sum(state)


def two_nested_share(x, w):
    acc = 0.0 * x

    def push(v):
        nonlocal acc
        acc = acc + v

    def push_twice(v):
        push(v * w)
        push(np.cos(v))
        return np.sum(v)

    s = push_twice(x)
    push(x * x)
    return np.sum(acc * acc) + s


def two_writers_one_variable(x, w):
    acc = x

    def scale(v):
        nonlocal acc
        acc = acc * v

    def shift(v):
        nonlocal acc
        acc = acc + v

    for _ in range(2):
        scale(w)
        shift(np.sin(x))
    return np.sum(acc)


def nested_calls(x, w):
    n = 0.0

    def g(v):
        nonlocal n
        n = n + np.sum(v)
        return v * w

    return np.sum(g(g(x)) * n)


def two_variables(x, w):
    lo = x
    hi = w

    def widen(v):
        nonlocal lo, hi
        lo = lo - v
        hi = hi + v * lo
        return lo * hi

    r = widen(x)
    r = r + widen(w)
    return np.sum(r + lo * hi)


def for_iter_and_return(x, w):
    seen = 0.0

    def parts(v):
        nonlocal seen
        seen = seen + np.sum(v * w)
        return [v, w * v]

    total = 0.0
    for p in parts(x):
        total = total + np.sum(p * p)
    return total + seen


def returns_the_call(x, w):
    s = 1.0

    def g(v):
        nonlocal s
        s = s * np.sum(v)
        return s * w

    def outer(v):
        return g(v) + g(v * v)

    y = outer(x)
    return np.sum(y) + s


def recursive_writer(x, w):
    acc = 0.0

    def walk(v, k):
        nonlocal acc
        if k == 0:
            return v
        acc = acc + np.sum(v * w)
        return walk(np.sin(v), k - 1)

    out = walk(x, 3)
    return np.sum(out) + acc


ARRAY_CASES = [
    accumulator,
    counter_and_objective,
    call_in_expression,
    call_in_branches_and_returns,
    two_nested_share,
    two_writers_one_variable,
    nested_calls,
    two_variables,
    for_iter_and_return,
    returns_the_call,
    recursive_writer,
]


@pytest.mark.parametrize("fn", ARRAY_CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradients_against_finite_differences(fn, dtype):
    check_both_arguments(fn, dtype)


@pytest.mark.parametrize("fn", ARRAY_CASES, ids=lambda f: f.__name__)
def test_the_primal_is_unchanged(fn):
    value, _ = value_and_grad(fn)(X, W)
    np.testing.assert_allclose(value, fn(X, W), rtol=1e-12)


@pytest.mark.parametrize("fn", ARRAY_CASES, ids=lambda f: f.__name__)
def test_forward_mode(fn):
    check_forward_against_reverse(fn)


@pytest.mark.parametrize(
    "fn", [accumulator, call_in_expression, two_writers_one_variable], ids=lambda f: f.__name__
)
def test_second_order(fn):
    check_grads(fn, X, W, wrt=0, order=2)


# -- more places of the call and of the variable --------------------------------------------
def param_written(x, w):
    def g():
        nonlocal x
        x = x * w

    g()
    g()
    return np.sum(x)


def inlined_reader(x):
    t = x
    half = lambda: t * 0.5  # noqa: E731 - inlined where called, reads t then

    def g(v):
        nonlocal t
        t = t + v

    a = half()
    g(x * x)
    b = half()
    return np.sum(a * b)


def vector_out(x):
    t = 0.0 * x

    def g(v):
        nonlocal t
        t = t + np.sin(v)

    g(x)
    g(2 * x)
    return t


def attr_before(x):
    t = x

    def g(v):
        nonlocal t
        t = t * v
        return 1.0

    return np.sum(t.T * g(x) + t)


def called_in_for_iter_range(x):
    n = 0

    def count():
        nonlocal n
        n = n + 1
        return 3

    s = 0.0
    for i in range(count()):
        s = s + x * i
    return np.sum(s) * n


def elif_call(x):
    t = x

    def g(v):
        nonlocal t
        t = t + v
        return np.sum(t)

    if np.sum(x) > 10:
        r = 1.0
    elif g(x) > 0:
        r = np.sum(t)
    else:
        r = -np.sum(t * t)
    return r + np.sum(t)


def star_call(x):
    s = 0.0

    def g(a, b):
        nonlocal s
        s = s + a * b
        return a

    args = (x, 2.0 * x)
    g(*args)
    return np.sum(s)


def default_nonconst(x, w=1.5):
    s = x

    def g(v, k=w * 2.0):
        nonlocal s
        s = s * k + v

    g(x)
    g(x, 0.5)
    return np.sum(s)


def method_on_written(x):
    t = x

    def g(v):
        nonlocal t
        t = t + v
        return 2.0

    return np.sum(t.dot(t) * g(x) + t)


def list_comprehension(x):
    calls = 0

    def obj(v):
        nonlocal calls
        calls += 1
        return np.sin(v) * calls

    vals = [obj(x * k) for k in range(3)]
    return np.sum(vals[0] + vals[2]) + calls


def generator_summed(x):
    acc = 0.0

    def add(v):
        nonlocal acc
        acc = acc + v
        return acc * v

    s = sum(add(x[i]) for i in range(3) if i != 1)
    return s + acc


def dict_comprehension(x):
    n = 0.0

    def f(v):
        nonlocal n
        n = n + v
        return n

    d = {k: f(x[k]) * x[k] for k in range(3)}
    return d[0] + d[2] * n


def comprehension_variable_stays_inside(x):
    k = x
    n = 0.0

    def f(v):
        nonlocal n
        n = n + np.sum(v)
        return v * v

    vals = [f(x * k) for k in (1.0, 2.0)]  # its k is not the function's k
    return np.sum(vals[1] * k) + n


ONE_ARGUMENT_CASES = [
    inlined_reader,
    attr_before,
    called_in_for_iter_range,
    elif_call,
    star_call,
    default_nonconst,
    method_on_written,
    list_comprehension,
    generator_summed,
    dict_comprehension,
    comprehension_variable_stays_inside,
]


@pytest.mark.parametrize("fn", ONE_ARGUMENT_CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_one_argument_cases(fn, dtype):
    value, _ = value_and_grad(fn)(X.astype(dtype))
    np.testing.assert_allclose(value, fn(X.astype(dtype)), rtol=1e-6)
    check_grads(fn, X.astype(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_parameter_written_by_the_nested_function(dtype):
    check_both_arguments(param_written, dtype)


def test_jacobian_of_a_vector_accumulated_by_a_nested_function():
    jac = jacobian(vector_out)(X)
    np.testing.assert_allclose(jac, np.diag(np.cos(X) + 2 * np.cos(2 * X)), rtol=1e-12)


# -- scalars, by hand ------------------------------------------------------------------------
def scalar_accumulator(x, w):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v * w

    for i in range(1, 4):
        add(x**i)
    return total


def test_scalar_gradient_by_hand():
    x, w = 1.3, 0.7
    # total = w (x + x^2 + x^3): d/dx = w (1 + 2x + 3x^2), d/dw = x + x^2 + x^3
    gx, gw = grad(scalar_accumulator, wrt=(0, 1))(x, w)
    assert gx == pytest.approx(w * (1 + 2 * x + 3 * x * x), rel=1e-12)
    assert gw == pytest.approx(x + x * x + x**3, rel=1e-12)
    gx32 = grad(scalar_accumulator)(np.float32(x), np.float32(w))
    assert gx32 == pytest.approx(w * (1 + 2 * x + 3 * x * x), rel=1e-5)


def test_scalar_hessian_by_hand():
    x, w = 1.3, 0.7
    # d2/dx2 = w (2 + 6x)
    assert hessian(scalar_accumulator)(x, w) == pytest.approx(w * (2 + 6 * x), rel=1e-9)


def test_scalar_jvp_by_hand():
    x, w = 1.3, 0.7
    y, t = jvp(scalar_accumulator, (x, w), (1.0, 0.0))
    assert y == pytest.approx(scalar_accumulator(x, w), rel=1e-12)
    assert t == pytest.approx(w * (1 + 2 * x + 3 * x * x), rel=1e-12)


def early_return_scalar(x):
    count = 0
    best = 0.0

    def visit(v):
        nonlocal count, best
        count += 1
        if v < 0.5:
            return 0.0
        best = best + v * v
        return v

    s = 0.0
    for k in range(4):
        s = s + visit(x * k)
    return s + best + count


def test_early_return_and_counter_by_hand():
    x = 0.4  # visits 0, 0.4 (early), 0.8, 1.2: s = 2x... from k=2,3; best = (4 + 9) x^2
    value, g = value_and_grad(early_return_scalar)(x)
    assert value == pytest.approx(early_return_scalar(x), rel=1e-12)
    assert g == pytest.approx(5.0 + 26.0 * x, rel=1e-12)


# -- a counter that carries no gradient -----------------------------------------------------
def counted(x):
    evaluations = 0

    def f(v):
        nonlocal evaluations
        evaluations = evaluations + 1
        return np.sum(v**2)

    a = f(x)
    b = f(x + 1.0)
    return a + b, evaluations


def test_counter_just_runs():
    value, g = value_and_grad(lambda x: counted(x)[0])(X)
    assert value == pytest.approx(counted(X)[0])
    np.testing.assert_allclose(g, 2 * X + 2 * (X + 1.0), rtol=1e-12)


def counter_result(x):
    n = 0

    def f(v):
        nonlocal n
        n += 1
        return v * 3.0

    return np.sum(f(x) + f(x)) * n


def test_counter_value_is_the_primal_one():
    np.testing.assert_allclose(grad(counter_result)(X), np.full(3, 12.0), rtol=1e-12)


def test_the_check_accepts_what_grad_does():
    for fn in ARRAY_CASES + [scalar_accumulator, early_return_scalar, counter_result]:
        assert check_function(fn) == [], fn.__name__
