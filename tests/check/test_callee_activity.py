"""The check is activity-aware in the user functions a differentiated function calls: a
call with neither rule nor source there is reported (PB301) only where a differentiated
value may reach it, as the call sites pass them (check/taint.py); one that carries no
gradient just runs, once, as in the primal."""

from __future__ import annotations

import time

import gast
import numpy as np
import pytest
from fd import check_grad

import pullback
from pullback.check import check
from pullback.check.taint import callee_active_params, tainted_names

# a NumPy ufunc made from a Python function: no source pullback reads, no rule
OPAQUE = np.frompyfunc(lambda v: v + 1, 1, 1)
CALLS = []


def helper_with_inactive_calls(x, n, label="run"):
    stamp = time.perf_counter()  # a library call on nothing differentiated
    k = OPAQUE(n)  # no rule, but only `n` (an integer setting) reaches it
    CALLS.append((label, stamp))
    return np.sum(x**2) * float(k)


def uses_helper(x):
    return helper_with_inactive_calls(x, 3)


def helper_with_an_active_call(x, n):
    return np.sum(OPAQUE(x)) * n  # a gradient would have to cross OPAQUE


def uses_active_helper(x):
    return helper_with_an_active_call(x, 3)


def passes_the_differentiated_value_as_the_setting(x):
    return helper_with_inactive_calls(x, x[0])  # now OPAQUE(n) carries a gradient


class Model:
    def __init__(self):
        self.calls = 0

    def loss(self, w, seed):
        noise = OPAQUE(seed)  # inactive: `seed` is an integer at every call site
        self.calls += 1
        return np.sum(w**2) + 0.0 * float(noise)


MODEL = Model()


def uses_a_method(w):
    return MODEL.loss(w, 7)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_inactive_calls_in_callees_just_run(dtype):
    assert check(uses_helper) == []
    CALLS.clear()
    x = np.array([0.5, -1.0, 2.0], dtype=dtype)
    check_grad(uses_helper, x)
    g = pullback.grad(uses_helper)(x)
    np.testing.assert_allclose(g, 2 * x * 4.0, rtol=1e-6)
    assert check(uses_a_method) == []
    check_grad(uses_a_method, x)


def test_side_effects_in_a_callee_happen_once_per_gradient():
    CALLS.clear()
    pullback.grad(uses_helper)(np.array([0.5, -1.0, 2.0]))
    assert len(CALLS) == 1


def test_active_calls_in_callees_are_still_reported_before_running():
    (d,) = check(uses_active_helper)
    assert d.code == "PB301" and d.source_line.strip().startswith("return np.sum(OPAQUE(x))")
    with pytest.raises(pullback.UnsupportedSyntaxError, match="PB301"):
        pullback.grad(uses_active_helper)(np.ones(3))
    (d,) = check(passes_the_differentiated_value_as_the_setting)
    assert d.code == "PB301" and "OPAQUE(n)" in d.source_line


def test_a_callee_called_both_ways_is_reported_once():
    def both(x):
        return helper_with_inactive_calls(x, 2) + helper_with_inactive_calls(x, x[1])

    found = check(both)
    assert [d.code for d in found] == ["PB301"]


def test_taint_follows_assignments_loops_containers_and_nested_functions():
    tree = gast.parse(
        "def f(x, n, m):\n"
        "    a = x * 2\n"
        "    b = n + 1\n"
        "    xs = []\n"
        "    xs.append(a)\n"
        "    for v in xs:\n"
        "        c = v\n"
        "    def g(t):\n"
        "        return t * a\n"
        "    d = g(m)\n"
        "    out = {}\n"
        "    out['k'] = d\n"
        "    return b\n"
    ).body[0]
    tainted = tainted_names(tree, {"x"})
    assert {"x", "a", "xs", "v", "c", "g", "d", "out"} <= tainted
    assert not {"n", "b", "m"} & tainted


def test_callee_parameters_from_the_call_site():
    callee = gast.parse("def h(self, p, q=1, *, r=2):\n    return p\n").body[0]
    call = gast.parse("obj.h(x, 3, r=y)").body[0].value
    assert callee_active_params(call, callee, {"x"}, bound=1) == {"p"}
    assert callee_active_params(call, callee, {"x", "y"}, bound=1) == {"p", "r"}
    assert callee_active_params(call, callee, {"obj"}, bound=1) == {"self"}
    star = gast.parse("h(*args)").body[0].value
    assert callee_active_params(star, callee, {"args"}, bound=0) is None
    # no argument carries a differentiated value: no parameter does, whatever the binding
    # (a decorator's `def helper(*args, **kwds)`, @contextlib.contextmanager's)
    assert callee_active_params(star, callee, set(), bound=0) == frozenset()
    vararg = gast.parse("def helper(*args, **kwds):\n    return args\n").body[0]
    assert callee_active_params(call, vararg, {"k"}, bound=0) == frozenset()
    assert callee_active_params(call, vararg, {"x"}, bound=0) is None


def settings_from_an_argument(x, n):
    return helper_with_inactive_calls(x, n)


def test_parameters_not_differentiated_carry_no_gradient_into_callees():
    x = np.array([0.5, -1.0, 2.0])
    # wrt x only: n is a setting, and OPAQUE(n) in the helper just runs
    g = pullback.grad(settings_from_an_argument)(x, 3)
    np.testing.assert_allclose(g, 2 * x * 4.0, rtol=1e-12)
    # differentiated in n too: a gradient would have to cross OPAQUE(n)
    with pytest.raises(pullback.UnsupportedSyntaxError, match="PB301"):
        pullback.grad(settings_from_an_argument, wrt=(0, 1))(x, 3.0)


# Window smoothing in the scipy-cookbook style (the window picked with getattr; found by
# probe3): `np.convolve(w, x)` calls a function of the
# module, it does not hand x to `np`, so `getattr(np, window)` in the callee reads nothing
# differentiated and just runs.
def smooth(x, window_len=5, window="hanning"):
    w = getattr(np, window)(window_len)
    return np.convolve(w / w.sum(), x, mode="valid")


def smoothed_energy(x):
    return np.sum(smooth(x) ** 2)


def test_a_module_is_not_tainted_by_a_call_of_its_functions():
    assert check(smoothed_energy) == []
    check_grad(smoothed_energy, np.linspace(0.0, 1.0, 9) ** 2)
    tree = gast.parse("def f(x, name):\n    y = np.convolve(x, x)\n    g = getattr(np, name)\n")
    assert tainted_names(tree.body[0], {"x"}, frozenset({"np"})) == {"x", "y"}
