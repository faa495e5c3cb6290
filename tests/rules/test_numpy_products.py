"""Products against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make, make_complex

from pullback.rules.numpy_products_pullbacks import trace_pullback
from pullback.testing import check_grads, check_rrule

MATMUL_SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((3,), (5, 3, 4)),
    ((5, 2, 3), (3,)),
    ((1, 2, 3), (4, 3, 2)),
]


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul(shapes, dtype):
    a = make("real", shapes[0], dtype)
    b = make("real", shapes[1], dtype, seed=1)
    check_rrule(np.matmul, a, b)
    if hasattr(np.linalg, "matmul"):
        check_rrule(np.linalg.matmul, a, b)


DOT_SHAPES = [
    ((), (3,)),
    ((3,), ()),
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((2, 2, 3), (4, 3, 5)),
    ((2, 3), (4, 3, 5)),
]


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("shapes", DOT_SHAPES, ids=str)
def test_dot(shapes, dtype):
    check_rrule(np.dot, make("real", shapes[0], dtype), make("real", shapes[1], dtype, seed=1))


INNER_SHAPES = [((), (3,)), ((3,), (3,)), ((2, 3), (3,)), ((2, 3), (4, 3)), ((2, 2, 3), (4, 3))]


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("shapes", INNER_SHAPES, ids=str)
def test_inner(shapes, dtype):
    check_rrule(np.inner, make("real", shapes[0], dtype), make("real", shapes[1], dtype, seed=1))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_vdot_outer_kron(dtype):
    a = make("real", (2, 3), dtype)
    b = make("real", (3, 2), dtype, seed=1)
    check_rrule(np.vdot, a, b)
    check_rrule(np.outer, a, b)
    check_rrule(np.outer, a[0], b[:, 0])
    if hasattr(np.linalg, "outer"):
        check_rrule(np.linalg.outer, a[0], b[:, 0])
    check_rrule(np.kron, a, b)
    check_rrule(np.kron, a[0], b)
    check_rrule(np.kron, make("real", (2, 1, 2), dtype), b)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize(
    "shapes,axes",
    [
        (((2, 3, 4), (3, 4, 5)), 2),
        (((2, 3), (3, 4)), 1),
        (((2, 3), (4, 5)), 0),
        (((2, 3, 4), (4, 2, 5)), ([0, 2], [1, 0])),
        (((3, 4, 2), (2, 3)), ([2, 0], [0, 1])),
        (((2, 3), (3, 2)), ([0, 1], [1, 0])),
    ],
    ids=str,
)
def test_tensordot(shapes, axes, dtype):
    a = make("real", shapes[0], dtype)
    b = make("real", shapes[1], dtype, seed=1)
    check_rrule(np.tensordot, a, b, axes)
    if hasattr(np.linalg, "tensordot"):
        check_rrule(np.linalg.tensordot, a, b, axes=axes)


EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->j", [(2, 3)]),
    ("i,i->", [(3,), (3,)]),
    ("i,j->ij", [(3,), (2,)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (3, 2)]),
    ("...ij,...jk->...ik", [(1, 2, 3), (4, 3, 2)]),
    ("ij,ij,ij->i", [(2, 3), (2, 3), (2, 3)]),
    ("iij->j", [(2, 2, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("i...->...", [(2, 3, 4)]),
    ("ijk->kji", [(2, 3, 4)]),
]


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("subscripts,shapes", EINSUM, ids=[e[0] for e in EINSUM])
def test_einsum(subscripts, shapes, dtype):
    ops = [make("real", s, dtype, seed=k) for k, s in enumerate(shapes)]
    check_rrule(np.einsum, subscripts, *ops)
    check_rrule(np.einsum, subscripts, *ops, optimize=True)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_cross(dtype):
    check_rrule(np.cross, make("real", (4, 3), dtype), make("real", (3,), dtype, seed=1))
    check_rrule(np.cross, make("real", (3, 2), dtype), make("real", (2, 3), dtype, seed=1), 0, 1, 0)
    check_rrule(np.cross, make("real", (3, 2), dtype), make("real", (3, 2), dtype), axis=0)
    if hasattr(np.linalg, "cross"):
        check_rrule(np.linalg.cross, make("real", (4, 3), dtype), make("real", (4, 3), dtype))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_trace(dtype):
    x = make("real", (3, 4, 2), dtype)
    check_rrule(np.trace, x)
    check_rrule(np.trace, x, 1)
    check_rrule(np.trace, x, -1, 1, 2)
    check_rrule(np.trace, x, offset=1, axis1=0, axis2=2)
    if hasattr(np.linalg, "trace"):
        check_rrule(np.linalg.trace, x, offset=-1)


@pytest.mark.skipif(not hasattr(np, "vecdot"), reason="numpy < 2.0")
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_vecdot(dtype):
    a = make("real", (2, 3), dtype)
    b = make("real", (3,), dtype, seed=1)
    check_rrule(np.vecdot, a, b)
    check_rrule(np.vecdot, a, a, axis=0)
    check_rrule(np.linalg.vecdot, a, b)
    check_rrule(np.vecdot, make_complex((2, 3)), make_complex((2, 3), seed=1))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize(
    "shapes",
    [[(2, 3), (3, 4)], [(2, 3), (3, 4), (4, 2)], [(3,), (3, 4), (4, 2)], [(3,), (3, 4), (4,)]],
    ids=str,
)
def test_multi_dot(shapes, dtype):
    arrays = [make("real", s, dtype, seed=k) for k, s in enumerate(shapes)]
    check_rrule(np.linalg.multi_dot, arrays)
    check_rrule(np.linalg.multi_dot, tuple(arrays))


def test_complex_products():
    a = make_complex((2, 3))
    b = make_complex((3, 4), seed=1)
    for fn in (np.matmul, np.dot):
        check_rrule(fn, a, b)
    check_rrule(np.vdot, a, make_complex((3, 2), seed=3))
    check_rrule(np.inner, a, b.T)
    check_rrule(np.outer, a, b)
    check_rrule(np.tensordot, a, b, 1)
    check_rrule(np.einsum, "ij,jk->ik", a, b)
    check_rrule(np.kron, a, b)
    check_rrule(np.cross, make_complex((2, 3)), make_complex((2, 3), seed=2))
    check_rrule(np.trace, a @ b)
    check_rrule(np.linalg.multi_dot, [a, b, b.T])
    check_rrule(np.matmul, make("real", (2, 3)), b)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_einsum_interleaved_form(dtype):
    a, b = make("real", (2, 3), dtype), make("real", (3, 4), dtype, seed=1)
    check_rrule(np.einsum, a, [0, 1], b, [1, 2], [0, 2])
    check_rrule(np.einsum, a, [0, 1], b, [1, 2])
    check_rrule(np.einsum, a, [0, 1], [1])
    check_rrule(np.einsum, make("real", (2, 2), dtype), [Ellipsis, 0, 0], [Ellipsis])


def _trace_scaled(x):
    # the cotangent that reaches np.trace is a Python float (2.0 * the seed)
    return 2.0 * np.trace(x)


def _trace_squared(x):
    # reverse over reverse: np.trace's pullback meets Python-float cotangents again
    return np.trace(np.sin(x)) ** 2 * 0.5 + 2.0 * np.trace(x, 1)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_trace_takes_a_python_float_cotangent(dtype):
    x = make("real", (3, 4), dtype)
    dx = trace_pullback(1.5, x, 1)[0]
    np.testing.assert_array_equal(dx, 1.5 * np.eye(3, 4, k=1))
    assert check_grads(_trace_scaled, x) == "reverse"
    assert check_grads(_trace_squared, x, order=2) == "reverse over reverse"
