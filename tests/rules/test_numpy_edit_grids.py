"""np.delete, np.resize, np.vander, np.logspace, np.geomspace, np.linalg.cond and
np.linalg.tensorinv: gradients against central finite differences and hand-derived
values (float64 and float32, broadcasting ends), Hessians against finite differences of
the gradient."""

from __future__ import annotations

import numpy as np
import pytest
from fd import numerical_grad as _numerical_grad

from pullback import grad, hessian

X = np.array([0.5, -1.2, 2.0, 0.7, -0.3])
M = np.array([[2.0, 0.3, 0.1], [0.2, 1.5, -0.4], [0.0, 0.6, 1.1]])
A4 = np.array(
    [[2.0, 0.3, 0.1, 0.0], [0.2, 1.5, -0.4, 0.1], [0.0, 0.6, 1.1, 0.2], [0.1, 0.0, 0.3, 1.0]]
)


def numerical_grad(f, x):
    return _numerical_grad(f, (x,), 0)


CASES = {
    "delete": (lambda x: np.sum(np.delete(x, [1, 3]) ** 3), X),
    "delete_axis_slice": (lambda x: np.sum(np.delete(x.reshape(1, 5), np.s_[::2], axis=1) ** 3), X),
    "delete_mask": (lambda x: np.sum(np.delete(x, x > 0) ** 3), X),
    "delete_argmax": (lambda x: x[np.argmax(x)] ** 2 + np.sum(np.delete(x, np.argmax(x)) ** 2), X),
    "resize_repeats": (
        lambda x: np.sum(np.resize(x, (3, 4)) ** 2 * np.arange(12.0).reshape(3, 4)),
        X,
    ),
    "vander": (lambda x: np.sum(np.vander(x, 4) @ np.array([1.0, -2.0, 0.5, 3.0])), X),
    "vander_increasing": (lambda x: np.sum(np.vander(x, increasing=True) ** 2) / 100, X),
    "logspace": (lambda x: np.sum(np.logspace(x[0], x[1], 5) * np.arange(5.0)), X),
    "logspace_base": (lambda x: np.sum(np.logspace(x[0], x[1], 4, base=x[2])), X),
    "logspace_no_endpoint": (
        lambda x: np.sum(np.logspace(x[0], x[1], 4, endpoint=False, base=2.0)),
        X,
    ),
    "logspace_array_ends": (lambda x: np.sum(np.logspace(x[:2], x[2:4], 3, axis=1) ** 0.5), X),
    "geomspace": (
        lambda x: np.sum(np.geomspace(np.exp(x[0]), np.exp(x[1]), 6) * np.arange(6.0)),
        X,
    ),
    "geomspace_negative": (
        lambda x: np.sum(np.geomspace(-np.exp(x[0]), -np.exp(x[1]), 4, endpoint=False)),
        X,
    ),
    "geomspace_broadcast": (
        lambda x: np.sum(np.geomspace(np.exp(x[0]), np.exp(x[1:3]), 3, axis=1) ** 2),
        X,
    ),
    "cond": (lambda m: np.linalg.cond(m), M),
    "cond_2": (lambda m: np.linalg.cond(m, 2), M),
    "cond_minus_2": (lambda m: np.linalg.cond(m, -2), M),
    "cond_fro": (lambda m: np.linalg.cond(m, "fro"), M),
    "cond_stack": (lambda m: np.sum(np.linalg.cond(np.stack([m, m.T @ m]))), M),
    "cond_rectangular": (lambda m: np.linalg.cond(m[:, :2]), M),
    "tensorinv": (
        lambda a: np.sum(
            np.linalg.tensorinv(a.reshape(2, 2, 4), ind=2) * np.arange(16.0).reshape(4, 2, 2)
        ),
        A4,
    ),
}
FIRST_ONLY = {
    "cond_nuc": (lambda m: np.linalg.cond(m, "nuc"), M),
    "cond_1": (lambda m: np.linalg.cond(m, 1), M),
    "cond_minus_1": (lambda m: np.linalg.cond(m, -1), M),
    "cond_inf": (lambda m: np.linalg.cond(m, np.inf), M),
    "cond_minus_inf": (lambda m: np.linalg.cond(m, -np.inf), M),
}


@pytest.mark.parametrize("name", sorted({**CASES, **FIRST_ONLY}))
def test_gradient_matches_finite_differences(name):
    f, x = {**CASES, **FIRST_ONLY}[name]
    g = grad(f)(x)
    np.testing.assert_allclose(g, numerical_grad(f, x), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted({**CASES, **FIRST_ONLY}))
def test_float32_gradient_matches_float64(name):
    f, x = {**CASES, **FIRST_ONLY}[name]
    g32 = grad(f)(x.astype(np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, grad(f)(x), rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("name", sorted(CASES))
def test_hessian_matches_finite_differences_of_the_gradient(name):
    f, x = CASES[name]
    h = hessian(f)(x).reshape(x.size, x.size)
    g = grad(f)
    columns = [numerical_grad(lambda z, i=i: g(z).flat[i], x).ravel() for i in range(x.size)]
    np.testing.assert_allclose(h, np.array(columns), rtol=1e-5, atol=1e-6)


def test_hand_derived_values():
    # delete: the removed entries get no gradient
    assert grad(lambda x: np.sum(np.delete(x, 1) ** 2))(X).tolist() == [1.0, 0.0, 4.0, 1.4, -0.6]
    # resize repeats cyclically: element k appears ceil((7 - k) / 5) times in 7 entries
    assert grad(lambda x: np.sum(np.resize(x, 7)))(X).tolist() == [2.0, 2.0, 1.0, 1.0, 1.0]
    # vander(x, 3) rows [x^2, x, 1]: d/dx of the row sum is 2x + 1
    np.testing.assert_allclose(grad(lambda x: np.sum(np.vander(x, 3)))(X), 2 * X + 1)
    # cond of a diagonal matrix is max / min of |diagonal|
    d = np.diag([2.0, 0.5])
    np.testing.assert_allclose(grad(lambda m: np.linalg.cond(m))(d), [[2.0, 0.0], [0.0, -8.0]])
    # logspace(s, 1, 3) = [10^s, 10^((s+1)/2), 10]
    s = 0.2
    want = np.log(10) * (10**s + 0.5 * 10 ** ((s + 1) / 2))
    assert grad(lambda s: np.sum(np.logspace(s, 1.0, 3)))(s) == pytest.approx(want, rel=1e-12)


def test_vander_at_zero_is_finite():
    # the derivative of x**0 is 0, not 0 * x**-1
    g = grad(lambda x: np.sum(np.vander(x, 3)))(np.zeros(3))
    assert g.tolist() == [1.0, 1.0, 1.0]
