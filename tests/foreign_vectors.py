"""A class with its own ``__iter__`` and ``__abs__``, defined here and made by a helper, so
that a module which imports only the helper never sees the class (for
test_user_objects_in_rules.py)."""

import numpy as np


class Vec2:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __iter__(self):
        yield self.a * 2.0
        yield self.b**2

    def __abs__(self):
        return Vec2(abs(self.a), abs(self.b))

    def total(self):
        return self.a * 2.0 + self.b**2


def make_vec(x):
    return Vec2(x[0], x[1])


def make_vec_sin(x):
    return Vec2(np.sin(x[0]), x[1])
