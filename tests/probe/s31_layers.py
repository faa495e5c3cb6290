"""Helpers for the s31 ML probes, imported by name as a project's own module would be
(``import s31_layers as L`` and ``from s31_layers import relu``)."""

import numpy as np

EPS = 1e-5


def relu(z):
    return np.maximum(z, 0.0)


def leaky(z, slope=0.1):
    return np.where(z > 0, z, slope * z)


def softmax(z, axis=-1):
    z = z - np.max(z, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(z):
    m = z.max(axis=1, keepdims=True)
    return z - m - np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))


def layer_norm(h, gamma, beta):
    mu = h.mean(axis=-1, keepdims=True)
    var = h.var(axis=-1, keepdims=True)
    return gamma * (h - mu) / np.sqrt(var + EPS) + beta


class Linear:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, x):
        return x @ self.W + self.b


class Activation:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, x):
        return self.fn(x)
