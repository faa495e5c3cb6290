"""Functions whose errors the golden tests in test_errors.py show (stable line numbers)."""

import numpy as np


def vector_valued(x):
    return x * 2.0


def counted(x, calls):
    calls.append(1)
    return np.sum(x)


def mutates(x, calls):
    calls.insert(0, "ran")
    x[0] = 2.0 * x[0]
    with memoryview(x) as _m:  # `as` a value of the input: still refused
        y = np.sum(x)
    y = y + 0.0
    y = y * 1.0
    return y


def shape_bug(a, b):
    c = a @ b
    return np.sum(c)


def zero_division(x):
    return x / 0.0 + 1.0 / (x - x)


def apply(fn, x):
    return fn(x)


def uses_sorted(x):
    return np.sum(x * 2.0)


def loops_over(values):
    total = 0.0
    for v in values:
        total = total + v
    return total
