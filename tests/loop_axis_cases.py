"""Functions whose reductions take an axis (or ddof) that varies per loop iteration: their
first derivative keeps it on the loop's tape beside the differentiated values, so at second
order it reaches the rules' own pullbacks as a differentiated value
(tests/test_error_locations.py)."""

import numpy as np
import scipy.special as sc

AXES = [(0,), (1,), (0, 1)]


def max_over_axes(x):
    s = 0.0
    for ax in [(0,), (1,), (0, 1)]:
        s = s + np.sum(np.max(x * x, axis=ax) ** 2)
    return s


def min_indexed_axes(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(np.min(x * x, axis=AXES[i], keepdims=True) ** 2)
    return s


def moments_over_axes(x):
    s = 0.0
    for ax in [0, 1]:
        s = s + np.sum(np.var(x, axis=ax) * np.std(x, axis=ax)) + np.sum(np.nanstd(x, axis=ax))
    return s


def order_stats_over_axes(x):
    s = 0.0
    for ax in [0, 1]:
        s = s + np.sum(np.median(x, axis=ax) ** 2) + np.sum(np.ptp(x * x, axis=ax))
    return s


def products_over_axes(x):
    s = 0.0
    for ax in [0, 1]:
        s = s + np.sum(np.prod(x, axis=ax)) + np.sum(np.cumprod(x, axis=ax) * x)
    return s


def softmax_over_axes(x):
    s = 0.0
    for ax in [0, 1]:
        s = s + np.sum(sc.softmax(x, axis=ax) * x) + np.sum(np.sort(x, axis=ax) ** 3)
    return s


def norms_over_axes(x):
    s = 0.0
    for ax in [0, 1]:
        s = s + np.sum(np.linalg.norm(x, ord=1, axis=ax) ** 2) + np.sum(np.diff(x**2, axis=ax))
    return s


def std_over_ddofs(x):
    s = 0.0
    for d in [0, 1]:
        s = s + np.std(x, ddof=d) ** 2 + np.nanvar(x, ddof=d) * np.nanstd(x, ddof=d)
    return s


CASES = [
    max_over_axes,
    min_indexed_axes,
    moments_over_axes,
    order_stats_over_axes,
    products_over_axes,
    softmax_over_axes,
    norms_over_axes,
    std_over_ddofs,
]
