# ruff: noqa: UP031 - printf-style formatting is what these tests are about
"""printf-style formatting (``"W%d" % i``) makes a string: it carries no gradient, whatever
the activity of the values it formats (a count read from a differentiated dict or record,
as layer code names its parameters). Its reverse and forward sweeps must not try to
differentiate ``%`` (``str // int`` failed there)."""

from dataclasses import dataclass

import numpy as np
import pytest

import pullback
from pullback.testing import check_grads


def keyed_loss(params):
    total = 0.0
    for i in range(1, params["n"] + 1):
        w = params["W%d" % i]
        total = total + np.sum(np.tanh(w) * w) * len("w%d" % params["n"])
    return total


@dataclass
class Layers:
    n: int
    scale: float

    def loss(self, x):
        s = 0.0
        for i in range(self.n):
            name = b"w%d" % (self.n - i)
            s = s + len(name) * self.scale * np.sum(x**2)
        return s


def record_loss(x, layers):
    return layers.loss(x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_formatted_keys_of_a_differentiated_dict(dtype):
    p = {"n": 2, "W1": np.array([0.3, -0.2], dtype), "W2": np.array([0.5, 0.1], dtype)}
    g = pullback.grad(keyed_loss)(p)
    for k in ("W1", "W2"):
        w = p[k].astype(np.float64)
        t = np.tanh(w)
        want = 2 * (t + w * (1 - t**2))  # len("w2") == 2
        np.testing.assert_allclose(g[k], want, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_formatted_names_in_a_record_method_every_order():
    x = np.array([0.3, -0.7])
    layers = Layers(3, 1.5)
    check_grads(lambda x: record_loss(x, layers), x, order=2)
    gx, gl = pullback.grad(record_loss, wrt=(0, 1))(x, layers)
    np.testing.assert_allclose(gx, 2 * 3 * 2 * 1.5 * x)
    assert gl.scale == pytest.approx(2 * 3 * np.sum(x**2))
    H = pullback.hessian(lambda x: record_loss(x, layers))(x)
    np.testing.assert_allclose(H, 2 * 3 * 2 * 1.5 * np.eye(2))
    _, t = pullback.jvp(lambda x: record_loss(x, layers), (x,), (np.ones(2),))
    assert t == pytest.approx(2 * 3 * 2 * 1.5 * np.sum(x))


class Net:
    """As course code writes a model: its parameters in a dict, named by layer number."""

    def __init__(self, params, num_layers, reg=0.1):
        self.params = params
        self.num_layers = num_layers
        self.reg = reg

    def loss(self, x):
        out = x
        for i in range(1, self.num_layers):
            out = np.tanh(out @ self.params["W%d" % i])
        last = self.params["W%d" % self.num_layers]
        loss = np.sum((out @ last) ** 2)
        for key in self.params:
            loss += 0.5 * self.reg * np.sum(self.params[key] ** 2)
        return loss


def net_loss(params, x):
    return Net(params, num_layers=3).loss(x)


def test_formatted_keys_of_a_model_built_inside():
    rng = np.random.default_rng(0)
    params = {f"W{i}": rng.normal(size=(3, 3)) for i in (1, 2, 3)}
    x = rng.normal(size=(2, 3))
    check_grads(net_loss, params, x)
    check_grads(lambda x: net_loss(params, x), x, order=2)
