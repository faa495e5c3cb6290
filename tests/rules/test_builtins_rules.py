"""Builtins rules against finite differences."""

from __future__ import annotations

import builtins

import numpy as np
import pytest

from pullback.registry import NONDIFF, default_registry
from pullback.tangents import NO_TANGENT, ZERO
from pullback.testing import check_rrule


def test_abs_pow_float():
    check_rrule(abs, -1.5)
    check_rrule(abs, np.array([1.5, -0.5]))
    check_rrule(abs, 1.0 + 2.0j)
    check_rrule(pow, 1.7, 2.5)
    check_rrule(pow, -1.5, 3)
    check_rrule(pow, np.array([1.5, 0.5]), 2.5)
    check_rrule(pow, 0.7, np.array([1.5, -0.5]))
    check_rrule(float, np.float32(1.5))
    check_rrule(float, np.array(2.5))
    check_rrule(float, 1.25)


def test_sum():
    check_rrule(sum, [1.0, 2.0, -0.5])
    check_rrule(sum, (1.0, 2.0), 0.5)
    check_rrule(sum, [np.array([1.0, 2.0]), np.array([0.5, -1.0])])
    check_rrule(sum, [np.array([1.0, 2.0]), 3.0])
    check_rrule(sum, np.array([[1.0, 2.0], [3.0, 4.0]]))
    check_rrule(sum, [1.5, 2.5], start=1.0)


def test_min_max():
    check_rrule(max, [1.0, 3.0, -0.5])
    check_rrule(min, (1.0, 3.0, -0.5))
    check_rrule(max, 1.5, 2.5)
    check_rrule(min, 1.5, 2.5, 0.5)
    check_rrule(max, [1.0, -3.0, 2.0], key=abs)
    check_rrule(max, [2.0, 1.0, 4.0, 3])
    _, back = default_registry().lookup(max).rrule([1.0, 2.0, 2.0])
    assert back(1.0) == ([ZERO, 1.0, ZERO],)
    y, back = default_registry().lookup(min).rrule([], default=0.0)
    assert y == 0.0 and back(1.0) == (NO_TANGENT,)


def test_sorted():
    check_rrule(sorted, [2.0, -1.0, 0.5])
    check_rrule(sorted, (2.0, -1.0, 0.5), reverse=True)
    check_rrule(sorted, [2.0, -1.0, 0.5], key=abs)
    check_rrule(sorted, np.array([0.25, -1.5, 3.0, 0.5]))
    check_rrule(sorted, np.array([[0.5, 2.0], [-1.0, 1.0]]), key=lambda row: float(row[1]))
    check_rrule(sorted, np.array([0.25, -1.5, 3.0], dtype=np.float32), reverse=True)


def test_sorted_ties_keep_their_order():
    # stable, as Python sorts: the first of two equal items stays first
    y, back = default_registry().lookup(sorted).rrule([1.5, -0.5, 1.5, 0.25], key=abs)
    assert y == [0.25, -0.5, 1.5, 1.5]
    assert back([10.0, 20.0, 30.0, 40.0]) == ([30.0, 20.0, 40.0, 10.0],)


def test_list_tuple():
    check_rrule(list, (1.5, 2.5))
    check_rrule(tuple, [1.5, 2.5])
    check_rrule(list, np.array([[1.0, 2.0], [3.0, 4.0]]))
    check_rrule(tuple, np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize(
    "fn", [builtins.round, builtins.len, builtins.range, builtins.int, builtins.bool]
)
def test_non_differentiable(fn):
    assert default_registry().lookup(fn).kind == NONDIFF


@pytest.mark.parametrize("dtype", (np.float64, np.float32), ids=lambda d: d.__name__)
@pytest.mark.parametrize("pick", [builtins.max, builtins.min], ids=lambda f: f.__name__)
def test_max_min_over_an_array_iterate_its_rows(pick, dtype):
    x = np.array([0.5, -1.5, 2.0], dtype)
    check_rrule(pick, x)  # a scalar: the extreme element
    check_rrule(pick, x.reshape(3, 1))  # rows of one element
    check_rrule(pick, [dtype(0.25), dtype(-0.75), 1.5])
    _, back = default_registry().lookup(pick).rrule(x)
    (g,) = back(1.0)
    want = np.zeros(3, dtype)
    want[np.argmax(x) if pick is builtins.max else np.argmin(x)] = 1.0
    np.testing.assert_array_equal(g, want)
    assert g.dtype == dtype


def test_max_over_an_iterator_of_floats_is_refused():
    from pullback.errors import UnsupportedCallError

    with pytest.raises(UnsupportedCallError, match="on a list, a tuple or an array"):
        default_registry().lookup(builtins.max).rrule(iter([1.0, 2.0]))


@pytest.mark.parametrize(
    "fn", [builtins.sum, builtins.list, builtins.tuple], ids=lambda f: f.__name__
)
def test_iterables_without_a_cotangent_are_refused(fn):
    from pullback.errors import UnsupportedCallError

    rule = default_registry().lookup(fn)
    with pytest.raises(UnsupportedCallError, match="a list, a tuple or an array"):
        rule.rrule(iter([1.0, 2.0]))
    rule.rrule(iter([1, 2]))  # ints carry no tangent: nothing is lost
    if fn is not builtins.sum:
        rule.rrule({"a": 1.0})  # a dict iterates over its keys


# -- dict(...) and d.copy() -------------------------------------------------------------------


def _dict_program(m, b, v):
    d = dict(a=m, b=b)  # keywords: the display {"a": m, "b": b}
    e = dict(d)  # a copy of a mapping
    e2 = e.copy()
    p = dict([("a", e2["a"] * v[0]), ("b", b), ("a", m * v[1])])  # the last "a" wins
    q = dict({"c": v}, s=b)
    return np.sum(p["a"] ** 2) * e["b"] + p["b"] ** 3 * np.sum(q["c"] * e2["a"]) + q["s"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dict_calls_and_copies_against_finite_differences(dtype):
    from fd import check_grad

    m = np.array([0.3, -0.5], dtype=dtype)
    v = np.array([1.2, 0.7], dtype=dtype)
    check_grad(_dict_program, m, dtype(0.8), v, wrt=(0, 1, 2))


def test_dict_calls_second_order():
    from fd import numerical_grad

    import pullback

    m, v, b = np.array([0.3, -0.5]), np.array([1.2, 0.7]), 0.8
    h = pullback.hessian(_dict_program, wrt=2)(m, b, v)
    g = pullback.grad(_dict_program, wrt=2)
    want = np.stack([numerical_grad(lambda w, k=k: g(m, b, w)[k], [v], 0) for k in range(2)])
    np.testing.assert_allclose(h, want, rtol=1e-6, atol=1e-8)


def _overwritten_entry(m, v):
    p = dict([("a", m), ("a", v)])  # m's entry is replaced: its gradient is zero
    return np.sum(p["a"] ** 2 * m)


def test_a_replaced_entry_has_a_zero_gradient_and_hessian():
    import pullback

    m, v = np.array([0.3, -0.5]), np.array([1.2, 0.7])
    np.testing.assert_allclose(pullback.grad(_overwritten_entry)(m, v), v**2)
    # d/dm of v^2 is 0, as an array of m's shape (the runtime zero is made concrete)
    np.testing.assert_array_equal(
        pullback.hessian(_overwritten_entry, wrt=1)(m, v), np.diag(2 * m)
    )


@pytest.mark.parametrize("entry", [np.zeros(()), np.zeros((0,)), np.zeros((1, 0))])
def test_dict_of_degenerate_entries(entry):
    import pullback

    def program(x):
        return np.sum(dict(a=x)["a"]) + np.sum(dict([("b", x)])["b"]) + np.sum(
            dict({"c": x}).copy()["c"]
        )

    g = pullback.grad(program)(entry)
    np.testing.assert_array_equal(g, np.full(entry.shape, 3.0))
    assert g.shape == entry.shape
