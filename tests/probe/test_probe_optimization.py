# ruff: noqa: B006, B007, B008, B905, E731 - written the way public code is written
"""Probe: optimization test functions and the Python forms real code uses.

Rastrigin, Ackley, Beale, Himmelblau, Styblinski-Tang, Rosenbrock, ... in loop and vector
styles; then early returns, while loops with a convergence test, enumerate/zip/range(len),
math mixed with np, *args/**kwargs helpers, defaults, module constants, lambdas,
functools.partial, np.newaxis and ..., masks, np.where, .T, reshape(-1, 1), += on
preallocated arrays and slices, parameter dicts and unpacked tuples. Each gradient (and for
a third jvp, hvp and the Hessian) is checked against central differences.
"""

import functools
import math

import numpy as np
import pytest
from probe_harness import check_probe

A_RASTRIGIN = 10.0
TWO_PI = 2 * math.pi
PARAMS = {"a": 1.0, "b": 100.0}


def rastrigin_vec(x, A=A_RASTRIGIN):
    return A * len(x) + np.sum(x ** 2 - A * np.cos(2 * np.pi * x))


def rastrigin_loop(x):
    total = 10 * len(x)
    for xi in x:
        total += xi ** 2 - 10 * math.cos(TWO_PI * xi)
    return total


def ackley(x, a=20, b=0.2, c=2 * np.pi):
    d = x.shape[0]
    sum1 = np.sum(np.square(x))
    sum2 = np.sum(np.cos(c * x))
    return -a * np.exp(-b * np.sqrt(sum1 / d)) - np.exp(sum2 / d) + a + np.exp(1)


def ackley_math(xy):
    x, y = xy
    return (-20.0 * math.exp(-0.2 * math.sqrt(0.5 * (x * x + y * y)))
            - math.exp(0.5 * (math.cos(2 * math.pi * x) + math.cos(2 * math.pi * y)))
            + math.e + 20)


def beale(p):
    x, y = p[0], p[1]
    return ((1.5 - x + x * y) ** 2 + (2.25 - x + x * y ** 2) ** 2
            + (2.625 - x + x * y ** 3) ** 2)


def himmelblau(p):
    x, y = p
    return (x ** 2 + y - 11) ** 2 + (x + y ** 2 - 7) ** 2


def styblinski_tang(x):
    return 0.5 * np.sum(x ** 4 - 16 * x ** 2 + 5 * x)


def styblinski_tang_loop(x):
    s = 0
    for i in range(len(x)):
        s += x[i] ** 4 - 16 * x[i] ** 2 + 5 * x[i]
    return s / 2


def rosenbrock_dict(x, params=PARAMS):
    a, b = params["a"], params["b"]
    return np.sum(b * (x[1:] - x[:-1] ** 2) ** 2 + (a - x[:-1]) ** 2)


def rosenbrock_zip(x):
    return sum(100.0 * (x1 - x0 ** 2) ** 2 + (1 - x0) ** 2 for x0, x1 in zip(x[:-1], x[1:]))


def griewank(x):
    i = np.arange(1, len(x) + 1)
    return 1 + np.sum(x ** 2) / 4000 - np.prod(np.cos(x / np.sqrt(i)))


def levy(x):
    w = 1 + (x - 1) / 4
    term1 = np.sin(np.pi * w[0]) ** 2
    term3 = (w[-1] - 1) ** 2 * (1 + np.sin(2 * np.pi * w[-1]) ** 2)
    wi = w[:-1]
    s = np.sum((wi - 1) ** 2 * (1 + 10 * np.sin(np.pi * wi + 1) ** 2))
    return term1 + s + term3


def schwefel(x):
    return 418.9829 * len(x) - np.sum(x * np.sin(np.sqrt(np.abs(x))))


def michalewicz(x, m=10):
    i = np.arange(1, x.size + 1)
    return -np.sum(np.sin(x) * np.sin(i * x ** 2 / np.pi) ** (2 * m))


def booth_goldstein(p):
    x, y = p
    booth = (x + 2 * y - 7) ** 2 + (2 * x + y - 5) ** 2
    gp = (1 + (x + y + 1) ** 2 * (19 - 14 * x + 3 * x ** 2 - 14 * y + 6 * x * y + 3 * y ** 2))
    q = 18 - 32 * x + 12 * x ** 2 + 48 * y - 36 * x * y + 27 * y ** 2
    gp *= 30 + (2 * x - 3 * y) ** 2 * q
    return booth + 1e-3 * gp


def early_return_piecewise(x):
    r = np.sqrt(np.sum(x ** 2))
    if r < 1e-8:
        return 0.0
    if r > 2:
        return r - 1.0
    return 0.25 * r ** 2


def while_fixed_point(a, tol=1e-12):
    # x = cos(a x) by iteration, with a convergence test and a break
    x = 1.0
    it = 0
    while True:
        x_new = math.cos(a * x)
        it += 1
        if abs(x_new - x) < tol or it > 200:
            x = x_new
            break
        x = x_new
    return x


def newton_sqrt_while(c):
    x = c
    while abs(x * x - c) > 1e-13 * c:
        x = 0.5 * (x + c / x)
    return x


def weighted_sum_enumerate(w, values=(1.0, -2.0, 3.0)):
    total = 0.0
    for i, v in enumerate(values):
        total += w[i] * v + w[i] ** 2 * i
    return total


def range_len_style(x, y):
    out = 0
    for i in range(len(x)):
        out = out + (x[i] - y[i]) ** 2 * (i + 1)
    return math.sqrt(out)


def _penalty(*terms, **weights):
    total = 0.0
    for t in terms:
        total += weights.get("scale", 1.0) * np.sum(t ** 2)
    return total + weights.get("offset", 0.0)


def star_args_helper(x):
    return _penalty(x, x[1:] - x[:-1], np.sin(x), scale=0.5, offset=1.0)


def lambda_and_partial(x):
    sq = lambda v: v * v
    shifted = functools.partial(np.add, 0.5)
    return np.sum(sq(shifted(x)) * np.exp(-x))


def _objective(x, target, weight=1.0):
    return weight * np.sum((x - target) ** 2)


partial_objective = functools.partial(_objective, target=np.array([1.0, -1.0, 0.5]), weight=2.0)


def newaxis_ellipsis(x):
    m = x[:, np.newaxis] * x[np.newaxis, :]
    return np.sum(m[..., 0] ** 2) + np.sum(np.tanh(m[1, ...]))


def mask_where_transpose(X):
    pos = X > 0
    Y = np.where(pos, X, 0.1 * X)
    return np.sum(Y.T @ Y) + np.sum(X[pos] ** 3)


def reshape_column(x, A):
    col = x.reshape(-1, 1)
    return float(np.sum((A @ col) ** 2) + (col.T @ col)[0, 0])


def preallocated_plus_equals(x):
    out = np.zeros(len(x))
    for i in range(len(x)):
        out[i] += x[i] ** 2
        if i > 0:
            out[i] += out[i - 1] * 0.5
    return out @ out


def slice_plus_equals(x):
    acc = np.zeros(x.size + 2)
    acc[1:-1] += x
    acc[:-2] += 0.5 * x ** 2
    acc[2:] -= np.sin(x)
    return np.sum(acc ** 2)


def tuple_params(theta, data):
    (mu, log_sigma), scale = theta[:2], theta[2]
    sigma = np.exp(log_sigma)
    z = (data - mu) / sigma
    return scale * np.sum(z ** 2) + len(data) * log_sigma


def dict_of_arrays(params, x):
    h = np.tanh(params["W1"] @ x + params["b1"])
    return float(params["W2"] @ h)


def mixed_math_np(x):
    s = 0.0
    for v in x:
        s += math.exp(-v * v) * np.cos(v) + math.log1p(abs(v)) + math.atan2(v, 1.0)
    return s


def clipped_gradient_descent(x0, lr=0.1, steps=5):
    x = x0
    for _ in range(steps):
        g = 2 * x + np.cos(x)
        g = np.clip(g, -1.0, 1.0)
        x = x - lr * g
    return np.sum(x ** 2)


def conditional_max_min(x):
    hi = max(x[0], x[1])
    lo = min(x[2], x[3])
    return hi * lo + max(x) - min(x)


def sorted_order_statistics(x):
    s = np.sort(x)
    return s[-1] - s[0] + np.sum(np.sort(x ** 2)[:2])


P3 = np.array([0.3, -0.7, 1.1])
P2 = np.array([1.3, 0.4])
P5 = np.array([0.3, -0.7, 1.1, 0.2, -0.4])

PROBES = {
    "rastrigin_vec": (rastrigin_vec, (P5,), True),
    "rastrigin_loop": (rastrigin_loop, (P5,), True),
    "ackley": (ackley, (P3,), True),
    "ackley_math": (ackley_math, (P2,), True),
    "beale": (beale, (P2,), True),
    "himmelblau": (himmelblau, (P2,), True),
    "styblinski_tang": (styblinski_tang, (P5,), False),
    "styblinski_tang_loop": (styblinski_tang_loop, (P5,), True),
    "rosenbrock_dict": (rosenbrock_dict, (P5,), True),
    "rosenbrock_zip": (rosenbrock_zip, (P5,), False),
    "griewank": (griewank, (P5,), True),
    "levy": (levy, (P5,), False),
    "schwefel": (schwefel, (P5 * 100,), False),
    "michalewicz": (michalewicz, (np.array([2.2, 1.57, 1.3]),), False),
    "booth_goldstein": (booth_goldstein, (P2,), True),
    "early_return_piecewise": (early_return_piecewise, (P3,), False),
    "early_return_far": (early_return_piecewise, (P3 * 3,), False),
    "while_fixed_point": (while_fixed_point, (0.8,), False),
    "newton_sqrt_while": (newton_sqrt_while, (2.5,), False),
    "weighted_sum_enumerate": (weighted_sum_enumerate, (P3,), True),
    "range_len_style": (range_len_style, (P3, P3[::-1]), False),
    "star_args_helper": (star_args_helper, (P5,), True),
    "lambda_and_partial": (lambda_and_partial, (P3,), True),
    "partial_objective": (partial_objective, (P3,), False),
    "newaxis_ellipsis": (newaxis_ellipsis, (P3,), False),
    "mask_where_transpose": (mask_where_transpose, (np.array([[0.5, -1.0], [2.0, 0.3]]),), False),
    "reshape_column": (reshape_column, (P3, np.arange(6.0).reshape(2, 3)), True),
    "preallocated_plus_equals": (preallocated_plus_equals, (P5,), True),
    "slice_plus_equals": (slice_plus_equals, (P5,), True),
    "tuple_params": (tuple_params, (np.array([0.1, -0.3, 2.0]), P5), True),
    "dict_of_arrays": (dict_of_arrays, ({"W1": np.arange(6.0).reshape(2, 3) / 10,
                                          "b1": np.array([0.1, -0.1]),
                                          "W2": np.array([0.5, -0.5])}, P3), False),
    "mixed_math_np": (mixed_math_np, (P3,), True),
    "clipped_gradient_descent": (clipped_gradient_descent, (P3 + 0.013,), False),
    "conditional_max_min": (conditional_max_min, (np.array([0.3, 1.2, -0.5, 0.8]),), False),
    "sorted_order_statistics": (sorted_order_statistics, (P5,), False),
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_probe(name):
    f, args, second = PROBES[name]
    check_probe(f, *args, second=second)
