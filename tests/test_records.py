"""Named tuples as differentiated values, as JAX-style and autograd-style model code writes
parameters: passed in (the gradient is the same named tuple), built inside
(``Params(w=..., b=...)``, keywords and defaults), fields read by name (``p.w``), in
reverse and forward mode and to second order, against finite differences; ``dict.get``
and ``copy.deepcopy`` of differentiated values; an attribute of anything else that is
differentiated is refused at the user's line."""

from __future__ import annotations

import collections
import copy
import typing

import numpy as np
import pytest
from fd import check_grad

from pullback import grad, hessian, jvp
from pullback.errors import UnsupportedCallError
from pullback.testing import check_grads

Params = collections.namedtuple("Params", "w b")


class Layer(typing.NamedTuple):
    W: np.ndarray
    b: np.ndarray
    scale: float = 1.0


DTYPES = [np.float64, np.float32]


def loss(p, X):
    return np.sum((X @ p.w + p.b) ** 2)


def layer_loss(layer: Layer, x):
    return np.sum(np.tanh(layer.scale * (x @ layer.W) + layer.b))


def built_inside(theta):
    p = Params(b=theta[2], w=theta[:2])  # keywords, out of order
    layer = Layer(np.outer(theta[:2], theta[1:]), theta[1:])  # scale from its default
    return loss(p, np.eye(2)) + layer_loss(layer, theta[:2])


def with_get_and_copy(theta):
    params = {"w": theta[:2] * 2.0}
    backup = copy.deepcopy(params)
    scale = params.get("scale", 0.5)
    return np.sum(backup["w"] ** 2) * scale + np.sum(params.get("w") ** 3)


def copied(theta):
    params = {"w": theta[:2] * 2.0}
    backup = copy.deepcopy(params)
    return np.sum(backup["w"] ** 2 * theta[2])


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_named_tuple_argument_gets_a_named_tuple_gradient(dtype):
    p = Params(np.array([0.5, -1.0], dtype=dtype), dtype(0.25))
    X = np.array([[1.0, 2.0], [0.5, -0.5], [3.0, 1.0]], dtype=dtype)
    g = grad(loss)(p, X)
    assert type(g) is Params
    r = X @ p.w + p.b
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(g.w, 2 * X.T @ r, rtol=tol)
    np.testing.assert_allclose(g.b, 2 * np.sum(r), rtol=tol)
    assert g.w.dtype == dtype


@pytest.mark.parametrize("dtype", DTYPES)
def test_typing_named_tuples_with_defaults(dtype):
    rng = np.random.default_rng(0)
    layer = Layer(rng.normal(size=(3, 2)).astype(dtype), rng.normal(size=2).astype(dtype), 0.5)
    x = rng.normal(size=3).astype(dtype)
    g = grad(layer_loss)(layer, x)
    assert type(g) is Layer and g.W.shape == (3, 2)
    check_grad(lambda W: layer_loss(Layer(W, layer.b, 0.5), x), layer.W)
    check_grad(lambda v: layer_loss(layer, v), x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_built_inside_with_keywords_and_defaults(dtype):
    theta = np.array([0.3, -0.7, 1.1], dtype=dtype)
    check_grad(built_inside, theta)
    if dtype == np.float64:
        assert check_grads(built_inside, theta, order=2) == "reverse over reverse"
        _, dy = jvp(built_inside, (theta,), (np.array([1.0, 0.0, -1.0]),))
        np.testing.assert_allclose(dy, grad(built_inside)(theta) @ [1.0, 0.0, -1.0])
        h = hessian(built_inside)(theta)
        np.testing.assert_allclose(h, h.T, atol=1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dict_get_and_deepcopy(dtype):
    theta = np.array([0.3, -0.7, 1.1], dtype=dtype)
    check_grad(with_get_and_copy, theta)
    if dtype == np.float64:
        # d.get(...) is found at run time, whose second derivative goes through method_vjp
        # and dict.get's transformable pullback; deepcopy's runs reverse over reverse
        assert check_grads(with_get_and_copy, theta, order=2) == "reverse over reverse"
        assert check_grads(copied, theta, order=2) == "reverse over reverse"


class Box:
    def __init__(self, v):
        self.v = v


def attribute_of_a_list(xs):
    return np.sum(xs.w)


def test_an_attribute_of_another_differentiated_value_is_refused_at_the_users_line():
    with pytest.raises(UnsupportedCallError) as info:
        grad(attribute_of_a_list)([np.ones(2)])
    message = str(info.value)
    line = attribute_of_a_list.__code__.co_firstlineno + 1
    assert message.startswith(f"{__file__}:{line}:")
    assert "PB501 attribute 'w' of a differentiated value, a list" in message
