"""Probe: small machine-learning code in the styles tutorials and research scripts use.

Classes with ``__call__`` and parameters in dicts and lists, dataclass configurations,
methods calling methods, ``functools.partial``, ``*args``/``**kwargs`` forwarding,
comprehensions with conditions, ``enumerate``/``zip``/``reversed`` loops, early returns,
``while`` loops with a counter on ``self``, and decorators (with and without
``functools.wraps``). Gradients (and for some jvp, hvp and the Hessian) are checked
against central differences (probe_harness.py).
"""

import functools
from dataclasses import dataclass

import numpy as np
from probe_harness import check_probe, probe_tests


def relu(z):
    return np.maximum(z, 0.0)


def softplus(z):
    return np.logaddexp(0.0, z)


class Linear:
    def __init__(self, weight, bias):
        self.weight = weight
        self.bias = bias

    def __call__(self, x):
        return x @ self.weight + self.bias


class MLP:
    def __init__(self, params, act=np.tanh):
        self.layers = [Linear(w, b) for w, b in params]
        self.act = act

    def __call__(self, x):
        for layer in self.layers[:-1]:
            x = self.act(layer(x))
        return self.layers[-1](x)


def mlp_loss(w0, b0, w1, b1, x, y):
    net = MLP([(w0, b0), (w1, b1)])
    return np.mean((net(x)[:, 0] - y) ** 2)


def dict_params_forward(params, x):
    h = softplus(x @ params["W1"] + params["b1"])
    return h @ params["W2"] + params["b2"]


def dict_params_loss(params, x, y):
    return np.sum((dict_params_forward(params, x) - y) ** 2)


def list_of_layers_loss(weights, x):
    # weights: a list of matrices, applied with enumerate and a last-layer test
    h = x
    for i, w in enumerate(weights):
        h = h @ w
        if i < len(weights) - 1:
            h = relu(h) + 0.1 * h
    return np.sum(h ** 2)


def list_first(w_first, rest, x):
    return list_of_layers_loss([w_first] + rest, x)


@dataclass
class TrainConfig:
    l2: float = 0.01
    temperature: float = 1.5
    use_bias: bool = True


def config_loss(w, X, labels, cfg):
    logits = X @ w / cfg.temperature
    if cfg.use_bias:
        logits = logits + 0.2
    logp = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    nll = -np.mean(logp[np.arange(len(labels)), labels])
    return nll + cfg.l2 * np.sum(w ** 2)


class Model:
    def __init__(self, w):
        self.w = w

    def features(self, x):
        return np.stack([x, x ** 2, np.sin(x)], axis=-1)

    def predict(self, x):
        return self.features(x) @ self.w

    def residuals(self, x, y):
        return self.predict(x) - y

    def loss(self, x, y):
        r = self.residuals(x, y)
        return 0.5 * np.dot(r, r)


def method_chain_loss(w, x, y):
    return Model(w).loss(x, y)


def scaled_error(pred, target, scale=1.0, power=2):
    return scale * np.sum(np.abs(pred - target) ** power)


def partial_loss(w, x, y):
    err = functools.partial(scaled_error, scale=0.5, power=2)
    return err(x @ w, y)


def forward_star(fn, *args, **kwargs):
    return fn(*args, **kwargs)


def star_forwarding(w, x, y):
    return forward_star(scaled_error, x @ w, y, scale=2.0) + forward_star(np.sum, w ** 2)


def comprehension_filtered(theta, xs):
    terms = [np.sin(theta * x) for x in xs if x > 0]
    pos = sum(t ** 2 for t in terms)
    neg = sum([theta * x for x in xs if x <= 0])
    return pos + neg ** 2


def dict_comprehension(w, names):
    scaled = {n: w[i] * (i + 1) for i, n in enumerate(names) if not n.startswith("_")}
    return sum(v ** 2 for v in scaled.values()) + np.prod(list(scaled.values()))


def zip_reversed_backprop(w, xs):
    # a reverse pass written by hand over zip(reversed(...), reversed(...))
    acts = []
    h = 1.0
    for wi, x in zip(w, xs, strict=True):
        h = np.tanh(wi * h + x)
        acts.append(h)
    total = 0.0
    for k, (a, wi) in enumerate(zip(reversed(acts), reversed(list(w)), strict=True)):
        total = total + (k + 1) * a * wi
    return total


def early_return(x, limit=2.0):
    s = np.sum(x ** 2)
    if s > limit:
        return np.sqrt(s)
    for v in x:
        if v < -5:
            return 0.0 * s
    return s


def early_return_big(x):
    return early_return(3.0 * x)


class Optimizer:
    def __init__(self, lr, max_steps=5):
        self.lr = lr
        self.max_steps = max_steps
        self.step_count = 0

    def grad_q(self, w, A, b):
        return A @ w - b

    def run(self, w, A, b):
        while self.step_count < self.max_steps:
            w = w - self.lr * self.grad_q(w, A, b)
            self.step_count += 1
        return w


def unrolled_descent(w0, A, b):
    opt = Optimizer(0.1)
    w = opt.run(w0, A, b)
    return 0.5 * w @ A @ w - b @ w


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


def doubled(fn):
    def inner(x):
        return 2.0 * fn(x)

    return inner


@logged
def wrapped_energy(x, k):
    return 0.5 * k * np.sum(x ** 2) + np.sum(np.cos(x))


@doubled
def doubled_energy(x):
    return np.sum(np.exp(-x ** 2))


def call_decorated(x, k):
    return wrapped_energy(x, k) + doubled_energy(x)


class Regularized:
    def __init__(self, base, penalties):
        self.base = base
        self.penalties = penalties

    def __call__(self, w, *data):
        total = self.base(w, *data)
        for weight, fn in self.penalties:
            total = total + weight * fn(w)
        return total


def l1_smooth(w):
    return np.sum(np.sqrt(w ** 2 + 1e-3))


def l2(w):
    return np.sum(w ** 2)


def regularized_objective(w, x, y):
    obj = Regularized(method_chain_loss, [(0.1, l1_smooth), (0.05, l2)])
    return obj(w, x, y)


class Adam:
    # one unrolled Adam run; the moments live in dicts keyed by parameter name
    def __init__(self, lr=0.05, b1=0.9, b2=0.99, eps=1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps

    def run(self, params, grad_fn, steps):
        m = {k: np.zeros_like(v) for k, v in params.items()}
        v = {k: np.zeros_like(p) for k, p in params.items()}
        for t in range(1, steps + 1):
            g = grad_fn(params)
            new = {}
            for k in params:
                m[k] = self.b1 * m[k] + (1 - self.b1) * g[k]
                v[k] = self.b2 * v[k] + (1 - self.b2) * g[k] ** 2
                mhat = m[k] / (1 - self.b1 ** t)
                vhat = v[k] / (1 - self.b2 ** t)
                new[k] = params[k] - self.lr * mhat / (np.sqrt(vhat) + self.eps)
            params = new
        return params


def quad_grad(p):
    return {"a": 2.0 * (p["a"] - 1.0), "b": 4.0 * (p["b"] + 0.5)}


def adam_unrolled(a0, b0):
    out = Adam().run({"a": a0, "b": b0}, quad_grad, 3)
    return np.sum(out["a"] ** 2) + np.sum(out["b"] ** 3)


class AdamRebuilt(Adam):
    # the same run, each step's parameters a new dict made by a comprehension
    def run(self, params, grad_fn, steps):
        m = {k: np.zeros_like(v) for k, v in params.items()}
        v = {k: np.zeros_like(p) for k, p in params.items()}
        for t in range(1, steps + 1):
            g = grad_fn(params)
            for k in params:
                m[k] = self.b1 * m[k] + (1 - self.b1) * g[k]
                v[k] = self.b2 * v[k] + (1 - self.b2) * g[k] ** 2
            params = {
                k: params[k] - self.lr * (m[k] / (1 - self.b1 ** t))
                / (np.sqrt(v[k] / (1 - self.b2 ** t)) + self.eps)
                for k in params
            }
        return params


def adam_rebuilt(a0, b0):
    out = AdamRebuilt().run({"a": a0, "b": b0}, quad_grad, 3)
    return np.sum(out["a"] ** 2) + np.sum(out["b"] ** 3)


class Ensemble:
    def __init__(self, members):
        self.members = members

    def __call__(self, x):
        preds = [m(x) for m in self.members]
        return sum(preds) / len(preds)


def ensemble_loss(w, x):
    ens = Ensemble([Linear(w, 0.0), Linear(2.0 * w, 1.0), Linear(w ** 2, -0.5)])
    return np.sum(np.tanh(ens(x)))


_g = np.random.default_rng(5)
X2 = _g.standard_normal((6, 2))
Y6 = _g.standard_normal(6)
W0 = 0.5 * _g.standard_normal((2, 3))
B0 = 0.1 * _g.standard_normal(3)
W1 = 0.5 * _g.standard_normal((3, 1))
B1 = np.array([0.05])
PARAMS = {"W1": W0, "b1": B0, "W2": W1[:, 0], "b2": 0.1}
XS = np.array([0.4, -0.3, 1.1, -0.8, 0.6])
LABELS = np.array([0, 2, 1, 2, 0, 1])
SPD = np.array([[2.0, 0.3], [0.3, 1.0]])

PROBES = {
    "mlp_loss": (mlp_loss, (W0, B0, W1, B1, X2, Y6), True),
    "dict_params_loss": (dict_params_loss, (PARAMS, X2, Y6), False),
    "list_first": (list_first, (W0, [0.4 * W0.T, W0[:, :1]], X2), True),
    "config_loss": (config_loss, (W0, X2, LABELS, TrainConfig()), True),
    "config_loss_no_bias": (config_loss, (W0, X2, LABELS, TrainConfig(0.1, 0.8, False)), False),
    "method_chain_loss": (method_chain_loss, (np.array([0.3, -0.2, 0.5]), XS, XS ** 3), True),
    "partial_loss": (partial_loss, (W0[:, 0], X2, Y6), True),
    "star_forwarding": (star_forwarding, (W0[:, 0], X2, Y6), True),
    "comprehension_filtered": (comprehension_filtered, (0.7, XS), True),
    "dict_comprehension": (dict_comprehension, (np.array([0.5, -0.4, 0.9]),
                                                ("a", "_skip", "c")), True),
    "zip_reversed_backprop": (zip_reversed_backprop, (np.array([0.5, -0.4, 0.9]), XS[:3]),
                              True),
    "early_return_small": (early_return, (np.array([0.3, -0.4]),), True),
    "early_return_big": (early_return_big, (np.array([0.3, -0.4]),), True),
    "unrolled_descent": (unrolled_descent, (np.array([0.2, -0.1]), SPD,
                                            np.array([1.0, 0.5])), False),
    "call_decorated": (call_decorated, (XS, 0.7), True),
    "regularized_objective": (regularized_objective, (np.array([0.3, -0.2, 0.5]), XS,
                                                      XS ** 3), True),
    "adam_unrolled": (adam_unrolled, (np.array([0.3, 2.0]), np.array([0.1, -1.0])), True),
    "adam_rebuilt": (adam_rebuilt, (np.array([0.3, 2.0]), np.array([0.1, -1.0])), True),
    "ensemble_loss": (ensemble_loss, (W0, X2), True),
}


test_probe, test_float32 = probe_tests(PROBES)


# (its counter on self, `self.step_count += 1`, was refused at second order before the
# object versions of transform/object_stores.py)
def test_unrolled_descent_second_derivative():
    check_probe(unrolled_descent, np.array([0.2, -0.1]), SPD, np.array([1.0, 0.5]),
                second=True)
