"""Functions for the second-order family checks (module level: pullback reads source)."""

import numpy as np


def elementwise(x):
    return np.sum(np.log1p(x * x) * np.arctan(x) + np.maximum(x, 0.3) * np.cbrt(x + 2.0))


def binary(x):
    return np.sum(np.arctan2(x, 1.5) + np.hypot(x, 2.0) * x)


def reductions(x):
    return np.sum(x**2, axis=0).mean() + np.mean(np.exp(x)) + np.max(x * x)


def products(a):
    return np.sum(np.tanh(a @ a.T)) + np.sum(np.matmul(a, a.T) ** 2)


def shapes(a):
    b = np.reshape(a, (-1,))
    c = np.transpose(a)
    return np.sum(np.sin(b) * b) + np.sum(c * np.cos(c))
