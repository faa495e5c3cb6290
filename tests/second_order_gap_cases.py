"""Functions whose second derivatives had gaps where their first derivatives had none
(tests/test_second_order_gaps.py): np.where branches in loops and in helpers, np.abs of a
complex value, a np.vectorize object made inside the function."""

import numpy as np


# -- np.where in a loop ------------------------------------------------------------------
def loop_xlogx(x):
    s = 0.0
    for _k in range(3):
        s = s + np.sum(np.where(x > 0, x * np.log(x), 0.0))
    return s


def loop_sqrt_shifted(x):
    s = 0.0
    for k in range(2):
        s = s + np.sum(np.where(x > k, np.sqrt(x - k), 0.0))
    return s


def loop_sinc(x):
    s = 0.0
    for k in range(2):
        s = s + (k + 1.0) * np.sum(np.where(np.abs(x) < 1e-8, 1.0, np.sin(x) / x))
    return s


def while_xlogx(x):
    s = 0.0
    k = 0
    while k < 3:
        s = s + np.sum(np.where(x > 0, x * np.log(x), 0.0))
        k = k + 1
    return s


def break_xlogx(x):
    s = 0.0
    for k in range(5):
        if k == 3:
            break
        s = s + np.sum(np.where(x > 0, x * np.log(x), 0.0))
    return s


def nested_loops_sqrt(x):
    s = 0.0
    for i in range(2):
        for j in range(2):
            s = s + np.sum(np.where(x > 0, np.sqrt(x) * (i + j + 1.0), 0.0))
    return s


def carried_sqrt(x):
    y = x
    for _k in range(3):
        y = np.where(y > 0, np.sqrt(y), 0.0) + 0.1 * x
    return np.sum(y)


def nested_where_loop(x):
    s = 0.0
    for _k in range(2):
        inner = np.where(x < 4.0, np.sqrt(4.0 - x), 0.0)
        s = s + np.sum(np.where(x > 0, np.log(x) * inner, 0.0))
    return s


def xlogx_helper(v):
    return np.where(v > 0, v * np.log(v), 0.0)


def loop_helper(x):
    s = 0.0
    for _k in range(3):
        s = s + np.sum(xlogx_helper(x))
    return s


def loop_items(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.where(x[i] > 0, x[i] * np.log(x[i]), 0.0)
    return s


# -- np.where in a helper with a scalar argument -----------------------------------------
def safe(v, c):
    return np.where(v > 0, c * np.log(v), 0.0)


def safe_const(x):
    return np.sum(safe(x, 2.0))


def safe_of_x(x):
    return np.sum(safe(x, x[3]))


def safe_param(x, c):
    return np.sum(safe(x, c))


def safe_in_loop(x, c):
    s = 0.0
    for _k in range(2):
        s = s + np.sum(safe(x, c))
    return s


def safe_root(v, c):
    return np.where(v > c, np.sqrt(v - c), 0.0)


def safe_root_const(x):
    return np.sum(safe_root(x, 0.25))


def safe_scalar(t, c):
    return safe(t, c) + safe(t - 1.0, c)


# -- np.abs of a complex value -----------------------------------------------------------
def power_spectrum(x):
    return np.sum(np.abs(np.fft.fft(x)) ** 2)


def abs_of_complex(x):
    z = x[0] + 1j * x[1:]
    return np.sum(np.abs(z) ** 3)


def abs_mixed(x):
    z = x * np.exp(1j * x[::-1]) + 0.5j
    return np.sum(np.abs(z) * x) + np.abs(z[0] * z[1])


def abs_phase(x):
    return np.sum(np.abs(np.exp(1j * x) * x) ** 2)


# -- a np.vectorize object made inside the function --------------------------------------
def vectorize_lambda(x):
    vf = np.vectorize(lambda t: t**2 * np.sin(t))
    return np.sum(vf(x))


def _two(t, s):
    return t * np.exp(s) if t > 0 else np.sin(t) * s


def vectorize_two_arguments(x):
    vf = np.vectorize(_two, otypes=[float])
    return np.sum(vf(x, x[::-1]) * x)


def vectorize_in_a_loop(x):
    s = 0.0
    for k in range(2):
        vf = np.vectorize(lambda t: np.cos(t) * t)
        s = s + (k + 1.0) * np.sum(vf(x) ** 2)
    return s


# -- a user helper in a np.where branch, with a scalar argument --------------------------
def scaled_log(v, c):
    return c * np.log(v)


def helper_in_branch(x, c):
    return np.sum(np.where(x > 0, scaled_log(x, c), 0.0))


def helper_in_branch_loop(x, c):
    s = 0.0
    for _k in range(2):
        s = s + np.sum(np.where(x > 0, scaled_log(x, c), 0.0))
    return s
