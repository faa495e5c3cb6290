"""What stays refused after issue 11: writes into arrays pullback cannot prove local
(arguments, aliases, views, globals), before anything runs and at the user's line; views
of a written array found at run time; stores into containers other than arrays."""

import numpy as np
import pytest

import pullback
from pullback import grad
from pullback.check import check
from pullback.errors import UnsupportedCallError

G = np.zeros(3)


def into_argument(x):
    x[0] = 1.0
    return np.sum(x)


def through_alias(x):
    y = x
    y[0] = 1.0
    return np.sum(y)


def into_view(x):
    b = np.zeros(3)
    v = b[1:3]
    v[0] = x[0]
    return np.sum(b)


def base_of_view(x):
    b = np.zeros(3)
    v = b[1:3]
    b[1] = x[0]
    return np.sum(v * x[:2])


def base_of_transpose(x):
    b = np.zeros((2, 2))
    c = b.T
    b[0, 1] = x[0]
    return np.sum(c * x[0])


def base_of_reshape(x):
    b = np.zeros(4)
    c = b.reshape(2, 2)
    b[0] = x[0]
    return np.sum(c * x[0])


def into_global(x):
    G[0] = x[0]
    return np.sum(G)


def into_argument_augmented(x):
    x[1:3] += 1.0
    return np.sum(x)


@pytest.mark.parametrize(
    "f, code, line, why",
    [
        (into_argument, "PB101", 17, "'x' comes from a parameter"),
        (through_alias, "PB101", 23, "cannot prove that 'y' is an array the function created"),
        (into_view, "PB101", 30, "cannot prove that 'v' is an array the function created"),
        (base_of_view, "PB101", 37, "'b' is also used on line 36"),
        (base_of_transpose, "PB101", 44, "'b' is also used on line 43"),
        (base_of_reshape, "PB101", 51, "'b' is also used on line 50"),
        (into_global, "PB101", 56, "cannot prove that 'G' is an array the function created"),
        (into_argument_augmented, "PB102", 61, "'x' comes from a parameter"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_not_provably_local_is_refused_before_running(f, code, line, why):
    diagnostics = check(f)
    assert [(d.code, d.line) for d in diagnostics] == [(code, line)]
    assert why in diagnostics[0].why
    calls = []
    x = np.ones(3)
    with pytest.raises(pullback.UnsupportedSyntaxError):
        grad(f)(x)
    assert calls == [] and np.all(x == 1.0)  # nothing ran, the caller's array is unchanged


def test_argument_fix_is_copy():
    (d,) = check(into_argument)
    assert d.fix.startswith("write `x = x.copy()` before the first write")


def test_named_row_view_of_written_matrix_is_refused_at_run_time():
    def rows(x):
        m = np.zeros((2, 2))
        r = m[0]
        m[0, 0] = x[0]
        return np.sum(r) * x[0]

    with pytest.raises(UnsupportedCallError, match=r"row = m\[i\]\.copy\(\)"):
        grad(rows)(np.ones(3))

    def rows_copied(x):
        m = np.zeros((2, 2))
        r = m[0].copy()
        m[0, 0] = x[0]
        return np.sum(r) * x[0] + m[0, 0] * x[1]

    np.testing.assert_allclose(grad(rows_copied)(np.array([2.0, 3.0])), [3.0, 2.0])


def test_store_into_a_local_list_is_differentiated():
    # A list the function built is changed by rebinding (tests/test_list_mutation.py).
    def f(x):
        out = [0.0] * 3
        out[0] = x[0]
        return out[0] * 2.0

    np.testing.assert_allclose(grad(f)(np.ones(3)), [2.0, 0.0, 0.0])


def test_a_call_that_may_return_its_argument_is_not_fresh():
    def f(x):
        a = x.astype(np.float64, copy=False)  # x itself when x is float64
        a[0] = 0.0
        return np.sum(a)

    assert [d.code for d in check(f)] == ["PB101"]


def test_an_array_held_in_a_dict_is_written_or_names_the_fix_that_works():
    # min-char-rnn's one-hot input (found by probe3): the array is written through the dict
    def one_hot(w, inputs=(2, 0)):
        xs = {}
        for t in range(len(inputs)):
            xs[t] = np.zeros(3)
            xs[t][inputs[t]] = 1
        return np.sum(w * xs[0]) + np.sum(w * xs[1]) ** 2

    # the dict is local and holds its arrays alone: written as Python does (held_arrays.py)
    assert check(one_hot) == []
    w0 = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(grad(one_hot)(w0), [2 * w0[0], 0.0, 1.0])

    def shared(w, inputs=(2, 0)):
        xs = {}
        for t in range(len(inputs)):
            xs[t] = np.zeros(3)
            kept = xs[t]
            xs[t][inputs[t]] = 1
        return np.sum(w * xs[0]) + np.sum(w * kept) ** 2

    (d,) = check(shared)
    assert d.code == "PB101" and "an array held in 'xs'" in d.why
    assert "`xs[t]` on line" in d.why and "may keep one of its arrays" in d.why
    assert d.fix.startswith("make the array under a name, write into it, then store it")

    def fixed(w, inputs=(2, 0)):
        xs = {}
        for t in range(len(inputs)):
            a = np.zeros(3)
            a[inputs[t]] = 1
            xs[t] = a
        return np.sum(w * xs[0]) + np.sum(w * xs[1]) ** 2

    w = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(grad(fixed)(w), [2 * w[0], 0.0, 1.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_transposed_row_only_read_does_not_keep_the_array(dtype):
    # dismalpy's Kalman filter: `eta[t].T.dot(f_inv).dot(eta[t])`, then later rows written
    def quadratic_forms(x):
        eta = np.zeros((3, 2))
        ll = 0.0
        for t in range(3):
            eta[t] = x[t] * x[:2]
            ll = ll + eta[t].T.dot(np.eye(2) * 2.0).dot(eta[t])
        return ll

    from fd import check_grad

    check_grad(quadratic_forms, np.array([0.7, -0.4, 1.3], dtype=dtype))
