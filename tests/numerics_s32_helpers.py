"""Module-level helpers for tests/test_numerics_s32.py: a right-hand side called on a row
of the caller's array (read only, or kept in a module list), found through the module."""

import numpy as np

KEPT = []


def rhs_reads(y, k):
    return np.array([y[1], -k * y[0] - 0.1 * y[1] ** 3])


def rhs_keeps(y, k):
    KEPT.append(y)
    return np.array([y[1], -k * y[0]])
