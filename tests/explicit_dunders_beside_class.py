"""A class with its own ``__mul__`` beside a function calling ``x.__mul__`` of an array
(tests/test_explicit_dunders.py)."""

import numpy as np


class Doubling:
    def __init__(self, w):
        self.w = w

    def __mul__(self, other):
        return Doubling(self.w * other * 2.0)


def squares(x):
    return np.sum(x.__mul__(x))
