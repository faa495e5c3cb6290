"""Textbook and optimiser code for the s32 course-style probes (``corr2d`` and ``pool2d``
over preallocated outputs, a softmax regression and an RNN over a parameter list, a network
of column vectors, SGD with momentum and Adam keeping their state in a config dict),
imported by name as a course's own module would be."""

import numpy as np


def corr2d(X, K):
    h, w = K.shape
    Y = np.zeros((X.shape[0] - h + 1, X.shape[1] - w + 1))
    for i in range(Y.shape[0]):
        for j in range(Y.shape[1]):
            Y[i, j] = (X[i:i + h, j:j + w] * K).sum()
    return Y


def corr2d_loss(K, X):
    return np.sum((corr2d(X, K) - 1.0) ** 2)


def pool2d(X, pool_size, mode="max"):
    p_h, p_w = pool_size
    Y = np.zeros((X.shape[0] - p_h + 1, X.shape[1] - p_w + 1))
    for i in range(Y.shape[0]):
        for j in range(Y.shape[1]):
            if mode == "max":
                Y[i, j] = X[i:i + p_h, j:j + p_w].max()
            elif mode == "avg":
                Y[i, j] = X[i:i + p_h, j:j + p_w].mean()
    return Y


def pool2d_loss(X):
    return np.sum(pool2d(X, (2, 2)) ** 2) + np.sum(pool2d(X, (2, 2), "avg") ** 3)


def d2l_softmax(X):
    X_exp = np.exp(X)
    partition = X_exp.sum(1, keepdims=True)
    return X_exp / partition


def d2l_cross_entropy(y_hat, y):
    return -np.log(y_hat[range(len(y_hat)), y])


def d2l_net(W, b, X):
    return d2l_softmax(np.dot(X.reshape((-1, W.shape[0])), W) + b)


def d2l_loss(W, b, X, y):
    return d2l_cross_entropy(d2l_net(W, b, X), y).mean()


def d2l_rnn(params, inputs, state):
    W_xh, W_hh, b_h, W_hq, b_q = params
    H, = state
    outputs = []
    for X in inputs:
        H = np.tanh(np.dot(X, W_xh) + np.dot(H, W_hh) + b_h)
        Y = np.dot(H, W_hq) + b_q
        outputs.append(Y)
    return np.concatenate(outputs, axis=0), (H,)


def d2l_rnn_loss(W_hh, inputs, W_xh, W_hq):
    params = [W_xh, W_hh, np.zeros(W_hh.shape[0]), W_hq, np.zeros(W_hq.shape[1])]
    state = (np.zeros((inputs.shape[1], W_hh.shape[0])),)
    Y, (H,) = d2l_rnn(params, inputs, state)
    return np.sum(Y ** 2) + np.sum(H)


def nielsen_sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


class Network:
    def __init__(self, weights, biases):
        self.num_layers = len(weights) + 1
        self.weights = weights
        self.biases = biases

    def feedforward(self, a):
        for b, w in zip(self.biases, self.weights):  # noqa: B905
            a = nielsen_sigmoid(np.dot(w, a) + b)
        return a


def nielsen_cost(w0, x, y, w1):
    net = Network([w0, w1], [np.full((w0.shape[0], 1), 0.1), np.zeros((w1.shape[0], 1))])
    a = net.feedforward(x)
    return 0.5 * np.linalg.norm(a - y) ** 2


def sgd_momentum(w, dw, config=None):
    if config is None:
        config = {}
    config.setdefault("learning_rate", 1e-2)
    config.setdefault("momentum", 0.9)
    v = config.get("velocity", np.zeros_like(w))
    v = config["momentum"] * v - config["learning_rate"] * dw
    next_w = w + v
    config["velocity"] = v
    return next_w, config


def adam(w, dw, config=None):
    if config is None:
        config = {}
    config.setdefault("learning_rate", 1e-1)
    config.setdefault("beta1", 0.9)
    config.setdefault("beta2", 0.999)
    config.setdefault("epsilon", 1e-8)
    config.setdefault("m", np.zeros_like(w))
    config.setdefault("v", np.zeros_like(w))
    config.setdefault("t", 0)
    config["t"] += 1
    config["m"] = config["beta1"] * config["m"] + (1 - config["beta1"]) * dw
    config["v"] = config["beta2"] * config["v"] + (1 - config["beta2"]) * (dw ** 2)
    mb = config["m"] / (1 - config["beta1"] ** config["t"])
    vb = config["v"] / (1 - config["beta2"] ** config["t"])
    next_w = w - config["learning_rate"] * mb / (np.sqrt(vb) + config["epsilon"])
    return next_w, config


def unrolled_sgd(w):
    config = None
    for _ in range(3):
        dw = 2 * w + np.sin(w)
        w, config = sgd_momentum(w, dw, config)
    return np.sum(w ** 2)


def unrolled_adam(w):
    config = {"learning_rate": 0.05}
    for _ in range(2):
        dw = w ** 3 - w
        w, config = adam(w, dw, config)
    return np.sum(np.cos(w))
