"""Unpacking and loop targets exactly as Python runs them.

* ``a, b = value`` iterates ``value`` once and checks its length (a wrong length raises
  ``ValueError`` as in the primal; a dict unpacks to its keys, a set to its items);
* starred targets ``first, *rest = t``, ``a, *mid, z = t`` (``rest`` is a list);
* loops over any nesting of ``zip``/``enumerate``/``reversed``:
  ``for i, (p, q) in enumerate(zip(xs, ys))``, ``for a, b in zip(xs, reversed(ys))``.

Gradients against central finite differences (tests/fd.py), float64 and float32, scalars
and arrays, reverse and forward mode, second order.
"""

# ruff: noqa: B905 - the cases are loops as users write them: zip() without strict=
from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_jvp

import pullback
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


def _x(dtype, n=4):
    return np.linspace(0.3, 1.7, n).astype(dtype)


# -- starred targets ----------------------------------------------------------------------
def first_times_rest(x):
    first, *rest = x
    return first * sum(rest)


def ends_and_middle(x):
    a, *mid, z = x
    return a * z + np.sum(np.array(mid) ** 2) * len(mid)


def star_of_tuple(x):
    t = (x[0] * 2.0, x[1], x[2] ** 2, x[3])
    *head, last = t
    return last * head[0] + head[-1]


def star_of_rows(m):
    top, *others = m
    return np.sum(top * np.sum(np.stack(others), axis=0))


def star_in_loop(x):
    rows = [(x[0], x[1], x[2]), (x[1], x[2], x[3])]
    total = 0.0
    for first, *rest in rows:
        total = total + first * rest[0] - rest[-1] ** 2
    return total


def empty_star(x):
    a, *none, b = x[:2]
    return a * b + len(none)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "f", [first_times_rest, ends_and_middle, star_of_tuple, star_in_loop, empty_star]
)
def test_starred_targets(f, dtype):
    check_grad(f, _x(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_starred_target_over_the_rows_of_a_matrix(dtype):
    check_grad(star_of_rows, np.linspace(-1.0, 1.0, 12).reshape(4, 3).astype(dtype))


def test_a_starred_rest_is_a_list_as_in_python():
    def kinds(x):
        _first, *rest = (x, x)
        return x * len(rest) if isinstance(rest, list) else x * 100.0

    assert pullback.grad(kinds)(2.0) == 1.0


def test_starred_targets_forward_and_second_order():
    x = _x(np.float64)
    check_grads(ends_and_middle, x, order=2)
    check_jvp(ends_and_middle, (x,), (np.array([1.0, -0.5, 0.25, 2.0]),))


# -- exact unpacking ----------------------------------------------------------------------
def pair_of_three(x):
    a, b = x[:3]
    return a * b


def keys_of_dict(x):
    k1, k2 = {"alpha": 1, "be": 2}
    return x[0] * len(k1 + k2)


def items_of_set(x):
    a, b = {1.0, 2.0}
    return x[0] * (a + b)


def from_user_function(x):
    a, b = halves(x)
    return np.sum(a * b)


def halves(x):
    return x[:2], x[2:]


def nested_targets(x):
    (a, b), c = (x[0], x[1] ** 2), x[2]
    return a * b * c


def swap(x):
    a, b = x[0], x[1]
    for _ in range(3):
        a, b = b, a + b
    return a * b


def test_unpacking_the_wrong_number_of_values_fails_as_in_python():
    x = _x(np.float64)
    with pytest.raises(ValueError, match="too many values to unpack"):
        pair_of_three(x)
    with pytest.raises(ValueError, match="too many values to unpack"):
        pullback.grad(pair_of_three)(x)

    def two_of_one(x):
        a, b = x[:1]
        return a

    with pytest.raises(ValueError, match="not enough values to unpack"):
        pullback.grad(two_of_one)(x)

    def at_least_three(x):
        a, *m, b, c = x[:2]
        return a

    with pytest.raises(ValueError, match="expected at least 3, got 2"):
        pullback.grad(at_least_three)(x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "f", [keys_of_dict, items_of_set, from_user_function, nested_targets, swap]
)
def test_unpacking_as_python_does(f, dtype):
    check_grad(f, _x(dtype))


def test_a_gradient_through_the_items_of_a_set_is_refused():
    """A set merges equal items and orders them by hash: no defined place for a gradient
    (it used to be a silent zero)."""

    def through_a_set(x):
        a, b = {x[0], x[1] + 10.0}
        return a * b

    def summed_set(x):
        return sum({x[0], x[1] * 2.0})

    def looped_set(x):
        s = 0.0
        for v in {x[0], x[1] * 2.0}:
            s = s + v**2
        return s

    for f in (through_a_set, summed_set, looped_set):
        with pytest.raises(pullback.UnsupportedSyntaxError, match="PB505"):
            pullback.grad(f)(_x(np.float64))
        with pytest.raises(pullback.UnsupportedSyntaxError, match="PB505"):
            pullback.jvp(f, (_x(np.float64),), (np.ones(4),))


def test_a_set_no_gradient_flows_through_still_runs():
    def membership(x):
        scale = 2.0 if x[0] in {x[1], 5.0} else 3.0
        return scale * np.sum(x**2)

    check_grad(membership, _x(np.float64))


# -- loops over zip / enumerate / reversed, nested ----------------------------------------
def enumerate_zip(x, y):
    s = 0.0
    for i, (p, q) in enumerate(zip(x, y)):
        s = s + (i + 1) * p * q
    return s


def zip_enumerate(x, y):
    s = 0.0
    for (i, p), q in zip(enumerate(x, start=1), y):
        s = s + i * p - q**2
    return s


def zip_reversed(x, y):
    s = 0.0
    for p, q in zip(x, reversed(y)):
        s = s + p * q
    return s


def reversed_enumerate_tuple_target(x, y):
    s = 0.0
    for pair in zip(x, y):
        s = s + pair[0] * pair[1] ** 2
    for k, v in enumerate(reversed(x)):
        s = s + k * v
    return s


def comprehension_over_enumerate_zip(x, y):
    return sum(i * p * q for i, (p, q) in enumerate(zip(x, y)))


def zip_of_three_shortest(x, y):
    s = 0.0
    for a, b, c in zip(x, y[:2], x[1:]):
        s = s + a * b * c
    return s


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "f",
    [
        enumerate_zip,
        zip_enumerate,
        zip_reversed,
        reversed_enumerate_tuple_target,
        comprehension_over_enumerate_zip,
        zip_of_three_shortest,
    ],
)
def test_nested_iteration(f, dtype):
    x, y = _x(dtype), _x(dtype)[::-1].copy()
    check_grad(f, x, y, wrt=(0, 1))


def test_nested_iteration_forward_and_second_order():
    x, y = _x(np.float64), _x(np.float64)[::-1].copy()
    for f in (enumerate_zip, zip_reversed):
        check_grads(f, x, y, wrt=(0, 1), order=2)
        check_jvp(f, (x, y), (np.ones(4), np.linspace(-1, 1, 4)))


def test_a_loop_over_a_zip_of_lists_of_arrays():
    def layers(ws, xs):
        out = 0.0
        for w, (a, b) in zip(ws, xs):
            out = out + np.sum(w * a) - np.sum(w * b)
        return out

    ws = [np.linspace(0.1, 0.9, 3), np.linspace(-0.5, 0.5, 3)]
    xs = [(np.ones(3), np.arange(3.0)), (np.arange(3.0), np.ones(3))]
    check_grad(layers, ws, xs, wrt=(0, 1))


def test_zip_strict_checks_lengths_as_zip_does():
    def strict_pairs(x, y):
        s = 0.0
        for p, q in zip(x, y, strict=True):
            s = s + p * q
        return s

    x = _x(np.float64)
    check_grad(strict_pairs, x, x[::-1].copy(), wrt=(0, 1))
    with pytest.raises(ValueError, match="zip\\(\\) argument 2 is shorter than argument 1"):
        pullback.grad(strict_pairs)(x, x[:2])


def _pairs_helper(xs, ys):
    s = 0.0
    for i, (p, q) in enumerate(zip(xs, reversed(ys))):
        s = s + (i + 1) * p * q
    return s


def calls_a_helper_with_nested_iteration(x):
    return _pairs_helper(x, x**2) * 2.0


def test_nested_iteration_in_a_called_function_passes_the_check():
    assert pullback.check(calls_a_helper_with_nested_iteration) == []
    check_grad(calls_a_helper_with_nested_iteration, _x(np.float64))


def test_a_loop_over_a_long_list_of_pairs():
    """Each read of the list used to add a whole list-sized cotangent (O(n^2)); the reads
    are folded into one list now. The gradient is exact: d/da_k = b_k, d/db_k = a_k."""

    def dot_of_pairs(pairs):
        s = 0.0
        for a, b in pairs:
            s = s + a * b
        return s

    pairs = [(0.01 * k, 1.0 - 0.002 * k) for k in range(400)]
    got = pullback.grad(dot_of_pairs)(pairs)
    assert type(got) is list and len(got) == 400
    assert all(type(g) is tuple for g in got)
    np.testing.assert_allclose([g[0] for g in got], [b for _, b in pairs], rtol=1e-15)
    np.testing.assert_allclose([g[1] for g in got], [a for a, _ in pairs], rtol=1e-15)
