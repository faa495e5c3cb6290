"""The operators' special methods called by name (explicit_dunders.py): ``x.__mul__(y)``,
``x.__rsub__(1.0)``, ``x.__pow__(2)``, ``x.__getitem__(i)``, ``-``/``abs`` as
``__neg__``/``__abs__``, ... on numbers and arrays differentiate as the operators do
(checked against central differences, float64 and float32, scalars and arrays, second
order and forward mode); a user's class with its own method runs that method; a method
that does not exist raises the primal's error.
"""

import explicit_dunders_beside_class as beside_a_class
import numpy as np
import pytest
from fd import check_grad, check_hessian_against_differences, check_jvp

from pullback import grad


def binary(x):
    y = x.__mul__(x).__add__(x.__truediv__(2.0)).__sub__(x.__pow__(3))
    return np.sum(y.__mod__(7.0) + x.__matmul__(x))


def reflected(x):
    y = x.__rsub__(1.0) * x.__radd__(2.0) + x.__rtruediv__(2.0) + x.__rpow__(1.5)
    return np.sum(y.__rmul__(0.5))


def unary_and_items(x):
    y = x.__neg__().__abs__().__pos__()
    return np.sum(y * x) + x.__getitem__(0) * x.__getitem__(-1)


CASES = [binary, reflected, unary_and_items]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradients_match_differences(f, dtype):
    check_grad(f, np.array([0.4, 1.3, 2.1], dtype=dtype))


def test_python_floats():
    def f(x):
        return x.__mul__(x).__rsub__(3.0).__truediv__(x.__add__(1.0))

    check_grad(f, 0.7)
    check_grad(f, np.float32(0.7))


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_second_order_and_forward_mode(f):
    x = np.array([0.4, 1.3, 2.1])
    check_hessian_against_differences(f, x)
    check_jvp(f, (x,), (np.array([1.0, -0.5, 2.0]),))


def test_a_users_own_method_runs():
    class Scaled:
        def __init__(self, w):
            self.w = w

        def __mul__(self, other):
            return Scaled(self.w * other)

        def __rmul__(self, other):
            return Scaled(other * self.w * 2.0)

    def f(x, flag=True):
        s = Scaled(x) if flag else x  # its class is known only at run time
        return np.sum(s.__mul__(x).w + s.__rmul__(3.0).w)

    x = np.array([0.5, 1.5])
    np.testing.assert_allclose(grad(f)(x), 2 * x + 6.0, rtol=1e-12)


def test_a_method_the_value_lacks_raises_as_the_primal():
    def f(x):
        return x.__getitem__(0)

    with pytest.raises(Exception, match="'float' object has no attribute '__getitem__'"):
        grad(f)(1.5)


def test_arrays_beside_a_class_of_the_module_with_its_own_method():
    # a class of the function's module defines __mul__: the call stays a method found at
    # run time, which computes the operator for an array (dynamic_calls.call_method)
    check_grad(beside_a_class.squares, np.array([0.5, -1.5]))
