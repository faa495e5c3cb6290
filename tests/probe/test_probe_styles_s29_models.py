"""Probe: model code written as classes, and small physics and finance models.

A base class with an abstract method and two subclasses, ``super().__init__``, properties
computed from parameters, class attributes as constants, ``@staticmethod`` and
``@classmethod`` helpers, ``__call__`` chains through a Sequential-like list of layers,
frozen dataclass parameter bundles; a spring-mass chain, an explicit heat-equation step,
Black-Scholes by hand with ``math.erf``, a binomial tree filled backwards into a
preallocated array, a GARCH(1,1) likelihood loop. Gradients (and for most jvp, hvp and the
Hessian) are checked against central differences (probe_harness.py).
"""

import abc
import dataclasses
import functools
import math

import numpy as np
from probe_harness import probe_tests

# -- OOP model code --------------------------------------------------------------------------


class Kernel(abc.ABC):
    """A base class with an abstract method, as model libraries write it."""

    jitter = 1e-8

    def __init__(self, length):
        self.length = length

    @abc.abstractmethod
    def __call__(self, r):
        raise NotImplementedError

    def gram(self, x):
        r = np.abs(x[:, None] - x[None, :])
        return self(r) + self.jitter * np.eye(len(x))


class RBF(Kernel):
    def __call__(self, r):
        return np.exp(-0.5 * (r / self.length) ** 2)


class Matern32(Kernel):
    SQRT3 = math.sqrt(3.0)

    def __init__(self, length, variance=1.0):
        super().__init__(length)
        self.variance = variance

    def __call__(self, r):
        s = self.SQRT3 * r / self.length
        return self.variance * (1 + s) * np.exp(-s)


def kernel_logdet(length, x, kind="rbf"):
    k = RBF(length) if kind == "rbf" else Matern32(length, variance=1.5)
    K = k.gram(x) + 0.1 * np.eye(len(x))
    sign, logdet = np.linalg.slogdet(K)
    return logdet + np.sum(np.linalg.solve(K, x))


def kernel_matern(length, x):
    return kernel_logdet(length, x, kind="matern")


class Dense:
    def __init__(self, W, b, act="tanh"):
        self.W = W
        self.b = b
        self.act = act

    def __call__(self, x):
        z = x @ self.W + self.b
        if self.act == "tanh":
            return np.tanh(z)
        if self.act == "relu":
            return np.maximum(z, 0.0)
        return z


class Sequential:
    def __init__(self, *layers):
        self.layers = list(layers)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def sequential_net(W1, X, W2):
    net = Sequential(Dense(W1, 0.1), Dense(W2, np.zeros(W2.shape[1]), act="relu"),
                     Dense(np.ones((W2.shape[1], 1)), 0.0, act=None))
    return np.mean(net(X) ** 2)


class Standardizer:
    def __init__(self, data):
        self.data = data

    @property
    def mean(self):
        return self.data.mean(axis=0)

    @property
    def std(self):
        return self.data.std(axis=0) + 1e-6

    def transform(self, x):
        return (x - self.mean) / self.std


def property_standardize(X):
    s = Standardizer(X)
    Z = s.transform(X)
    return np.sum(Z[:, 0] * X[:, 1]) + np.sum(s.std)


class Units:
    G = 9.81
    RHO = 1.225

    @staticmethod
    def drag(v, cd, area):
        return 0.5 * Units.RHO * cd * area * v * abs(v)

    @classmethod
    def weight(cls, m):
        return m * cls.G


def projectile_drag(v0, m=0.5, cd=0.47, area=0.01, dt=0.01, steps=50):
    v, h = v0, 0.0
    for _ in range(steps):
        a = -(Units.weight(m) + Units.drag(v, cd, area)) / m
        v = v + a * dt
        h = h + v * dt
    return h


@dataclasses.dataclass(frozen=True)
class OUParams:
    theta: float
    mu: float
    sigma: float = 0.3

    def drift(self, x):
        return self.theta * (self.mu - x)


def frozen_params_loglik(theta, xs, dt=0.1):
    p = OUParams(theta=theta, mu=0.2)
    ll = 0.0
    for x0, x1 in zip(xs[:-1], xs[1:], strict=True):
        m = x0 + p.drift(x0) * dt
        var = p.sigma ** 2 * dt
        ll += -0.5 * (x1 - m) ** 2 / var - 0.5 * np.log(2 * np.pi * var)
    return ll


def frozen_replace(theta):
    p = OUParams(theta, 0.5)
    q = dataclasses.replace(p, mu=1.0)
    return p.drift(0.1) * q.drift(0.3) + q.theta


class Model:
    """fit()/loss() pattern: the parameters set in __init__, used by methods."""

    def __init__(self, params, reg=0.01):
        self.params = params
        self.reg = reg

    def predict(self, x):
        a, b, c = self.params
        return a * np.exp(-b * x) + c

    def loss(self, x, y):
        r = self.predict(x) - y
        return np.mean(r ** 2) + self.reg * np.sum(self.params ** 2)


class ShiftedModel(Model):
    def __init__(self, params, shift):
        super().__init__(params, reg=0.001)
        self.shift = shift

    def predict(self, x):
        return super().predict(x - self.shift)


def model_loss(params, x, y):
    return ShiftedModel(params, 0.1).loss(x, y)


class Tanh:
    def __call__(self, z):
        return np.tanh(z)


class Lin:
    def __init__(self, W, act):
        self.W = W
        self.act = act

    def __call__(self, x):
        return self.act(x @ self.W)


class Encoder:
    def __init__(self, W1, W2):
        self.l1 = Lin(W1, Tanh())
        self.l2 = Lin(W2, Tanh())

    def __call__(self, x):
        return self.l2(self.l1(x))


class AutoEncoderLoss:
    def __init__(self, W1, W2):
        self.enc = Encoder(W1, W2)
        self.scale = 2.0

    def loss(self, x):
        return np.mean((self.enc(x) * self.scale) ** 2)


def nested_layers(W1, X, W2):
    # layers held by layers held by a model, each called as self.layer(x): a silent zero
    # gradient before (the held objects' fields got no cotangent)
    return AutoEncoderLoss(W1, W2).loss(X)


def reduce_layers(w):
    layers = [Lin(np.eye(2) * w, Tanh()), Lin(np.eye(2) * 2 * w, Tanh())]
    return np.sum(functools.reduce(lambda h, f: f(h), layers, np.array([0.3, -0.2])))


def dict_of_layers(w):
    net = {"enc": Lin(np.eye(2) * w, Tanh()), "dec": Lin(-np.eye(2) * w, Tanh())}
    h = np.array([0.3, -0.2])
    for name in ("enc", "dec"):
        h = net[name](h)
    return np.sum(h ** 2)


@dataclasses.dataclass(frozen=True)
class Bundle:
    a: float
    b: float

    @property
    def ratio(self):
        return self.a / self.b

    @property
    def energy(self):
        return 0.5 * self.a ** 2 + self.ratio


def frozen_properties(a):
    p = Bundle(a, 2.0)
    return p.energy * p.ratio


# -- small physics and finance models -------------------------------------------------------


def spring_chain(k, n=4, dt=0.02, steps=40):
    # masses connected by springs of stiffness k, velocity Verlet, ends fixed
    x = np.linspace(0.0, 1.0, n + 2)
    x0 = x.copy()
    x[2] += 0.05
    v = np.zeros(n + 2)

    def force(pos):
        f = np.zeros_like(pos)
        ext = np.diff(pos) - np.diff(x0)
        f[:-1] += k * ext
        f[1:] -= k * ext
        f[0] = 0.0
        f[-1] = 0.0
        return f

    a = force(x)
    for _ in range(steps):
        x = x + v * dt + 0.5 * a * dt ** 2
        a_new = force(x)
        v = v + 0.5 * (a + a_new) * dt
        a = a_new
    return np.sum(x[1:-1] ** 2) + 0.1 * np.sum(v ** 2)


def heat_explicit_step(u0, alpha=0.4, steps=10):
    u = u0.copy()
    un = np.empty_like(u)
    for _ in range(steps):
        un[0] = 0.0
        un[-1] = 0.0
        for i in range(1, len(u) - 1):
            un[i] = u[i] + alpha * (u[i + 1] - 2 * u[i] + u[i - 1])
        u, un = un, u
    return np.sum(u ** 2)


def heat_swap_copied(u0, alpha=0.4, steps=10):
    # the buffer swap with the fix PB101 suggests: a copy before the first write
    u = u0.copy()
    un = np.empty_like(u)
    for _ in range(steps):
        un = un.copy()
        un[0] = 0.0
        un[-1] = 0.0
        un[1:-1] = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
        u, un = un, u
    return np.sum(u ** 2)


def norm_cdf(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def black_scholes_call(S, K=100.0, r=0.02, sigma=0.25, T=1.0):
    d1 = (math.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * math.sqrt(T))
    d2 = d1 - sigma * math.sqrt(T)
    return S * norm_cdf(d1) - K * math.exp(-r * T) * norm_cdf(d2)


def black_scholes_vega(sigma, S=105.0):
    return black_scholes_call(S, sigma=sigma)


def black_scholes_put_parity(params):
    S, sigma = params
    call = black_scholes_call(S, sigma=sigma)
    return call - S + 100.0 * math.exp(-0.02)


def binomial_tree(sigma, S0=100.0, K=95.0, r=0.03, T=1.0, n=30, american=True):
    dt = T / n
    u = math.exp(sigma * math.sqrt(dt))
    d = 1 / u
    p = (math.exp(r * dt) - d) / (u - d)
    disc = math.exp(-r * dt)
    values = np.zeros(n + 1)
    for j in range(n + 1):
        values[j] = max(K - S0 * u ** j * d ** (n - j), 0.0)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1):
            cont = disc * (p * values[j + 1] + (1 - p) * values[j])
            if american:
                exercise = K - S0 * u ** j * d ** (i - j)
                values[j] = max(cont, exercise)
            else:
                values[j] = cont
    return values[0]


def binomial_tree_vec(S0, sigma=0.3, K=100.0, r=0.01, n=40):
    dt = 1.0 / n
    u = np.exp(sigma * np.sqrt(dt))
    d = 1.0 / u
    p = (np.exp(r * dt) - d) / (u - d)
    j = np.arange(n + 1)
    v = np.maximum(S0 * u ** j * d ** (n - j) - K, 0.0)
    for i in range(n, 0, -1):
        v = np.exp(-r * dt) * (p * v[1:i + 1] + (1 - p) * v[:i])
    return v[0]


def garch_loglik(params, r):
    omega, alpha, beta = params
    n = len(r)
    sigma2 = np.empty(n)
    sigma2[0] = np.var(r)
    for t in range(1, n):
        sigma2[t] = omega + alpha * r[t - 1] ** 2 + beta * sigma2[t - 1]
    return -0.5 * np.sum(np.log(2 * np.pi) + np.log(sigma2) + r ** 2 / sigma2)


def garch_loglik_scalar(params, r):
    omega, alpha, beta = params[0], params[1], params[2]
    s2 = omega / (1 - alpha - beta)
    ll = 0.0
    for rt in r:
        ll -= 0.5 * (math.log(s2) + rt * rt / s2)
        s2 = omega + alpha * rt * rt + beta * s2
    return ll


def pendulum_energy(theta0, g=9.81, L=1.0, dt=0.01, steps=80):
    th, om = theta0, 0.0
    for _ in range(steps):
        om -= g / L * math.sin(th) * dt  # symplectic Euler
        th += om * dt
    return 0.5 * L ** 2 * om ** 2 + g * L * (1 - math.cos(th))


_g = np.random.default_rng(292)
XK = np.linspace(-1.0, 1.0, 5)
XN = _g.standard_normal((6, 3))
XS = np.column_stack([_g.standard_normal(6), _g.standard_normal(6) * 2 + 1])
OU = np.cumsum(0.1 * _g.standard_normal(8))
RET = _g.standard_normal(25)  # unit scale: central differences of omega stay exact
XM = np.linspace(0, 2, 7)
YM = 1.5 * np.exp(-0.7 * XM) + 0.2

PROBES = {
    "kernel_logdet": (kernel_logdet, (0.7, XK), True),
    "kernel_matern": (kernel_matern, (0.7, XK), True),
    "sequential_net": (sequential_net, (_g.standard_normal((3, 4)), XN,
                                        _g.standard_normal((4, 2))), True),
    "property_standardize": (property_standardize, (XS,), True),
    "projectile_drag": (projectile_drag, (12.0,), True),
    "frozen_params_loglik": (frozen_params_loglik, (0.8, OU), True),
    "frozen_replace": (frozen_replace, (0.8,), True),
    "nested_layers": (nested_layers, (_g.standard_normal((3, 2)), XN,
                                      _g.standard_normal((2, 2))), True),
    "reduce_layers": (reduce_layers, (0.8,), True),
    "dict_of_layers": (dict_of_layers, (0.8,), True),
    "frozen_properties": (frozen_properties, (1.3,), True),
    "model_loss": (model_loss, (np.array([1.2, 0.5, 0.1]), XM, YM), True),
    "spring_chain": (spring_chain, (30.0,), True),
    "heat_swap_copied": (heat_swap_copied, (np.sin(np.linspace(0, np.pi, 9)),), True),
    # ping-pong buffers (`u, un = un, u`, then writes into un): the swap hands each array on
    # to the other name (check/moves.py)
    "heat_explicit_step": (heat_explicit_step, (np.sin(np.linspace(0, np.pi, 9)),), True),
    "black_scholes_call": (black_scholes_call, (103.0,), True),
    "black_scholes_vega": (black_scholes_vega, (0.3,), True),
    "black_scholes_put_parity": (black_scholes_put_parity, (np.array([103.0, 0.3]),), True),
    "binomial_tree": (binomial_tree, (0.25,), False),
    "binomial_tree_european": (lambda s: binomial_tree(s, american=False), (0.25,), True),
    "binomial_tree_vec": (binomial_tree_vec, (101.0,), True),
    "garch_loglik": (garch_loglik, (np.array([0.1, 0.1, 0.8]), RET), True),
    "garch_loglik_scalar": (garch_loglik_scalar, (np.array([0.1, 0.1, 0.8]), RET), True),
    "pendulum_energy": (pendulum_energy, (0.6,), True),
}


test_probe, test_float32 = probe_tests(PROBES)
