"""Nested functions that write ``nonlocal`` variables of the differentiated function: lifted,
their new values returned and assigned back at each call (transform/closure_writes.py).
Gradients against central finite differences (float64 and float32) and hand-derived ones,
forward mode, second order, and the refusals (PB405) with their place and fix."""

from __future__ import annotations

import numpy as np
import pytest
from two_argument_checks import W, X, check_both_arguments, check_forward_against_reverse

from pullback import grad, hessian, jacobian, jvp, value_and_grad
from pullback.check import check_function
from pullback.errors import UnsupportedSyntaxError
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


ONE_ARGUMENT_CASES = [
    inlined_reader,
    attr_before,
    called_in_for_iter_range,
    elif_call,
    star_call,
    default_nonconst,
    method_on_written,
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


# -- refusals -------------------------------------------------------------------------------
def stored_writer(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v

    fns = [add]
    fns[0](x)
    return total


def writer_in_a_comprehension(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v
        return v

    return sum([add(v) for v in x]) + total


def writer_in_a_condition(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v
        return v

    y = x[0] > 0 and add(x[1]) > 0
    return total + y


def writer_in_while_test(x):
    n = 0.0

    def more(v):
        nonlocal n
        n = n + v
        return n < 3.0

    while more(x):
        x = x + 1.0
    else:
        x = x - 1.0
    return n + x


def writer_augmented_in_place(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v
        return v

    total += add(x)
    return total


def writer_augmented_index(x):
    i = 0
    out = np.zeros(3)

    def step(v):
        nonlocal i
        i = i + 1
        return v

    out[i] += step(x[0])  # Python reads out[0] before the call moves i
    return np.sum(out * x)


def two_levels_up(x):
    total = 0.0

    def outer(v):
        def inner(u):
            nonlocal total
            total = total + u

        inner(v)
        return v

    outer(x)
    return total


def writes_global(x):
    def g(v):
        global _LOG
        _LOG = v
        return v

    return g(x)


def generator_writer(x):
    n = 0.0

    def gen(v):
        nonlocal n
        for k in range(3):
            n = n + v
            yield v * k

    return sum(gen(x)) + n


REFUSED = {  # what the PB405 says after the name, and its fix
    stored_writer: (
        3,
        (
            "it writes 'nonlocal total' and 'add' is used as a value (returned, stored or passed "
            "on): its closure cell would outlive the call"
        ),
        (
            "call 'add' only by name (`r = add(...)`), or make 'total' a parameter and return its "
            "new value (`r, total = add(..., total)`) and pass that on"
        ),
    ),
    writer_in_a_comprehension: (
        3,
        (
            "it writes 'nonlocal total' and is called in a lambda or a comprehension, where the "
            "call cannot be a statement of its own"
        ),
        (
            "write the comprehension as a `for` loop that calls 'add' in a statement of its own "
            "(`r = add(v)`)"
        ),
    ),
    writer_in_a_condition: (
        3,
        (
            "it writes 'nonlocal total' and is called in a part of an expression that may not run "
            "(`and`, `or`, `x if c else y`, a chained comparison)"
        ),
        "call 'add' in an `if` statement: `if c: r = add(...)`",
    ),
    writer_in_while_test: (
        3,
        "it writes 'nonlocal n' and is called in the test of a `while` loop with an `else`",
        "write the loop without `else`: set a flag before each `break` and test it after the loop",
    ),
    writer_augmented_in_place: (
        3,
        (
            "it writes 'nonlocal total' and is called in an augmented assignment of 'total', "
            "which the call also changes"
        ),
        (
            "call 'add' in a statement of its own first (`r = add(...)`), then write the "
            "augmented assignment with `r`: it then reads 'total' after the call, where Python "
            "reads it before; write whichever is meant"
        ),
    ),
    writer_augmented_index: (
        4,
        "it writes 'nonlocal i' and is called in an augmented assignment of 'i', which the "
        "call also changes",
        "call 'step' in a statement of its own first (`r = step(...)`), then write the "
        "augmented assignment with `r`: it then reads 'i' after the call, where Python reads "
        "it before; write whichever is meant",
    ),
    two_levels_up: (
        3,
        (
            "a function nested in it writes 'nonlocal total' of a function two or more levels up, "
            "which lifting cannot reach"
        ),
        (
            "make 'total' a parameter of 'outer' and return its new value with the result: `r, "
            "total = outer(..., total)`"
        ),
    ),
    writes_global: (
        1,
        (
            "it declares 'global _LOG' (a global is written only by the differentiated function "
            "itself, where the check sees what reaches it)"
        ),
        (
            "declare it `global` in the differentiated function and write it there (a counter or "
            "a log that carries no gradient is written as in the primal), or pass the value to "
            "'g' and return the new one"
        ),
    ),
    generator_writer: (
        3,
        "a generator that writes 'nonlocal n': its calls return no value to assign it back",
        (
            "collect what it yields in a list and return that (`out.append(...)`, `return out`): "
            "a nested function that returns is lifted with its nonlocal writes"
        ),
    ),
}


@pytest.mark.parametrize("fn", list(REFUSED), ids=lambda f: f.__name__)
def test_refused_with_the_place_and_why(fn):
    line, why, fix = REFUSED[fn]
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(fn)(np.array([0.5, 1.5]))
    found = [d for d in info.value.diagnostics if d.code == "PB405"]
    assert len(found) == 1, str(info.value)
    d = found[0]
    assert d.line == fn.__code__.co_firstlineno + line
    assert d.col == 4
    assert d.message.endswith(why), d.message
    assert d.fix == f"{fix} (see docs/limitations.md#PB405).", d.fix
    assert d.source_line.strip().startswith("def ")
    assert "PB401" not in str(info.value)
    # the check says the same, before anything runs
    assert [x.message for x in check_function(fn) if x.code == "PB405"] == [d.message]


# -- the fixes the refusals give work -------------------------------------------------------
def while_test_fixed(x):
    n = 0.0

    def more(v):
        nonlocal n
        n = n + v * v
        return np.sum(n) < 3.0

    while True:
        r = more(x)
        if not r:
            break
        x = x + 0.5
    return np.sum(n)


def while_test_calls(x):
    n = 0.0
    steps = 0

    def more(v):
        nonlocal n, steps
        steps += 1
        n = n + v * v
        return np.sum(n) < 3.0

    while more(x) and steps < 10:
        x = x + 0.5
        if steps == 2:
            continue
        x = x * 1.1
    return np.sum(n) + np.sum(x) * steps


def two_levels_fixed(x):
    total = 0.0

    def outer(v, total):
        def inner(u):
            nonlocal total
            total = total + u * u

        inner(v)
        inner(np.sin(v))
        return v, total

    r, total = outer(x, total)
    return np.sum(total) + np.sum(r)


def generator_fixed(x):
    n = 0.0

    def gen(v):
        nonlocal n
        out = []
        for k in range(3):
            n = n + v
            out.append(v * k)
        return out

    return np.sum(sum(gen(x))) + np.sum(n)


@pytest.mark.parametrize(
    "fn",
    [while_test_fixed, while_test_calls, two_levels_fixed, generator_fixed],
    ids=lambda f: f.__name__,
)
def test_while_tests_and_the_fixes_the_refusals_give(fn):
    for x in (0.7, np.float32(0.7)):
        check_grads(fn, x)
        assert value_and_grad(fn)(x)[0] == pytest.approx(fn(x), rel=1e-6)
    check_grads(fn, X)


def test_pullback_check_reports_what_grad_refuses(capsys):
    """The command line (which resolves names statically) asks the same question."""
    from pathlib import Path

    from pullback.__main__ import main

    main(["check", str(Path(__file__))])
    found = {}
    for line in capsys.readouterr().out.splitlines():
        if " PB405 " in line or " PB401 " in line:
            lineno = int(line.split(":")[1])
            found[lineno] = line.split(": PB405 nested function definition ", 1)[-1]
    expected = {}
    for fn, (line, why, _) in REFUSED.items():
        d = next(d for d in check_function(fn) if d.code == "PB405")
        expected[fn.__code__.co_firstlineno + line] = d.message.split("definition ", 1)[1]
        assert d.message.endswith(why)
    assert found == expected
