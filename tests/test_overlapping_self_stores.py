"""Writes of a local array from an overlapping view of itself.

``a[1:] += a[:-1]`` (and ``*=``) computes what NumPy computes (NumPy buffers overlapping
operands): gradient and Hessian against central differences. ``a[1:] = a[:-1]`` and
``a[:-1] = a[1:]`` store a view of the array written: NumPy copies it first where the two
overlap, and so does the gradient (the same as with the copy written out). A view handed
to a call that may keep it while the array is written stays refused (golden), with the
copy as the fix."""

import os

import numpy as np
import pytest
from fd import check_hessian_against_differences

import pullback
from pullback.errors import UnsupportedSyntaxError

X = np.array([0.3, -0.7, 1.2, 0.4])
HERE = os.path.basename(__file__)


def shift_right(x):
    a = x * 2.0
    a[1:] = a[:-1]
    return np.sum(a * x)


def shift_left(x):
    a = np.sin(x)
    a[:-1] = a[1:]
    return np.sum(a * x)


def shift_right_copied(x):
    a = x * 2.0
    a[1:] = a[:-1].copy()
    return np.sum(a * x)


def shift_left_copied(x):
    a = np.sin(x)
    a[:-1] = a[1:].copy()
    return np.sum(a * x)


def add_shifted(x):
    a = x * 2.0
    a[1:] += a[:-1]
    return np.sum(a * x)


def multiply_shifted(x):
    a = np.cos(x)
    a[1:] *= a[:-1]
    return np.sum(a * x ** 2)


def shifted_in_a_loop(x):
    a = x * 1.0
    for _ in range(3):
        a[1:] += 0.5 * a[:-1]
        a[:-1] = a[1:].copy()
    return np.sum(a * a)


def _numpy_reference(x):  # what NumPy's buffered writes give, written without overlap
    a = x * 2.0
    b = a.copy()
    b[1:] = a[1:] + a[:-1]
    return np.sum(b * x)


_kept = []


def _keep(v):
    _kept.append(v)
    return v


def shift_kept(x):
    a = x * 2.0
    a[1:] = _keep(a[:-1])
    return np.sum(a * x)


WORKING = [shift_right, shift_left, shift_right_copied, shift_left_copied, add_shifted,
           multiply_shifted, shifted_in_a_loop]


@pytest.mark.parametrize("f", WORKING, ids=lambda f: f.__name__)
def test_gradient_and_hessian_against_differences(f):
    check_hessian_against_differences(f, X)
    g = pullback.grad(f)
    got32 = g(X.astype(np.float32))
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, g(X), rtol=1e-4, atol=1e-5)


def test_an_overlapping_augmented_write_is_numpys():
    assert add_shifted(X) == pytest.approx(_numpy_reference(X), rel=1e-15)
    np.testing.assert_allclose(
        pullback.grad(add_shifted)(X), pullback.grad(_numpy_reference)(X), rtol=1e-14
    )


def test_a_copy_is_what_numpy_stores():
    assert shift_right(X) == shift_right_copied(X)
    assert shift_left(X) == shift_left_copied(X)


def test_a_store_of_a_view_of_itself_is_the_store_of_its_copy():
    for f, copied in ((shift_right, shift_right_copied), (shift_left, shift_left_copied)):
        np.testing.assert_array_equal(pullback.grad(f)(X), pullback.grad(copied)(X))


def test_a_view_of_itself_handed_to_a_call_is_refused_with_the_copy():
    with pytest.raises(UnsupportedSyntaxError) as info:
        pullback.grad(shift_kept)(X)
    line = shift_kept.__code__.co_firstlineno + 2
    assert str(info.value).endswith(
        f"{HERE}:{line}:5: PB101 array mutation: assignment to a slice of 'a' from "
        "'a[:-1]', a view of the same array\n"
        "        a[1:] = _keep(a[:-1])\n"
        "        ^^^^^\n"
        "    'a[:-1]' is a view of 'a' handed to the call `_keep(...)`, which may keep it: "
        "the write changes what a kept view shows, which pullback does not follow (a store "
        "of the view itself is fine: its values are read before the write).\n"
        "    Fix: hand on a copy, `a[:-1].copy()`, in its place "
        "(see docs/limitations.md#PB101)."
    )
