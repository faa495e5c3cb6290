"""The inline forms of the owned-buffer helpers (issue 11, pullback.transform.owned_inline):
a scalar written into a vector, and a read added into the owned buffer where it is read.
Checked against finite differences (float64 and float32), against the sweep without the
ownership pass, at second order, and on the runs where the helper's branch is taken."""

import numpy as np
import pytest

import pullback.transform.reverse as reverse_module
from pullback import grad, hessian
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]
PERM = np.array([3, 0, 4, 1, 2])


def make_cases():
    def fill(x):
        out = np.zeros(x.shape[0])
        for i in range(x.shape[0]):
            out[i] = np.sin(x[i]) * x[i]
        return np.sum(out * out)

    def recurrence(x):
        y = np.zeros(x.shape[0])
        y[0] = x[0]
        for t in range(1, x.shape[0]):
            y[t] = 0.9 * y[t - 1] + x[t]
        return np.sum(y * y)

    def like_input(x):
        y = np.zeros_like(x)  # float32 for a float32 x: the buffer's dtype is tested
        for t in range(1, x.shape[0]):
            y[t] = y[t - 1] * x[t] + x[t - 1]
        return np.sum(y * x)

    def numpy_int_index(x):
        out = np.zeros(x.shape[0])
        for k in range(x.shape[0]):
            out[PERM[k]] = x[k] * x[k]  # a NumPy integer: the helper's branch
        return np.sum(out * np.arange(1.0, 6.0))

    def constant_value(x):
        out = np.ones(x.shape[0])
        for i in range(1, x.shape[0]):
            out[i] = 2.0
            out[i - 1] = out[i - 1] * x[i]
        return np.sum(out * x)

    def read_twice(x):
        y = np.zeros(x.shape[0] + 1)
        for t in range(1, x.shape[0] + 1):
            y[t] = y[t - 1] * y[t - 1] * 0.5 + x[t - 1]
        return np.sum(y * y)

    def zero_in_a_branch(x):
        y = np.zeros(x.shape[0])
        for t in range(1, x.shape[0]):
            if x[t] > 0.7:
                y[t] = y[t - 1] * x[t]
            else:
                y[t] = 0.5
        return np.sum(y * y)

    def matrix(x):
        m = np.zeros((x.shape[0], 2))
        for i in range(x.shape[0]):
            m[i, 0] = x[i] * 2.0  # rank 2: the helper (not inline)
            m[i, 1] = m[i, 0] * x[i]
        return np.sum(m * m)

    def rows(x):
        g = np.outer(x, x)
        for i in range(1, g.shape[0] - 1):
            g[i, 1:-1] = 0.25 * (g[i - 1, 1:-1] + g[i + 1, 1:-1] + g[i, :-2] + g[i, 2:])
        return np.sum(g * g)

    def scatter(x):
        acc = np.zeros(3)
        for k in range(x.shape[0]):
            acc[np.array([k % 3, 0, 0])] += x[k] * x[k]  # repeated: the last write lands
            acc[np.array([1, 2])] -= x[k]
        return np.sum(acc * acc)

    return {
        f.__name__: f
        for f in (
            rows,
            scatter,
            fill,
            recurrence,
            like_input,
            numpy_int_index,
            constant_value,
            read_twice,
            zero_in_a_branch,
            matrix,
        )
    }


CASES = make_cases()
X = np.array([0.6, 1.1, 0.8, 0.95, 0.3])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(CASES))
def test_matches_finite_differences(name, dtype):
    check_grads(CASES[name], X.astype(dtype))


@pytest.mark.parametrize(
    "name", ["fill", "recurrence", "numpy_int_index", "read_twice", "like_input"]
)
def test_the_write_is_inline(name):
    source = grad(CASES[name]).source_for(X)
    assert "] = 0.0; d_" in source and "_array_set_pullback_owned(" in source


@pytest.mark.parametrize("name", ["fill", "recurrence"])
def test_the_written_value_is_not_saved(name):
    # the pullbacks read the value for its shape only, proved (): 0.0 stands for it
    source = grad(CASES[name]).source_for(X)
    assert ", 0.0, _own)" in source


@pytest.mark.parametrize("name", ["recurrence", "read_twice", "like_input"])
def test_the_read_is_added_where_it_is_read(name):
    source = grad(CASES[name]).source_for(X)
    assert "] += d_" in source


def test_row_reads_are_added_where_they_are_read():
    # basic tuple indices (an int name and slices): added into a view of the buffer
    assert "type(i) is int: d_g_" in grad(CASES["rows"]).source_for(X)


def test_augmented_stores_run_inline_in_the_forward_sweep():
    source = grad(CASES["scatter"]).source_for(X)
    assert "] += _t" in source and "] -= _t" in source


def test_a_matrix_keeps_the_helper():
    assert "] = 0.0;" not in grad(CASES["matrix"]).source_for(X)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(CASES))
def test_equals_the_copying_path(name, dtype, monkeypatch):
    x = X.astype(dtype)
    inline = grad(CASES[name])(x)
    monkeypatch.setattr(reverse_module, "own_cotangents", lambda *a, **k: None)
    plain_fn = make_cases()[name]
    assert "_owned(" not in grad(plain_fn).source_for(x)
    plain = grad(plain_fn)(x)
    assert inline.dtype == plain.dtype
    np.testing.assert_allclose(inline, plain, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize(
    "name", ["fill", "recurrence", "read_twice", "zero_in_a_branch", "rows", "scatter"]
)
def test_second_order(name):
    check_grads(CASES[name], X, order=2)


def test_repeated_calls_give_the_same_gradient():
    g = grad(CASES["recurrence"])
    first = g(X)
    np.testing.assert_array_equal(g(X), first)
    h = hessian(CASES["recurrence"])(X)
    np.testing.assert_allclose(h, h.T, rtol=1e-12)


# -- local lists: the sweeps' own cotangent lists ----------------------------------------
def make_list_cases():
    def list_store(x):
        lst = [0.0] * x.shape[0]
        for i in range(x.shape[0]):
            lst[i] = np.sin(x[i]) * x[i]
        return np.sum(np.array(lst) ** 2)

    def list_append(x):
        lst = []
        for i in range(x.shape[0]):
            lst.append(np.sin(x[i]) * x[i])
        return np.sum(np.array(lst) ** 2)

    def constant_appends(x):
        lst = []
        for i in range(x.shape[0]):
            lst.append(x[i] * x[i])
            lst.append(2.0)  # no cotangent taken: the helper pops it
        return np.sum(np.array(lst) * np.arange(10.0))

    def store_then_read(x):
        lst = [1.0] * x.shape[0]
        for i in range(1, x.shape[0]):
            lst[i] = lst[i - 1] * x[i]
        return lst[-1] + lst[2]

    return {f.__name__: f for f in (list_store, list_append, constant_appends, store_then_read)}


LIST_CASES = make_list_cases()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(LIST_CASES))
def test_lists_match_finite_differences(name, dtype):
    check_grads(LIST_CASES[name], X.astype(dtype))


@pytest.mark.parametrize("name", ["list_store", "list_append", "constant_appends"])
def test_the_list_pullbacks_are_inline(name):
    assert "is _CotangentList" in grad(LIST_CASES[name]).source_for(X)


def test_a_list_store_does_not_save_its_value():
    # list_set_pullback never reads the value: 0.0 stands for it, in both forms
    source = grad(LIST_CASES["list_store"]).source_for(X)
    assert "_list_set_pullback_sweep(d_lst_2, lst_1, i, 0.0)" in source


@pytest.mark.parametrize("name", list(LIST_CASES))
def test_lists_equal_the_helpers(name, monkeypatch):
    inline = grad(LIST_CASES[name])(X)
    monkeypatch.setattr(reverse_module, "inline_list_cotangents", lambda *a, **k: None)
    plain_fn = make_list_cases()[name]
    assert "is _CotangentList" not in grad(plain_fn).source_for(X)
    np.testing.assert_allclose(inline, grad(plain_fn)(X), rtol=1e-12)


@pytest.mark.parametrize("name", ["list_store", "list_append"])
def test_lists_second_order(name):
    check_grads(LIST_CASES[name], X, order=2)
