"""The rules added by the audit, reached through generated adjoints (check_grads)."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from rule_inputs import make

from pullback.testing import check_grads


def cube(t):
    return t**3


def f_cast(x):
    return np.sum(np.float64(x) * np.complex128(x[0]).real)


def f_operator(x):
    return operator.mul(operator.add(x, 1.0), operator.truediv(x[1], 2.0))


def f_insert(x):
    return np.sum(np.insert(x, [1, 1], x[0] * 2.0) ** 2)


def f_piecewise(x):
    return np.sum(np.piecewise(x, [x < 0.2], [cube, np.sin]))


def f_apply_along_axis(m):
    return np.sum(np.apply_along_axis(np.sum, 0, m) ** 2)


def f_einsum_interleaved(m):
    return np.einsum(m, [0, 1], m, [1, 0], [])


def f_builtin_max(x):
    return max(x) + min(list(x)) * max(x[0], x[1])


def f_column_stack(x):
    return np.sum(np.column_stack(x) ** 2) + np.sum(np.column_stack([x, x[::-1]]) * x[0])


def f_std_length_one_axis(m):
    return np.sum(np.std(m[:, :1], axis=1) + m)


def f_eig(m):
    w = np.linalg.eigvals(m)
    return np.sum(np.real(w) * np.imag(w))


VECTOR = [f_cast, f_operator, f_insert, f_piecewise, f_builtin_max, f_column_stack]
MATRIX = [f_apply_along_axis, f_einsum_interleaved, f_std_length_one_axis, f_eig]


@pytest.mark.parametrize("f", VECTOR, ids=lambda f: f.__name__)
def test_vector_functions(f):
    check_grads(f, make("distinct", (3,)))


@pytest.mark.parametrize("f", MATRIX, ids=lambda f: f.__name__)
def test_matrix_functions(f):
    check_grads(f, np.array([[0.5, -1.3], [0.9, 0.2]]))
