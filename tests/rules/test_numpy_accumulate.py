"""``np.maximum.accumulate``, ``np.minimum.accumulate``, ``np.logaddexp.accumulate``,
``np.subtract.accumulate`` and ``np.divide.accumulate``: their rules against finite
differences (first and second order, float64 and float32, with ``axis``), in user code
through the normalizer (with forward mode), and the tie convention of ``np.maximum``."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_jvp
from rule_inputs import FLOATS, make

import pullback.ufunc_methods as um
from pullback import grad
from pullback.testing import check_grads, check_rrule, check_rrule_second_order

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
EXTREMES = pytest.mark.parametrize("fn", [um.maximum_accumulate, um.minimum_accumulate])


@D
@EXTREMES
def test_running_extremes(dtype, fn):
    x = make("distinct", (5, 4), dtype)  # no ties: differentiable
    for args, kwargs in (((x,), {}), ((x, 1), {}), ((x,), {"axis": -1}), ((x[0],), {})):
        check_rrule(fn, *args, **kwargs)
        check_rrule_second_order(fn, *args, **kwargs)


@D
def test_logaddexp_accumulate(dtype):
    x = make("real", (5, 4), dtype)
    check_rrule(um.logaddexp_accumulate, x)
    check_rrule(um.logaddexp_accumulate, x, 1)
    check_rrule_second_order(um.logaddexp_accumulate, x, axis=1)
    # values spanning more than exp's range: the step-by-step path
    wide = np.array([-900.0, -1.0, 0.5, -700.0, 2.0], dtype)
    check_rrule(um.logaddexp_accumulate, wide)
    check_rrule_second_order(um.logaddexp_accumulate, wide)


@D
def test_subtract_and_divide_accumulate(dtype):
    x = make("real", (5, 4), dtype)
    positive = make((0.5, 2.0), (5, 4), dtype, seed=1)
    for fn, a in ((um.subtract_accumulate, x), (um.divide_accumulate, positive)):
        check_rrule(fn, a)
        check_rrule(fn, a, 1)
        check_rrule_second_order(fn, a, axis=-1)


def _weights(n):
    return np.arange(1.0, n + 1)[:, None]


def _running_loop(x, step):
    y = x[0]
    out = [y]
    for i in range(1, x.shape[0]):
        y = step(y, x[i])
        out.append(y)
    return np.sum(np.stack(out) * _weights(x.shape[0]))


def running_max_loop(x):
    return _running_loop(x, np.maximum)


def running_max(x):
    return np.sum(np.maximum.accumulate(x) * _weights(x.shape[0]))


def running_min_loop(x):
    return _running_loop(x, np.minimum)


def running_min(x):
    return np.sum(np.minimum.accumulate(x) * _weights(x.shape[0]))


def test_ties_follow_the_maximum_rule_step_by_step():
    # plateaus and repeated maxima: the gradient is the loop's, exactly
    t = np.array([[1.0, 2, 2, 0.5, 3, 3, 3, 1], [0.0, 0, 0, 0, 1, 1, 0, 1]]).T
    assert np.array_equal(grad(running_max)(t), grad(running_max_loop)(t))
    assert np.array_equal(grad(running_min)(-t), grad(running_min_loop)(-t))


def all_methods(x):
    return (
        np.sum(np.maximum.accumulate(x, axis=1) ** 2)
        + np.sum(np.minimum.accumulate(x) * x)
        + np.sum(np.logaddexp.accumulate(x, 1))
        + np.sum(np.subtract.accumulate(x) ** 2)
        + np.sum(np.divide.accumulate(x + 3.0, axis=1))
    )


@D
def test_in_user_code(dtype):
    x = make("distinct", (4, 5), dtype, seed=2)
    assert grad(all_methods)(x).dtype == dtype
    check_grad(all_methods, x)


def test_in_user_code_second_order_and_forward():
    x = make("distinct", (4, 5), seed=2)
    check_grads(all_methods, x, order=2)
    check_jvp(all_methods, (x,), (make("real", (4, 5), seed=3),))


def reductions(x):
    return (
        np.sum(np.logaddexp.reduce(x, axis=1) ** 2)
        + np.logaddexp2.reduce(x, axis=None)
        + np.sum(np.logaddexp.reduce(x, keepdims=True) * x)
        + np.sum(np.logaddexp.reduce(x, axis=1, where=x > 0, initial=-5.0))
    )


@D
@pytest.mark.parametrize("axis, keepdims", [(0, False), (1, True), (None, False), ((0, 1), False)])
def test_logaddexp_reduce_rules(dtype, axis, keepdims):
    x = make("real", (3, 4), dtype, seed=4)
    check_rrule(um.logaddexp_reduce, x, axis, keepdims=keepdims)
    check_rrule(um.logaddexp2_reduce, x, axis, keepdims=keepdims)


def test_logaddexp_reduce_is_the_softmax():
    x = np.array([0.3, -0.7, 1.2])
    softmax = np.exp(x) / np.sum(np.exp(x))
    np.testing.assert_allclose(grad(lambda v: np.logaddexp.reduce(v))(x), softmax, rtol=1e-12)


@D
def test_reductions_in_user_code(dtype):
    x = make("real", (4, 5), dtype, seed=5)
    assert grad(reductions)(x).dtype == dtype
    check_grad(reductions, x)
    check_grads(reductions, x, order=2)
    if dtype == np.float64:  # (finite differences in float32 are too coarse for this sum)
        check_jvp(reductions, (x,), (make("real", (4, 5), dtype, seed=6),))
