"""Workload: a small model written with helper functions (the usual style: a prediction
helper, a loss helper, the loss calling both), 32 samples x 4 features. Its arrays are
small, so what it measures is the fixed cost of a gradient through user functions: the
entry, the helpers' adjoints, their pullbacks."""

import numpy as np

from .base import Workload

N, D = 32, 4


def predict(w, b, X):
    return np.tanh(X @ w + b)


def mse(p, y):
    r = p - y
    return np.mean(r * r)


def loss(w, b, X, y):
    return mse(predict(w, b, X), y)


def hand(w, b, X, y):
    p = np.tanh(X @ w + b)
    dpre = 2.0 * (p - y) / y.size * (1.0 - p * p)
    return X.T @ dpre, np.sum(dpre)


def peer(B):
    def predict(w, b, X):
        return B.tanh(X @ w + b)

    def mse(p, y):
        r = p - y
        return B.mean(r * r)

    def loss(w, b, X, y):
        return mse(predict(w, b, X), y)

    return loss


def make_args():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((N, D))
    return 0.3 * rng.standard_normal(D), 0.1, X, np.sin(X[:, 0])


WORKLOADS = [
    Workload(
        name="helper_calls",
        title="loss calling predict and mse helpers, 32x4, wrt (w, b)",
        fn=loss,
        make_args=make_args,
        wrt=(0, 1),
        hand=hand,
        peer=peer,
    )
]
