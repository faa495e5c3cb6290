"""What counts as a local array (issue 11): results of NumPy functions that always return a
new array may be written (``s = np.sort(x); s[0] = 0.0``), results that may be a view of an
argument or the argument itself (``x.reshape``, ``np.asarray``, ``x.ravel()``, ``x.T``,
``x[::2]``) are refused at the user's line with ``x = x.copy()`` as the fix. The table is
``pullback.check.fresh_arrays``."""

import numpy as np
import pytest
from inplace_cases import check_value_forward_and_second_order

import pullback
from pullback.check import check
from pullback.check.fresh_arrays import (
    NEW_ARRAY_FUNCTIONS,
    NEW_ARRAY_METHODS,
    VIEW_FUNCTIONS,
    VIEW_METHODS,
    call_returns_new,
    method_returns_new,
)
from pullback.errors import UnsupportedSyntaxError
from pullback.testing import check_grads

X = np.array([0.7, -1.2, 0.4, 0.9, 1.3, -0.6])
DTYPES = [np.float64, np.float32]


def sort_then_write(x):
    s = np.sort(x)
    s[0] = 0.0
    return np.sum(s**2)


def diff_clamped(x):
    d = np.diff(x)
    d[d < 0] = 0
    return np.sum(d**3)


def concatenate_scaled(x):
    c = np.concatenate([x, x * 2.0])
    c[1:3] *= x[4]
    return np.sum(c**2)


def ufunc_result_written(x):
    e = np.exp(x)
    e[::2] = x[:3]
    return np.sum(e * x)


def cumsum_and_where(x):
    c = np.cumsum(x)
    w = np.where(x > 0, x, 0.5 * x)
    c[-1] = w[0] * 3.0
    w[1:] += c[:-1]
    return np.sum(c * w)


def stacked_rows(x):
    m = np.stack([x[:3], x[3:]])
    m[:, 0] = x[1]
    return np.sum(np.sin(m))


def method_results(x):
    f = x.reshape(2, 3).cumsum()
    f[2] = 1.0
    t = x.take([0, 0, 2])
    t[0] = x[5]
    return np.sum(f * f) + np.sum(t**3)


def pairwise_distances_diagonal_set(x):
    pos = x.reshape(3, 2)
    r = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=-1)
    np.fill_diagonal(r, 1.0)  # r is new: np.linalg.norm computes it
    return np.sum(np.triu(1.0 / r, 1))


def spectrum_with_dc_removed(x):
    s = np.fft.rfft(x)
    s[0] = 0.0
    return np.sum(np.abs(s) ** 2)


CASES = [
    pairwise_distances_diagonal_set,
    spectrum_with_dc_removed,
    sort_then_write,
    diff_clamped,
    concatenate_scaled,
    ufunc_result_written,
    cumsum_and_where,
    stacked_rows,
    method_results,
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_writes_into_new_arrays_match_finite_differences(f, dtype):
    check_grads(f, X.astype(dtype))


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_value_forward_mode_and_second_order(f):
    # np.sort's and np.linalg.norm(..., axis=)'s own rules have no transformable pullback:
    # their second order is checked by finite differences of the gradient (check_grads
    # raises on a mismatch either way). (np.abs of a complex value has one now.)
    method = check_value_forward_and_second_order(f, X)
    assert method == "reverse over reverse" or f in (
        sort_then_write,
        pairwise_distances_diagonal_set,
    )


# -- views and the argument itself stay refused -------------------------------------------------
def reshape_view(x):
    r = x.reshape(2, 3)
    r[0, 0] = 1.0
    return np.sum(r)


def asarray_itself(x):
    r = np.asarray(x)
    r[0] = 1.0
    return np.sum(r)


def ravel_view(x):
    r = x.ravel()
    r[1:3] = 0.0
    return np.sum(r)


def transpose_attribute(x):
    r = x.T
    r[0] = 1.0
    return np.sum(r)


def strided_slice(x):
    r = x[::2]
    r[0] = 1.0
    return np.sum(r)


def diff_of_order_zero(x):
    r = np.diff(x, n=0)  # x itself
    r[0] = 1.0
    return np.sum(r)


def transpose_function(x):
    r = np.transpose(x)
    r.fill(2.0)
    return np.sum(r)


def flatten_as_the_transform_computes_it(x):
    r = x.flatten()  # a copy in NumPy, but the transform computes it with np.ravel (a view)
    r[0] = 1.0
    return np.sum(r)


def sum_with_positional_out(x):
    y = np.zeros(1)
    r = np.sum(x, 0, None, y)  # r is y: out= by position
    r[0] = 1.0
    return np.sum(y)


@pytest.mark.parametrize(
    "f, line, shown",
    [
        (reshape_view, "r[0, 0] = 1.0", "x.reshape(2, 3)"),
        (asarray_itself, "r[0] = 1.0", "np.asarray(x)"),
        (ravel_view, "r[1:3] = 0.0", "x.ravel()"),
        (transpose_attribute, "r[0] = 1.0", "x.T"),
        (diff_of_order_zero, "r[0] = 1.0", "np.diff(x, n=0)"),
        (transpose_function, "r.fill(2.0)", "np.transpose(x)"),
        (flatten_as_the_transform_computes_it, "r[0] = 1.0", "x.flatten()"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_views_are_refused_at_the_users_line_with_copy_as_the_fix(f, line, shown):
    with pytest.raises(UnsupportedSyntaxError) as info:
        pullback.grad(f)(X)
    text = str(info.value)
    assert line in text
    assert f"'r' is `{shown}`, which may be a view of another array or that array itself" in text
    assert "write `r = r.copy()` before the first write" in text


def test_golden_view_message():
    (d,) = check(reshape_view)
    assert (d.code, d.message, d.why, d.fix) == (
        "PB101",
        "array mutation: assignment to an element of 'r'",
        "'r' is `x.reshape(2, 3)`, which may be a view of another array or that array itself "
        "(unlike np.sort, np.diff, np.concatenate, arithmetic, ..., which always return a new "
        "array), so a write would change that array too.",
        "write `r = r.copy()` before the first write (when the writes need not reach the "
        "array it views), or build a new array, e.g. `r = np.where(mask, 1.0, r)` with a "
        "boolean `mask` (see docs/limitations.md#PB101).",
    )


def test_slices_are_refused_with_copy_as_the_fix():
    with pytest.raises(UnsupportedSyntaxError) as info:
        pullback.grad(strided_slice)(X)
    text = str(info.value)
    assert "r[0] = 1.0" in text and "cannot prove that 'r' is an array" in text
    assert "write `r = r.copy()` before the first write" in text


def test_positional_out_is_not_a_new_array():
    with pytest.raises(UnsupportedSyntaxError) as info:
        pullback.grad(sum_with_positional_out)(X)
    assert "r[0] = 1.0" in str(info.value)


# -- the table ----------------------------------------------------------------------------------
def test_the_tables_are_disjoint_and_name_numpy_functions():
    assert not NEW_ARRAY_FUNCTIONS & VIEW_FUNCTIONS
    assert not NEW_ARRAY_METHODS & VIEW_METHODS
    missing = [n for n in NEW_ARRAY_FUNCTIONS if _numpy_function(n) is None]
    assert not missing, missing


def _numpy_function(name):
    """``np.sort`` for "sort", ``np.linalg.norm`` for "linalg.norm"; None if absent."""
    obj = np
    for part in name.split("."):
        obj = getattr(obj, part, None)
    return obj


@pytest.mark.parametrize("name", sorted(n for n in NEW_ARRAY_FUNCTIONS if "." in n))
def test_no_listed_linalg_or_fft_function_returns_its_input(name):
    fn = _numpy_function(name)
    a = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, 0.2], [0.1, 0.2, 1.0]])
    args = ([a, a],) if name == "linalg.multi_dot" else (a, a) if "solve" in name else (a,)
    if name == "linalg.lstsq":
        args = (a, a[:, 0])
    if name.endswith("freq"):
        return  # takes a length, not an array
    out = fn(*args)
    for r in out if isinstance(out, (tuple, list)) else (out,):
        assert not np.shares_memory(r, a)
    assert call_returns_new(fn, {})


@pytest.mark.parametrize("name", sorted(n for n in NEW_ARRAY_FUNCTIONS if hasattr(np, n)))
def test_no_listed_new_array_function_returns_its_input(name):
    # A probe of the table against NumPy itself, where one argument suffices.
    fn = getattr(np, name)
    a = np.linspace(0.5, 1.5, 6).reshape(2, 3)
    rule = pullback.default_registry().lookup(fn)
    # NumPy itself and the rule the transform runs (its primal result) alike.
    for run in (fn, None if rule is None else lambda v: rule.rrule(v)[0]):
        if run is None:
            continue
        try:
            out = run(a)
        except Exception:  # noqa: BLE001 - needs more arguments: nothing to probe
            continue
        for r in out if isinstance(out, (tuple, list)) else (out,):
            assert not np.shares_memory(r, a)


@pytest.mark.parametrize("name", sorted(n for n in VIEW_FUNCTIONS if hasattr(np, n)))
def test_listed_view_functions_are_not_new(name):
    assert not call_returns_new(getattr(np, name), {})


def test_arguments_decide():
    assert call_returns_new(np.diff, {})
    assert not call_returns_new(np.diff, {"n": 0})
    assert call_returns_new(np.diff, {"n": 2})
    assert not call_returns_new(np.add, {}, (1, 2, 3))  # a ufunc's positional out
    assert not call_returns_new(np.array, {"copy": False})
    assert call_returns_new(np.array, {})
    assert method_returns_new("sum", 2) and not method_returns_new("sum", 3)
    assert method_returns_new("copy") and not method_returns_new("reshape")


def test_methods_are_new_only_where_the_transforms_function_is():
    # The check and the transform go by the same table: a method the check calls new is
    # computed by the transform with a function the table calls new.
    from pullback.resolve import ARRAY_METHODS

    for name in NEW_ARRAY_METHODS:
        if method_returns_new(name) and name in ARRAY_METHODS:
            assert call_returns_new(ARRAY_METHODS[name], {}), name
    assert not method_returns_new("flatten")
