"""Memoized recursion with a dict passed down the calls (``if n in memo: return memo[n]``
... ``memo[n] = v``): with a dict the differentiated function makes (``fib_like(5, x, {})``)
it is differentiated (tests/test_memo_recursion.py has more forms); the table built
bottom-up in one function is too. Gradients (float64 and float32) and Hessians are checked
here against central differences and against the recursion without the memo."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, numerical_grad

from pullback import grad, hessian
from pullback.errors import UnsupportedSyntaxError

X = np.array([0.3, 0.7])


def fib_like(n, x, memo):
    if n in memo:
        return memo[n]
    if n < 2:
        v = x * (n + 1.0)
    else:
        v = fib_like(n - 1, x, memo) * np.sin(fib_like(n - 2, x, memo))
    memo[n] = v
    return v


def memoized(x):
    return np.sum(fib_like(5, x, {}))


def plain_recursion(n, x):
    if n < 2:
        return x * (n + 1.0)
    return plain_recursion(n - 1, x) * np.sin(plain_recursion(n - 2, x))


def unmemoized(x):
    return np.sum(plain_recursion(5, x))


def table(x):
    # the refusal's fix: the same values, bottom-up, in a dict the function builds
    memo = {}
    for k in range(5 + 1):
        if k < 2:
            memo[k] = x * (k + 1.0)
        else:
            memo[k] = memo[k - 1] * np.sin(memo[k - 2])
    return np.sum(memo[5])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_memoized_recursion_gives_the_gradient_of_the_recursion(dtype):
    x = X.astype(dtype)
    got = check_grad(memoized, x)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, grad(unmemoized)(x), rtol=rtol)


def test_memoized_recursion_to_second_order():
    g = grad(memoized)
    want = np.array([numerical_grad(lambda z, i=i: g(z)[i], (X,), 0, eps=1e-5) for i in range(2)])
    np.testing.assert_allclose(hessian(memoized)(X), want, rtol=1e-5, atol=1e-6)


def test_the_callers_dict_as_memo_stays_refused():
    # differentiated directly, the memo is the caller's dict (it may hold another x's values)
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(fib_like, wrt=1)(5, X, {})
    message = str(info.value)
    store = fib_like.__code__.co_firstlineno + 7
    assert f"{__file__}:{store}:5: PB101" in message
    assert "'memo' comes from a parameter" in message


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_fix_gives_the_gradient_of_the_recursion(dtype):
    x = X.astype(dtype)
    got = check_grad(table, x)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, grad(unmemoized)(x), rtol=rtol)
    assert memoized(X) == table(X)


def test_the_fix_to_second_order():
    g = grad(table)
    want = np.array([numerical_grad(lambda z, i=i: g(z)[i], (X,), 0, eps=1e-5) for i in range(2)])
    np.testing.assert_allclose(hessian(table)(X), want, rtol=1e-5, atol=1e-6)
