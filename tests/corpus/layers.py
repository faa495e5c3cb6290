"""Layers, activations and losses as objects, in the style of NumPy machine-learning
libraries: activations are callable objects, layers keep their parameters in a dict and
cache what they saw on ``self``, losses are classes with a ``loss`` method."""

from __future__ import annotations

from functools import partial

import numpy as np

RNG = np.random.default_rng(11)
X = RNG.normal(size=(5, 3))
Y = RNG.normal(size=(5, 2))
LABELS = np.eye(2)[[0, 1, 1, 0, 1]]


class ActivationBase:
    def __call__(self, z):
        if z.ndim == 1:
            z = z.reshape(1, -1)
        return self.fn(z)


class Tanh(ActivationBase):
    def fn(self, z):
        return np.tanh(z)


class Sigmoid(ActivationBase):
    def fn(self, z):
        return 1 / (1 + np.exp(-z))


class ReLU(ActivationBase):
    def fn(self, z):
        return np.clip(z, 0, np.inf)


class LeakyReLU(ActivationBase):
    def __init__(self, alpha=0.3):
        self.alpha = alpha

    def fn(self, z):
        return np.where(z > 0, z, z * self.alpha)


class SoftPlus(ActivationBase):
    def fn(self, z):
        return np.log(np.exp(z) + 1)


class ELU(ActivationBase):
    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def fn(self, z):
        return np.where(z > 0, z, self.alpha * (np.exp(z) - 1))


class FullyConnected:
    def __init__(self, n_in, n_out, act_fn):
        self.act_fn = act_fn
        self.n_in = n_in
        self.n_out = n_out
        self.shapes_seen = []
        self.n_calls = 0

    def init_params(self, rng):
        return {"W": rng.normal(size=(self.n_in, self.n_out)) * 0.5, "b": np.zeros((1, self.n_out))}

    def forward(self, params, X):
        self.n_calls += 1
        W = params["W"]
        b = params["b"]
        Z = X @ W + b
        self.shapes_seen.append(Z.shape)
        return self.act_fn(Z)


class SquaredError:
    def __call__(self, y, y_pred):
        return self.loss(y, y_pred)

    @staticmethod
    def loss(y, y_pred):
        return 0.5 * np.linalg.norm(y_pred - y) ** 2


class CrossEntropy:
    def __init__(self, eps=np.finfo(float).eps):
        self.eps = eps

    def loss(self, y, y_pred):
        return -np.sum(y * np.log(y_pred + self.eps))


def softmax(z):
    e = np.exp(z - np.max(z, axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


class BatchNorm1D:
    def __init__(self, momentum=0.9, epsilon=1e-5):
        self.momentum = momentum
        self.epsilon = epsilon
        self.running_mean = np.zeros(3)
        self.n_updates = 0

    def forward(self, X, scaler, intercept):
        mean, var = np.mean(X, axis=0), np.var(X, axis=0)
        self.n_updates += 1
        self.running_mean = self.momentum * self.running_mean + (1 - self.momentum) * 0.0
        N = (X - mean) / np.sqrt(var + self.epsilon)
        return scaler * N + intercept


class Model:
    def __init__(self):
        self.layers = [FullyConnected(3, 4, Tanh()), FullyConnected(4, 2, Sigmoid())]
        self.loss_fn = SquaredError()

    def predict(self, params, X):
        out = X
        for layer, p in zip(self.layers, params):
            out = layer.forward(p, out)
        return out

    def objective(self, params):
        return self.loss_fn(Y, self.predict(params, X))


def dense_loss(W, act):
    layer = FullyConnected(3, 2, act)
    return SquaredError.loss(Y, layer.forward({"W": W, "b": 0.1}, X))


def cross_entropy_of_softmax(W):
    return CrossEntropy().loss(LABELS, softmax(X @ W))


def batchnorm_loss(scaler):
    bn = BatchNorm1D()
    return np.sum(bn.forward(X, scaler, 0.5) ** 2)


def huber(residual, delta=1.0):
    small = np.abs(residual) <= delta
    return np.sum(np.where(small, 0.5 * residual**2, delta * (np.abs(residual) - 0.5 * delta)))


huber_tight = partial(huber, delta=0.5)

W32 = RNG.normal(size=(3, 2)) * 0.5
MODEL = Model()
CASES = [
    (partial(dense_loss, act=Tanh()), (W32,)),
    (partial(dense_loss, act=Sigmoid()), (W32,)),
    (partial(dense_loss, act=LeakyReLU(0.1)), (W32 + 0.013,)),
    (partial(dense_loss, act=SoftPlus()), (W32,)),
    (partial(dense_loss, act=ELU()), (W32 + 0.013,)),
    (partial(dense_loss, act=ReLU()), (W32 + 0.013,)),
    (cross_entropy_of_softmax, (W32,)),
    (batchnorm_loss, (np.array([1.0, 0.5, 2.0]),)),
    (MODEL.objective, ([layer.init_params(RNG) for layer in MODEL.layers],)),
    (huber_tight, (np.array([0.2, -0.8, 1.7, -2.3]),)),
    (huber, (np.array([0.2, -0.8, 1.7, -2.3]),)),
    (SquaredError(), (Y, RNG.normal(size=(5, 2)))),
]
