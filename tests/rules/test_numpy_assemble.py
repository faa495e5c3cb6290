"""Assembling and splitting rules against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make, make_complex

from pullback.registry import default_registry
from pullback.tangents import NO_TANGENT, ZERO
from pullback.testing import check_rrule

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)


@D
@pytest.mark.parametrize(
    "fn",
    [np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.copy],
    ids=lambda f: f.__name__,
)
def test_array_constructors(fn, dtype):
    a = make("real", (2, 3), dtype)
    check_rrule(fn, a)
    check_rrule(fn, [a[0], a[1]])
    check_rrule(fn, [1.5, -0.5, 2.0])
    check_rrule(fn, 2.5)


def test_array_of_active_scalars_and_arrays():
    a, b = 1.5, np.float64(-0.25)
    check_rrule(np.array, [a, b, 3.0])
    check_rrule(np.array, [[a, 2.0], [b, a]])
    check_rrule(np.array, (make("real", (3,)), make("real", (3,), seed=1)))
    check_rrule(np.array, [make("real", (3,)), [1.0, 2.0, 0.5]])
    check_rrule(np.array, make("real", (3,)), ndmin=3)
    check_rrule(np.array, [1.0, 2.0], np.float32)
    check_rrule(np.array, make("real", (3,)), dtype=np.complex128)


def test_array_with_int_elements():
    rule = default_registry().lookup(np.array)
    _, back = rule.rrule([1.5, 2, 3.0])
    (g,) = back(np.array([1.0, 2.0, 3.0]))
    assert g[1] is NO_TANGENT and g[0] == 1.0 and g[2] == 3.0
    _, back = rule.rrule([1, 2])
    assert back(np.ones(2)) == (NO_TANGENT,)


@D
def test_concatenate_and_stack(dtype):
    a = make("real", (2, 3), dtype)
    b = make("real", (1, 3), dtype, seed=1)
    c = make("real", (2, 2), dtype, seed=2)
    check_rrule(np.concatenate, [a, b])
    check_rrule(np.concatenate, (a, c), 1)
    check_rrule(np.concatenate, [a, c], axis=-1)
    check_rrule(np.concatenate, [a, b, c], axis=None)
    check_rrule(np.concat, [a, b])
    check_rrule(np.stack, [a, a * 2])
    check_rrule(np.stack, (a, a), 1)
    check_rrule(np.stack, [a, a, a], axis=-1)
    check_rrule(np.stack, [1.5, 2.5])


@D
def test_hvd_column_stack(dtype):
    v = make("real", (3,), dtype)
    m = make("real", (2, 3), dtype, seed=1)
    check_rrule(np.hstack, [v, v[:2], 1.5])
    check_rrule(np.hstack, (m, m[:, :1]))
    check_rrule(np.vstack, [v, m])
    check_rrule(np.vstack, [1.5, 2.0])
    check_rrule(np.dstack, [m, m])
    check_rrule(np.dstack, [v, v])
    check_rrule(np.column_stack, [v, v])
    check_rrule(np.column_stack, [m.T, v])
    if hasattr(np, "row_stack"):  # removed in NumPy 2.5
        check_rrule(np.row_stack, [v, m])


@D
def test_append(dtype):
    m = make("real", (2, 3), dtype)
    check_rrule(np.append, m, make("real", (4,), dtype, seed=1))
    check_rrule(np.append, m, make("real", (1, 3), dtype, seed=1), 0)
    check_rrule(np.append, m, make("real", (2, 2), dtype, seed=1), axis=1)
    check_rrule(np.append, m, 1.5)


@D
def test_select(dtype):
    x = make("real", (3, 4), dtype)
    conds = [x > 0.5, x < -0.5]
    check_rrule(np.select, conds, [x * 2, make("real", (4,), dtype, seed=1)])
    check_rrule(np.select, conds, [x, x + 1.0], 2.5)
    check_rrule(np.select, conds, [x, x + 1.0], make("real", (3, 1), dtype, seed=2))


@D
def test_block(dtype):
    a = make("real", (2, 2), dtype)
    b = make("real", (2, 3), dtype, seed=1)
    c = make("real", (1, 5), dtype, seed=2)
    check_rrule(np.block, [[a, b], [c]])
    check_rrule(np.block, [a[0], b[0], 1.5])
    check_rrule(np.block, [[a], [b[:, :2]]])
    check_rrule(np.block, [[[a]], [[a]]])


@D
@pytest.mark.parametrize(
    "fn,args",
    [
        (np.split, (3,)),
        (np.split, ([1, 4],)),
        (np.split, (2, 1)),
        (np.array_split, (4,)),
        (np.array_split, ([2], 1)),
        (np.hsplit, (2,)),
        (np.vsplit, ([1, 2],)),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_split(fn, args, dtype):
    check_rrule(fn, make("real", (6, 4), dtype), *args)


def test_split_1d_and_3d():
    check_rrule(np.hsplit, make("real", (6,)), 3)
    check_rrule(np.dsplit, make("real", (2, 2, 4)), 2)
    check_rrule(np.split, make("real", (6,)), 3, axis=0)


def test_split_with_zero_cotangents():
    x = make("real", (6,))
    _, back = default_registry().lookup(np.split).rrule(x, 3)
    (g, _) = back([ZERO, np.ones(2), ZERO])
    np.testing.assert_array_equal(g, [0, 0, 1, 1, 0, 0])
    assert back(ZERO)[0] is ZERO
    assert back((ZERO, ZERO, ZERO))[0] is ZERO


@pytest.mark.skipif(not hasattr(np, "unstack"), reason="np.unstack is new in NumPy 2.1")
def test_unstack():
    x = make("real", (3, 2))
    check_rrule(np.unstack, x)
    check_rrule(np.unstack, x, axis=1)


def test_complex_assemble():
    z = make_complex((2, 3))
    check_rrule(np.concatenate, [z, z])
    check_rrule(np.stack, [z, make("real", (2, 3))])
    check_rrule(np.array, [z[0], make("real", (3,))])
    check_rrule(np.split, z, 3, 1)


@D
def test_insert(dtype):
    a = make("real", (5,), dtype)
    m = make("real", (2, 3), dtype, seed=1)
    v = make("real", (2,), dtype, seed=2)
    check_rrule(np.insert, a, 2, dtype(1.5))
    check_rrule(np.insert, a, [1, 3], v)
    check_rrule(np.insert, a, slice(0, 4, 2), v)
    check_rrule(np.insert, a, 1, v)  # a sequence at one place
    check_rrule(np.insert, a, [0, 5, 5], 2.5)  # a scalar used three times: summed
    check_rrule(np.insert, m, 1, make("real", (3,), dtype, seed=3), axis=0)
    check_rrule(np.insert, m, [1], make("real", (2, 1), dtype, seed=3), 1)
    check_rrule(np.insert, m, 2, 0.5, axis=1)  # broadcast along the axis
    check_rrule(np.insert, m, 1, v)  # flattened (axis None)
    check_rrule(np.insert, a, [], v[:0])
    check_rrule(np.insert, make("real", (0,), dtype), 0, v)
    # an int array: the values are cast to int, and nothing carries a gradient
    y, back = default_registry().lookup(np.insert).rrule(np.arange(3), 1, v)
    assert y.dtype.kind == "i" and back(np.ones(5)) == (ZERO, NO_TANGENT, ZERO)


def select_with_default_keyword(x):
    return np.sum(np.select([x < 0, x < 1], [x**2, np.sin(x)], default=2 * x) * np.arange(5))


def test_select_default_by_keyword_is_differentiated():
    from pullback import grad, jvp
    from pullback.testing import check_grads

    for dtype in (np.float64, np.float32):
        x = np.asarray([-0.7, 0.3, 0.8, 1.4, 2.1], dtype)
        check_grads(select_with_default_keyword, x)
    x = np.array([-0.7, 0.3, 0.8, 1.4, 2.1])
    w = np.arange(5.0)
    # hand-derived: 2x below 0, cos(x) in [0, 1), 2 (the default's) from 1 on
    want = w * np.where(x < 0, 2 * x, np.where(x < 1, np.cos(x), 2.0))
    np.testing.assert_allclose(grad(select_with_default_keyword)(x), want, rtol=1e-12)
    v = np.array([0.5, -1.0, 0.3, 0.2, 1.0])
    np.testing.assert_allclose(jvp(select_with_default_keyword, (x,), (v,))[1], want @ v)
    assert check_grads(select_with_default_keyword, x, order=2) == "reverse over reverse"
