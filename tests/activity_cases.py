"""Functions for tests/test_activity_aware_calls.py (in a file of their own so that their
line numbers are stable in the golden messages)."""

import numpy as np


class Settings:  # __setattr__: a class pullback does not follow (plain_classes.py)
    __setattr__ = object.__setattr__

    def __init__(self, n, scale):
        self.n = n
        self.scale = scale


def built_from_settings(x, n):
    cfg = Settings(n, 2.0)
    return np.sum(x**2) * cfg.scale + cfg.n


def built_from_a_differentiated_value(x):
    cfg = Settings(3, x)
    return np.sum(x) * cfg.n


def calls_a_c_function_on_constants(x, label):
    tag = hash(label)
    return np.sum(np.sin(x)) + 0.0 * (tag % 2)
