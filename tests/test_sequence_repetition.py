"""Sequence repetition: ``[d] * n``, ``n * (x, y)`` and ``(a, b) * k`` differentiate as the
sequences Python builds (each copy's cotangent adds up), never as a product of numbers.
Against finite differences and hand-derived gradients, float64 and float32, reverse,
forward and second order."""

from __future__ import annotations

import numpy as np
import pytest

from pullback import grad, hessian, jvp, vjp
from pullback.testing import check_grads


def repeated_list(d):
    xs = [d, 2.0 * d] * 2  # [d, 2d, d, 2d]
    return xs[0] + xs[1] * xs[2] + xs[3]  # d + 2d^2 + 2d


def int_times_tuple(d):
    t = 3 * (d, d * d)
    return sum(t)  # 3d + 3d^2


def cubic(d):
    xs = [d, d * d] * 3
    return xs[1] * xs[4] + xs[0]  # d^3 + d


def stacked_copies(a):
    return np.sum(np.array([a] * 4) * np.arange(4.0)[:, None])  # 6 sum(a)


def repeated_arrays(x, n):
    rows = [np.sin(x), x * x] * n
    return np.sum(np.stack(rows) * np.arange(2.0 * n)[:, None])


@pytest.mark.parametrize(
    "f, gradient",
    [
        (repeated_list, lambda d: 3.0 + 4.0 * d),
        (int_times_tuple, lambda d: 3.0 + 6.0 * d),
        (cubic, lambda d: 3.0 * d * d + 1.0),
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scalar_repetition_matches_the_hand_derived_gradient(f, gradient, dtype):
    d = dtype(1.5)
    assert np.isclose(grad(f)(d), gradient(1.5), rtol=1e-6)
    check_grads(f, d)
    check_grads(f, d, order=2)


def test_the_list_itself_pulls_every_copy_back():
    y, back = vjp(lambda d, n: [d] * n, 1.5, 3, wrt=0)
    assert y == [1.5, 1.5, 1.5]
    assert back([1.0, 2.0, 3.0]) == 6.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_arrays_repeated_in_a_list(dtype):
    x = np.array([0.3, -0.7, 1.1], dtype=dtype)
    assert np.allclose(grad(stacked_copies)(x), 6.0)
    check_grads(repeated_arrays, x, 2)
    check_grads(stacked_copies, x)


def test_forward_mode_and_hessian():
    _, tangent = jvp(cubic, (1.5,), (1.0,))
    assert np.isclose(tangent, 3.0 * 1.5**2 + 1.0)
    assert np.isclose(hessian(cubic)(1.5), 6.0 * 1.5)
    assert np.isclose(grad(grad(repeated_list))(0.7), 4.0)


@pytest.mark.parametrize("n", [0, 1, -2])
def test_empty_and_single_repetitions(n):
    def f(d):
        return sum([d * d] * n) + d

    assert np.isclose(grad(f)(1.5), 1.0 + max(n, 0) * 3.0)


def test_complex_products_keep_the_conjugate():
    z = np.array([1.0 + 2.0j, -0.5 + 0.3j])

    def f(z, w):
        return np.real(np.sum(z * w * np.conj(z * w)))

    check_grads(f, z, np.array([0.4 - 1.0j, 2.0 + 0.1j]), wrt=(0, 1))


def _quartic(x):
    return x**4


def times_a_count(x, n):
    return _quartic(x) * n  # a result of unknown kind times an int: may be a repetition


def test_third_and_fourth_derivatives_through_a_product_that_may_repeat():
    # Third order differentiates the vjp function of a vjp function: the names callers
    # give its cotangent parameters map to the generated ones by position.
    assert grad(grad(grad(times_a_count)))(1.5, 2) == pytest.approx(2 * 24 * 1.5)
    assert grad(grad(grad(grad(times_a_count))))(1.5, 2) == pytest.approx(2 * 24)
