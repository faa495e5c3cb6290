"""Workload 4: two-layer tanh MLP with softmax cross-entropy, batch 64, 784-256-10."""

import numpy as np

from .base import Workload

BATCH, N_IN, N_HIDDEN, N_OUT = 64, 784, 256, 10


def loss(params, X, Y):
    W1, b1, W2, b2 = params
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    z = logits - np.max(logits, axis=1, keepdims=True)
    log_softmax = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return np.mean(-np.sum(Y * log_softmax, axis=1))


def hand(params, X, Y):
    W1, b1, W2, b2 = params
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    z = logits - np.max(logits, axis=1, keepdims=True)
    e = np.exp(z)
    p = e / np.sum(e, axis=1, keepdims=True)
    # d/dlogits of mean_b -sum_j Y_bj log_softmax_bj
    dlogits = (p * np.sum(Y, axis=1, keepdims=True) - Y) / X.shape[0]
    dW2 = h.T @ dlogits
    db2 = dlogits.sum(axis=0)
    dpre = (dlogits @ W2.T) * (1.0 - h * h)
    dW1 = X.T @ dpre
    db1 = dpre.sum(axis=0)
    return dW1, db1, dW2, db2


def peer(B):
    def loss(params, X, Y):
        W1, b1, W2, b2 = params
        h = B.tanh(X @ W1 + b1)
        logits = h @ W2 + b2
        z = logits - B.max(logits, axis=1, keepdims=True)
        log_softmax = z - B.log(B.sum(B.exp(z), axis=1, keepdims=True))
        return B.mean(-B.sum(Y * log_softmax, axis=1))

    return loss


def make_args():
    rng = np.random.default_rng(4)
    W1 = rng.standard_normal((N_IN, N_HIDDEN)) / np.sqrt(N_IN)
    b1 = 0.1 * rng.standard_normal(N_HIDDEN)
    W2 = rng.standard_normal((N_HIDDEN, N_OUT)) / np.sqrt(N_HIDDEN)
    b2 = 0.1 * rng.standard_normal(N_OUT)
    X = rng.standard_normal((BATCH, N_IN))
    Y = np.eye(N_OUT)[rng.integers(0, N_OUT, BATCH)]
    return (W1, b1, W2, b2), X, Y


WORKLOADS = [
    Workload(
        name="mlp",
        title="tanh MLP + softmax xent, 64x784-256-10, wrt params tuple",
        fn=loss,
        make_args=make_args,
        wrt=0,
        hand=hand,
        peer=peer,
        target=2.5,
    )
]
