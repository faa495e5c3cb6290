"""Functions handed around as values, as people write them: activation tables, basis
expansions with lambdas, a partial made for one loss, helpers with ``*args``, nested keys
for ``sorted``/``max``, callable layer objects used by their global name, an optimizer's
objective built from a dict of callables."""

from __future__ import annotations

import functools
from functools import partial

import numpy as np

DATA = np.array([[0.5, 1.0], [1.5, -0.5], [-1.0, 2.0], [0.25, 0.75]])
TARGET = np.array([1.0, 0.0, 1.0, 0.0])


# -- activation tables (the "act_fn by name" pattern of small NN libraries) ----------------
def mlp_with_named_activation(w, activation="softplus"):
    def relu(z):
        return np.maximum(z, 0.0)

    def softplus(z, beta=1.0):
        return np.log1p(np.exp(beta * z)) / beta

    activations = {"relu": relu, "softplus": softplus, "tanh": np.tanh}
    act = activations[activation]
    hidden = act(DATA @ w[:4].reshape(2, 2))
    return np.sum((hidden @ w[4:] - TARGET) ** 2)


def basis_regression(c):
    basis = [lambda t: np.ones_like(t), lambda t: t, lambda t: t**2, lambda t: np.sin(t)]
    t = DATA[:, 0]
    prediction = 0.0
    for coef, phi in zip(c, basis, strict=True):
        prediction = prediction + coef * phi(t)
    return np.mean((prediction - TARGET) ** 2)


# -- a partial for one loss -----------------------------------------------------------------
def _weighted_loss(prediction, target, weights, scale=1.0):
    return scale * np.sum(weights * (prediction - target) ** 2)


def partial_loss(w):
    weights = np.array([1.0, 2.0, 1.0, 0.5])
    loss = partial(_weighted_loss, target=TARGET, weights=weights)
    prediction = np.tanh(DATA @ w)
    return loss(prediction) + 0.1 * loss(prediction * 0.5, scale=2.0)


def partial_reduction(x):
    total = functools.partial(np.sum, axis=0)
    return np.sum(total(np.outer(x, x)) ** 2)


# -- nested helpers with *args, **kwargs ----------------------------------------------------
def penalized_objective(x, lam=0.1):
    def penalty(*terms, power=2):
        out = 0.0
        for t in terms:
            out = out + np.sum(np.abs(t) ** power)
        return out

    def fit(**parts):
        return sum(np.sum(v**2) for v in parts.values())

    residual = DATA @ x[:2] - TARGET
    return fit(residual=residual) + lam * penalty(x[:2], x[2:], power=2)


log_terms = lambda *zs: sum(np.log1p(z * z) for z in zs)  # noqa: E731


def log_barrier(x):
    return log_terms(x[0], x[1]) + np.sum(x**2)


# -- keys for sorted/max that are nested functions ------------------------------------------
def closest_point_energy(x):
    points = [DATA[k] * x[k % 2] for k in range(len(DATA))]

    def distance(p):
        d = p - np.array([0.25, 0.5])
        return float(np.sum(d * d))

    nearest = min(points, key=distance)
    ranked = sorted(points, key=distance)
    return np.sum(nearest**2) + np.sum(ranked[-1] * x[:2])


# -- layer objects used by their global name ------------------------------------------------
class Affine:
    def __init__(self, n_in, n_out, seed=0):
        rng = np.random.default_rng(seed)
        self.W = rng.standard_normal((n_in, n_out)) * 0.5
        self.act_fn = np.tanh
        self.n_calls = 0

    def __call__(self, x):
        self.n_calls += 1
        return self.act_fn(x @ self.W)


class MeanSquaredError:
    def __call__(self, prediction, target):
        return np.mean((prediction - target) ** 2)


LAYER = Affine(2, 1)
CRITERION = MeanSquaredError()


def layer_objects_by_name(x):
    prediction = LAYER(DATA * x)[:, 0]
    return CRITERION(prediction, TARGET)


class Objective:
    """A base objective and a regularised one that extends it with super()."""

    def __init__(self, target):
        self.target = target
        self.calls = 0

    def value(self, x):
        self.calls += 1
        return np.sum((x - self.target) ** 2)


class Regularized(Objective):
    def __init__(self, target, lam=0.1):
        super().__init__(target)
        self.lam = lam

    def value(self, x):
        return super().value(x) + self.lam * np.sum(x**4)


REGULARIZED = Regularized(np.array([0.5, 0.0, -0.5, 1.0]))

CASES = [
    (REGULARIZED.value, (np.array([0.4, -0.3, 0.2, 0.1]),)),
    (mlp_with_named_activation, (np.array([0.3, -0.2, 0.5, 0.1, 0.7, -0.4]),)),
    (basis_regression, (np.array([0.1, 0.5, -0.2, 0.3]),)),
    (partial_loss, (np.array([0.4, -0.3]),)),
    (partial_reduction, (np.array([0.5, -1.0, 2.0]),)),
    (penalized_objective, (np.array([0.4, -0.3, 0.2, 0.1]),)),
    (log_barrier, (np.array([0.4, -0.3, 0.2]),)),
    (closest_point_energy, (np.array([0.4, -0.3, 0.2, 0.9]),)),
    (layer_objects_by_name, (np.array([0.8, -0.6]),)),
]
