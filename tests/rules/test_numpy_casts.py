"""Casts to NumPy scalar types and np.real_if_close against finite differences; second
order through a cast."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make, make_complex

from pullback.registry import default_registry
from pullback.tangents import NO_TANGENT
from pullback.testing import check_grads, check_rrule

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
TARGETS = [np.float64, np.float32, np.complex128, np.complex64]


@D
@pytest.mark.parametrize("T", TARGETS, ids=lambda t: t.__name__)
def test_cast(T, dtype):
    check_rrule(T, make("real", (2, 3), dtype))  # arrays are cast elementwise
    check_rrule(T, make("real", (0,), dtype))
    check_rrule(T, dtype(0.75))
    check_rrule(T, np.array(1.25, dtype))
    check_rrule(T, 1.5)
    check_rrule(T, [dtype(0.5), 2.0])


@pytest.mark.parametrize("T", TARGETS, ids=lambda t: t.__name__)
def test_cast_of_complex(T):
    import warnings

    with warnings.catch_warnings():  # complex -> real drops the imaginary part
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        check_rrule(T, make_complex((3,)))


def test_float16_cotangent_is_cast_back():
    # float16 rounding is too coarse for finite differences: check the cast exactly.
    rule = default_registry().lookup(np.float16)
    for x in (np.array([0.5, 1.5], np.float32), np.float64(0.3), np.array([1.0, 2.0])):
        y, back = rule.rrule(x)
        assert np.result_type(y) == np.float16
        (g,) = back(np.ones(np.shape(y), np.float16))
        assert np.result_type(g) == np.result_type(x)
        np.testing.assert_array_equal(g, np.ones(np.shape(x)))


def test_non_numeric_arguments_have_no_tangent():
    rule = default_registry().lookup(np.float64)
    assert rule.rrule("1.5")[1](1.0) == (NO_TANGENT,)
    assert rule.rrule()[1](1.0) == ()


@D
def test_real_if_close(dtype):
    check_rrule(np.real_if_close, make("real", (3,), dtype))
    cdt = np.complex128 if dtype == np.float64 else np.complex64
    z = (make("real", (3,), dtype) + 1e-12j).astype(cdt)
    check_rrule(np.real_if_close, z)  # real part returned
    check_rrule(np.real_if_close, make_complex((3,), cdt))  # returned as it is
    check_rrule(np.real_if_close, make_complex((3,), cdt), 1000)


def test_second_order_through_casts():
    def f(x):
        # (float32 would round f below what second differences resolve)
        return np.sum(np.float64(x) ** 3 + np.real(np.complex128(x) ** 2))

    check_grads(f, make("real", (3,)), order=2)
