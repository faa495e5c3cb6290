"""``xs[t][k] = v``: writes into arrays a local list or dict holds alone (check/held_arrays.py).

The transform writes each as a new array stored back (transform/list_mutation.py
``held_array_store``), which is what Python computes when nothing else holds the array;
where something may, the write stays refused with the fix. Against central finite
differences (float64 and float32, first and second order) and the primal's own values."""

from __future__ import annotations

import numpy as np
import pytest

from pullback import check, grad, value_and_grad
from pullback.testing import check_grads


def one_hot(w, inputs=(2, 0, 1)):
    xs, hs = {}, {}
    hs[-1] = np.zeros(3)
    total = 0.0
    for t in range(len(inputs)):
        xs[t] = np.zeros(3)
        xs[t][inputs[t]] = 1
        hs[t] = np.tanh(w * xs[t] + hs[t - 1])
        total = total + np.sum(hs[t] ** 2)
    return total


def parameter_dict(w):
    p = {"a": w * 2.0, "b": np.ones(3), "c": np.zeros((2, 3))}
    p["a"][0] = w[1] * w[2]
    p["b"][1:] += w[:2] ** 2
    p["c"][1, :] = np.sin(w)
    p["c"][0, 2] *= w[0]
    return np.sum(p["a"] ** 2) + np.sum(p["b"] * w) + np.sum(p["c"] * w)


def list_of_arrays(w):
    xs = []
    for t in range(3):
        xs.append(np.zeros(3))
        xs[t][t] = w[t] * 2.0
        xs[t][(t + 1) % 3] -= w[t] ** 2
    y = xs[1][0]  # an element: a number, not the array
    xs[1][0] = 10.0
    return sum(np.sum(x * w) for x in xs) + y * w[0]


def comprehension_rows(w):
    rows = [np.zeros(3) for _ in range(2)]
    rows[0][1] = w[0] * w[1]
    rows[1][:2] = w[1:] * 3.0
    return np.sum(rows[0] * rows[1]) + np.sum(np.stack(rows) * w)


def recurrence_in_a_dict(w):
    # each write reads the item it writes into: the value first, then the store, as Python
    state = {"y": np.ones(4)}
    for i in range(1, 4):
        state["y"][i] = np.sin(w[i - 1] * state["y"][i - 1]) + state["y"][i]
    state["y"][0] += state["y"][3] * w[2]
    return np.sum(state["y"] ** 2)


CASES = [one_hot, parameter_dict, list_of_arrays, comprehension_rows, recurrence_in_a_dict]
W = np.array([0.5, -1.0, 2.0])


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_accepted(fn):
    assert check(fn) == []


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_against_finite_differences(fn, dtype):
    check_grads(fn, W.astype(dtype), order=2)


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_values_are_pythons(fn):
    value, _ = value_and_grad(fn)(W)
    assert value == fn(W)


def put_in_by_name(w):
    a = w * 1.0
    xs = {0: a}
    xs[0][1] = 5.0
    return np.sum(a * w)


def kept_by_name(w):
    xs = {0: w * 1.0}
    a = xs[0]
    xs[0][1] = 5.0
    return np.sum(a * w)


def kept_by_another_list(w):
    xs = [w * 1.0]
    ys = [xs[0]]
    xs[0][1] = 5.0
    return np.sum(ys[0] * w)


def same_array_twice(w):
    a = np.zeros(3)
    xs = [a, a]
    xs[0][1] = w[0]
    return np.sum(xs[1] * w)


def kept_through_a_loop(w):
    xs = {}
    out = []
    for t in range(2):
        xs[t] = np.zeros(3)
        out.append(xs[t])
        xs[t][t] = w[t]
    return np.sum(out[0] * w)


@pytest.mark.parametrize(
    "fn, offset, says",
    [
        (put_in_by_name, 2, "`{0: a}` on line {} puts in a value that may be held elsewhere"),
        (kept_by_name, 2, "`xs[0]` on line {} may keep one of its arrays"),
        (kept_by_another_list, 2, "`xs[0]` on line {} may keep one of its arrays"),
        (same_array_twice, 2, "`[a, a]` on line {} puts in a value that may be held elsewhere"),
        (kept_through_a_loop, 5, "`xs[t]` on line {} may keep one of its arrays"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_a_shared_array_stays_refused(fn, offset, says):
    # Python's write would show through the other reference; a copy's would not
    (d,) = check(fn)
    assert d.code == "PB101" and "an array held in" in d.why
    line = fn.__code__.co_firstlineno + offset
    assert says.replace("{}", str(line)).replace("{0: a}", "{0: a}") in d.why
    assert d.fix.startswith("make the array under a name, write into it, then store it")


def test_an_item_that_is_not_an_array_is_refused_as_it_runs():
    def tuple_item(w):
        d = {"a": (1.0, 2.0)}
        d["a"][0] = w[0]
        return w[0]

    assert check(tuple_item) == []
    with pytest.raises(Exception, match="array"):
        grad(tuple_item)(W)


def test_a_write_two_levels_down_stays_refused():
    def deeper(w):
        p = {"c": np.zeros((2, 3))}
        p["c"][0][2] = w[0]  # into a row of the array: a view pullback does not follow
        return np.sum(p["c"] * w)

    (d,) = check(deeper)
    assert d.code == "PB101"
