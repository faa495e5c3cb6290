"""Probe: stateful library objects written as filterpy and ML-from-scratch write them.

A Kalman filter class keeping ``x``, ``P``, ``F``, ``H``, ``Q``, ``R`` on the object, set by
the caller after construction, whose ``update`` stores ``self.y``, ``self.S``, ``self.K`` and
``self.log_likelihood`` (attributes ``__init__`` never stores); an estimator whose ``fit``
stores its weights and a loss history and returns ``self`` (``Model(...).fit(X, y)``), with
loss and regularizer objects kept on it; an activation table; an optimizer object keeping
its velocity. Each differentiated with respect to its first argument against central
differences (probe_harness.py).
"""

import numpy as np
from probe_harness import probe_tests, refusal_test


class KalmanFilter:
    def __init__(self, dim_x, dim_z):
        self.dim_x = dim_x
        self.dim_z = dim_z
        self.x = np.zeros((dim_x, 1))
        self.P = np.eye(dim_x)
        self.Q = np.eye(dim_x)
        self.F = np.eye(dim_x)
        self.H = np.zeros((dim_z, dim_x))
        self.R = np.eye(dim_z)
        self._I = np.eye(dim_x)

    def predict(self):
        self.x = np.dot(self.F, self.x)
        self.P = self.F @ self.P @ self.F.T + self.Q

    def update(self, z):
        self.y = z - np.dot(self.H, self.x)
        PHT = np.dot(self.P, self.H.T)
        self.S = np.dot(self.H, PHT) + self.R
        self.SI = np.linalg.inv(self.S)
        self.K = np.dot(PHT, self.SI)
        self.x = self.x + np.dot(self.K, self.y)
        I_KH = self._I - np.dot(self.K, self.H)
        self.P = np.dot(np.dot(I_KH, self.P), I_KH.T) + np.dot(np.dot(self.K, self.R), self.K.T)
        self.log_likelihood = -0.5 * (self.y.T @ self.SI @ self.y).item() - 0.5 * np.log(
            np.linalg.det(2 * np.pi * self.S))


def kf_loglik(q, zs):
    kf = KalmanFilter(dim_x=2, dim_z=1)
    kf.x = np.array([[0.0], [1.0]])
    kf.F = np.array([[1.0, 0.1], [0.0, 1.0]])
    kf.H = np.array([[1.0, 0.0]])
    kf.Q = q * np.array([[0.25e-4, 0.5e-3], [0.5e-3, 1e-2]])
    kf.R *= 0.5
    total = 0.0
    for z in zs:
        kf.predict()
        kf.update(z)
        total += kf.log_likelihood
    return total


def kf_batch(x0, zs):
    kf = KalmanFilter(2, 1)
    kf.x = x0.reshape(2, 1)
    kf.F = np.array([[1.0, 0.1], [0.0, 1.0]])
    kf.H = np.array([[1.0, 0.0]])
    xs = []
    for z in zs:
        kf.predict()
        kf.update(z)
        xs.append(kf.x.copy())
    return np.sum(np.array(xs) ** 2)


class MSE:
    def __call__(self, y, p):
        return np.mean((y - p) ** 2)

    def gradient(self, y, p):
        return -2 * (y - p) / y.size


class L2:
    def __init__(self, alpha):
        self.alpha = alpha

    def __call__(self, w):
        return self.alpha * 0.5 * w @ w

    def grad(self, w):
        return self.alpha * w


class LinReg:
    def __init__(self, lr=0.05, n_iter=3, reg=None):
        self.lr = lr
        self.n_iter = n_iter
        self.regularization = reg if reg is not None else L2(0.0)
        self.loss = MSE()

    def fit(self, X, y):
        self.w = np.zeros(X.shape[1])
        self.b = 0.0
        self.history = []
        for _ in range(self.n_iter):
            p = X @ self.w + self.b
            self.history.append(self.loss(y, p) + self.regularization(self.w))
            g = self.loss.gradient(y, p)
            self.w = self.w - self.lr * (X.T @ g + self.regularization.grad(self.w))
            self.b -= self.lr * np.sum(g)
        return self

    def predict(self, X):
        return X @ self.w + self.b


def chained_fit(X, y):
    model = LinReg(reg=L2(0.1)).fit(X, y)
    return np.sum(model.predict(X) ** 2) + model.history[-1]


class Layer:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def forward_pass(self, X):
        self.layer_input = X
        return X @ self.W + self.b

    def backward_pass(self, grad):
        return grad @ self.W.T


class ReLU:
    def __call__(self, x):
        return np.where(x >= 0, x, 0)


class Activation:
    def __init__(self, fn):
        self.activation_func = fn

    def forward_pass(self, X):
        self.layer_input = X
        return self.activation_func(X)


class Net:
    def __init__(self, layers):
        self.layers = layers

    def forward(self, X):
        out = X
        for layer in self.layers:
            out = layer.forward_pass(out)
        return out


def given_layers(W1, X, W2):
    net = Net([Layer(W1, 0.1), Activation(ReLU()), Layer(W2, 0.0)])
    return np.sum(net.forward(X) ** 2)


ACTS = {"relu": ReLU(), "tanh": np.tanh}


def activation_table(W, X):
    act = ACTS["tanh"]
    return np.sum(act(X @ W)) + np.sum(ACTS["relu"](X @ W))


class Momentum:
    def __init__(self, lr=0.1, beta=0.9):
        self.lr = lr
        self.beta = beta
        self.v = None

    def update(self, w, g):
        if self.v is None:
            self.v = np.zeros_like(w)
        self.v = self.beta * self.v + (1 - self.beta) * g
        return w - self.lr * self.v


def unrolled_momentum(w0, X, y):
    opt = Momentum()
    w = w0
    for _ in range(3):
        g = 2 * X.T @ (X @ w - y) / len(y)
        w = opt.update(w, g)
    return np.sum((X @ w - y) ** 2)


_r = np.random.default_rng(9)
ZS = np.array([[0.1], [0.25], [0.28], [0.45]])
X = _r.standard_normal((5, 3))
Y = _r.standard_normal(5)
W1 = 0.5 * _r.standard_normal((3, 4))
W2 = 0.5 * _r.standard_normal((4, 2))

PROBES = {
    "kf_loglik": (kf_loglik, (0.7, ZS), False),
    "kf_batch": (kf_batch, (np.array([0.0, 1.0]), ZS), False),
    "chained_fit": (chained_fit, (X, Y), False),
    "activation_table": (activation_table, (W1, X), False),
    "unrolled_momentum": (unrolled_momentum, (np.array([0.1, 0.2, -0.3]), X, Y), True),
}

test_probe, test_float32 = probe_tests(PROBES, quick=3)

# Refused, with the line and a fix that works:
# * a layer's forward_pass caching its input (`self.layer_input = X`) on an object held in
#   the network's list, in a method that also calls a callable kept on the object (which
#   might be a bound method reading the cache back): PB107 at the store, the fix being to
#   keep the value in a local (the cache is never read here).
REFUSED = {
    "given_layers": (given_layers, (W1, X, W2),
                     ("PB107", "'self.layer_input' would store a differentiated value",
                      "Fix: keep the value in a local variable")),
}

test_refused = refusal_test(REFUSED)
