"""Writes of a local array from an overlapping view of itself.

``a[1:] += a[:-1]`` (and ``*=``) computes what NumPy computes (NumPy buffers overlapping
operands): gradient and Hessian against central differences. ``a[1:] = a[:-1]`` and
``a[:-1] = a[1:]`` store a view of the array written: refused with what it is and the
copy NumPy makes as the fix (golden), and that fix differentiates."""

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


WORKING = [shift_right_copied, shift_left_copied, add_shifted, multiply_shifted,
           shifted_in_a_loop]


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


@pytest.mark.parametrize(
    ("f", "target", "read", "col"),
    [(shift_right, "a[1:]", "a[:-1]", 5), (shift_left, "a[:-1]", "a[1:]", 5)],
)
def test_a_store_of_a_view_of_itself_is_refused_with_the_copy(f, target, read, col):
    with pytest.raises(UnsupportedSyntaxError) as info:
        pullback.grad(f)(X)
    line = f.__code__.co_firstlineno + 2
    caret = "^" * len(target)
    assert str(info.value).endswith(
        f"{HERE}:{line}:{col}: PB101 array mutation: assignment to a slice of 'a' from "
        f"'{read}', a view of the same array\n"
        f"        {target} = {read}\n"
        f"        {caret}\n"
        f"    '{read}' is a view of 'a': NumPy copies it before the write where the two "
        "overlap, but pullback follows a view as another name of the array it views, and a "
        "write would change what that name sees.\n"
        f"    Fix: write the copy NumPy makes, `{read}.copy()`, in its place "
        "(see docs/limitations.md#PB101)."
    )
