"""``ufunc.reduceat`` of ``add`` (a rule: sums of segments, linear), ``multiply``,
``maximum`` and ``minimum`` (functions written per segment with np.prod/np.max/np.min,
differentiated from their source): against finite differences (float64 and float32),
second order, forward mode, with increasing, repeated and decreasing indices, and the
tie convention of ``np.max``."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_hvp, check_jvp
from rule_inputs import FLOATS, make

import pullback.ufunc_methods as um
from pullback import grad
from pullback.testing import check_grads, check_rrule, check_rrule_second_order

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
# increasing; a repeated index (a single element); a decreasing one (segments overlap)
INDICES = pytest.mark.parametrize("idx", [[0, 2, 5], [1, 4, 4, 6], [0, 4, 1, 5]], ids=str)


@D
@INDICES
def test_add_reduceat_rule(dtype, idx):
    x = make("real", (7, 3), dtype)
    check_rrule(um.add_reduceat, x, idx)
    check_rrule(um.add_reduceat, x, np.array(idx), axis=0)
    check_rrule(um.add_reduceat, x.T, idx, 1)
    check_rrule_second_order(um.add_reduceat, x, idx)


def test_segments():
    assert um.reduceat_segments([0, 2, 5], 7) == ([0, 2, 5], [2, 5, 7])
    assert um.reduceat_segments([1, 4, 4, 6], 7) == ([1, 4, 4, 6], [4, 5, 6, 7])
    assert um.reduceat_segments([0, 4, 1, 5], 7) == ([0, 4, 1, 5], [4, 5, 5, 7])
    with pytest.raises(IndexError):
        um.reduceat_segments([0, 7], 7)


def sums(x):
    y = np.add.reduceat(x, [0, 2, 5]) ** 2
    z = np.sin(np.add.reduceat(x, [0, 1, 1], axis=1))
    w = np.add.reduceat(x, [3, 0, 6], 0)
    return np.sum(y * np.arange(1.0, 4.0)[:, None]) + np.sum(z) + np.sum(w**3)


def products_and_extremes(x):
    p = np.multiply.reduceat(x, [0, 2, 5])
    hi = np.maximum.reduceat(x, [0, 3, 3, 5], axis=0)
    lo = np.minimum.reduceat(x, [0, 2], axis=1)
    weights = np.arange(1.0, 5.0)[:, None]
    return np.sum(p**2) + np.sum(hi * weights) + np.sum(np.sin(lo) * lo)


@D
@pytest.mark.parametrize("f", [sums, products_and_extremes])
def test_in_user_code(dtype, f):
    x = make("distinct", (7, 3), dtype, seed=2)
    np.testing.assert_allclose(f(x), f(np.float64(x)), rtol=1e-5)
    assert grad(f)(x).dtype == dtype
    check_grad(f, x)


@pytest.mark.parametrize("f", [sums, products_and_extremes])
def test_in_user_code_second_order_and_forward(f):
    x = make("distinct", (7, 3), seed=2)
    v = make("real", (7, 3), seed=3)
    check_grads(f, x, order=2)
    check_hvp(f, x, v)
    check_jvp(f, (x,), (v,))


def segment_max(x):
    return np.sum(np.maximum.reduceat(x, [0, 3]) * np.array([1.0, 10.0]))


def test_maximum_reduceat_ties_like_np_max():
    x = np.array([2.0, 5.0, 5.0, 1.0, 1.0, 0.5])
    by_max = grad(lambda v: np.max(v[0:3]) + 10.0 * np.max(v[3:]))(x)
    np.testing.assert_array_equal(grad(segment_max)(x), by_max)


def integer_sums(x):
    return np.sum(np.add.reduceat(x, [0, 2], dtype=np.int64) * 1.0) + np.sum(x)


def test_integer_dtype_is_piecewise_constant():
    x = np.array([0.3, 1.7, 2.2, 0.9])
    np.testing.assert_array_equal(grad(integer_sums)(x), np.ones(4))


def test_out_of_bounds_index_is_numpys_error():
    with pytest.raises(IndexError):
        grad(lambda v: np.sum(np.add.reduceat(v, [0, 9])))(np.ones(4))
