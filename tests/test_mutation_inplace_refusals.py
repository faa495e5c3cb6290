"""What stays refused of the in-place calls (issue 11): on arguments, on names that may
alias an argument, on views of local arrays (both ways), on globals and closure variables,
writes after ``r = f(..., out=a)`` made ``r`` another name for ``a``, calls used inside an
expression — each before anything runs, at the user's line, with the fix
(``x = x.copy()`` first where that is the fix). Exact texts (golden strings) for the
common cases."""

import inspect

import numpy as np
import pytest

import pullback
from pullback import grad
from pullback.check import check

G = np.zeros(3)


def cumsum_into_argument(x):
    np.cumsum(x, out=x)
    return np.sum(x)


def put_into_argument(x):
    np.put(x, [0], 1.0)
    return np.sum(x)


def sort_through_alias(x):
    y = x
    y.sort()
    return y[0]


def fill_view_of_argument(x):
    v = x[1:3]
    v.fill(0.0)
    return np.sum(x)


def write_base_of_view(x):
    a = np.zeros(4)
    v = a[1:3]
    np.add.at(a, [1], x[0])
    return np.sum(v)


def write_view_of_local(x):
    a = np.zeros(4)
    v = a[1:3]
    np.copyto(v, x[:2])
    return np.sum(a)


def fill_global(x):
    G.fill(x[0])
    return np.sum(G)


def closure_writer():
    c = np.zeros(3)

    def copy_into_closure(x):
        np.copyto(c, x)
        return np.sum(c)

    return copy_into_closure


def write_after_out_alias(x):
    a = np.zeros(3)
    r = np.multiply(x, x, out=a)
    a.fill(1.0)
    return np.sum(r)


def inside_an_expression(x):
    a = np.zeros(3)
    return np.sum(x) + np.add.at(a, [0], x[0])


def out_into_a_slice(x):
    a = np.zeros(4)
    np.multiply(x[:2], 2.0, out=a[1:3])
    return np.sum(a)


def fill_diagonal_of_argument(m):
    np.fill_diagonal(m, 1.0)
    return np.sum(m)


def _line(f, text):
    lines, start = inspect.getsourcelines(f)
    return start + next(k for k, line in enumerate(lines) if text in line)


CASES = [
    (cumsum_into_argument, "out=x", "PB104", "'x' comes from a parameter"),
    (put_into_argument, "np.put", "PB104", "'x' comes from a parameter"),
    (sort_through_alias, "y.sort", "PB103", "cannot prove that 'y' is an array"),
    (fill_view_of_argument, "v.fill", "PB103", "cannot prove that 'v' is an array"),
    (write_base_of_view, "np.add.at", "PB104", "'a' is also used on line"),
    (write_view_of_local, "np.copyto", "PB104", "cannot prove that 'v' is an array"),
    (fill_global, "G.fill", "PB103", None),
    (closure_writer(), "np.copyto", "PB104", "cannot prove that 'c' is an array"),
    (write_after_out_alias, "a.fill", "PB103", "'a' is also used on line"),
    (inside_an_expression, "np.add.at", "PB104", None),
    (out_into_a_slice, "out=a[1:3]", "PB104", None),
    (fill_diagonal_of_argument, "np.fill_diagonal", "PB104", "'m' comes from a parameter"),
]


@pytest.mark.parametrize("f, text, code, why", CASES, ids=lambda v: getattr(v, "__name__", None))
def test_refused_before_running_at_the_users_line(f, text, code, why):
    diagnostics = check(f)
    assert [(d.code, d.line) for d in diagnostics] == [(code, _line(f, text))]
    if why is not None:
        assert why in diagnostics[0].why
    x = np.ones(3) if f is not fill_diagonal_of_argument else np.ones((2, 2))
    with pytest.raises(pullback.UnsupportedSyntaxError):
        grad(f)(x)
    assert np.all(x == 1.0) and not G.any()  # nothing ran


def _golden(f):
    (d,) = check(f)
    return d.message, d.why, d.fix


def test_golden_argument_out():
    assert _golden(cumsum_into_argument) == (
        "array mutation: 'out=x' writes the result into an existing array",
        "'x' comes from a parameter, so it may be the caller's array, and a differentiated "
        "function may write only into arrays it created itself.",
        "write `x = x.copy()` before the first write (then 'x' is the function's own array), "
        "or use the returned value instead, e.g. `x = np.cumsum(x)` without `out=` "
        "(see docs/limitations.md#PB104).",
    )


def test_golden_alias_sort():
    assert _golden(sort_through_alias) == (
        "array mutation: in-place method 'y.sort()' changes 'y'",
        "pullback cannot prove that 'y' is an array the function created itself (np.zeros, "
        "np.empty, x.copy(), arithmetic, ...) and that no other name sees.",
        "write `y = y.copy()` before the first write (when the writes need not reach the "
        "array it came from), or use a function that returns a new array: `y = np.sort(y)`, "
        "or `y = y[np.argsort(y)]` for a 1-d array (see docs/limitations.md#PB103).",
    )


def test_golden_view_of_local():
    line = _line(write_base_of_view, "v = a[1:3]")
    assert _golden(write_base_of_view) == (
        "array mutation: 'numpy.add.at' writes into its argument",
        f"'a' is also used on line {line} in a way that may let another name (an alias or a "
        "view such as `v = b[1:3]`, `b.T`, `b.reshape(...)`) or a call keep its array, and a "
        "write would change what that name sees.",
        "copy what that line keeps (`v = b[1:3].copy()`), or sum into a new array: "
        "`a = a + np.bincount([1], weights=x[0], minlength=a.size)` (for 1-d integer "
        "indices) (see docs/limitations.md#PB104).",
    )


def test_golden_inside_an_expression():
    message, why, fix = _golden(inside_an_expression)
    assert message == "array mutation: 'numpy.add.at' writes into its argument"
    assert fix.startswith(
        "write the call as a statement of its own (`f(...)` or `r = f(...)`) and use the "
        "array afterwards, or "
    )


def test_the_copy_fix_works():
    def fixed(x):
        x = x.copy()
        np.cumsum(x, out=x)
        return np.sum(x * x)

    x = np.array([0.5, 1.0, 2.0])
    c = np.cumsum(x)
    # d/dx_j sum(c^2) = 2 * sum_{k >= j} c_k
    np.testing.assert_allclose(grad(fixed)(x), 2 * np.cumsum(c[::-1])[::-1])
    np.testing.assert_array_equal(x, [0.5, 1.0, 2.0])


def test_sort_of_a_local_list_is_the_lists_not_the_arrays():
    """``lst.sort()`` on a list the function built is a list change
    (transform/list_mutation.py), not an array's in-place sort."""

    def f(x):
        lst = [x[0], x[1] * 3.0]
        lst.sort()
        return lst[0] * 2.0 + lst[1]

    np.testing.assert_allclose(grad(f)(np.array([2.0, 0.5])), [1.0, 6.0])
    np.testing.assert_allclose(grad(f)(np.array([0.5, 2.0])), [2.0, 3.0])
