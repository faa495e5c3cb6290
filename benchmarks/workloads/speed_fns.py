"""Functions the speed targets of ``benchmarks/targets.py`` differentiate (real source
for pullback to read, and their hand-written gradients)."""

import math

import numpy as np

from . import rosenbrock_loop


def square(x):
    return x * x


def scalar_while(x, n):
    s = x
    i = 0
    while i < n:
        s = s * 0.999999 + math.sin(s) * 1e-6
        i = i + 1
    return s


def probe(v):
    """The identity; targets.py gives it a rule whose pullback reads the traced memory."""
    return v


def probed_while(x, n):
    s = x
    i = 0
    while i < n:
        s = probe(s * 0.999999 + math.sin(s) * 1e-6)
        i = i + 1
    return s


def rosen_vec(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


# The vectorized function has the loop's gradient (same sum, same terms).
rosen_vec_hand = rosenbrock_loop.hand


def sin_times_x(x):
    return np.sum(np.sin(x) * x)


def sin_times_x_hand(x):
    return np.cos(x) * x + np.sin(x)


def elementwise_map(x):
    return np.tanh(x) * x


def elementwise_map_loss(x):
    return np.sum(np.tanh(x) * x)
