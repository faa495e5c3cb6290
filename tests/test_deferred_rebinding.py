"""``s = x[i]; s += v``: Python rebinds ``s`` when the element read gave an immutable value
(a float, a NumPy scalar), and changes the value in place when it gave an array (a row of
a matrix, a view of it). The check cannot tell statically, so it lets the statement
through (check/aliasing.py, deferred) and the generated code checks the value as it runs
(containers_mutation.immutable_value): gradients where Python rebinds, a pullback error
naming the line where it would write in place."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_jvp

import pullback
from pullback.check import check
from pullback.errors import UnsupportedCallError
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


def running_total(x, w):
    total = x[0] * w[0]
    for i in range(1, x.shape[0]):
        total += x[i] * w[i]
    return total**2


def element_then_several_updates(x):
    s = x[1]
    s *= x[0]
    s -= np.sin(x[2])
    s += 1.0
    return s * x[2]


def matrix_element(a):
    best = a[0, 1]
    best += a[1, 0] * a[1, 1]
    return best**3


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradients_where_python_rebinds(dtype):
    x = np.array([0.7, -1.3, 0.4, 2.0], dtype=dtype)
    w = np.array([1.5, 0.5, -2.0, 0.25], dtype=dtype)
    check_grad(running_total, x, w, wrt=(0, 1))
    check_grad(element_then_several_updates, x)
    check_grad(matrix_element, np.array([[0.5, -1.0], [2.0, 0.3]], dtype=dtype))


def test_hand_derived_gradient():
    # s = x1 * x0 - sin(x2) + 1; f = s * x2
    x = np.array([0.7, -1.3, 0.4])
    s = x[1] * x[0] - np.sin(x[2]) + 1.0
    want = np.array([x[1] * x[2], x[0] * x[2], -np.cos(x[2]) * x[2] + s, 0.0])
    got = pullback.grad(element_then_several_updates)(np.append(x, 5.0))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_forward_and_second_order():
    x = np.array([0.7, -1.3, 0.4, 2.0])
    check_jvp(element_then_several_updates, (x,), (np.array([1.0, 0.5, -2.0, 0.3]),))
    check_grads(element_then_several_updates, x, order=2)
    check_grads(running_total, x, np.ones(4), order=2)


def test_the_check_defers_them_and_still_reports_other_augmented_names():
    def other(x):
        y = x  # the caller's array under another name
        y += 1.0
        return np.sum(y)

    assert check(element_then_several_updates) == []
    assert check(running_total) == []
    assert [d.code for d in check(other)] == ["PB105"]


def row_of_a_matrix(a):
    r = a[0]  # a view of the caller's row when `a` has two axes
    r += 1.0
    return np.sum(r * r)


def test_a_row_of_a_matrix_is_refused_where_it_would_write():
    a = np.ones((2, 3))
    before = a.copy()
    with pytest.raises(UnsupportedCallError) as e:
        pullback.grad(row_of_a_matrix)(a)
    message = str(e.value)
    assert "test_deferred_rebinding.py:" in message and "'r += ...' ran on a ndarray" in message
    assert "Fix: write `r = r + ...`" in message and "PB105" in message
    np.testing.assert_array_equal(a, before)  # refused before the write
    # and on a vector the same function is a rebinding: differentiated
    check_grad(row_of_a_matrix, np.array([0.5, -1.0, 2.0]))


def test_a_list_item_changed_in_place_is_refused():
    def extend(x):
        rows = [[x[0]], [x[1]]]
        r = rows[0]
        r += [x[2]]  # list += list extends rows[0] itself
        return sum(rows[0]) * x[0]

    with pytest.raises(UnsupportedCallError, match="'r \\+= ...' ran on a list"):
        pullback.grad(extend)(np.array([0.7, -1.3, 0.4]))


def _rhs(t, y, k):
    return -k * y + np.sin(t)


def euler_with_clock(y0, k):
    h = 0.1
    t = 0.0  # a number passed to a call that could keep it, then `t += h`
    y = y0
    for _ in range(10):
        y = y + h * _rhs(t, y, k)
        t += h
    return np.sum(y**2)


def _keep(t, acc):
    acc.append(t)
    return t


def clock_kept_by_a_list(y0, h):
    t = 0.0
    acc = []
    for _ in range(3):
        _keep(t, acc)
        t += h  # with an array `h`, this changes acc[1] in place from the third step on
    return np.sum(acc[1] * y0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_number_passed_to_a_call_then_augmented_is_deferred(dtype):
    y0 = np.array([0.5, -0.3], dtype=dtype)
    assert check(euler_with_clock) == []
    check_grad(euler_with_clock, y0, dtype(0.7), wrt=(0, 1))
    # hand-derived: with a float step, acc[1] is h, so d/dy0 = h and d/dh = sum(y0)
    dy0, dh = pullback.grad(clock_kept_by_a_list, wrt=(0, 1))(y0, dtype(0.1))
    np.testing.assert_allclose(dy0, [0.1, 0.1], rtol=1e-6)
    np.testing.assert_allclose(dh, 0.2, rtol=1e-6)


def test_a_number_that_became_a_kept_array_is_refused_where_it_would_write():
    y0, h = np.array([0.5, -0.3]), np.array([0.1, 0.2])
    with pytest.raises(UnsupportedCallError) as e:
        pullback.grad(clock_kept_by_a_list, wrt=(0, 1))(y0, h)
    message = str(e.value)
    assert "test_deferred_rebinding.py:" in message and "'t += ...' ran on a ndarray" in message
    assert "Fix: write `t = t + ...`" in message and "PB105" in message
