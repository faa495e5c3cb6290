"""Nested functions that write ``nonlocal`` variables where the lifting cannot be exact: refused
(PB405) at the nested ``def`` with why and a fix (golden messages), the same by ``grad``, by
``check_function`` and by ``pullback check``; and the fixes they give, differentiated against
finite differences (transform/closure_writes.py; what is lifted: test_nonlocal_writes.py)."""

from __future__ import annotations

import numpy as np
import pytest
from two_argument_checks import X

from pullback import grad, value_and_grad
from pullback.check import check_function
from pullback.errors import UnsupportedSyntaxError
from pullback.testing import check_grads


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

    later = (add(v) for v in x)  # run when consumed, not where it is written
    return sum(later) + total


def writer_in_nested_comprehensions(x):
    n = 0.0

    def f(v):
        nonlocal n
        n = n + v
        return n

    m = [[f(x[i] * j) for j in range(2)] for i in range(2)]
    return m[1][1] * m[0][0] + n


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


def called_two_levels_down(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v

    def outer(v):
        def inner(u):
            add(u)
            return u

        return inner(v)

    outer(x)
    return total


def shadowed_by_a_caller(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v

    def twice(v):
        total = 2.0 * v  # its own 'total', not the one add changes
        add(total)
        return total

    twice(x)
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
        "it writes 'nonlocal total' and is called in a lambda, a set comprehension or a "
        "generator expression that is not consumed where it is written, where the call cannot "
        "be a statement of its own",
        "write it as a `for` loop (and a lambda as a `def`) that calls 'add' in a statement of "
        "its own (`r = add(v)`)",
    ),
    writer_in_nested_comprehensions: (
        3,
        "it writes 'nonlocal n' and is called in a comprehension inside another comprehension",
        "write the comprehensions as `for` loops that append what 'f' returns to one list, and "
        "reshape it after the loops (`np.reshape(values, (n, m))`)",
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
    called_two_levels_down: (
        3,
        "it writes 'nonlocal total' and is called by a function nested in another nested "
        "function, whose call of 'add' lifting cannot reach",
        "call 'add' from the enclosing function or from a function defined directly in it",
    ),
    shadowed_by_a_caller: (
        7,
        "it calls a nested function that writes 'nonlocal total' and has a variable 'total' "
        "of its own, which is not the one the call changes",
        "rename the variable 'total' of 'twice', or declare it `nonlocal total` in 'twice' if "
        "it is meant to be the same",
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


def nested_comprehensions_fixed(x):
    n = 0.0

    def f(v):
        nonlocal n
        n = n + v
        return n

    values = []
    for i in range(2):
        for j in range(2):
            values.append(f(x * i * j + x))
    m = np.reshape(values, (2, 2) + np.shape(x))
    return np.sum(m[1][1] * m[0][0] + n)


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
    [
        while_test_fixed,
        while_test_calls,
        two_levels_fixed,
        generator_fixed,
        nested_comprehensions_fixed,
    ],
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
