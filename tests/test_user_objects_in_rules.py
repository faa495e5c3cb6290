"""A builtin rule applied to a user's object whose class the function's module does not
import (``sum(v)``, ``abs(v)`` on an object a helper made): the builtin runs the class's
own ``__iter__``/``__abs__``, which the rule's derivative does not describe. These gave
silently wrong gradients ([1, 1] and [0, 0]); they are now refused with a fix that works,
and the fix (importing the class, or calling the method by name) is checked against
finite differences."""

import numpy as np
import pytest
from fd import check_grad, check_hessian_against_differences
from foreign_vectors import make_vec, make_vec_sin

from pullback import grad, hessian
from pullback.errors import UnsupportedCallError

X = np.array([1.5, -2.0])


def summed(x):
    v = make_vec(x)
    return sum(v)


def absolute(x):
    v = make_vec_sin(x)
    w = abs(v)
    return w.total()


def absolute_by_name(x):
    v = make_vec_sin(x)
    w = v.__abs__()
    return w.total()


def test_sum_of_a_foreign_object_is_refused_with_the_import_fix():
    with pytest.raises(UnsupportedCallError) as info:
        grad(summed)(X)
    message = str(info.value)
    assert "test_user_objects_in_rules.py:" in message and "return sum(v)" in message
    assert "sum() was applied to an object of class Vec2: it runs Vec2.__iter__" in message
    assert "import it (`from foreign_vectors import Vec2`)" in message


def _maximum(x):
    return max(make_vec(x))


def _listed(x):
    return list(make_vec(x))[1]


def _stacked(x):
    return np.sum(np.array(list(make_vec(x))))


@pytest.mark.parametrize(
    ("fn", "what"), [(_maximum, "max"), (_listed, "list"), (_stacked, "list")]
)
def test_other_builtins_over_a_foreign_object_are_refused(fn, what):
    # (these failed inside pullback with "object of type 'Vec2' has no len()")
    with pytest.raises(UnsupportedCallError) as info:
        grad(fn)(X)
    message = str(info.value)
    assert f"{what}() was applied to an object of class Vec2: it runs Vec2.__iter__" in message
    assert "import it (`from foreign_vectors import Vec2`)" in message


def test_abs_of_a_foreign_object_is_refused_with_the_method_fix():
    with pytest.raises(UnsupportedCallError) as info:
        grad(absolute)(X)
    message = str(info.value)
    assert "w = abs(v)" in message
    assert "abs() was applied to an object of class Vec2: it runs Vec2.__abs__" in message
    assert "call the method by name (`v.__abs__()`)" in message


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_method_by_name_fix_matches_differences(dtype):
    x = X.astype(dtype)
    g = grad(absolute_by_name)(x)
    # d/dx0 of 2|sin x0| = 2 sign(sin x0) cos x0; d/dx1 of x1^2 = 2 x1
    exact = np.array([2.0 * np.sign(np.sin(1.5)) * np.cos(1.5), 2.0 * -2.0])
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(g, exact, rtol=rtol)
    check_grad(absolute_by_name, x)
    check_hessian_against_differences(absolute_by_name, X)
    np.testing.assert_allclose(hessian(absolute_by_name)(X)[1, 1], 2.0, rtol=1e-10)


def test_numbers_and_arrays_still_take_the_rules():
    def plain(x):
        return sum([abs(x[0]), abs(x[1]) * 2.0]) + np.sum(abs(x))

    check_grad(plain, X)
    check_grad(plain, X.astype(np.float32))
