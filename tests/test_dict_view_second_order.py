"""Second and third derivatives through ``d.items()``, ``d.values()`` and ``d.keys()`` of
a dict of differentiated values, calls found at run time: the Hessian of code that builds
a parameter dict and iterates over it, checked against finite differences of the gradient
in float64 and float32, and against the hand-derived Hessian where it is short."""

import numpy as np
import pytest

from pullback import grad, hessian
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


def sorted_items(w):
    d = {"b": w[1], "a": w[0]}
    d.update(c=w[2])
    return sum(v**2 * np.sin(v) for k, v in sorted(d.items()))


def items_in_a_loop(w):
    params = {"scale": w[0], "shift": w[1:]}
    total = 0.0
    for name, p in params.items():
        total = total + np.sum(np.exp(p) * w[0]) if name == "shift" else total + p**3
    return total


def values_and_keys(w):
    d = {"x": w[0] * w[1], "y": np.cos(w[2])}
    scale = float(len(list(d.keys())))
    return scale * sum(v * v for v in d.values()) + np.prod(list(d.values()))


@pytest.mark.parametrize("fn", [sorted_items, items_in_a_loop, values_and_keys])
@pytest.mark.parametrize("dtype", DTYPES)
def test_second_order_against_finite_differences(fn, dtype):
    w = np.array([0.3, -0.7, 1.2], dtype=dtype)
    assert check_grads(fn, w, order=2) == "reverse over reverse"


def test_the_hessian_by_hand():
    w = np.array([0.3, -0.7, 1.2])

    def plain(w):
        d = {"a": w[0], "b": w[1], "c": w[2]}
        return sum(v**3 for v in d.values()) + d["a"] * sum(d.values())

    want = np.diag(6 * w) + np.array([[2.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    np.testing.assert_allclose(hessian(plain)(w), want, rtol=1e-12)


def test_a_third_derivative_through_items():
    def cubic_items(x):
        d = {"p": x, "q": 2.0 * x}
        return sum(v**4 for _, v in d.items())

    # f = x**4 + 16 x**4 = 17 x**4: f''' = 408 x
    third = grad(grad(grad(cubic_items)))
    np.testing.assert_allclose(third(0.7), 408 * 0.7, rtol=1e-12)


def through_values(x):
    params = {"a": x[0], "b": x[1]}
    return sum(list(params.values())) * x[2]


def through_items(x):
    params = {f"w{i}": x[i] for i in range(3)}
    return sum(v**2 for _, v in params.items()) * params["w0"]


@pytest.mark.parametrize("fn", [through_values, through_items])
def test_hessian_vector_products_through_views(fn):
    """(probe_fin's cases, once refused with a by-key rewrite: they now differentiate.)"""
    from fd import check_hvp

    check_hvp(fn, np.array([0.3, -0.7, 1.1]), np.array([0.5, -1.0, 0.25]))
