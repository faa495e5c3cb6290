"""Third derivatives through array methods called where the array's kind is not known
when the code is generated (inside a helper held in a variable, so ``x.astype(...)``
runs through ``dynamic_calls.call_method``): the reverse of each such call in a gradient
that is differentiated again is the rule's transformable pullback function
(``dynamic_vjps.vjp_function``), for a method with a rule of its own
(``np.ndarray.astype``) as for one that is the NumPy function of the same name
(``x.copy()`` is ``np.copy(x)``). Checked against central finite differences of the
second derivative, float64 and float32; a cast to float32 gives a cotangent in the
argument's dtype."""

from __future__ import annotations

import numpy as np
import pytest

from pullback import grad, value_and_grad

X = np.array([0.3, -0.5, 0.8])
V = np.array([0.4, 1.1, -0.7])
W = np.array([-0.9, 0.2, 0.5])


def _to64(x):
    return x.astype(np.float64)


def _to32(x):
    return x.astype(np.float32)


def _copy(x):
    return x.copy() * x


def _reshape(x):
    return x.reshape(3, 1) * x.reshape((1, 3))


def _sum(x):
    return x.sum() * x


def _item_cast(x):
    return x[1:2].astype(x.dtype).item() * x


def _compress(x):
    # the array is np.compress's second argument: x.compress(c) is np.compress(c, x)
    return x.compress([True, False, True]) * x[1]


HELPERS = [_to64, _to32, _copy, _reshape, _sum, _item_cast, _compress]
NAMES = ["astype64", "astype32", "copy", "reshape", "sum", "item", "compress"]


def scalar_case(t, k):
    g = HELPERS[k]  # the helper's argument kind is unknown when its code is generated
    return np.sum(np.sin(g(t * X)) ** 3)


def array_case(x, k):
    g = HELPERS[k]
    return np.sum(np.sin(g(x * X)) ** 3 + g(x) ** 2)


def _nth(f, n):
    for _ in range(n):
        f = grad(f)
    return f


def _fd(f, t, step, k):
    return (f(t + step, k) - f(t - step, k)) / (2 * step)


T = 0.7


@pytest.mark.parametrize("k", range(len(HELPERS)), ids=NAMES)
def test_third_derivative_float64(k):
    third = _nth(scalar_case, 3)(T, k)
    assert np.asarray(third).dtype == np.float64
    step = 1e-5 if k != 1 else 1e-2  # a float32 helper: FD noise ~ eps32 / step
    tol = 1e-6 if k != 1 else 2e-3
    want = _fd(_nth(scalar_case, 2), T, step, k)
    np.testing.assert_allclose(third, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("k", range(len(HELPERS)), ids=NAMES)
def test_third_derivative_float32(k):
    third = _nth(scalar_case, 3)(np.float32(T), k)
    assert np.asarray(third).dtype == np.float32  # astype64's cotangent cast back too
    want = _fd(_nth(scalar_case, 2), T, 1e-2 if k == 1 else 1e-5, k)
    np.testing.assert_allclose(third, want, rtol=2e-3, atol=2e-3)


X0 = np.array([0.6, -0.3, 0.9])


def along_v(s, k, x0):
    # f(x0 + s v): its third derivative in s is D^3 f(x0)[v, v, v], through array arguments
    return array_case(x0 + s * V, k)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k", range(len(HELPERS)), ids=NAMES)
def test_third_directional_derivative_of_an_array_function(k, dtype):
    x0 = X0.astype(dtype)
    third = _nth(along_v, 3)(dtype(0.0), k, x0)
    assert np.asarray(third).dtype == dtype
    second = _nth(along_v, 2)
    exact = dtype == np.float64 and k != 1
    step = 1e-5 if exact else 1e-2
    want = (second(step, k, X0) - second(-step, k, X0)) / (2 * step)
    tol = 1e-6 if exact else 2e-3
    np.testing.assert_allclose(third, want, rtol=tol, atol=tol)


M = np.array([[0.3, -0.5, 0.8], [1.2, 0.4, -0.1]])


def compress_method(x):
    # the array's kind is known: the transform calls np.ndarray.compress's rule directly
    rows = (x * M).compress([True, False, True], axis=1)
    return np.sum(np.sin(rows) ** 2) + np.sum(x.compress([False, True]) ** 3)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_compress_method_value_and_gradient(dtype):
    x = np.array([[0.7], [-0.4]], dtype=dtype)
    value, g = value_and_grad(compress_method)(x)
    assert value == pytest.approx(compress_method(x), rel=1e-6)
    assert g.dtype == dtype
    x64 = x.astype(np.float64)
    step = 1e-6 if dtype == np.float64 else 1e-3
    for i in range(2):
        e = np.zeros_like(x64)
        e[i, 0] = step
        want = (compress_method(x64 + e) - compress_method(x64 - e)) / (2 * step)
        np.testing.assert_allclose(g[i, 0], want, rtol=1e-6 if dtype == np.float64 else 2e-3)
