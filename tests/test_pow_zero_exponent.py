"""``a ** b`` where ``b`` is 0 and ``a`` is 0: ``a ** 0`` is 1 for every ``a``, so its
derivative in ``a`` is 0, where the formula ``b * a ** (b - 1)`` reads ``0 * 0 ** -1``
(NaN for arrays, ZeroDivisionError for Python floats). Mass-action rates
``np.prod(c ** orders, axis=1)`` with a species at zero concentration and order 0 meet it
at the first step. The operator (reverse and forward mode, an exponent held in a name or a
constant), ``np.power`` and the builtin ``pow``, first and second order, against central
differences; and the mixed derivative in the exponent at ``b = 0`` (the base is made 1 only
where both are 0, so ``d/db d/da a**b = 1/a`` there stays right).
"""

import numpy as np
import pytest
from fd import check_grad, check_hvp, check_jvp, numerical_grad

import pullback

ORDERS = np.array([[1, 1, 0], [0, 0, 1], [0, 2, 0]])


def rates_sum(c):
    return np.sum(np.array([1.5, 0.3, 0.7]) * np.prod(c**ORDERS, axis=1))


def power_orders(c):
    return np.sum(np.power(c, np.array([0.0, 1.0, 2.0])) * np.array([1.0, 2.0, 3.0]))


def builtin_pow(c):
    return np.sum(pow(c, np.array([0, 1, 3])))


def exponent_in_a_name(x, n=0):
    return x**n + x**2


def constant_zero(x):
    return x**0 + 3.0 * x


def constant_zero_float(x):
    return x**0.0 * 2.0 + x * x


ARRAYS = {"rates_sum": rates_sum, "power_orders": power_orders, "builtin_pow": builtin_pow}
AT_ZERO = np.array([0.0, 0.0, 0.0])
MIXED = np.array([0.0, 0.7, 0.0])


@pytest.mark.parametrize("name", sorted(ARRAYS))
@pytest.mark.parametrize("x", [AT_ZERO, MIXED], ids=["zeros", "mixed"])
def test_array_bases_at_zero(name, x):
    f = ARRAYS[name]
    check_grad(f, x)
    check_grad(f, x.astype(np.float32))
    check_hvp(f, x, np.array([0.3, -0.5, 0.8]))
    check_jvp(f, (x,), (np.array([0.3, -0.5, 0.8]),))


@pytest.mark.parametrize("f", [exponent_in_a_name, constant_zero, constant_zero_float])
def test_scalar_base_at_zero(f):
    g = check_grad(f, 0.0)
    assert type(g) is float
    assert float(pullback.hessian(f)(0.0)) == pytest.approx(2.0 if f is not constant_zero else 0.0)
    _, tangent = pullback.jvp(f, (0.0,), (1.0,))
    assert tangent == pytest.approx(numerical_grad(f, (0.0,), 0))


def base_to_exponent(p):
    return p[0] ** p[1]


def test_mixed_derivative_in_the_exponent_at_zero():
    p = np.array([2.0, 0.0])
    hess = np.asarray(pullback.hessian(base_to_exponent)(p))
    # d2/da db a**b = a**(b-1) (1 + b log a): 1/2 at (2, 0); d2/da2 = b (b-1) a**(b-2) = 0
    np.testing.assert_allclose(hess, [[0.0, 0.5], [0.5, np.log(2.0) ** 2]], rtol=1e-12)


def test_first_order_exponent_at_zero_base():
    # where a is 0 and b is 0, a**b is 1 at b = 0 and 0 for b > 0: a**b is not
    # differentiable in b there, and the cotangent of b stays the chosen 0
    g = pullback.grad(base_to_exponent)(np.array([0.0, 0.0]))
    assert np.all(np.isfinite(g)), g
    assert g[0] == 0.0


def elementwise_powers(p):
    return np.sum(p[:2] ** p[2:])


def test_mixed_derivative_of_array_powers():
    p = np.array([2.0, 3.0, 0.0, 0.0])
    hess = np.asarray(pullback.hessian(elementwise_powers)(p))
    want = np.zeros((4, 4))
    want[0, 2] = want[2, 0] = 0.5
    want[1, 3] = want[3, 1] = 1.0 / 3.0
    want[2, 2], want[3, 3] = np.log(2.0) ** 2, np.log(3.0) ** 2
    np.testing.assert_allclose(hess, want, rtol=1e-12, atol=1e-15)
