"""Probe: the training-side idioms of course NumPy code.

ReLU and leaky ReLU written as masked stores into a local array (``hidden[hidden < 0] = 0``,
``out[out < 0] *= 0.01``), inverted dropout with a seeded mask and in place, a softmax
written with ``-=``/``/=`` on local arrays, unrolled training with the hand-written gradient
(``probs[np.arange(N), y] -= 1``), caches kept in lists of tuples and in dicts, the SVM's
hand-written ``dW`` by loops as a penalty, ``np.add.at`` of an embedding's backward, a masked
sequence loss. Differentiated against central differences (probe_harness.py); refusals
with their messages.
"""

import numpy as np
from probe_harness import probe_tests, refusal_test


def relu_inplace_net(W1, X, y, W2):
    hidden = X.dot(W1) + 0.1
    hidden[hidden < 0] = 0
    scores = hidden.dot(W2)
    scores -= scores.max(axis=1, keepdims=True)
    probs = np.exp(scores)
    probs /= probs.sum(axis=1, keepdims=True)
    return -np.mean(np.log(probs[np.arange(X.shape[0]), y]))

def leaky_inplace(x):
    out = x.copy()
    out[out < 0] *= 0.01
    return np.sum(out ** 2)

def inverted_dropout(x):
    np.random.seed(3)
    p = 0.5
    mask = (np.random.rand(*x.shape) < p) / p
    out = x * mask
    return np.sum(np.tanh(out))

def dropout_inplace(x, mask):
    out = x.copy()
    out[mask < 0.5] = 0
    out /= 0.5
    return np.sum(out ** 3)

def hand_training(W, X, y):
    params = {"W": W}
    lr = 0.1
    for _ in range(3):
        scores = X.dot(params["W"])
        scores -= scores.max(axis=1, keepdims=True)
        probs = np.exp(scores) / np.sum(np.exp(scores), axis=1, keepdims=True)
        dscores = probs.copy()
        dscores[np.arange(X.shape[0]), y] -= 1
        grads = {"W": X.T.dot(dscores) / X.shape[0]}
        for k in params:
            params[k] -= lr * grads[k]
    scores = X.dot(params["W"])
    return np.sum(scores ** 2)

def hand_training_rebind(W, X, y):
    lr = 0.1
    for _ in range(3):
        scores = X.dot(W)
        probs = np.exp(scores - scores.max(axis=1, keepdims=True))
        probs /= np.sum(probs, axis=1, keepdims=True)
        probs[np.arange(X.shape[0]), y] -= 1
        dW = X.T.dot(probs) / X.shape[0]
        W = W - lr * dW
    return np.sum(X.dot(W) ** 2)

def layer_list_cache(W1, X, W2):
    caches = []
    out = X
    for W in [W1, W2]:
        a = out.dot(W)
        out = np.maximum(0, a)
        caches.append((a, W))
    a_last, _ = caches[-1]
    return np.sum(out ** 2) + np.sum(a_last)

def batchnorm_dict_cache(x, gamma):
    mu = np.mean(x, axis=0)
    xmu = x - mu
    sq = xmu ** 2
    var = 1.0 / x.shape[0] * np.sum(sq, axis=0)
    sqrtvar = np.sqrt(var + 1e-5)
    ivar = 1.0 / sqrtvar
    xhat = xmu * ivar
    out = gamma * xhat
    cache = {"xhat": xhat, "gamma": gamma, "xmu": xmu, "ivar": ivar}
    return np.sum(out * np.arange(out.size).reshape(out.shape)) + np.sum(cache["ivar"])

def running_stats_in_param(x, bn_param):
    momentum = bn_param.get("momentum", 0.9)
    rm = bn_param.get("running_mean", np.zeros(x.shape[1]))
    mu = x.mean(axis=0)
    rm = momentum * rm + (1 - momentum) * mu
    bn_param["running_mean"] = rm
    return np.sum(((x - mu) / x.std(axis=0)) ** 3)

def scores_clip(W, X):
    s = X @ W
    s = np.clip(s, -1.0, 1.0)
    return np.sum(s ** 2 * (s > 0))

def svm_loops_dw(W, X, y):
    """The hand-written dW of the SVM as a loss (norm)."""
    dW = np.zeros(W.shape)
    for i in range(X.shape[0]):
        scores = X[i].dot(W)
        for j in range(W.shape[1]):
            if j == y[i]:
                continue
            margin = scores[j] - scores[y[i]] + 1
            if margin > 0:
                dW[:, j] += X[i] * margin
                dW[:, y[i]] -= X[i] * margin
    return np.sum(dW ** 2)

def embed_add_at_grad(dout, x):
    dW = np.zeros((5, dout.shape[-1]))
    np.add.at(dW, x, dout)
    return np.sum(dW ** 2)

def seq_mask_loss(x, y, mask):
    N, T, V = x.shape
    x_flat = x.reshape(N * T, V)
    probs = np.exp(x_flat - np.max(x_flat, axis=1, keepdims=True))
    probs /= np.sum(probs, axis=1, keepdims=True)
    return -np.sum(mask.reshape(-1) * np.log(probs[np.arange(N * T), y.reshape(-1)])) / N


_r = np.random.default_rng(5)
X = _r.standard_normal((4, 3))
Y = np.array([0, 2, 1, 2])
W = 0.5 * _r.standard_normal((3, 3))
IDX = np.array([[0, 3, 3], [4, 1, 0]])

PROBES = {
    "relu_inplace_net": (relu_inplace_net, (W, X, Y, 0.5 * _r.standard_normal((3, 3))), True),
    "leaky_inplace": (leaky_inplace, (X,), True),
    "inverted_dropout": (inverted_dropout, (X,), True),
    "dropout_inplace": (dropout_inplace, (X, _r.random((4, 3))), True),
    "hand_training_rebind": (hand_training_rebind, (W, X, Y), True),
    "layer_list_cache": (layer_list_cache, (W, X, W.T.copy()), True),
    "batchnorm_dict_cache": (batchnorm_dict_cache, (X, np.array([1.0, 0.5, 2.0])), True),
    "scores_clip": (scores_clip, (W, X), True),
    "svm_loops_dw": (svm_loops_dw, (W, X, Y), True),
    "embed_add_at_grad": (embed_add_at_grad, (_r.standard_normal((2, 3, 4)), IDX), True),
    "running_stats_in_param": (running_stats_in_param, (X, {"momentum": 0.8}), True),
    "seq_mask_loss": (seq_mask_loss, (_r.standard_normal((2, 3, 4)), IDX % 4,
                                      np.array([[1, 1, 0], [1, 0, 0]])), True),
}

test_probe, test_float32 = probe_tests(PROBES)

# Refused, with a message naming the line and a fix:
# * `for k in params: params[k] -= lr * grads[k]`: the loop iterates over the dict it
#   changes (only values change, so Python allows it); PB106 with the copy fix;
REFUSED = {
    "hand_training": (hand_training, (W, X, Y), ("PB106", "params[k] -= lr * grads[k]",
                                                 "`l[i] = l[i] + v`")),
}

test_refused = refusal_test(REFUSED)
