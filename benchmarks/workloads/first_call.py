"""A ~20-line function for the first-call (transform + compile) target.

It mixes what real losses contain: matrix products, a branch-free Huber loss, a loop
over parameters with a branch, ``math`` calls and slicing. Only its first-call time is
a target; its gradient is checked against central finite differences.
"""

import math

import numpy as np

N_SAMPLES, N_FEATURES = 50, 8


def robust_fit(w, X, y, delta, l2):
    pred = X @ w
    r = pred - y
    a = np.abs(r)
    quad = 0.5 * r * r
    lin = delta * (a - 0.5 * delta)
    data = np.mean(np.where(a <= delta, quad, lin))
    penalty = 0.0
    for j in range(w.shape[0]):
        wj = w[j]
        if wj > 0.0:
            penalty = penalty + l2 * wj * wj
        else:
            penalty = penalty + 0.5 * l2 * wj * wj
    scale = math.exp(-0.1 * l2)
    diffs = w[1:] - w[:-1]
    smooth = np.sum(np.tanh(diffs) ** 2)
    total = scale * data + penalty
    total = total + 0.01 * smooth
    return total


def make_args():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((N_SAMPLES, N_FEATURES))
    y = rng.standard_normal(N_SAMPLES)
    w = rng.standard_normal(N_FEATURES)
    return w, X, y, 0.8, 0.05


SOURCE_LINES = 20  # lines of robust_fit's body
