"""Branches, loops, early exits and recursion, checked against finite differences on
inputs that take different paths on different calls."""

import math

import numpy as np
import pytest
from fd import check_grad

import pullback

RNG = np.random.default_rng(1)


def branchy(x, y):
    if x > 0.5:
        z = x * y
    elif x > -0.5:
        z = np.sin(x) + y
    else:
        z = -y * y
    return z * x


@pytest.mark.parametrize("x", [1.2, 0.1, -0.9])
def test_if_elif_else_follows_each_call(x):
    check_grad(branchy, x, 0.7, wrt=(0, 1))


def conditional_expression(x, y):
    z = x * y if x > y else y - x
    return z * z


def boolean_conditions(x, y):
    s = x
    if x > 0 and not y > 1.0 or y < -1.0:
        s = s * y
    return s + (x > 1.0 or y)


@pytest.mark.parametrize("x,y", [(0.3, 0.9), (0.9, 0.3), (-0.2, -1.5), (0.4, 1.3)])
def test_conditional_expression_and_boolean_ops(x, y):
    check_grad(conditional_expression, x, y, wrt=(0, 1))
    check_grad(boolean_conditions, x, y, wrt=(0, 1))


def early_return(x):
    if x > 0:
        return x**3
    y = x * 2.0
    if y < -1:
        return np.sin(y)
    return y * y


@pytest.mark.parametrize("x", [0.7, -0.2, -0.9])
def test_early_return_from_branches(x):
    check_grad(early_return, x)


def range_loops(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * (i + 1)
    for i in range(1, len(x) - 1, 2):
        s = s + x[i] * x[i + 1]
    for i in range(len(x) - 1, 0, -3):
        s = s * 0.5 + x[i - 1]
    return s


def iterate_containers(x, pairs):
    s = 0.0
    for row in x:
        s = s + np.sum(row * row)
    for p in pairs:
        s = s + p * p
    for k, v in enumerate(pairs):
        s = s + k * v
    for a, b in zip(x[0], pairs):  # noqa: B905 - the plain builtin form
        s = s + a * b
    return s


def test_for_loops_over_ranges_arrays_lists_enumerate_zip():
    check_grad(range_loops, RNG.normal(size=7))
    x = RNG.normal(size=(3, 4))
    pairs = [0.5, -1.2, 2.0]
    check_grad(iterate_containers, x, pairs, wrt=(0, 1))
    check_grad(iterate_containers, x.astype(np.float32), (0.5, -1.2), wrt=0)


def while_loop(x):
    y = x
    n = 0
    while y < 10.0:
        y = y * 1.5 + 0.1
        n = n + 1
    return y * n


@pytest.mark.parametrize("x", [0.5, 3.0, 12.0])
def test_while_with_value_condition(x):
    check_grad(while_loop, x)


def break_continue(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] < 0:
            continue
        s = s + x[i] ** 2
        if s > 2.0:
            break
        s = s * 1.1
    return s


def break_inside_while(x):
    y = x
    while True:
        y = y * y + 0.25
        if y > 5.0:
            break
        y = y - 0.1
    return y


def for_else(x):
    s = 1.0
    for i in range(len(x)):
        if x[i] > 1.5:
            s = s * x[i]
            break
        s = s + x[i]
    else:
        s = s * 10.0
    return s


def reversed_loop(x, items):
    s = 0.0
    for v in reversed(items):
        s = s * 0.5 + v * x
    for i in reversed(range(len(items))):
        s = s + items[i] * i
    return s


def test_reversed_iteration():
    check_grad(reversed_loop, 0.7, [0.5, 2.0, -1.0], wrt=(0, 1))


def test_break_continue_and_for_else():
    for x in [np.array([0.5, -1.0, 1.2, 0.3, 2.0]), np.array([0.1, 0.2, -0.3])]:
        check_grad(break_continue, x)
        check_grad(for_else, x)
    check_grad(for_else, np.array([0.5, 1.7, 0.2]))
    for x in [0.9, 1.4, 2.5]:  # from below ~0.82 the loop never ends (in Python too)
        check_grad(break_inside_while, x)


def nested_loops_with_branches(a, b):
    acc = np.zeros(a.shape[1])
    for i in range(a.shape[0]):
        row = a[i]
        for j in range(a.shape[1]):
            if row[j] > 0:
                acc = acc + row * b[j]
            else:
                acc = acc - b[j]
        acc = np.tanh(acc)
    return np.sum(acc * acc)


def test_nested_loops_with_branches_and_loop_carried_arrays():
    a = RNG.normal(size=(3, 4))
    b = RNG.normal(size=4)
    check_grad(nested_loops_with_branches, a, b, wrt=(0, 1))
    check_grad(nested_loops_with_branches, a.astype(np.float32), b.astype(np.float32), wrt=(0, 1))


def return_inside_loop(x):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] * x[i]
        if s > 1.0:
            return s * 2.0
    return s


def return_inside_nested_loop(x):
    s = 0.0
    for i in range(3):
        for j in range(len(x)):
            s = s + x[j] * (i + 1)
            if s > 4.0:
                return s + x[0]
    return -s


def test_early_return_inside_loops():
    for x in [np.array([0.3, 0.4, 0.5]), np.array([0.9, 0.8, 0.1])]:
        check_grad(return_inside_loop, x)
    for x in [np.array([0.2, 0.3]), np.array([1.5, 1.0])]:
        check_grad(return_inside_nested_loop, x)


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def horner(coeffs, x, k):
    if k == len(coeffs) - 1:
        return coeffs[k]
    return coeffs[k] + x * horner(coeffs, x, k + 1)


def is_even_sum(x, n):
    if n == 0:
        return x
    return is_odd_sum(x * 1.5, n - 1)


def is_odd_sum(x, n):
    if n == 0:
        return -x
    return is_even_sum(np.sin(x), n - 1) + x


def test_recursion_direct_and_mutual():
    g = check_grad(power, 1.3, 5)
    assert g == pytest.approx(5 * 1.3**4)
    c = np.array([1.0, -2.0, 0.5, 3.0])
    gx = check_grad(horner, c, 0.7, 0, wrt=(0, 1))
    assert gx[1] == pytest.approx(-2.0 + 2 * 0.5 * 0.7 + 3 * 3.0 * 0.7**2)
    check_grad(is_even_sum, 0.4, 5)
    check_grad(is_even_sum, 0.4, 4)


def euler(k, y0):
    y = y0
    h = 0.01
    for _ in range(200):
        y = y + h * (-k * y + math.sin(y))
    return y


def test_scalar_ode_loop():
    check_grad(euler, 0.5, 1.0, wrt=(0, 1))


def mse_loop(y, yhat):
    n = len(y)
    s = 0.0
    for i in range(n):
        d = y[i] - yhat[i]
        s = s + d * d
    return s / n


def test_mse_loop_matches_hand_derived():
    y, yhat = RNG.normal(size=50), RNG.normal(size=50)
    gy, gyh = pullback.grad(mse_loop, wrt=(0, 1))(y, yhat)
    np.testing.assert_allclose(gy, 2 * (y - yhat) / 50, rtol=1e-12)
    np.testing.assert_allclose(gyh, -2 * (y - yhat) / 50, rtol=1e-12)
    check_grad(mse_loop, y[:5].astype(np.float32), yhat[:5].astype(np.float32))


def different_paths(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0:
            s = s + x[i] ** 2
        else:
            s = s - x[i] * 3.0
    return s


def test_same_gradient_function_follows_new_paths_each_call():
    g = pullback.grad(different_paths)
    for _ in range(5):
        x = RNG.normal(size=6)
        np.testing.assert_allclose(g(x), np.where(x > 0, 2 * x, -3.0))


def test_loop_saves_only_needed_values():
    # The snapshot of the MSE loop holds one scalar per iteration, not the arrays; the
    # reverse loop walks the range backwards instead of saving the index.
    source = pullback.grad(mse_loop).source_for(np.zeros(3), np.zeros(3))
    assert "_stack1.append(d)" in source
    assert "for i in reversed(_range1):" in source
