"""A call whose ``dtype=`` makes integer or boolean results (``np.sum(x, dtype=np.int64)``,
``np.array(x, dtype=int)``) is piecewise constant in its float inputs: its derivative is
zero. The reverse pullbacks once passed the cotangent on as for a float result (a silent
wrong gradient), and forward mode applied the call to the tangent; now the reverse mode
gives zero there (to second order) and forward mode takes the rule's path (which refuses
a rounding reduction with a fix, or gives zero)."""

import numpy as np
import pytest

import pullback
from pullback import grad, hessian, jvp

X = np.array([[0.3, -0.7, 1.1], [0.9, 0.2, -0.4]]) * 3


def sum_int(x):
    return np.sum(x * x, dtype=np.int64) * 1.0 + np.sum(x**2)


def mean_int(x):
    return np.mean(x * x, axis=0, dtype=int).sum() * 1.0 + np.sum(x**2)


def cumsum_int(x):
    return np.cumsum(x, axis=1, dtype=np.int32).sum() * 1.0 + np.sum(x**2)


def sum_int_by_position(x):
    return np.sum(x * x, 0, np.int64).sum() * 1.0 + np.sum(x**2)


def array_int(x):
    return np.sum(np.array(x * 2, dtype=int)) * 1.0 + np.sum(x**2)


def asarray_int16(x):
    return np.sum(np.asarray(x * 2, dtype=np.int16)) * 1.0 + np.sum(x**2)


def nansum_int(x):
    return np.nansum(x * 2, dtype=np.int64) * 1.0 + np.sum(x**2)


def prod_int(x):
    return np.prod(x + 4, dtype=np.int64) * 1.0 + np.sum(x**2)


def array_bool(x):
    return np.sum(np.array(x, dtype=bool)) * 1.0 + np.sum(x**2)


CASES = [
    sum_int,
    mean_int,
    cumsum_int,
    sum_int_by_position,
    array_int,
    asarray_int16,
    nansum_int,
    prod_int,
    array_bool,
]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_gradient_and_hessian_see_only_the_float_terms(f):
    # the integer term is piecewise constant: only sum(x ** 2) has a derivative
    np.testing.assert_allclose(grad(f)(X), 2 * X, rtol=1e-12)
    np.testing.assert_allclose(hessian(f)(X).reshape(6, 6), 2 * np.eye(6), atol=1e-12)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_forward_mode_is_right_or_refused(f):
    v = np.cos(np.arange(6.0)).reshape(2, 3)
    try:
        _, t = jvp(f, (X,), (v,))
    except pullback.PullbackError as exc:
        assert "dtype" in str(exc)
        return
    assert t == pytest.approx(np.sum(2 * X * v), rel=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_float_dtype_is_still_differentiated(dtype):
    def f(x):
        return np.sum(np.sin(x), dtype=dtype) + np.mean(x**2, dtype=dtype)

    x = X.astype(np.float64)
    np.testing.assert_allclose(grad(f)(x), np.cos(x) + 2 * x / x.size, rtol=1e-6)
