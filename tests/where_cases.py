"""Functions whose ``np.where`` does not select a branch that is NaN or infinite, or whose
derivative is, at some positions (tests/test_where_branches.py)."""

import numpy as np


def xlogx(x):
    return np.sum(np.where(x > 0, x * np.log(x), 0.0))


def root(x):
    return np.sum(np.where(x > 0, np.sqrt(x), 0.0))


def sinc(x):
    return np.sum(np.where(np.abs(x) < 1e-8, 1.0, np.sin(x) / x))


def log_only(x):
    return np.sum(np.where(x > 0, np.log(x), 0.0))


def reciprocal(x):
    return np.sum(np.where(x != 1.0, 1.0 / (x - 1.0), 0.0))


def power_three_halves(x):
    return np.sum(np.where(x > 0, x**1.5, 0.0))


def power_half(x):
    return np.sum(np.where(x > 0, 2.0 * x**0.5, 0.0))


def arcsin_to_one(x):
    return np.sum(np.where(x < 1.0, np.arcsin(x), np.pi / 2))


def second_branch(x):
    return np.sum(np.where(x <= 0, 0.0, np.log(x)))


def stored(x):
    t = np.log(x)
    u = x * t
    y = np.where(x > 0, u, 0.0)
    return np.sum(y)


def used_elsewhere(x):
    t = np.log(np.abs(x))
    y = np.where(x > 1, np.sqrt(t), 0.0)
    return np.sum(y) + np.sum(t)


def scaled(x, a):
    return np.sum(np.where(x > 0, a * np.log(x), 0.0))


def nested(x):
    inner = np.where(x < 4.0, np.sqrt(4.0 - x), 0.0)
    return np.sum(np.where(x > 0, np.log(x) * inner, 0.0))


def in_a_loop(x):
    s = 0.0
    for k in range(3):
        s = s + np.sum(np.where(x > k, np.sqrt(x - k), 0.0))
    return s


def scalar_branch(x):
    return np.where(x > 0, x * np.log(x), 0.0)


def elementwise(x):
    return np.where(x > 0, x * np.log(x), 0.0)


def scalar_member(x, a):
    k = np.exp(a)  # a scalar inside the branch: its cotangent sums over positions
    return np.sum(np.where(x > 0, k * np.log(x), 0.0))


def _xlogx(x):
    return x * np.log(x)


def _scaled_root(x, a):
    r = np.sqrt(x)
    return a * r


def helper_in_branch(x):
    return np.sum(np.where(x > 0, _xlogx(x), 0.0))


def helper_with_a_scalar(x, a):
    return np.sum(np.where(x > 0, _scaled_root(x, a) + 1.0, 0.0))


def _not_elementwise(x):
    return x * np.sum(x)


def helper_not_elementwise(x):
    # the sum reaches every position: the unselected ones have a gradient too
    return np.sum(np.where(x > 1, _not_elementwise(x), 0.0))


def selected(x):
    return np.sum(np.select([x > 1, x > 0], [np.log(x - 1), np.sqrt(x)], 0.0))


def selected_default(x):
    # the default is the branch that is NaN where it is not taken
    return np.sum(np.select([x <= 0], [x * x], np.log(np.abs(x) + (x <= 0) - 1.0)))


def selected_elementwise(x):
    return np.select([x > 1, x > 0], [np.log(x - 1), np.sqrt(x)], 0.0)


def same_condition_twice(x):
    t = np.log(x)
    return np.sum(np.where(x > 0, t, 0.0)) + np.sum(np.where(x > 0, t * t, 0.0))
