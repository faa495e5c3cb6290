# ruff: noqa: B006, B007, B008, B905, E731 - written the way public code is written
"""Probe: Python builtins, containers and NumPy helpers as numerical code uses them.

sum/abs/pow/math.fsum/math.prod, bisect, zip(*rows), for-else, break out of nested loops,
return inside a loop, recursion, argsort/take_along_axis/partition, order statistics,
lstsq/pinv/eigh, logsumexp with b=, clip with array bounds, list and tuple concatenation,
append/extend/insert/pop, dict update/setdefault, nested lists, concatenate/hstack/vstack,
slice stores. Every probe is checked to second order (grad, jvp, hvp, Hessian) against
central differences; refusals are asserted with their reason and fix. (PYTEST_DONT_REWRITE:
assert_check's assert is the user's own.)
"""

import bisect
import heapq
import math
import statistics

import numpy as np
import pytest
from probe_harness import check_probe, check_refusal
from scipy.special import logsumexp, softmax


def sum_list_arrays(x):
    parts = [x * 1.0, x ** 2, np.sin(x)]
    return np.sum(sum(parts))


def builtin_abs_round_pow(x):
    return abs(x[0]) * pow(x[1], 2) + round(3.7) * x[2] + divmod(7, 2)[0] * x[0]


def math_fsum_prod(x):
    return math.fsum([x[0], x[1] ** 2, x[2]]) * math.prod([x[0], 2.0, x[2]])


def bisect_lookup(x, knots=[0.0, 1.0, 2.0]):
    i = bisect.bisect_left(knots, 1.5)
    return x[i] ** 2


def zip_star_transpose(x):
    rows = [[x[0], x[1]], [x[2], x[0]]]
    cols = list(zip(*rows))
    return cols[0][1] * cols[1][0]


def for_else(x):
    total = 0.0
    for v in x:
        if v > 5:
            break
        total += v * v
    else:
        total *= 2
    return total


def nested_break(x):
    total = 0.0
    for i in range(3):
        for j in range(3):
            if j > i:
                break
            total += x[i] * x[j]
    return total


def return_in_loop(x):
    for i in range(len(x)):
        if x[i] > 1.0:
            return x[i] ** 2
    return 0.0


def recursive_poly(x, n=4):
    if n == 0:
        return 1.0
    return 1.0 + x * recursive_poly(x, n - 1)


def argsort_index(x):
    idx = np.argsort(x)
    return x[idx[0]] * 2 + x[idx[-1]]


def take_along(X):
    idx = np.argmax(X, axis=1)[:, None]
    return np.sum(np.take_along_axis(X, idx, axis=1) ** 2)


def median_percentile(x):
    return np.median(x) + np.percentile(x, 75) + np.nanmean(x) + np.ptp(x)


def lstsq_pinv(A):
    b = np.array([1.0, 2.0, 3.0])
    sol = np.linalg.lstsq(A, b, rcond=None)[0]
    return np.sum(sol ** 2) + np.sum(np.linalg.pinv(A) ** 2)


def eigh_smallest(x):
    M = np.array([[2.0, x[0], 0.0], [x[0], 3.0, x[1]], [0.0, x[1], 4.0 + x[2]]])
    w, V = np.linalg.eigh(M)
    return w[0] + V[0, 0] ** 2


def lse_b_softmax(x):
    return logsumexp(x, b=np.array([1.0, 2.0, 0.5])) + np.sum(softmax(x) * np.arange(3))


def flip_roll(x):
    return np.sum(np.flip(x) * np.roll(x, 1)) + np.sum(x[::-2] ** 2)


def clip_arrays(x):
    lo = np.array([-0.5, -0.5, 0.0])
    hi = x ** 2 + 0.5
    return np.sum(np.clip(x, lo, hi) ** 2)


def heaviside_min(x):
    return np.sum(np.heaviside(x, 0.5) * x ** 2 + np.minimum(x, 0) ** 2)


def maximum_reduce(x):
    return np.maximum.reduce(x) + np.add.reduce(x ** 2)


def dict_comp(x):
    d = {k: v ** 2 for k, v in zip("abc", x)}
    return d["a"] + d["c"] * 2


def list_slice_assign(x):
    buf = [0.0] * 5
    buf[1:4] = [x[0], x[1] * 2, x[2] ** 2]
    return sum(buf) * buf[2]


def any_all(x):
    if any(x > 1.0) and not all(x > 0):
        return np.sum(x ** 3)
    return np.sum(x)


def partition_kth(x):
    return np.partition(x, 1)[1] * 3


def assert_check(x):
    assert x.ndim == 1, "vector expected"
    return np.sum(np.exp(x))


def np_float_conversions(x):
    a = np.float32(2.0) * x[0]
    return float(a) + x[1].item() * 2 + np.float64(x[2])


def statistics_mean(x):
    return statistics.mean([x[0], x[1], x[2]]) ** 2


def heapq_small(x):
    s = heapq.nsmallest(2, list(x))
    return s[0] * s[1]


def average_weights(x, w=np.array([1.0, 2.0, 3.0])):
    return np.average(x ** 2, weights=w) + np.average(x, weights=x ** 2)


def cov_weights(X):
    return np.sum(np.cov(X.T, aweights=np.arange(1.0, 7.0)))


def append_extend(x):
    xs = [1.0]
    xs.append(x[0] * 2)
    xs.extend([x[1], x[2] ** 2])
    xs.insert(1, x[0] * x[1])
    last = xs.pop()
    return sum(xs) * last


def concat_loop(x):
    acc = []
    for i in range(3):
        acc = acc + [x[i] * (i + 1)]
    acc = [0.5] + acc
    return acc[1] * acc[3] + acc[0]


def tuple_concat_loop(x):
    t = ()
    for v in x:
        t = t + (v ** 2,)
    t = (1.0,) + t
    return t[1] + t[3] * t[0]


def star_unpack(x):
    first, *rest = list(x)
    a, (b, c) = x[0], (x[1], x[2])
    return first * sum(rest) + a * b * c


def dict_ops(x):
    d = {"a": x[0]}
    d.update(b=x[1] * 2)
    d.setdefault("c", x[2] ** 2)
    d["a"] = d["a"] + d["c"]
    return d["a"] * d["b"]


def nested_lists(x):
    grid = [[0.0] * 2 for _ in range(2)]
    grid[0][1] = x[0]
    grid[1][0] = x[1] * x[2]
    return grid[0][1] * 3 + grid[1][0]


def concat_arrays(x):
    parts = [np.array([1.0]), x[:2], np.array([2.0]), x[2:] ** 2]
    v = np.concatenate(parts)
    return np.sum(v * np.arange(5.0))


def hstack_scalars(x):
    v = np.hstack([0.0, x[0], x[1] ** 2, 1.0])
    return v @ np.array([1.0, 2.0, 3.0, 4.0])


def list_times(x):
    xs = [x[0]] * 3 + [x[1]]
    return sum(xs) * xs[3]


def reversed_list(x):
    xs = list(reversed([x[0], 1.0, x[2]]))
    return xs[0] * 2 + xs[2]


def list_comp_cond(x):
    ys = [v ** 2 for v in x if v > 0] + [1.0]
    return sum(ys) * ys[0]


def array_from_list_loop(x):
    rows = []
    for i in range(2):
        rows.append(np.array([x[i], 1.0, x[2]]))
    M = np.array(rows)
    return np.sum(M @ M.T)


def stack_vstack(x):
    M = np.vstack([x, x ** 2, np.ones(3)])
    return np.sum(np.column_stack([M[:, 0], M[:, 2]]) ** 2)


def where_scalar_branches(x):
    return np.sum(np.where(x > 0, x[0] * 2.0, x ** 2))


def slice_assign_array(x):
    out = np.ones(5)
    out[1:4] = x ** 2
    out[::2] *= 3.0
    return out @ np.arange(5.0)


def dict_of_lists(x):
    hist = {"loss": []}
    for i in range(3):
        hist["loss"].append(x[i] ** 2)
    return sum(hist["loss"])



P3 = np.array([0.3, -0.7, 1.1])
A = np.array([[1.0, 0.5], [0.2, 2.0], [0.3, -0.4]])
X2 = np.random.default_rng(0).standard_normal((6, 2))

# lse_b_softmax: first order only (logsumexp with b= has no second derivative yet)
PROBES = {
    # (weights= by keyword was refused as PB502; np.average's rule differentiates it)
    "average_weights": (average_weights, (P3,), True),
    "sum_list_arrays": (sum_list_arrays, (P3,), True),
    "builtin_abs_round_pow": (builtin_abs_round_pow, (P3,), True),
    "math_fsum_prod": (math_fsum_prod, (P3,), True),
    "bisect_lookup": (bisect_lookup, (P3,), True),
    "zip_star_transpose": (zip_star_transpose, (P3,), True),
    "for_else": (for_else, (P3,), True),
    "nested_break": (nested_break, (P3,), True),
    "return_in_loop": (return_in_loop, (P3,), True),
    "recursive_poly": (recursive_poly, (0.7,), True),
    "argsort_index": (argsort_index, (P3,), True),
    "take_along": (take_along, (X2,), True),
    "median_percentile": (median_percentile, (np.array([0.3, -0.7, 1.1, 0.5, 2.0]),), True),
    "lstsq_pinv": (lstsq_pinv, (A,), True),
    "eigh_smallest": (eigh_smallest, (P3,), True),
    "lse_b_softmax": (lse_b_softmax, (P3,), False),
    "flip_roll": (flip_roll, (P3,), True),
    "clip_arrays": (clip_arrays, (P3,), True),
    "heaviside_min": (heaviside_min, (P3,), True),
    "maximum_reduce": (maximum_reduce, (P3,), True),
    "dict_comp": (dict_comp, (P3,), True),
    "list_slice_assign": (list_slice_assign, (P3,), True),
    "any_all": (any_all, (P3,), True),
    "partition_kth": (partition_kth, (P3,), True),
    "assert_check": (assert_check, (P3,), True),
    "np_float_conversions": (np_float_conversions, (P3,), True),
    "append_extend": (append_extend, (P3,), True),
    "concat_loop": (concat_loop, (P3,), True),
    "tuple_concat_loop": (tuple_concat_loop, (P3,), True),
    "star_unpack": (star_unpack, (P3,), True),
    "dict_ops": (dict_ops, (P3,), True),
    "nested_lists": (nested_lists, (P3,), True),
    "concat_arrays": (concat_arrays, (P3,), True),
    "hstack_scalars": (hstack_scalars, (P3,), True),
    "list_times": (list_times, (P3,), True),
    "reversed_list": (reversed_list, (P3,), True),
    "list_comp_cond": (list_comp_cond, (P3,), True),
    "array_from_list_loop": (array_from_list_loop, (P3,), True),
    "stack_vstack": (stack_vstack, (P3,), True),
    "where_scalar_branches": (where_scalar_branches, (P3,), True),
    "slice_assign_array": (slice_assign_array, (P3,), True),
    "statistics_mean": (statistics_mean, (P3,), True),  # (the statistics family)
    "cov_weights": (cov_weights, (X2,), False),  # weighted cov: first order only
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_probe(name):
    f, args, second = PROBES[name]
    check_probe(f, *args, second=second)


# Refusals: library code without a rule (heapq), a differentiated keyword of a
# rule (np.average's weights=, PB502: pass it positionally),
# an append to a list inside a dict (PB106, with the rewrite that works).
REFUSED = {
    "heapq_small": (heapq_small, (P3,), ("PB301", "heapq.nsmallest")),
    "dict_of_lists": (dict_of_lists, (P3,), ("PB106", "hist['loss'] = hist['loss'] + [x[i] ** 2]")),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused(name):
    f, args, says = REFUSED[name]
    check_refusal(f, *args, says=says)
