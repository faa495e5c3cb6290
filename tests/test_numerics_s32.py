"""Numerical-methods idioms found by probe s32 (tests/probe/test_probe_styles_s32_numerics.py),
each a mechanism with cases beyond the probe:

* forward mode: ``y = z[k] - H @ x`` with both operands varied while one tangent is still
  ZERO at run time (a loop's first pass) has the result's shape (transform/forward.py,
  tangents.sum_tangent);
* ``name = a[i] if c else b`` of an array the function writes is a named read per branch
  (transform/assignments.py chosen_read; check/alias_uses.py): Gauss-Seidel's
  ``left = u[i - 1] if i > 0 else 0.0``; a matrix row stays refused where it is a view;
* ``h = min(h, T - t); h *= 0.5``: ``op=`` on the result of ``min``/``max`` is deferred to
  run time like one on an element read (check/aliasing.py ``_picked``);
* ``np.concatenate(([0.0], x[:-1]))``: a view in a display that only a fresh call reads;
* ``ac, bc = map(np.array, (a, b))``: each name a copy, written in place (check/aliasing.py
  ``_fresh_map``); ``map(np.asarray, ...)`` stays refused;
* ``t, y = 0.0, y0`` then ``f(t, y)`` and ``t += h``: a number unpacked is a number
  (check/aliasing.py ``_number``, the deferred ``op=``);
* ``x = R[k:, k]`` read up before the next write into ``R`` (a Householder step): the
  named slice is read as a copy (check/alias_uses.py, transform/mutation.py
  ``read_dead_before_write``); one read after the write stays refused;
* ``Y[i + 1] = Y[i] + dt * f(Y[i])``: a row passed to a function that only reads it, its
  result consumed by the store (check/argument_reads.py); a function that keeps it or
  writes into it stays refused.
"""

import inspect

import numerics_s32_helpers as helpers
import numpy as np
import pytest
from fd import central_jacobian, check_grad, check_hvp, check_jvp
from numerics_s32_helpers import gauss_seidel, householder

import pullback


# -- forward mode: a ZERO tangent beside a broadcast ----------------------------------------
def filter_loop(z):
    H = np.array([[1.0, 0.0]])
    K = np.array([[0.5], [0.2]])
    x = np.zeros(2)
    total = 0.0
    for k in range(len(z)):
        x = np.array([[1.0, 1.0], [0.0, 1.0]]) @ x
        y = z[k] - H @ x  # (1,) from a scalar and a (1,) whose tangent is ZERO at first
        x = x + K @ y
        total = total + x[0] ** 2 + x[1]
    return total


def sum_first_pass(z):
    acc = np.zeros((1, 3))
    out = 0.0
    for k in range(len(z)):
        row = z[k] + acc  # (1, 3) from a scalar and an array whose tangent is ZERO at first
        acc = acc + 0.5 * row
        out = out + np.sum(row**2)
    return out


@pytest.mark.parametrize("f", [filter_loop, sum_first_pass])
def test_jvp_with_a_zero_tangent_beside_a_broadcast(f):
    z = np.array([0.1, 0.5, 0.9, 1.6])
    t = np.array([1.0, -0.5, 0.3, 0.7])
    got = check_jvp(f, (z,), (t,))
    np.testing.assert_allclose(got, np.sum(pullback.grad(f)(z) * t), rtol=1e-9)
    check_hvp(f, z, t)


def filtered_states(z):
    H = np.array([[1.0, 0.0]])
    K = np.array([[0.5], [0.2]])
    x = np.zeros(2)
    out = []
    for k in range(len(z)):
        y = z[k] - H @ x
        x = np.array([[1.0, 1.0], [0.0, 1.0]]) @ x + K @ y
        out.append(x[0] - x[1])
    return np.array(out)


def test_forward_jacobian_with_a_zero_tangent_beside_a_broadcast():
    # jacobian's forward mode carries every direction at once (a stack of tangents)
    z = np.array([0.1, 0.5, 0.9, 1.6])
    want = central_jacobian(filtered_states, z)
    got = pullback.jacobian(filtered_states, mode="forward")(z)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_sum_tangent_keeps_the_result_shape():
    from pullback.tangents import sum_tangent

    out = sum_tangent(pullback.ZERO, np.zeros((2, 3)), 1.5, 0.2, np.zeros((2, 3)))
    np.testing.assert_array_equal(out, np.full((2, 3), 1.5))
    assert sum_tangent([1.0], [0.0], pullback.ZERO, [2.0], [0.0, 2.0]) == [1.0, pullback.ZERO]


# -- a chosen element read of a written array -----------------------------------------------
def nested_choice(b):
    n = len(b)
    u = np.zeros(n)
    for i in range(n):
        w = (u[i - 1] if i > 1 else 0.5) if i > 0 else u[n - 1]
        u[i] = b[i] * w + b[i]
    return np.sum(u**2)


def chosen_row(b):
    u = np.zeros((3, 3))
    r = u[0] if b[0] > 0 else u[1]  # a view of u: the write below changes it
    u[0, 0] = b[0]
    return np.sum(r * b)


@pytest.mark.parametrize("f", [gauss_seidel, nested_choice])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_chosen_element_reads(f, dtype):
    b = np.array([0.3, 0.5, -0.2, 0.8], dtype=dtype)
    check_grad(f, b)
    if dtype == np.float64:
        check_hvp(f, b, np.array([1.0, -0.5, 0.3, 0.2]))


def test_a_chosen_row_view_is_refused_where_it_runs():
    with pytest.raises(pullback.PullbackError) as info:
        pullback.grad(chosen_row)(np.array([0.3, 0.5, -0.2]))
    message = str(info.value)
    assert "a view of an array the function writes" in message
    assert "r = u[0] if b[0] > 0 else u[1]" in message
    assert "`row = m[i].copy()`" in message


# -- op= on the result of min/max --------------------------------------------------------
def adaptive_steps(k, T=1.0):
    t, y, h = 0.0, 1.0, 0.3
    while t < T:
        h = min(h, T - t)
        y_full = y - h * k * y
        y_half = y - 0.5 * h * k * (y - 0.25 * h * k * y)
        if abs(y_full - y_half) < 0.02:
            y = y_half
            t += h
            h *= 1.5
        else:
            h *= 0.5
    return y


def scaled_max(x):
    h = 0.1
    s = 0.0
    for i in range(len(x)):
        h = max(h, x[i])
        h *= 0.5
        s = s + h * x[i]
    return s


def kept_max_array(x):
    a = x * 1.0
    b = x * 2.0
    h = max([a, b], key=np.sum)
    h *= 2.0  # changes b in place: h is b
    return np.sum(a) + np.sum(h) + np.sum(b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_op_assign_on_min_and_max(dtype):
    check_grad(scaled_max, np.array([0.3, 0.05, 0.6], dtype=dtype))


def test_op_assign_on_an_array_max_picked_is_refused_where_it_runs():
    with pytest.raises(pullback.PullbackError) as info:
        pullback.grad(kept_max_array)(np.array([0.3, 0.05, 0.6]))
    message = str(info.value)
    line = inspect.getsourcelines(kept_max_array)[1] + 4  # h *= 2.0
    assert f"test_numerics_s32.py:{line}:5: 'h *= ...' ran on a ndarray" in message
    assert "a min/max of values" in message
    assert "Fix: write `h = h * ...` (a new value)" in message


def test_adaptive_step_loop():
    check_grad(adaptive_steps, 1.3)
    check_grad(adaptive_steps, np.float32(1.3))
    g = pullback.grad(pullback.grad(adaptive_steps))(1.3)
    e, first = 1e-5, pullback.grad(adaptive_steps)
    want = (first(1.3 + e) - first(1.3 - e)) / (2 * e)
    np.testing.assert_allclose(g, want, rtol=1e-5)


# -- a view inside a display a fresh call reads -------------------------------------------
def shifted_residual(b):
    n = len(b)
    x = np.zeros(n)
    r = b.copy()
    for _ in range(3):
        for i in range(n):
            x[i] = 0.5 * x[i] + b[i] / 3.0
        r = b - (3 * x - np.concatenate(([0.0], x[:-1])) - np.concatenate((x[1:], [0.0])))
    return np.sum(r**2)


def stacked_then_written(x):
    u = x.copy()
    s = np.stack((u[:2], u[1:3]))
    u[0] = 2.0 * x[1]
    return np.sum(s * x[:2]) + np.sum(u**2)


def asarray_display(x):
    u = x.copy()
    v = np.asarray((u,))  # may be u itself, seen through v
    u[0] = 5.0
    return np.sum(v * x)


@pytest.mark.parametrize("f", [shifted_residual, stacked_then_written])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_view_in_a_display_of_a_fresh_call(f, dtype):
    check_grad(f, np.array([0.3, -0.5, 0.8, 0.2], dtype=dtype))


def test_a_display_a_call_may_keep_stays_refused():
    with pytest.raises(pullback.UnsupportedSyntaxError) as info:
        pullback.grad(asarray_display)(np.array([0.3, -0.5, 0.8]))
    message = str(info.value)
    assert "PB101 array mutation: assignment to an element of 'u'" in message
    assert "'u' is also used on line" in message


# -- names unpacked from map(np.array, ...) -------------------------------------------------
def tridiagonal_gist(b):
    n = len(b)
    ac, bc, cc, dc = map(np.array, ([-1.0] * (n - 1), b, [-1.0] * (n - 1), np.linspace(0, 1, n)))
    for i in range(1, n):
        m = ac[i - 1] / bc[i - 1]
        bc[i] = bc[i] - m * cc[i - 1]
        dc[i] = dc[i] - m * dc[i - 1]
    x = np.zeros(n)
    x[-1] = dc[-1] / bc[-1]
    for i in range(n - 2, -1, -1):
        x[i] = (dc[i] - cc[i] * x[i + 1]) / bc[i]
    return np.sum(x**2) + np.sum(b)


def asarray_names(x):
    u, v = map(np.asarray, (x, x))  # the caller's array itself
    u[0] = 1.0
    return np.sum(u * v)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_names_unpacked_from_a_map_of_copies(dtype):
    b = np.array([4.0, 3.5, 5.0, 4.2], dtype=dtype)
    check_grad(tridiagonal_gist, b)
    if dtype == np.float64:
        check_hvp(tridiagonal_gist, b, np.array([1.0, -0.5, 0.3, 0.2]))


def test_names_unpacked_from_a_map_of_views_stay_refused():
    with pytest.raises(pullback.UnsupportedSyntaxError) as info:
        pullback.grad(asarray_names)(np.array([0.3, -0.5, 0.8]))
    message = str(info.value)
    assert "PB101 array mutation: assignment to an element of 'u'" in message
    assert "write `u = u.copy()` before the first write" in message


# -- a row passed to a function inside the store's own value ---------------------------------
def euler_rows(theta):
    N, dt = 12, 0.05
    Y = np.empty((N, 2))
    Y[0] = [1.0, 0.5]

    def f(y):
        return np.array([theta[0] * y[0] - theta[1] * y[0] * y[1], -y[1] + 0.1 * y[0] * y[1]])

    for i in range(N - 1):
        Y[i + 1] = Y[i] + dt * f(Y[i])
    return Y[-1, 0] + np.sum(Y[:, 1] ** 2)


def module_rhs_rows(k):
    Y = np.zeros((10, 2))
    Y[0] = [1.0, 0.0]
    for i in range(9):
        Y[i + 1] = Y[i] + 0.1 * helpers.rhs_reads(Y[i], k[0]) + 0.0 * k[1]
    return np.sum(Y[-1] ** 2)


def result_is_the_value(x):
    def half(y):
        return 0.5 * y

    Y = np.zeros((4, 2))
    Y[0] = x
    for i in range(3):
        Y[i + 1] = half(Y[i])
    return np.sum(Y**2)


def keeping_rhs(k):
    kept = []

    def f(y):
        kept.append(y)
        return 2.0 * y

    Y = np.zeros((2, 2))
    Y[0] = k
    for i in range(3):
        Y[(i + 1) % 2] = Y[i % 2] + f(Y[i % 2])
    return np.sum(Y**2) + np.sum(kept[0] * k)


def module_keeping_rhs(k):
    Y = np.zeros((2, 2))
    Y[0] = k
    for i in range(3):
        Y[(i + 1) % 2] = Y[i % 2] + helpers.rhs_keeps(Y[i % 2], 0.5)
    return np.sum(Y**2)


@pytest.mark.parametrize("f", [euler_rows, module_rhs_rows, result_is_the_value])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_row_read_by_a_function_in_the_store(f, dtype):
    x = np.array([1.1, 0.4], dtype=dtype)
    check_grad(f, x)
    if dtype == np.float64:
        check_hvp(f, x, np.array([0.3, -1.0]))


@pytest.mark.parametrize("f", [keeping_rhs, module_keeping_rhs])
def test_a_row_a_function_keeps_stays_refused(f):
    with pytest.raises(pullback.UnsupportedSyntaxError) as info:
        pullback.grad(f)(np.array([1.0, 2.0]))
    message = str(info.value)
    assert "PB101 array mutation: assignment to an element of 'Y' from 'Y[i % 2]'" in message
    assert "handed to the call" in message
    assert "hand on a copy, `Y[i % 2].copy()`, in its place" in message


# -- a number unpacked from a tuple display ------------------------------------------------
def midpoint_clock(y0):
    def f(t, y):
        return np.array([y[1], -y[0] + 0.1 * t])

    t, y = 0.0, y0
    h = 0.1
    total = 0.0
    while t < 1.0:
        ymid = y + 0.5 * h * f(t, y)
        y = y + h * f(t + 0.5 * h, ymid)
        t += h
        total = total + y[0]
    return total


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_clock_unpacked_from_a_tuple(dtype):
    y0 = np.array([0.5, 0.2], dtype=dtype)
    check_grad(midpoint_clock, y0)
    if dtype == np.float64:
        check_hvp(midpoint_clock, y0, np.array([0.3, -1.0]))


# -- a named slice read up before the next write ---------------------------------------------
def eliminate_columns(x):
    R = np.outer(x, x) + np.eye(len(x))
    for k in range(len(x) - 1):
        col = R[k + 1 :, k]
        piv = R[k, k]
        R[k + 1 :, :] -= np.outer(col / piv, R[k, :])
    return np.sum(np.diag(R) ** 2)


def view_read_after_the_write(x):
    R = np.outer(x, x)
    v = R[1:, 0]
    R[1:, :] *= 2.0
    return np.sum(v * x[1:])  # v shows the write


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_named_slices_read_before_the_write(dtype):
    M = np.eye(3) + 0.3 * np.array([[0.2, -1.0, 0.5], [0.7, 0.1, -0.4], [-0.3, 0.9, 0.6]])
    check_grad(householder, M.astype(dtype))
    x = np.array([0.5, -0.3, 0.8], dtype=dtype)
    check_grad(eliminate_columns, x)
    if dtype == np.float64:
        check_hvp(eliminate_columns, x, np.array([0.3, -1.0, 0.2]))


def test_a_named_slice_read_after_the_write_stays_refused():
    with pytest.raises(pullback.UnsupportedSyntaxError) as info:
        pullback.grad(view_read_after_the_write)(np.array([0.5, -0.3, 0.8]))
    message = str(info.value)
    assert "PB102 array mutation: augmented assignment (*=) to a slice of 'R'" in message
    assert "'R' is also used on line" in message
