"""Straight-line code: operators, NumPy and math calls, methods, indexing, broadcasting.

Every case is checked against central finite differences on float64 and float32.
"""

import math

import numpy as np
import pytest
from fd import check_grad

RNG = np.random.default_rng(0)


def arr(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape)


def pos(*shape):
    return RNG.uniform(0.5, 2.0, size=shape)


# -- functions under test (module level: pullback reads their source) -------------------


def f_add(a, b):
    return np.sum(a + b * 2.0)


def f_sub(a, b):
    return np.sum(a - b - 1.0)


def f_mul(a, b):
    return np.sum(a * b * a)


def f_div(a, b):
    return np.sum(a / b + 1.0 / b)


def f_pow_const(a, b):
    return np.sum(a**2 + b**3 + a**1)


def f_pow_var(a, b):
    return np.sum(a**b)


def f_neg(a, b):
    return np.sum(-a + (+b))


def f_mod(a, b):
    return np.sum(a % b)


def f_self(a, b):
    return np.sum(a * a + a + a)


def f_unary_funcs(a, b):
    return np.sum(np.exp(a) + np.sin(a) * np.cos(b) + np.tanh(a * b) + np.log(b) + np.sqrt(b))


def f_abs_max_min(a, b):
    return np.sum(np.abs(a) + np.maximum(a, b) + np.minimum(a, 0.3 * b))


def f_where(a, b):
    return np.sum(np.where(a > 0, a * b, b * b))


def f_reductions(a, b):
    return (
        np.sum(a, axis=0).sum()
        + np.mean(a * b, axis=1, keepdims=True).sum()
        + np.prod(b)
        + np.max(a)
        + np.min(b, axis=0).sum()
    )


def f_products(a, b):
    return np.sum(a @ b.T) + np.dot(a[0], b[1]) + np.sum(np.outer(a[0], b[0]))


def f_shape(a, b):
    c = np.concatenate([a, b], axis=0)
    s = np.stack([a, b], axis=1)
    r = np.reshape(c, (-1,))
    return np.sum(np.transpose(s) ** 2) + np.sum(r * r[::-1]) + np.sum(a.T @ b)


def f_methods(a, b):
    return (
        a.sum()
        + a.mean(axis=0).sum()
        + a.reshape(-1).dot(b.reshape(-1))
        + a.max()
        + (a.transpose() * 2.0).sum()
    )


def f_attributes(a, b):
    n = a.shape[0] * a.ndim + a.size
    return np.sum(a.T * b.T) * n


def f_indexing(a, b):
    return (
        a[0, 1]
        + np.sum(a[1:, :2])
        + np.sum(a[:, None, 0])
        + np.sum(a[np.array([0, 0, 2])])
        + np.sum(b[b > 0])
        + a[-1, -1]
        + np.sum(a[..., 1])
    )


def sum3(a, b):
    return a[0] + a[1] + a[2]


def f_unpack(a, b):
    x, y = a * 2.0, b
    (p, q), r = (x, y), a
    return np.sum(p * q + r)


def f_augassign(a, b):
    s = 0.0
    s += np.sum(a)
    s *= 2.0
    s -= np.sum(b)
    s /= 3.0
    s **= 2
    return s


def f_compare(a, b):
    c = a > b
    return np.sum(np.where(c, a, 0.0)) + np.sum(a * (b < 0.5))


CASES = [
    (f_add, lambda: (arr(3, 4), arr(4))),
    (f_add, lambda: (arr(3, 1), arr(1, 4))),
    (f_sub, lambda: (arr(4), arr(3, 4))),
    (f_mul, lambda: (arr(2, 3), arr(3))),
    (f_div, lambda: (arr(3), pos(2, 3))),
    (f_pow_const, lambda: (arr(3), arr(2, 3))),
    (f_pow_var, lambda: (pos(3), arr(2, 3))),
    (f_neg, lambda: (arr(3), arr(3))),
    (f_mod, lambda: (pos(4) * 3, pos(4))),
    (f_self, lambda: (arr(5), arr(5))),
    (f_unary_funcs, lambda: (arr(3, 2), pos(3, 2))),
    (f_abs_max_min, lambda: (arr(4), arr(4))),
    (f_where, lambda: (arr(5), arr(5))),
    (f_reductions, lambda: (arr(3, 4), pos(3, 4))),
    (f_products, lambda: (arr(3, 4), arr(3, 4))),
    (f_shape, lambda: (arr(2, 3), arr(2, 3))),
    (f_methods, lambda: (arr(3, 4), arr(3, 4))),
    (f_attributes, lambda: (arr(3, 4), arr(3, 4))),
    (f_indexing, lambda: (arr(3, 4), arr(5))),
    (sum3, lambda: (arr(30), arr(2))),
    (f_unpack, lambda: (arr(3), arr(3))),
    (f_augassign, lambda: (arr(3), arr(3))),
    (f_compare, lambda: (arr(5), arr(5))),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize(
    "fn,make", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)]
)
def test_against_finite_differences(fn, make, dtype):
    a, b = (x.astype(dtype) for x in make())
    check_grad(fn, a, b, wrt=(0, 1))


# -- scalars and math -------------------------------------------------------------------


def scalar_poly(x, y):
    z = x * y + 3.0 * x**2 - y / x
    return z * math.sin(x) + math.exp(-y) + math.log(x) + math.sqrt(y) + math.tanh(x * y)


def test_python_float_arguments_give_python_floats():
    gx, gy = check_grad(scalar_poly, 1.3, 0.7, wrt=(0, 1))
    assert type(gx) is float and type(gy) is float
    # hand-derived d/dy of x*y*sin(x) + ... at the same point
    x, y = 1.3, 0.7
    want_y = (
        x * math.sin(x)
        - math.sin(x) / x
        - math.exp(-y)
        + 0.5 / math.sqrt(y)
        + x * (1 - math.tanh(x * y) ** 2)
    )
    assert gy == pytest.approx(want_y, rel=1e-12)


def test_numpy_scalars_keep_their_dtype():
    gx = check_grad(scalar_poly, np.float32(1.3), np.float32(0.7))
    assert np.asarray(gx).dtype == np.float32


def test_zero_d_and_size_one_outputs_are_scalars():
    import pullback

    def size_one(x):
        return np.reshape(np.sum(x * x), (1,))

    def zero_d(x):
        return np.asarray(np.sum(x * x))

    x = arr(3)
    np.testing.assert_allclose(pullback.grad(size_one)(x), 2 * x)
    np.testing.assert_allclose(pullback.grad(zero_d)(x), 2 * x)


def test_hand_derived_mlp_layer():
    import pullback

    def layer(w, x):
        return np.sum(np.tanh(x @ w))

    w, x = arr(3, 2), arr(4, 3)
    want = x.T @ (1 - np.tanh(x @ w) ** 2)
    np.testing.assert_allclose(pullback.grad(layer)(w, x), want, rtol=1e-12)


def broadcast_intermediates(x, y):
    a = x[:, None] * y
    b = x.reshape(-1, 1) + y
    c = np.expand_dims(x, 1) - y
    return np.sum(a * b * c)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_broadcasting_of_intermediates_with_equal_rank(dtype):
    x = np.array([0.5, -1.0, 2.0], dtype=dtype)
    y = np.array([1.5, 0.25], dtype=dtype)
    check_grad(broadcast_intermediates, x, y, wrt=(0, 1))


def call_forms(x, mask):
    return (
        np.var(x, correction=1)
        + np.sum(x * x, where=mask)
        + np.sum(np.ravel(x.T, order="K") * np.arange(6.0))
        + np.std(x, 0, None, None, 1).sum()
        + np.transpose(x[None], axes=(2, 0, -2)).sum()
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_call_forms_that_transformable_pullbacks_leave_to_the_rule(dtype):
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=dtype)
    mask = np.array([[True, False, True], [False, True, True]])
    check_grad(call_forms, x, mask)
