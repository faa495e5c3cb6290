"""A module-level (or enclosing function's) dict written by the differentiated function,
a memo: refused with what it is and the per-call fix, not the array message (golden)."""

import os

import numpy as np
import pytest

import pullback
from pullback.errors import UnsupportedSyntaxError

X = np.array([0.3, -0.7, 1.2])
HERE = os.path.basename(__file__)

_memo = {}
_rows = []


def memo_by_key(x):
    k = 1
    if k not in _memo:
        _memo[k] = np.sin(x)
    return np.sum(_memo[k] * x)


def memo_accumulated(x, k):
    _memo[k] += np.sum(x)
    return _memo[k]


def rows_written(x, i):
    _rows[i] = np.sum(x ** 2)
    return _rows[i]


def memoized(fn):
    cache = {}

    def wrapper(x, key):
        if key not in cache:
            cache[key] = fn(x)
        return cache[key]

    return wrapper


@memoized
def cached_energy(x):
    return np.sum(np.sin(x) * x)


def per_call(x):  # the fix: one dict per call, filled by a helper
    memo = {}
    return np.sum(_fill(memo, 1, x) * x) + np.sum(_fill(memo, 2, x)) + np.sum(_fill(memo, 1, x))


def _fill(memo, k, x):
    if k not in memo:
        memo[k] = np.sin(k * x)
    return memo[k]


def _line(fn, offset):
    return fn.__code__.co_firstlineno + offset


def test_a_module_level_dict_written_by_key():
    with pytest.raises(UnsupportedSyntaxError) as info:
        pullback.grad(memo_by_key)(X)
    line = _line(memo_by_key, 3)
    assert str(info.value).endswith(
        f"{HERE}:{line}:9: PB101 mutation of a module-level dict: assignment to an item of "
        "'_memo'\n"
        "        _memo[k] = np.sin(x)\n"
        "        ^^^^^^^^\n"
        "    '_memo' is a module-level dict written by the differentiated function (a memo or "
        "cache): what it keeps outlives the call, so a later call would read values computed "
        "at other arguments, whose gradients cannot reach this call's.\n"
        "    Fix: make the dict per call: `_memo = {}` at the start of the function, passed "
        "on to the helpers that fill it (see docs/limitations.md#PB101)."
    )


def test_an_augmented_write_and_a_list():
    with pytest.raises(UnsupportedSyntaxError) as info:
        pullback.grad(memo_accumulated)(X, 1)
    message = str(info.value)
    assert "PB102 mutation of a module-level dict: augmented assignment (+=) to an item " in message
    assert "Fix: make the dict per call: `_memo = {}` at the start" in message
    with pytest.raises(UnsupportedSyntaxError) as info:
        pullback.grad(rows_written)(X, 0)
    message = str(info.value)
    assert "PB101 mutation of a module-level list: assignment to an item of '_rows'" in message
    assert "Fix: make the list per call: `_rows = []` at the start" in message
    assert "array" not in message


def test_a_decorators_cache_is_named_as_the_enclosing_functions_dict():
    with pytest.raises(UnsupportedSyntaxError) as info:
        pullback.grad(cached_energy)(X, 1)
    message = str(info.value)
    assert "PB101 mutation of an enclosing function's dict: assignment to an item of 'cache'" in (
        message
    )
    assert "memo or cache" in message


def test_the_fix_works_against_differences():
    got = pullback.grad(per_call)(X)
    want = np.sin(X) + X * np.cos(X) + 2 * np.cos(2 * X) + np.cos(X)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    eps = 1e-6
    fd = [(per_call(X + eps * e) - per_call(X - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(got, fd, rtol=1e-7, atol=1e-9)
    got32 = pullback.grad(per_call)(X.astype(np.float32))
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, want, rtol=1e-5)
