"""``d[k] op= v`` (and ``l[i] op= v``) on an array the local dict or list holds: when the
function built the container and every array in it (each a new value: arithmetic, a NumPy
call that copies, a comprehension of those) and no other name, container or call holds one
while the container changes (check/held_arrays.py), changing the array in place is the same
as the written-out ``d[k] = d[k] op v``, which is differentiated
(check.owned_item_augassigns; it was refused when it ran, PB106). Where another name may
hold the array (``a = x * 2.0; d = {"a": a}``), the refusal stays, at the user's line, with
the written-out fix; a dict passed in stays PB106 before running."""

from __future__ import annotations

import numpy as np
import pytest
from fd import form_tests

import pullback
from pullback.errors import UnsupportedCallError, UnsupportedSyntaxError

HERE = __file__


def dict_minus_and_times(x):
    d = {"a": x * 2.0, "b": np.sin(x)}
    d["a"] -= 0.1 * d["b"]
    d["b"] *= x
    return np.sum(d["a"] ** 2 + d["b"])


def list_plus_and_divide(x):
    l = [x * 2.0, np.sin(x)]  # noqa: E741
    l[0] += l[1] * 3
    l[1] /= 1.5 + x**2
    return np.sum(l[0] ** 2 * l[1])


def dict_update_in_loop(x):
    d = {}
    d["w"] = x * 1.0
    for _ in range(3):
        d["w"] -= 0.1 * d["w"] ** 2
    return np.sum(d["w"])


def grads_over_keys(x):
    grads = {k: x * (k + 1) for k in range(2)}
    for k in grads:
        grads[k] += 0.5 * np.tanh(x)
    return np.sum(grads[0] * grads[1])


def scalar_items(x):
    d = {"s": x[0] * 1.0, "t": np.exp(x[1])}
    d["s"] *= d["t"]
    d["t"] -= x[2]
    return d["s"] * d["t"]


FORMS = [dict_minus_and_times, list_plus_and_divide, dict_update_in_loop, grads_over_keys]
FORMS.append(scalar_items)
X = np.array([0.3, -0.7, 0.45])

test_gradient_float64, test_gradient_float32, test_hessian, test_jvp = form_tests(
    FORMS, X, np.array([0.2, 0.5, -0.9])
)


def held_elsewhere(x):
    a = x * 2.0
    d = {"a": a}
    d["a"] -= x
    return np.sum(d["a"] * a)


def held_elsewhere_fixed(x):
    a = x * 2.0
    d = {"a": a}
    d["a"] = d["a"] - x
    return np.sum(d["a"] * a)


def changes_a_dict_passed_in(x, d):
    d["a"] -= x
    return np.sum(d["a"])


STORE = 'd["a"] -= x'


def _line(text):
    with open(HERE, encoding="utf-8") as f:
        return next(k for k, line in enumerate(f, 1) if text in line)


def test_an_array_another_name_holds_stays_refused_golden():
    with pytest.raises(UnsupportedCallError) as refused:
        pullback.grad(held_elsewhere)(X)
    assert str(refused.value) == (
        f"{HERE}:{_line(STORE)}: an augmented store into a list or dict item that "
        "is a ndarray: Python changes that ndarray itself in place, and other names may hold "
        "it, which pullback does not follow. Fix: write the new value out, `l[i] = l[i] + v`, "
        "which makes a new object (see docs/limitations.md#PB106).\n"
        '        d["a"] -= x'
    )
    # the fix (which no longer changes `a`) differentiates
    g = pullback.grad(held_elsewhere_fixed)(X)
    np.testing.assert_allclose(g, 4.0 * X)  # d(sum(2 x * x))


def test_a_dict_passed_in_stays_refused_before_running():
    with pytest.raises(UnsupportedSyntaxError) as refused:
        pullback.grad(changes_a_dict_passed_in)(X, {"a": np.ones(3)})
    message = str(refused.value)
    assert "PB106 container mutation: 'd[\"a\"] -= ...' changes 'd' in place" in message
    assert "Fix: copy it first: write `d = dict(d)` before the first change" in message
