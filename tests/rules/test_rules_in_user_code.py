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


# einsum's interleaved form in user code, with every arity the pullback's parameters take:
# an output sublist that transposes the result once went unread (the cotangent of the
# implicit order came back: a wrong gradient for square operands, a crash otherwise)
_W = np.arange(9.0).reshape(3, 3) - 4.0


def f_einsum_out_transposed(a, b):
    return np.sum(_W * np.sin(np.einsum(a, [0, 1], b, [1, 2], [2, 0])))


def f_einsum_two_operands(a, b):
    return np.sum(_W * np.sin(np.einsum(a, [0, 1], b, [1, 2])))


def f_einsum_one_operand_out(a, b):
    return np.sum(_W[0] * np.sin(np.einsum(a, [0, 1], [1]))) * np.sum(b * b)


def f_einsum_ellipsis(a, b):
    return np.sum(_W * np.cos(np.einsum(a, [Ellipsis, 1], b, [1, 2], [2, Ellipsis])))


def f_einsum_four_operands(a, b):
    # the fourth operand lands in the pullback's optimize parameter (it once crashed there)
    return np.sum(_W * np.sin(np.einsum("ij,jk,ik,ki->ki", a, b, a * a, b + 1.0)))


INTERLEAVED = [
    f_einsum_out_transposed,
    f_einsum_two_operands,
    f_einsum_one_operand_out,
    f_einsum_ellipsis,
    f_einsum_four_operands,
]


def f_einsum_five_operands(a, b):
    return np.sum(np.einsum("ij,jk,kl,lm,mi->i", a, b, a, b, a.T) ** 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_einsum_five_operands_first_order(dtype):
    # more operands than the transformable pullback's parameters: the rule's own pullback
    check_grads(
        f_einsum_five_operands,
        make("real", (3, 3), dtype, seed=5),
        make("real", (3, 3), dtype, seed=6),
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", INTERLEAVED, ids=lambda f: f.__name__)
def test_einsum_interleaved_in_user_code(f, dtype):
    a = make("real", (3, 3), dtype, seed=1)
    b = make("real", (3, 3), dtype, seed=2)
    check_grads(f, a, b, order=2 if dtype is np.float64 else 1)


def test_einsum_interleaved_transposed_output_by_hand():
    a = make("real", (3, 3), seed=3)
    b = make("real", (3, 3), seed=4)
    from pullback import grad

    da, db = grad(f_einsum_out_transposed, wrt=(0, 1))(a, b)
    # y[c, a] = sum_b A[a, b] B[b, c]; f = sum W[c, a] sin(y[c, a])
    g = (_W * np.cos(np.einsum("ab,bc->ca", a, b))).T  # indexed [a, c]
    np.testing.assert_allclose(da, g @ b.T, rtol=1e-12)
    np.testing.assert_allclose(db, a.T @ g, rtol=1e-12)
