"""A NumPy reduction passed as a value (`reduce = np.prod; reduce(x)`, `OPS[k](x)`, a
parameter receiving `np.mean`, a helper given the reduction): first and second
derivatives (hessian, hvp) against central differences, float64 and float32."""

import numpy as np
import pytest
from fd import central_jacobian, check_hessian_against_differences

import pullback

X = np.array([0.3, -0.7, 1.2])
V = np.array([1.0, 0.5, -0.3])
OPS = [np.sum, np.max, np.mean]


def bound_to_a_name(x):
    reduce = np.prod
    return reduce(x) + reduce(x * x, axis=0)


def picked_from_a_list(x):
    s = 0.0
    for k in range(3):
        s = s + OPS[k](np.sin(x) * x)
    return s


def local_list_by_index(x, k=1):
    ops = [np.sum, np.max]
    return ops[k](x * x) + ops[0](x ** 3)


def parameter_default(x, r=np.mean):
    return r(x * x) + x[0] * r(x)


def _apply(x, r):
    return r(np.tanh(x) * x)


def given_to_a_helper(x):
    return _apply(x, np.mean) + _apply(x, np.max) * _apply(x, np.sum)


def chosen_by_a_branch(x):
    reduce = np.prod if x[0] > 0 else np.sum
    return reduce(np.exp(0.5 * x))


def in_a_comprehension(x):
    return np.sum([f(x ** 2) for f in (np.sum, np.mean, np.prod)])


CASES = [
    bound_to_a_name,
    picked_from_a_list,
    local_list_by_index,
    parameter_default,
    given_to_a_helper,
    chosen_by_a_branch,
    in_a_comprehension,
]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_first_and_second_order_against_differences(f):
    want = check_hessian_against_differences(f, X)
    np.testing.assert_allclose(pullback.hvp(f)(X, V), want @ V, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_float32(f):
    x = X.astype(np.float32)
    got = pullback.hessian(f)(x)
    assert got.dtype == np.float32
    want = central_jacobian(pullback.grad(f), X, 1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


M = np.array([[0.3, -0.7, 1.2], [0.5, 0.1, -0.4]])


def _reduce_rows(x, r):
    return r(x * x, axis=0)


def keyword_through_a_helper(x):
    return np.sum(_reduce_rows(x, np.mean) * _reduce_rows(x, np.max))


def keywords_of_a_parameter(x, r=np.mean):
    return np.sum(r(x ** 2, axis=1, keepdims=True) * x)


def keyword_of_a_name(x):
    reduce = np.max
    return np.sum(reduce(np.sin(x), axis=1) ** 2)


@pytest.mark.parametrize(
    "f",
    [keyword_through_a_helper, keywords_of_a_parameter, keyword_of_a_name],
    ids=lambda f: f.__name__,
)
def test_reductions_with_axis_keywords(f):
    def flat(v):
        return f(v.reshape(M.shape))

    g = pullback.grad(f)
    np.testing.assert_allclose(g(M).ravel(), central_jacobian(flat, M.ravel(), 1e-6), rtol=1e-6,
                               atol=1e-8)

    def flat_grad(v):
        return g(v.reshape(M.shape)).ravel()

    want = central_jacobian(flat_grad, M.ravel(), 1e-5)
    got = pullback.hessian(f)(M).reshape(M.size, M.size)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
