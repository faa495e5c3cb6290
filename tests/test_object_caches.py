"""Layer objects as people write them: a dict cache on ``self`` filled in ``forward``
(``self.cache["X"] = X``), an attribute cache stored after a call of a stored activation,
settings recorded on first use, layers called as objects from a list. The values reach
the objects as in the primal, gradients of any order are exact (finite differences,
float64 and float32); what would lose a gradient (the function reading the cached value
back) or write into an array from outside is refused, naming the line."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad

import pullback
from pullback.errors import UnsupportedCallError
from pullback.testing import check_grads


class Dense:
    def __init__(self, W, b, act=np.tanh):
        self.W, self.b, self.act_fn = W, b, act
        self.cache = {}
        self.history = [None]
        self.n_in = None

    def forward(self, X, retain_derived=True):
        if self.n_in is None:
            self.n_in = X.shape[1]
        Z = X @ self.W + self.b
        Y = self.act_fn(Z)
        if retain_derived:
            self.cache["X"] = X  # a cache: read by a backward pass the user never runs here
            self.cache["Z"] = Z
            self.last_Y = Y  # stored after the call of a stored callable
        self.history[0] = Y.shape
        return Y

    def __call__(self, X):
        return self.forward(X)


class Net:
    def __init__(self, layers):
        self.layers = layers

    def loss(self, X, y):
        out = X
        for layer in self.layers:
            out = layer(out)
        return np.mean((out - y) ** 2)


RNG = np.random.default_rng(3)
NET = Net([Dense(RNG.normal(size=(3, 4)), RNG.normal(size=4)), Dense(RNG.normal(size=(4, 1)), 0.1)])
Y = RNG.normal(size=(5, 1))


def loss_of_inputs(X):
    return NET.loss(X, Y)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_caches_on_self_run_as_in_the_primal(dtype):
    X = RNG.normal(size=(5, 3)).astype(dtype)
    check_grad(loss_of_inputs, X)
    pullback.grad(loss_of_inputs)(X)
    first = NET.layers[0]
    np.testing.assert_array_equal(first.cache["X"], X)  # what the primal stores
    assert first.n_in == 3 and first.history[0] == (5, 4)


def test_second_order_through_layer_objects_with_caches():
    X = RNG.normal(size=(5, 3))
    assert check_grads(loss_of_inputs, X, order=2) == "reverse over reverse"


class ReadsItBack(Dense):
    def forward(self, X, retain_derived=True):
        self.cache["X"] = X * 2.0
        return np.sum(self.cache["X"] * X)


def test_a_cached_value_read_back_is_refused():
    layer = ReadsItBack(np.ones((3, 1)), 0.0)
    with pytest.raises(pullback.UnsupportedSyntaxError, match="PB107") as e:
        pullback.grad(lambda x: layer.forward(x))(np.ones((2, 3)))
    assert "self.cache" in str(e.value)


class WritesAnArray(Dense):
    def forward(self, X, retain_derived=True):
        self.W[0, 0] = 1.0  # the caller's array
        return np.sum(X @ self.W)


def test_an_array_held_by_an_object_is_not_written():
    layer = WritesAnArray(np.full((3, 1), 2.0), 0.0)
    with pytest.raises(UnsupportedCallError, match="item assignment into a ndarray") as e:
        pullback.grad(lambda x: layer.forward(x))(np.ones((2, 3)))
    assert "test_object_caches.py:" in str(e.value)
    np.testing.assert_array_equal(layer.W, np.full((3, 1), 2.0))


class Problem:
    def __init__(self):
        self.evals = []
        self.trace = {"x": []}

    def objective(self, x):
        val = np.sum(np.cos(x) * x**2)
        self.evals.append(float(val))  # a log of differentiated values, never read here
        for v in x:
            self.trace["x"].append(v)
        return val

    def reads_its_log(self, x):
        self.evals.append(np.sum(x**2))
        return self.evals[-1] * 2.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_logs_on_self_run_once_per_gradient(dtype):
    p = Problem()
    x = np.array([0.5, -1.0, 2.0], dtype=dtype)
    check_grad(p.objective, x)
    p.evals.clear()
    pullback.grad(p.objective)(x)
    assert len(p.evals) == 1  # once per gradient, the primal's value
    assert p.evals[0] == pytest.approx(float(p.objective(x)), rel=1e-6)
    assert check_grads(p.objective, x.astype(np.float64), order=2) == "reverse over reverse"


def test_a_log_read_back_is_refused():
    with pytest.raises(pullback.UnsupportedSyntaxError, match="PB106"):
        pullback.grad(Problem().reads_its_log)(np.ones(3))
