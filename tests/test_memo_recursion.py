"""Memoized recursion with a dict: a memo the differentiated function creates and passes
down the recursion (``if n in memo: return memo[n]`` ... ``memo[n] = v``) is a local dict
that the recursive helper owns at each call (check/helper_writes.py); a value read back
from it is the object written, so its cotangent reaches the writer. Reverse mode against
central differences in float64 and float32, forward mode, second order; and the memos that
stay refused, with their fixes: a global dict (it outlives the call: a later call would
read values of an earlier x), a default-argument dict (one object for every call), and a
nested function under ``functools.cache``."""

import functools

import numpy as np
import pytest
from fd import numerical_grad

from pullback import UnsupportedSyntaxError, grad, jvp
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]
X = np.array([0.3, 0.7, 1.1])


# -- helpers memoized by a dict passed down -------------------------------------------------
def fib_memo(n, x, memo):  # the calls inside expressions
    if n in memo:
        return memo[n]
    if n < 2:
        v = x * (n + 1.0)
    else:
        v = fib_memo(n - 1, x, memo) * 0.5 + np.sin(fib_memo(n - 2, x, memo))
    memo[n] = v
    return v


def fib_not_in(n, x, memo):  # one return, after the store under `if n not in memo`
    if n not in memo:
        if n < 2:
            v = x * (n + 1.0)
        else:
            a = fib_not_in(n - 1, x, memo)
            b = fib_not_in(n - 2, x, memo)
            v = a * 0.5 + np.sin(b)
        memo[n] = v
    return memo[n]


def fib_returns_items(n, x, memo):  # several early returns of what the dict holds
    if n in memo:
        return memo[n]
    if n < 2:
        memo[n] = x * (n + 1.0)
        return memo[n]
    a = fib_returns_items(n - 1, x, memo)
    b = fib_returns_items(n - 2, x, memo)
    memo[n] = a * 0.5 + np.sin(b) * a
    return memo[n]


def via_memo(x):
    return np.sum(fib_memo(7, x, {}))


def via_named_memo(x):
    memo = {}
    first = fib_memo(6, x, memo)
    return np.sum(first * fib_memo(7, x, memo))  # the second call reads the first's values


def via_not_in(x):
    memo = {}
    return np.sum(fib_not_in(7, x, memo) ** 2)


def via_items(x):
    memo = {}
    return np.sum(fib_returns_items(6, x, memo))


def _plain(n, x):  # the same values without a memo
    if n < 2:
        return x * (n + 1.0)
    return _plain(n - 1, x) * 0.5 + np.sin(_plain(n - 2, x))


CASES = [via_memo, via_named_memo, via_not_in, via_items]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_gradient_matches_central_differences(f):
    np.testing.assert_allclose(grad(f)(X), numerical_grad(f, (X,), 0), rtol=1e-6, atol=1e-9)


def test_same_gradient_as_without_the_memo():
    np.testing.assert_allclose(grad(via_memo)(X), grad(lambda x: np.sum(_plain(7, x)))(X))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_check_grads(f, dtype):
    check_grads(f, X.astype(dtype))


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_forward_mode(f):
    v = np.array([0.4, -1.0, 0.7])
    y, dy = jvp(f, (X,), (v,))
    h = 1e-6
    assert y == pytest.approx(f(X))
    assert dy == pytest.approx((f(X + h * v) - f(X - h * v)) / (2 * h), rel=1e-6)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_second_order(f):
    check_grads(f, X, order=2)


def test_a_scalar_argument():
    def f(x):
        return fib_memo(8, x, {})

    h = 1e-6
    assert grad(f)(0.4) == pytest.approx((f(0.4 + h) - f(0.4 - h)) / (2 * h), rel=1e-7)


# -- memos that stay refused ----------------------------------------------------------------
MEMO = {}


def fib_global(n, x):
    if n in MEMO:
        return MEMO[n]
    v = x * 2.0 if n < 2 else fib_global(n - 1, x) * 0.5 + np.sin(fib_global(n - 2, x))
    MEMO[n] = v
    return v


def via_global(x):
    return np.sum(fib_global(6, x))


def fib_default(n, x, memo={}):  # noqa: B006 - the memo this test is about
    if n in memo:
        return memo[n]
    if n < 2:
        v = x * 2.0
    else:
        a = fib_default(n - 1, x, memo)
        v = a * 0.5 + np.sin(fib_default(n - 2, x, memo))
    memo[n] = v
    return v


def via_default(x):
    return np.sum(fib_default(6, x))


def via_nested_cache(x):
    @functools.cache
    def h(n):
        if n < 2:
            return x * 2.0
        return h(n - 1) * 0.5 + np.sin(h(n - 2))

    return np.sum(h(6))


def test_global_memo_refused_before_running():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(via_global)(X)
    assert MEMO == {}  # nothing ran
    text = str(info.value)
    assert "PB106 container mutation: 'MEMO[n] = ...' changes 'MEMO' in place" in text
    assert (
        "'MEMO' memoizes the recursion of 'fib_global' in a dict that outlives the call: a "
        "later call (another x) would read the values an earlier one stored, stale and "
        "without their gradient." in text
    )
    assert (
        "Fix: make the memo a dict of each call: create it in the function you differentiate "
        "(`memo = {}`) and pass it down the recursion as an argument (`fib_global(..., memo)`"
        in text
    )


def test_default_memo_refused_with_a_dict_of_the_call():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(via_default)(X)
    text = str(info.value)
    assert "PB101" in text and "return np.sum(fib_default(6, x))" in text
    assert (
        "Fix: pass 'memo' a dict of this call (`memo={}`) rather than its default, which is "
        "one object for every call" in text
    )

    def fixed(x):
        return np.sum(fib_default(6, x, {}))  # the fix the message gives

    np.testing.assert_allclose(grad(fixed)(X), numerical_grad(fixed, (X,), 0), rtol=1e-6, atol=1e-9)


def test_nested_cache_refused_with_its_fix():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(via_nested_cache)(X)
    text = str(info.value)
    assert "PB405 nested function definition 'h': it is decorated" in text
    assert "Fix: drop the cache decorator of 'h' (its cache lives for one call" in text
