"""An object the function owns under a second name (transform/object_stores._one_name):
``b = a`` in the function's own body, both names bound once, is one object under one
name, and its stores through either name are versions (checked against central
differences, float64 and float32, with jvp and Hessian-vector products). A second name
that may not be the same object at every use (bound in a branch or a loop, or bound twice)
stays refused where the store is read back, with a message that says where the store was
and a fix that works (the fixed functions below are checked too)."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_hessian_is_jacobian_of_grad
from probe.probe_harness import check_float32, check_probe
from test_object_state import Scaled

import pullback

P3 = np.array([0.3, -0.2, 0.7])


def store_through_a_second_name(p):
    a = Scaled(p)
    b = a
    b.x = a.x * 3.0
    return np.sum(a.x * p)


def method_through_a_second_name(p):
    a = Scaled(p)
    b = a
    r = b.scale(p[0])
    a.x = np.sin(a.x)
    return r + np.sum(b.x**2)


def second_name_then_loop(p):
    a = Scaled(p)
    b = a
    total = 0.0
    for k in range(3):
        r = b.scale(1.0 + 0.1 * k)
        total = total + r * a.x[k]
    return total


CASES = {
    "store_through_a_second_name": store_through_a_second_name,
    "method_through_a_second_name": method_through_a_second_name,
    "second_name_then_loop": second_name_then_loop,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_name_in_the_body_against_differences(name):
    check_probe(CASES[name], P3, second=True)
    check_float32(CASES[name], P3)


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_name_hessian_is_jacobian_of_grad(name):
    check_hessian_is_jacobian_of_grad(CASES[name], P3)


def second_name_in_a_branch(p):
    a = Scaled(p)
    if p[0] > 0:
        b = a
    else:
        b = Scaled(p * 2.0)
    b.x = a.x * 3.0
    return np.sum(a.x)


def second_name_in_a_branch_fixed(p):
    # the message's fix: store through the one name that made the object
    a = Scaled(p)
    if p[0] > 0:
        a.x = a.x * 3.0
    return np.sum(a.x)


def _line(f, k):
    return f"{__file__}:{f.__code__.co_firstlineno + k}"


def test_golden_message_of_a_read_through_a_second_name():
    read, store = _line(second_name_in_a_branch, 7), _line(second_name_in_a_branch, 6)
    with pytest.raises(pullback.PullbackError) as info:
        pullback.grad(second_name_in_a_branch)(P3)
    assert str(info.value) == (
        f"{read}:19: PB107 this reads back 'x' of a differentiated Scaled, stored at "
        f"{store}:5 while the gradient ran on an object pullback could not follow there "
        "(the object had a second name, was in a container, came in as an argument or was "
        "handed on by a call or a method, or a method changed a list or array it holds in "
        "place): the gradient through that store would be lost.\n"
        "Fix: keep the object under the one name that made it (`obj = Scaled(...)`, no "
        "`b = obj` in a loop or branch, no list or call holding it) and store through that "
        "name, a list as a tuple (`self.items = self.items + (v,)`), or return the new "
        "value from the method that computes it and use that "
        "(see docs/limitations.md#PB107)."
    )
    check_probe(second_name_in_a_branch_fixed, P3, second=True)
    check_float32(second_name_in_a_branch_fixed, P3)


def bound_twice(p):
    a = Scaled(p)
    b = a
    b.x = a.x * 3.0
    b = Scaled(p)  # b is not a at every use: not merged
    return np.sum(a.x) + np.sum(b.x)


def read_in_a_nested_function(p):
    a = Scaled(p)
    b = a
    b.x = a.x * 3.0

    def total():
        return np.sum(b.x)

    return total()


@pytest.mark.parametrize("f", [bound_twice, read_in_a_nested_function])
def test_second_names_not_merged_stay_exact_or_refused(f):
    try:
        got = pullback.grad(f)(P3)
    except pullback.PullbackError as exc:
        assert "PB107" in str(exc) and "Fix:" in str(exc)
        return
    check_probe(f, P3)
    assert np.all(np.isfinite(got))
