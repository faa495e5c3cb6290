"""Probe: machine learning from scratch and code organised as projects organise it.

MLPs whose layers sit in lists (objects with ``__call__``, ``(W, b)`` tuples, a flat
parameter vector unflattened by ``np.split`` and ``reshape``), softmax cross-entropy with
fancy-indexed labels, batch and layer norm, attention with ``einsum``, an RNN keeping its
hidden states in a list, an LSTM with ``np.split`` gates, dropout with a fixed mask, a
1-D convolution layer by loops; dataclasses of parameters, config dicts, ``@staticmethod``
and ``@classmethod`` helpers, methods calling methods, a helper module imported by name,
loss functions chosen from a dict by a string. Differentiated against central differences
(probe_harness.py).
"""

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import s31_layers as L
from probe_harness import probe_tests, refusal_test
from s31_layers import Activation, Linear, log_softmax, relu, softmax

HIDDEN = 4
CONFIG = {"act": "tanh", "l2": 1e-3, "layers": [3, 4, 2]}
ACTS = {"tanh": np.tanh, "relu": relu, "leaky": L.leaky, "softplus": lambda z: np.logaddexp(0, z)}


# -- MLPs -------------------------------------------------------------------------------------

def mlp_tuples(W1, X, y, W2, b1, b2):
    layers = [(W1, b1), (W2, b2)]
    h = X
    for i, (W, b) in enumerate(layers):
        h = h @ W + b
        if i < len(layers) - 1:
            h = np.tanh(h)
    return np.mean((h[:, 0] - y) ** 2)


def unflatten(theta, sizes):
    shapes = [(a, b) for a, b in zip(sizes[:-1], sizes[1:], strict=True)]
    params = []
    start = 0
    for a, b in shapes:
        W = theta[start:start + a * b].reshape(a, b)
        start += a * b
        params.append((W, theta[start:start + b]))
        start += b
    return params


def mlp_flat(theta, X, labels):
    h = X
    params = unflatten(theta, CONFIG["layers"])
    act = ACTS[CONFIG["act"]]
    for W, b in params[:-1]:
        h = act(h @ W + b)
    W, b = params[-1]
    logits = h @ W + b
    logp = log_softmax(logits)
    nll = -np.mean(logp[np.arange(len(labels)), labels])
    return nll + CONFIG["l2"] * sum(np.sum(W ** 2) for W, _ in params)


def mlp_split(theta, X, labels):
    W1, b1, W2, b2 = np.split(theta, [12, 16, 24])
    h = L.leaky(X @ W1.reshape(3, 4) + b1)
    p = softmax(h @ W2.reshape(4, 2) + b2)
    onehot = np.eye(2)[labels]
    return -np.sum(onehot * np.log(p + 1e-12)) / len(X)


class MLP:
    def __init__(self, weights, act="tanh"):
        self.layers = []
        for k, W in enumerate(weights):
            self.layers.append(Linear(W, np.full(W.shape[1], 0.1 * k)))
            if k < len(weights) - 1:
                self.layers.append(Activation(ACTS[act]))

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def loss(self, X, y):
        return np.mean((self(X)[:, 0] - y) ** 2)


def mlp_objects(W1, X, y, W2):
    return MLP([W1, W2], act="softplus").loss(X, y)


def set_then_call(W1, X, y, W2):
    """The parameters stored on a model built inside, then its loss."""
    model = MLP([np.zeros_like(W1), W2])
    model.layers[0].W = W1
    return model.loss(X, y)


# -- normalisation, attention, recurrent ------------------------------------------------------

def batch_norm(X, gamma, beta, eps=1e-5):
    mu = X.mean(axis=0)
    var = ((X - mu) ** 2).mean(axis=0)
    xhat = (X - mu) / np.sqrt(var + eps)
    out = gamma * xhat + beta
    return np.sum(np.tanh(out) * np.arange(out.size).reshape(out.shape))


class BatchNorm:
    def __init__(self, n, momentum=0.9):
        self.gamma = np.ones(n)
        self.beta = np.zeros(n)
        self.running_mean = np.zeros(n)
        self.momentum = momentum

    def forward(self, X, training=True):
        if training:
            mu = X.mean(axis=0)
            self.running_mean = self.momentum * self.running_mean + (1 - self.momentum) * mu
        else:
            mu = self.running_mean
        return self.gamma * (X - mu) / np.sqrt(X.var(axis=0) + 1e-5) + self.beta


def batch_norm_object(X):
    bn = BatchNorm(X.shape[1])
    return np.sum(bn.forward(X) ** 3)


def layer_norm_block(h, gamma):
    return np.sum(L.layer_norm(np.tanh(h), gamma, 0.1) ** 2)


def attention(Wq, X, Wk, Wv):
    Q = X @ Wq
    K = X @ Wk
    V = X @ Wv
    scores = np.einsum("id,jd->ij", Q, K) / np.sqrt(Q.shape[-1])
    A = softmax(scores, axis=-1)
    out = np.einsum("ij,jd->id", A, V)
    return np.sum(out ** 2)


def multihead(X, Wqkv, heads=2):
    n, d = X.shape
    qkv = X @ Wqkv
    q, k, v = np.split(qkv, 3, axis=-1)
    q = q.reshape(n, heads, -1).transpose(1, 0, 2)
    k = k.reshape(n, heads, -1).transpose(1, 0, 2)
    v = v.reshape(n, heads, -1).transpose(1, 0, 2)
    att = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1]))
    mask = np.triu(np.ones((n, n)), 1).astype(bool)
    att = np.where(mask, 0.0, att)
    out = (att @ v).transpose(1, 0, 2).reshape(n, -1)
    return np.sum(np.sin(out))


def rnn_states(Wh, xs, Wx):
    h = np.zeros(Wh.shape[0])
    states = []
    for x in xs:
        h = np.tanh(Wh @ h + Wx @ x)
        states.append(h)
    H = np.stack(states)
    return np.sum(H[-1] ** 2) + 0.1 * np.sum(H.mean(axis=0))


def rnn_states_indexed(Wh, xs, Wx):
    hs = [np.zeros(Wh.shape[0])]
    for t in range(len(xs)):
        hs.append(np.tanh(Wh @ hs[t] + Wx @ xs[t]))
    return sum(np.dot(h, h) for h in hs[1:])


def lstm(Wg, xs):
    n = Wg.shape[0] // 4
    h = np.zeros(n)
    c = np.zeros(n)
    outs = []
    for x in xs:
        z = Wg @ np.concatenate([h, x])
        i, f, o, g = np.split(z, 4)
        sig = lambda a: 1 / (1 + np.exp(-a))  # noqa: E731
        c = sig(f) * c + sig(i) * np.tanh(g)
        h = sig(o) * np.tanh(c)
        outs.append(h.copy())
    return np.sum(np.array(outs) ** 2)


def dropout_fixed(W, X):
    rng = np.random.default_rng(0)
    mask = rng.random((X.shape[0], W.shape[1])) > 0.3
    h = relu(X @ W + 0.5) * mask / 0.7
    return np.sum(h ** 2)


def conv1d_layer(kernels, x):
    k = kernels.shape[1]
    out = np.zeros((kernels.shape[0], len(x) - k + 1))
    for c in range(kernels.shape[0]):
        for t in range(out.shape[1]):
            out[c, t] = np.dot(kernels[c], x[t:t + k])
    return np.sum(np.tanh(out).max(axis=1))


# -- code organisation ------------------------------------------------------------------------

@dataclass
class GPParams:
    log_ell: float
    log_sf: float
    log_sn: float = -2.0

    @property
    def ell(self):
        return np.exp(self.log_ell)

    @classmethod
    def from_vector(cls, v):
        return cls(v[0], v[1], v[2])

    @staticmethod
    def sqdist(a, b):
        return (a[:, None] - b[None, :]) ** 2

    def kernel(self, a, b):
        return np.exp(2 * self.log_sf) * np.exp(-0.5 * self.sqdist(a, b) / self.ell ** 2)

    def nll(self, x, y):
        K = self.kernel(x, x) + np.exp(2 * self.log_sn) * np.eye(len(x))
        Lc = np.linalg.cholesky(K)
        alpha = np.linalg.solve(Lc.T, np.linalg.solve(Lc, y))
        return 0.5 * y @ alpha + np.sum(np.log(np.diag(Lc)))


def gp_from_vector(v, x, y):
    return GPParams.from_vector(v).nll(x, y)


class Params(NamedTuple):
    w: np.ndarray
    b: float


def namedtuple_params(w, X, y):
    p = Params(w, 0.3)
    p = Params(p.w * 2, b=p.b * 2)
    w, b = p
    return np.mean(np.logaddexp(0, -y * (X @ w + p.b))) + b * np.sum(p.w)


def namedtuple_replace(w, X, y):
    p = Params(w, 0.3)
    p = p._replace(b=p.b * 2)
    return np.mean(np.logaddexp(0, -y * (X @ p.w + p.b)))


def mse(pred, y):
    return np.mean((pred - y) ** 2)


def mae_smooth(pred, y):
    return np.mean(np.sqrt((pred - y) ** 2 + 1e-3))


LOSSES = {"mse": mse, "mae": mae_smooth}


class Regressor:
    def __init__(self, loss="mse", alpha=0.01):
        self.loss_fn = LOSSES[loss]
        self.alpha = alpha

    def predict(self, w, X):
        return X @ w

    def penalty(self, w):
        return self.alpha * np.sum(w ** 2)

    def objective(self, w, X, y):
        return self.loss_fn(self.predict(w, X), y) + self.penalty(w)


REG = Regressor("mae")


def regressor_method(w, X, y):
    return REG.objective(w, X, y)


def bound_method_as_function(w):
    return REG.penalty(w) + Regressor(loss="mse").objective(w, XR, YR)


def config_driven(w, X, cfg=None):
    cfg = cfg or {"act": "leaky", "scale": 2.0}
    cfg = {**cfg, "shift": 0.5}
    act = ACTS[cfg["act"]]
    return np.sum(act(cfg["scale"] * X @ w - cfg["shift"]) ** 2)


# -- objects as simulation code holds them -----------------------------------------------

@dataclass
class Particle:
    x: float
    v: float
    m: float = 1.0

    def kinetic(self):
        return 0.5 * self.m * self.v ** 2


def particles_list(x):
    ps = [Particle(x[i], 0.0, 1.0 + i) for i in range(len(x))]
    for _ in range(5):
        ps = [Particle(p.x + 0.1 * p.v, p.v - 0.1 * p.x / p.m, p.m) for p in ps]
    return sum(p.kinetic() + 0.5 * p.x ** 2 for p in ps)


class Sim:
    def __init__(self, k, dt=0.05):
        self.k = k
        self.dt = dt

    def force(self, x):
        return -self.k * x - 0.1 * x ** 3

    def step(self, x, v):
        a = self.force(x)
        v = v + self.dt * a
        return x + self.dt * v, v

    def run(self, x0, n=20):
        x, v = x0, np.zeros_like(x0)
        for _ in range(n):
            x, v = self.step(x, v)
        return x


def sim_methods(x0):
    return np.sum(Sim(2.0).run(x0) ** 2)


def sim_param(k):
    return np.sum(Sim(k).run(np.array([0.5, -0.3])) ** 2)


class Mutating:
    def __init__(self):
        self.t = 0.0
        self.n = 0

    def advance(self, x, dt):
        self.t = self.t + dt
        self.n += 1
        return x * np.exp(-dt)


def counters_on_self(x):
    m = Mutating()
    for _ in range(4):
        x = m.advance(x, 0.1)
    return np.sum(x ** 2) * m.n


NESTED = {"model": {"layers": [3, 2], "act": "tanh"}, "train": {"l2": 0.01}}


def nested_config(w, X):
    cfg = NESTED
    act = getattr(np, cfg["model"]["act"])
    h = act(X @ w.reshape(cfg["model"]["layers"]))
    return np.sum(h ** 2) + cfg["train"]["l2"] * np.sum(w ** 2)


class Quadratic:
    def __init__(self, A, b):
        self.A, self.b = A, b

    @property
    def n(self):
        return len(self.b)

    def __call__(self, x):
        return 0.5 * x @ self.A @ x - self.b @ x


def solve_by_gd(b):
    A = np.array([[3.0, 0.5], [0.5, 2.0]])
    q = Quadratic(A, b)
    x = np.zeros(q.n)
    for _ in range(30):
        x = x - 0.2 * (q.A @ x - q.b)
    return q(x)


class Base:
    scale = 1.0
    def f(self, x):
        return self.scale * np.sum(self.g(x))
    def g(self, x):
        return x ** 2


class Child(Base):
    scale = 2.0
    def g(self, x):
        return np.sin(x) + super().g(x)


def inheritance_super(x):
    return Child().f(x) + Base().f(x)


def object_in_dict(x):
    models = {"a": Quadratic(np.eye(4), x), "b": Quadratic(2 * np.eye(4), x ** 2)}
    return sum(m(x) for m in models.values())


@dataclass
class Layer:
    W: np.ndarray
    b: np.ndarray = field(default_factory=lambda: np.zeros(2))

    def __call__(self, x):
        return np.tanh(x @ self.W + self.b)


def dataclass_layers(W, X):
    layers = [Layer(W), Layer(W.T @ W * 0.5)]
    h = X
    for layer in layers:
        h = layer(h)
    return np.sum(h ** 2)


class Integrator:
    @staticmethod
    def rk4(f, y, h):
        k1 = f(y)
        k2 = f(y + 0.5 * h * k1)
        k3 = f(y + 0.5 * h * k2)
        k4 = f(y + h * k3)
        return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def rk4_static(p):
    def rhs(y):
        return np.array([y[1], -p[0] * y[0] - p[1] * y[1]])
    y = np.array([1.0, 0.0])
    for _ in range(10):
        y = Integrator.rk4(rhs, y, 0.1)
    return y[0] ** 2 + y[1]


class Model:
    def __init__(self, theta):
        self.theta = theta
        self.cache = {}

    def predict(self, X):
        z = X @ self.theta
        self.cache["z"] = z
        return np.tanh(z)


def cache_not_read(theta, X):
    m = Model(theta)
    return np.sum(m.predict(X) ** 2)


def cache_read(theta, X):
    m = Model(theta)
    y = m.predict(X)
    return np.sum(y ** 2) + np.sum(m.cache["z"])


_r = np.random.default_rng(310)
XR = _r.standard_normal((6, 3))
YR = _r.standard_normal(6)
LAB = np.array([0, 1, 1, 0, 1, 0])
W1 = 0.5 * _r.standard_normal((3, 4))
W2 = 0.5 * _r.standard_normal((4, 2))
THETA = 0.4 * _r.standard_normal(3 * 4 + 4 + 4 * 2 + 2)
SEQ = _r.standard_normal((5, 3))
WH = 0.4 * _r.standard_normal((4, 4))
WX = 0.4 * _r.standard_normal((4, 3))
WG = 0.3 * _r.standard_normal((16, 7))
XG = np.linspace(0, 2, 6)
YG = np.sin(3 * XG)
X4 = np.array([0.3, -0.7, 1.2, 0.5])

PROBES = {
    "mlp_tuples": (mlp_tuples, (W1, XR, YR, W2, np.zeros(4), np.zeros(2)), True),
    "mlp_tuples_bias": (lambda b1, X, y: mlp_tuples(W1, X, y, W2, b1, 0.0),
                        (np.array([0.1, -0.2, 0.3, 0.0]), XR, YR), True),
    "mlp_flat": (mlp_flat, (THETA, XR, LAB), True),
    "mlp_split": (mlp_split, (THETA[:26], XR, LAB), True),
    "mlp_objects": (mlp_objects, (W1, XR, YR, W2), True),
    "batch_norm": (batch_norm, (XR, np.array([1.0, 0.5, 2.0]), 0.1), True),
    "layer_norm_block": (layer_norm_block, (XR, np.array([1.0, 0.5, 2.0])), True),
    "attention": (attention, (W1, XR, W1[::-1], W1 * 0.5), True),
    "multihead": (multihead, (_r.standard_normal((4, 4)),
                              0.5 * _r.standard_normal((4, 12))), True),
    "rnn_states": (rnn_states, (WH, SEQ, WX), True),
    "rnn_states_indexed": (rnn_states_indexed, (WH, SEQ, WX), True),
    "lstm": (lstm, (WG, SEQ), True),
    "dropout_fixed": (dropout_fixed, (W1, XR), True),
    "conv1d_layer": (conv1d_layer, (0.5 * _r.standard_normal((2, 3)), _r.standard_normal(9)),
                     True),
    "gp_from_vector": (gp_from_vector, (np.array([-0.5, 0.1, -1.5]), XG, YG), True),
    "namedtuple_params": (namedtuple_params, (np.array([0.3, -0.2, 0.5]), XR,
                                              np.sign(YR)), True),
    "regressor_method": (regressor_method, (np.array([0.3, -0.2, 0.5]), XR, YR), True),
    "bound_method_as_function": (bound_method_as_function, (np.array([0.3, -0.2, 0.5]),), True),
    "config_driven": (config_driven, (np.array([0.3, -0.2, 0.5]), XR), True),
    "particles_list": (particles_list, (X4,), True),
    "sim_methods": (sim_methods, (np.array([0.5, -0.3, 0.2]),), True),
    "sim_param": (sim_param, (2.0,), True),
    "counters_on_self": (counters_on_self, (X4,), True),
    "nested_config": (nested_config, (0.5 * _r.standard_normal(6), XR[:5]), True),
    "solve_by_gd": (solve_by_gd, (np.array([1.0, -0.5]),), True),
    "inheritance_super": (inheritance_super, (X4,), True),
    "object_in_dict": (object_in_dict, (X4,), True),
    "dataclass_layers": (dataclass_layers, (0.5 * _r.standard_normal((2, 2)),
                                            _r.standard_normal((4, 2))), True),
    "rk4_static": (rk4_static, (np.array([2.0, 0.3]),), True),
    # state kept on an object and never read back in the call: runs once, as in the primal
    "batch_norm_object": (batch_norm_object, (XR,), True),
    "cache_not_read": (cache_not_read, (np.array([0.2, -0.1, 0.4]), XR), True),
    # refused until stop 33 (PB502)
    "namedtuple_replace": (namedtuple_replace, (np.array([0.3, -0.2, 0.5]), XR, np.sign(YR)), True),
}

test_probe, test_float32 = probe_tests(PROBES)

# Refused, each with a message naming the line and a fix. A differentiated value stored on an
# object and read back in the call (``m.cache["z"]`` after ``predict``) is refused, and a
# named tuple's ``_replace`` keyword is refused even when the field it is given is a constant
# read from a differentiated tuple (activity is per variable).
REFUSED = {
    "set_then_call": (set_then_call, (W1, XR, YR, W2), ("PB107", "model.layers[0].W")),
    "cache_read": (cache_read, (np.array([0.2, -0.1, 0.4]), XR), ("PB107", "'cache'")),
}

test_refused = refusal_test(REFUSED)
