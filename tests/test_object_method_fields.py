"""Objects as estimator libraries write them: attributes first stored by a method (``fit``
setting ``self.w``), lists on the object grown by its methods (``self.layers.append(l)``,
``self.errors.append(loss)``), callables kept on the object (``self.activation(z)``).

An attribute any method stores is a field of the class's records (plain_classes.py), and a
list field only the object reaches grows as a copy stored as a new version of the object
(transform/object_arrays.py), so these differentiate exactly, first and second order;
where the list or the object has another holder, the read that would lose the gradient is
refused (escapes.py: an object built from a differentiated value and handed to a method,
``net.add(Dense(W))``, is recorded even though it is no record)."""

from __future__ import annotations

import numpy as np
import pytest
from probe.probe_harness import check_float32, check_probe, check_refusal


class Tanh:
    def __call__(self, x):
        return np.tanh(x)


class Linear:
    def __init__(self, lr=0.1, n_iter=2):
        self.lr = lr
        self.n_iter = n_iter
        self.act = Tanh()

    def _init(self, n):
        self.w = np.linspace(-0.5, 0.5, n)  # first stored here, not in __init__

    def fit(self, X, y):
        self._init(X.shape[1])
        self.errors = []
        for _ in range(self.n_iter):
            r = y - self.act(X @ self.w)
            self.errors.append(np.mean(r**2))
            self.w -= self.lr * -(r @ X)
        return self

    def predict(self, X):
        return self.act(X @ self.w)


def fitted_prediction(X, y):
    model = Linear(lr=0.2, n_iter=3)
    model.fit(X, y)
    return np.sum(model.predict(X) ** 2) + model.errors[-1]


def mean_training_error(y, X):
    model = Linear()
    model.fit(X, y)
    return np.mean(model.errors) + len(model.errors)


class Dense:
    def __init__(self, W):
        self.W = W

    def forward(self, x):
        return np.tanh(x @ self.W)


class Sequential:
    def __init__(self):
        self.layers = []

    def add(self, layer):
        self.layers.append(layer)

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x


def sequential(W1, X, W2):
    net = Sequential()
    net.add(Dense(W1))
    net.add(Dense(W2))
    return np.sum(net.forward(X) ** 2)


def appended_by_the_caller(W1, X):
    net = Sequential()
    net.layers.append(Dense(W1))
    return np.sum(net.forward(X))


def aliased_net(W1, X):
    net = Sequential()
    nets = [net]  # a second holder: no versions
    net.add(Dense(W1))
    return np.sum(nets[0].forward(X) ** 2)


class Given(Sequential):
    def __init__(self, layers):
        self.layers = layers  # the caller's list: not the object's alone


def given_list(W1, X):
    net = Given([])
    net.add(Dense(W1))
    return np.sum(net.forward(X) ** 2)


def fitted_in_a_chain(X, y):
    model = Linear(lr=0.2).fit(X, y)  # fit returns self: the object made for the call
    return np.sum(model.predict(X) ** 2) + model.errors[-1]


class Shaped:
    def __init__(self):
        self.layers = []

    def add(self, layer):
        if self.layers:  # its truth only: no other holder of the list
            layer.set_input_shape(self.layers[-1].n_out)
        self.layers.append(layer)

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x


class ShapedDense(Dense):
    def __init__(self, W):
        self.W = W
        self.n_in = None
        self.n_out = W.shape[1]

    def set_input_shape(self, n):
        self.n_in = n


def shapes_set_on_add(W1, X, W2):
    net = Shaped()
    net.add(ShapedDense(W1))
    net.add(ShapedDense(W2))
    return np.sum(net.forward(X) ** 2)


_r = np.random.default_rng(5)
X = _r.standard_normal((4, 3))
Y = np.array([0.3, -0.5, 0.1, 0.8])
W1 = 0.5 * _r.standard_normal((3, 2))
W2 = 0.5 * _r.standard_normal((2, 2))


@pytest.mark.parametrize(
    "f, args",
    [
        (fitted_prediction, (X, Y)),
        (mean_training_error, (Y, X)),
        (sequential, (W1, X, W2)),
        (appended_by_the_caller, (W1, X)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_method_fields_and_grown_lists_against_differences(f, args):
    check_probe(f, *args, second=True)
    check_float32(f, *args)


def test_a_fit_returning_self_in_a_chain():
    check_probe(fitted_in_a_chain, X, Y, second=True)


def test_a_list_tested_for_truth_before_it_grows():
    # (first order and jvp: a second derivative recomputes `add` from the object as it was
    # and refuses its read of the grown list, escapes.py; see the report)
    check_probe(shapes_set_on_add, W1, X, W2)
    check_float32(shapes_set_on_add, W1, X, W2)


def test_a_scalar_through_the_fit():
    def scaled(s, X, y):
        return fitted_prediction(s * X, y)

    check_probe(scaled, 0.7, X, Y, second=True)


@pytest.mark.parametrize("f", [aliased_net, given_list], ids=lambda f: f.__name__)
def test_a_grown_list_with_another_holder_is_refused_where_read(f):
    # aliased_net was a silent zero: `Dense(W1)`, made only to hand on, was no record, so
    # the method's append of it went unrecorded and the read through `nets[0]` lost it
    check_refusal(f, W1, X, says=("this reads back a value that carries a gradient", "Fix:"))
