"""``kwargs.values()``, ``.items()`` and ``.keys()`` on a ``**kwargs`` parameter: the lists
they iterate over, built from subscripts of the dict, so gradients reach every value.
Checked against finite differences in float64 and float32 and in forward mode."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad

from pullback import grad, jvp
from pullback.testing import check_grads

X = np.array([0.3, -0.7, 1.1])


def fit(**parts):
    return sum(np.sum(v**2) for v in parts.values())


def by_values(x):
    return fit(a=x, b=np.sin(x))


def weighted(scale, **parts):
    total = 0.0
    for name, v in parts.items():
        total = total + scale * np.sum(v * v) * (2.0 if name == "b" else 1.0)
    return total + len(list(parts.keys()))


def by_items(x):
    return weighted(x[0], weight=x, b=x[1:] ** 2)


@pytest.mark.parametrize("f", [by_values, by_items])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kwargs_views_against_finite_differences(f, dtype):
    x = X.astype(dtype)
    check_grads(f, x)
    check_grad(f, x)
    check_grads(f, x, order=2)


@pytest.mark.parametrize("f", [by_values, by_items])
def test_kwargs_views_forward_mode(f):
    v = np.array([0.5, -1.0, 0.25])
    _, t = jvp(f, (X,), (v,))
    assert np.isclose(t, grad(f)(X) @ v)


def test_kwargs_views_values():
    x = X
    assert np.isclose(by_values(x), np.sum(x**2) + np.sum(np.sin(x) ** 2))
    expected = x[0] * np.sum(x * x) + x[0] * np.sum(x[1:] ** 4) * 2.0 + 2
    assert np.isclose(by_items(x), expected)
    g = grad(by_values)(x)
    assert np.allclose(g, 2 * x + 2 * np.sin(x) * np.cos(x))


# -- the same views of any dict of differentiated values (pullback/dynamic_calls.py) -------


def local_dict_items(x):
    params = {"w": x, "b": x[0]}
    t = 0.0
    for k, v in params.items():
        t = t + np.sum(v * v) * (2.0 if k == "b" else 1.0)
    return t + len(params.keys())


def local_dict_values(x):
    params = {"w": x, "b": x[0] * x[1]}
    return sum(np.sum(v) ** 2 for v in params.values())


def parameter_dict_loss(params):
    total = 0.0
    for name, p in params.items():
        total = total + np.sum(np.tanh(p) ** 2) * (0.5 if name == "b" else 1.0)
    return total


@pytest.mark.parametrize("f", [local_dict_items, local_dict_values])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dict_views_against_finite_differences(f, dtype):
    x = X.astype(dtype)
    check_grads(f, x)
    check_grad(f, x)
    v = np.array([0.5, -1.0, 0.25])
    _, t = jvp(f, (X,), (v,))
    assert np.isclose(t, grad(f)(X) @ v)


def test_dict_views_of_a_parameter_dict():
    params = {"W": np.array([[0.1, 0.2], [0.3, -0.4]]), "b": np.array([0.5, -0.5])}
    check_grads(parameter_dict_loss, params)
    g = grad(parameter_dict_loss)(params)
    t = np.tanh(params["W"])
    assert np.allclose(g["W"], 2 * t * (1 - t * t))
    assert set(g) == {"W", "b"}
    assert np.isclose(local_dict_items(X), np.sum(X * X) + 2 * X[0] ** 2 + 2)
