"""Small idioms from everyday NumPy code: comprehensions and generator expressions,
lambdas, map, lists built with append, partial objects, tuple unpacking, dicts of
parameters, enumerate/zip loops, early returns and while loops with counters."""

from __future__ import annotations

import collections
import math
from functools import partial

import numpy as np

POINTS = np.array([[0.0, 1.0], [1.0, 0.5], [2.0, -0.3], [3.0, 0.8]])


def pairwise_energy(x):
    n = len(x)
    return sum(1.0 / (1e-3 + (x[i] - x[j]) ** 2) for i in range(n) for j in range(i + 1, n))


def polynomial(coeffs, t=0.7):
    return sum(c * t**k for k, c in enumerate(coeffs))


def horner(coeffs, t=0.7):
    result = 0.0
    for c in reversed(list(coeffs)):
        result = result * t + c
    return result


def least_squares_line(params):
    slope, intercept = params[0], params[1]
    residuals = [y - (slope * x + intercept) for x, y in POINTS]
    return sum(r * r for r in residuals)


def weighted_norms(x, weights=(1.0, 2.0, 0.5)):
    return sum(w * np.linalg.norm(x * k) for k, w in enumerate(weights, 1))


def softmax_entropy(logits):
    exps = list(map(lambda v: math.exp(v), logits))
    total = sum(exps)
    probs = [e / total for e in exps]
    return -sum(p * math.log(p) for p in probs)


def running_mean_loss(x):
    means = []
    total = 0.0
    for k, v in enumerate(x, 1):
        total = total + v
        means.append(total / k)
    return np.sum(np.array(means) ** 2)


def stacked_features(x):
    feats = np.stack([np.sin(x), np.cos(x), x**2])
    return np.sum(feats @ np.ones(len(x)))


def newton_sqrt(a, iterations=6):
    guess = a
    count = 0
    while count < iterations:
        guess = 0.5 * (guess + a / guess)
        count += 1
    return guess


def piecewise(x):
    if x > 1.0:
        return x**2
    elif x > 0.0:
        return 2.0 * x - 1.0 + x**3
    return -x


def params_dict_loss(params):
    pred = params["scale"] * np.tanh(POINTS[:, 0] * params["rate"]) + params["offset"]
    return np.mean((pred - POINTS[:, 1]) ** 2)


def filtered_sum(x):
    return sum(v**3 for v in x if v > 0)


def max_of_squares(x):
    return max(v * v for v in x)


def nested_helper_calls(x):
    return np.sum(_scale(_shift(x, 0.5), 2.0) ** 2)


def _shift(x, by):
    return x + by


def _scale(x, by):
    return x * by


def lambda_helpers(x):
    sq = lambda t: t * t  # noqa: E731 - the idiom under test
    cube = lambda t: t * sq(t)  # noqa: E731
    return np.sum(sq(x) + cube(x))


def repeated_rows(x):
    rows = [x] * 3
    return np.sum(np.stack(rows) * np.arange(1.0, 4.0)[:, None])


scaled_energy = partial(weighted_norms, weights=(0.5, 0.25))


def penalized_by_a_local_factory(x):
    def make_penalty(weight, power=2):
        scale = weight / power

        def penalty(v):
            return scale * np.sum(np.abs(v) ** power)

        return penalty

    l2 = make_penalty(x[0] ** 2 + 0.1)
    return np.sum(np.tanh(x)) + l2(x)


def first_then_running(x):
    best = x[0]
    for i in range(1, len(x)):
        best += 0.5 * x[i] * best
    return best


def _rbf(a, b, length=1.0):
    return np.exp(-((a - b) ** 2) / length)


def star_called_kernel(x):
    pairs = [(x[0], x[1]), (x[1], x[2])]
    return sum(_rbf(*p, length=0.5) for p in pairs)

N_EVALUATIONS = 0
Params = collections.namedtuple("Params", "slope intercept")


def counted_objective(x):
    global N_EVALUATIONS
    N_EVALUATIONS += 1  # a counter: runs once per gradient, as in the primal
    return np.sum((x - 1.0) ** 2) + 0.1 * np.sum(np.abs(x) ** 3)


def named_tuple_line_fit(theta):
    p = Params(slope=theta[0], intercept=theta[1])
    residuals = POINTS[:, 1] - (p.slope * POINTS[:, 0] + p.intercept)
    return np.sum(residuals**2)


def along_rows(x):
    grid = np.outer(x, x) + np.eye(len(x))
    return np.sum(np.apply_along_axis(lambda row: np.log1p(row**2), 1, grid))


def with_settings(x, settings=None):
    settings = settings or {}
    params = {"scale": x[0], "shift": x[1:]}
    scale = params.get("scale", 1.0)
    return scale * np.sum(np.tanh(params.get("shift") * settings.get("gain", 2.0)))


CASES = [
    (counted_objective, (np.array([0.5, -1.0, 2.0]),)),
    (named_tuple_line_fit, (np.array([0.4, 0.1]),)),
    (along_rows, (np.array([0.5, -1.0, 2.0]),)),
    (with_settings, (np.array([0.5, -1.0, 2.0]),)),
    (pairwise_energy, (np.array([0.1, 0.7, -0.4, 1.3]),)),
    (polynomial, (np.array([0.5, -1.0, 2.0, 0.3]),)),
    (horner, (np.array([0.5, -1.0, 2.0, 0.3]),)),
    (least_squares_line, (np.array([0.4, 0.1]),)),
    (weighted_norms, (np.array([0.5, -1.0, 2.0]),)),
    (softmax_entropy, (np.array([0.5, -1.0, 2.0]),)),
    (running_mean_loss, (np.array([0.5, -1.0, 2.0, 0.3]),)),
    (stacked_features, (np.array([0.5, -1.0, 2.0]),)),
    (newton_sqrt, (2.0,)),
    (piecewise, (0.6,)),
    (piecewise, (1.6,)),
    (params_dict_loss, ({"scale": 0.8, "rate": 1.2, "offset": 0.1},)),
    (filtered_sum, (np.array([0.5, -1.0, 2.0, 0.3]),)),
    (max_of_squares, (np.array([0.5, -1.0, 2.0, 0.3]),)),
    (nested_helper_calls, (np.array([0.5, -1.0, 2.0]),)),
    (lambda_helpers, (np.array([0.5, -1.0, 2.0]),)),
    (repeated_rows, (np.array([0.5, -1.0, 2.0]),)),
    (scaled_energy, (np.array([0.5, -1.0, 2.0]),)),
    (penalized_by_a_local_factory, (np.array([0.5, -1.0, 2.0]),)),
    (first_then_running, (np.array([0.5, -1.0, 2.0, 0.3]),)),
    (star_called_kernel, (np.array([0.5, -1.0, 2.0]),)),
]
