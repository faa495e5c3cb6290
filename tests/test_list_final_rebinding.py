"""A local list rebound after its last change (``out = np.array(out)`` after the loop
that appended to it) is still a local list for those changes (found by probe_fin: a
yield-curve bootstrap was refused with PB106, 'a container from outside the function')."""

import numpy as np
import pytest
from fd import check_grad, check_hvp

import pullback

C = np.array([0.1, 0.2, 0.3], dtype=np.float64)


def appended_then_array(c):
    dfs = []
    for i in range(3):
        annuity = sum(dfs)
        dfs.append(c[i] * (1 - annuity))
    dfs = np.array(dfs)
    return np.sum(dfs**2)


def stored_then_array(c):
    out = [0.0] * 3
    for i in range(3):
        out[i] = c[i] ** 2
    out = np.array(out)
    return out @ out


def appended_then_summed(c):
    terms = []
    for x in c:
        terms.append(np.sin(x) * x)
    terms = sum(terms)
    return terms * 2


def rebound_in_a_branch(c):
    xs = []
    if c[0] > 0:
        xs.append(c[0])
        xs.append(c[1] * c[2])
    xs = np.array(xs) if xs else np.zeros(1)
    return np.sum(xs**2)


def rebound_inside_the_changing_loop(c):
    acc = []
    for k in range(2):
        for i in range(3):
            acc.append(c[i] * k)
        acc = np.array(acc).tolist()
    return sum(acc)


CASES = [appended_then_array, stored_then_array, appended_then_summed, rebound_in_a_branch]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_final_rebinding_keeps_the_list_local(f, dtype):
    check_grad(f, C.astype(dtype))


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_second_order_through_a_final_rebinding(f):
    check_hvp(f, C, np.array([0.3, -0.2, 0.5]))


def test_a_rebinding_inside_the_loop_that_changes_the_list_is_refused():
    with pytest.raises(pullback.UnsupportedSyntaxError, match="PB106") as info:
        pullback.grad(rebound_inside_the_changing_loop)(C)
    assert "acc.append" in str(info.value)
