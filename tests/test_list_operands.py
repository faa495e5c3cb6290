"""NumPy calls on Python lists and tuples in forward mode and at second order
(list_operands.py): lists with constant entries (whose tangent is ``ZERO``), tuples, lists
of lists, products of two lists, linear functions of a list, and a list read again after a
NumPy call took it. Gradients (float64, float32), Hessians against differences of the
gradient and ``jvp`` against differences (fd.form_tests); ``hvp`` below."""

import numpy as np
import pytest
from fd import central_jacobian, form_tests

import pullback
from pullback.list_operands import dense_operand, dense_tangent, stacked_like
from pullback.tangents import ZERO


def constant_entry(x):
    xs = [x[0], 1.5, x[1]]
    return np.sum(np.square(xs)) + np.sum(np.log(np.abs(xs) + 1.0)) + np.sum(np.tanh(xs))


def tuple_operand(x):
    xs = (x[0], 2.0 * x[1], x[2])
    return np.sum(np.exp(xs) * np.sqrt(np.square(xs) + 1.0))


def list_of_lists(x):
    m = [[x[0], x[1]], [x[2], 0.5]]
    return np.sum(np.sin(m)) + np.var(m) + np.std(m, axis=0)[1] + np.linalg.norm(m, 1)


def product_of_lists(x):
    a = [x[0], x[1], 0.3]
    b = []
    for v in x:
        b.append(np.cos(v))
    return np.dot(a, b) + np.sum(np.multiply(a, b) ** 2) + np.inner(b, a) * x[0]


def linear_of_a_list(x):
    xs = [v * v for v in x]
    return np.sum(np.cumsum(xs) ** 2) + np.mean(xs) ** 3 + np.sum(np.diff([x[0], 1.0, x[2]]) ** 2)


def binary_on_lists(x):
    xs = [x[0], x[1], x[2]]
    ys = [0.4, x[0], 1.0]
    return np.sum(np.hypot(xs, ys) + np.maximum(xs, 0.1) ** 2 + np.power(np.abs(xs) + 1.0, ys))


def read_again(x):
    errs = []
    for v in x:
        errs.append(v * v - 0.5)
    return np.var(errs) * errs[-1] + np.std(errs, ddof=1) + np.square(errs)[0] * errs[1]


FORMS = [
    constant_entry,
    tuple_operand,
    list_of_lists,
    product_of_lists,
    linear_of_a_list,
    binary_on_lists,
    read_again,
]
X = np.array([0.3, -0.8, 1.1])
DIRECTION = np.array([0.5, -1.0, 0.25])

test_gradient_float64, test_gradient_float32, test_hessian, test_jvp = form_tests(
    FORMS, X, DIRECTION
)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", FORMS, ids=lambda f: f.__name__)
def test_hvp_against_differences_of_the_gradient(f, dtype):
    x = X.astype(dtype)
    v = DIRECTION.astype(dtype)
    got = pullback.hvp(f)(x, v)
    assert got.dtype == dtype
    want = central_jacobian(pullback.grad(f), X, 1e-5) @ DIRECTION
    rtol, atol = (1e-5, 1e-6) if dtype == np.float64 else (1e-3, 1e-4)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def test_dense_tangent_fills_entries_without_one():
    got = dense_tangent([ZERO, np.float32(2.0)], [np.float32(1.0), np.float32(3.0)])
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [0.0, 2.0])
    nested = dense_tangent([[1.0, ZERO], ZERO], [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(nested, [[1.0, 0.0], [0.0, 0.0]])


def test_numbers_and_arrays_pass_unchanged():
    a = np.ones(2)
    assert dense_operand(a) is a
    assert dense_operand(2.5) == 2.5
    assert dense_tangent(a, a) is a
    assert dense_tangent(ZERO, [1.0]) is ZERO


def test_entries_of_another_shape_stay_a_list():
    # a stack of cotangents with a batch axis in front: not rows of the array
    items = [np.ones(3), np.ones(3)]
    assert stacked_like(items, np.zeros((2, 2))) is items
    assert stacked_like([1.0], np.zeros(2)) == [1.0]
    assert stacked_like([1.0, 2.0], [0.0, 0.0]) == [1.0, 2.0]
