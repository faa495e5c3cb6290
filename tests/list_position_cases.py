"""Rules whose pullbacks reach a list argument in positions the first-argument sweep
(tests/rules/test_rules_on_lists.py) does not: a cotangent that never arrives (a piece of
a split no one reads, a grid of a meshgrid left unused, slogdet's sign alone), a power or a
polynomial of degree 0, a cast to integers. Each takes the list ``xs`` a
function made from its array argument (tests/rules/test_rules_on_lists_positions.py)."""

import numpy as np


def slogdet_sign_only(xs):
    sign, logdet = np.linalg.slogdet(xs)
    return sign * 2.0


def slogdet_both(xs):
    sign, logdet = np.linalg.slogdet(xs)
    return sign * logdet


def matrix_power_zero(xs):
    return np.linalg.matrix_power(xs, 0)


def array_split_first_piece(xs):
    return np.array_split(xs, 2)[0]


def array_split_last_piece(xs):
    return np.array_split(xs, 3, axis=1)[2]


def hsplit_middle_piece(xs):
    return np.array_split(xs, [1, 3], axis=1)[1]


def meshgrid_first_grid(xs):
    return np.meshgrid(xs[0], xs[1])[0]


def polyval_constant(xs):
    return np.polyval(xs[0][:1], xs[1])


def astype_integers(xs):
    return np.sum(np.asarray(xs)) + np.astype(np.asarray(xs), np.int64) * 0.0


def nanvar_row(xs):
    return np.nanvar(xs[1])


def apply_along_axis_rows(xs):
    return np.apply_along_axis(np.sum, 1, xs)


CASES = [
    slogdet_sign_only,
    slogdet_both,
    matrix_power_zero,
    array_split_first_piece,
    array_split_last_piece,
    hsplit_middle_piece,
    meshgrid_first_grid,
    polyval_constant,
    astype_integers,
    nanvar_row,
    apply_along_axis_rows,
]
