"""Lists of closures built in the differentiated function and called from there
(transform/stored_closures.py): each closure takes what any of them reads as arguments of
each call, read when the call runs, which is Python's late binding (the loop variable a
closure reads is the one the loop left behind). Against Python's own values, central
differences (float64 and float32), forward mode and second order; lists that escape or
are read otherwise keep their refusal."""

from __future__ import annotations

import numpy as np
import pytest
from closures_s29_checks import check_all, check_hessian

from pullback import grad
from pullback.errors import UnsupportedSyntaxError

X = np.array([0.3, -0.8, 1.2])
P = np.array([0.7, -0.4, 1.1])


def loop_lambdas(x, p):
    fs = []
    for i in range(3):
        fs.append(lambda t: p[0] * t * i + p[1])
    return np.sum(fs[0](x) + fs[2](x) ** 2)


def loop_defs(x, p):
    fs = []
    for i in range(3):

        def f(t):
            return np.sin(p[i] * t) + i

        fs.append(f)
    return np.sum(fs[0](x) * fs[1](x))


def display_of_closures(x, p):
    s = 2.0 * p[0]

    def scaled(v):
        return v * s

    fs = [scaled, lambda v: np.exp(p[1] * v)]
    return np.sum(fs[0](x) + fs[1](x))


def named_lambda(x, p):
    g = lambda t: t * p[2]  # noqa: E731 - reads p: a closure kept in a list
    kept = [g]
    return np.sum(kept[0](x) ** 2)


def rebound_after_the_def(x, p):
    k = 0

    def t(v):
        return v[k] * p[k]

    fs = [t]
    k = 1  # the closure reads k when it is called: this value
    return fs[0](x)


def written_by_a_sibling(x, p):
    k = 0

    def t(v):
        return v[k] * 3.0 * p[2]

    def bump():
        nonlocal k
        k = k + 1

    fs = [t]
    bump()
    return fs[0](x)


def iterated(x, p):
    fs = []
    for i in range(3):
        fs.append(lambda t: np.tanh(p[i] * t))
    total = 0.0
    for g in fs:
        total = total + np.sum(g(x))
    for g in fs:  # the same name over the same list again
        total = total + np.sum(g(0.5 * x) ** 2)
    return total + sum(np.sum(h(2.0 * x)) for h in fs) + len(fs)


def indexed_by_range(x, p):
    fs = [lambda t: p[0] * t, lambda t: p[1] * t * t]
    total = 0.0
    for j in range(len(fs)):
        total = total + np.sum(fs[j](x))
    return total


def comprehension_with_defaults(x, p):
    fs = [lambda t, i=i: p[0] * t * i + p[1] for i in range(3)]  # i read where made
    return np.sum(fs[2](x) + fs[1](x) ** 2)


def comprehension_filtered_and_iterated(x, p):
    fs = [lambda t, i=i: np.sin(p[i] * t) for i in range(3) if i != 1]
    total = 0.0
    for g in fs:
        total = total + np.sum(g(x))
    return total


CASES = [
    comprehension_with_defaults,
    comprehension_filtered_and_iterated,
    loop_lambdas,
    loop_defs,
    display_of_closures,
    named_lambda,
    rebound_after_the_def,
    written_by_a_sibling,
    iterated,
    indexed_by_range,
]


def test_python_values_late_binding():
    i = 2  # what every closure of the loop reads
    want = np.sum(P[0] * X * i + P[1] + (P[0] * X * i + P[1]) ** 2)
    assert np.isclose(loop_lambdas(X, P), want)
    assert np.isclose(loop_defs(X, P), np.sum((np.sin(P[2] * X) + 2) ** 2))
    assert rebound_after_the_def(X, P) == X[1] * P[1]
    assert written_by_a_sibling(X, P) == X[1] * 3.0 * P[2]
    np.testing.assert_allclose(grad(rebound_after_the_def, wrt=1)(X, P), [0.0, X[1], 0.0])


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_matches_finite_differences_float32_forward_and_second_order(f):
    check_all(
        f,
        X,
        P,
        (np.array([1.0, -0.5, 0.2]), np.array([0.3, 0.9, -0.6])),
        np.array([0.3, -1.0, 0.5]),
    )


def list_returned(x, p):
    fs = [lambda t: p[0] * t]
    return np.sum(fs[0](x)), fs


def read_as_a_value(x, p):
    fs = []
    for i in range(2):
        fs.append(lambda t: p[i] * t)
    first = fs[0]
    return np.sum(first(x))


def shadowed_by_a_comprehension(x, p):
    fs = [lambda t: p[0] * t * i for i in range(1)]  # a comprehension: not a display
    i = 1
    return np.sum(fs[0](x)) + i


def comprehension_variable_read_late(x, p):
    fs = [lambda t: p[0] * t * i for i in range(3)]  # every lambda reads the last i
    return np.sum(fs[0](x))


def comprehension_with_a_differentiated_default(x, p):
    fs = [lambda t, w=p[k]: w * t for k in range(2)]
    return np.sum(fs[1](x))


def an_element_calls_the_list(x, p):
    fs = [lambda t: p[0] * t]
    fs.append(lambda t: fs[0](t) * p[1])  # its call of fs[0] would not pass p
    return np.sum(fs[1](x))


def called_from_a_nested_function(x, a):
    fs = [lambda t: a[0] * t]
    total = 0.0
    for g in fs:

        def h(a):  # its `a` is not the function's: g(a) must not pass it as the capture
            return g(a)

        total = total + np.sum(h(x))
    return total


def loop_name_bound_otherwise(x, p):
    fs = [lambda t: p[0] * t]
    total = 0.0
    for g in fs:
        total = total + np.sum(g(x))
    g = np.sin  # g is no element of fs here: its call must not pass p
    return total + np.sum(g(x))


def called_with_a_keyword(x, p):
    fs = [lambda t: p[0] * t]
    return np.sum(fs[0](t=x))


@pytest.mark.parametrize(
    "f",
    [read_as_a_value, shadowed_by_a_comprehension, comprehension_variable_read_late],
    ids=lambda f: f.__name__,
)
def test_lists_not_converted_keep_their_refusal(f):
    # each reads a variable bound again after the closure is made (late binding)
    with pytest.raises(UnsupportedSyntaxError, match="PB40[45]"):
        grad(f, wrt=1)(X, P)


def test_a_closure_that_calls_its_own_list_is_refused():
    # its record holds the list, which then holds the record (PB106)
    with pytest.raises(UnsupportedSyntaxError, match="PB106"):
        grad(an_element_calls_the_list, wrt=1)(X, P)


def first_of_list_returned(x, p):
    return np.sum(list_returned(x, p)[0])


@pytest.mark.parametrize(
    "f",
    [
        first_of_list_returned,
        called_from_a_nested_function,
        loop_name_bound_otherwise,
        called_with_a_keyword,
    ],
    ids=lambda f: f.__name__,
)
def test_lists_that_escape_hold_records_of_their_cells(f):
    """What the list conversion leaves, the closure records take (closure_cells.py)."""
    check_all(f, X, P, (X, P), P)


def test_the_comprehension_refusal_names_a_fix_that_works():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(comprehension_variable_read_late, wrt=1)(X, P)
    (d,) = info.value.diagnostics
    assert d.line == comprehension_variable_read_late.__code__.co_firstlineno + 1
    assert "`lambda v, i=i: ...`" in d.fix and "def the lambda" not in d.fix
    # the fix: comprehension_with_defaults is that function with `i=i` (differentiated)
    assert np.isclose(comprehension_variable_read_late(X, P), np.sum(P[0] * X * 2))


@pytest.mark.parametrize("f", [loop_lambdas, comprehension_with_defaults], ids=lambda f: f.__name__)
def test_full_hessian(f):
    check_hessian(f, X, P)


def test_a_differentiated_default_is_evaluated_where_the_lambda_is_made():
    check_all(comprehension_with_a_differentiated_default, X, P, (X, P), P)
    check_all(default_read_in_the_body, X, P, (X, P), P)
    assert np.isclose(
        default_read_in_the_body(X, P), comprehension_with_a_differentiated_default(X, P)
    )


def default_read_in_the_body(x, p):
    fs = [lambda t, k=k: p[k] * t for k in range(2)]  # the fix
    return np.sum(fs[1](x))
