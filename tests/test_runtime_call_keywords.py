"""A differentiated keyword argument of a call found at run time (a method of a value, a
function held in a variable) is a star-call (transform/star_calls.py), and gets its
cotangent and tangent like a positional argument. Before, the activity analysis did not
see the keyword reach the result at all, and the gradient was silently zero (found by
probe_fin); then it was refused (PB502)."""

import numpy as np
import pytest
from fd import check_grad

import pullback


class Scaler:
    def apply(self, x, scale=1.0):
        return x * scale


def method_keyword(t):
    s = Scaler()
    return s.apply(2.0, scale=t)


def method_keyword_argument(t, s):
    y = s.apply(np.array([1.0, 2.0]), scale=t)
    return np.sum(y**2)


def _helper(x, scale=1.0):
    return x * scale


def function_value_keyword(t):
    h = _helper
    return h(2.0, scale=t)


def method_positional(t):
    s = Scaler()
    return s.apply(2.0, t)


def method_inactive_keyword(t):
    s = Scaler()
    return s.apply(t, scale=3.0)


@pytest.mark.parametrize(
    "f,args",
    [
        (method_keyword, (0.3,)),
        (method_keyword_argument, (0.3, Scaler())),
        (function_value_keyword, (0.3,)),
    ],
)
def test_a_differentiated_keyword_of_a_run_time_call_is_differentiated(f, args):
    check_grad(f, *args)
    h = 1e-5
    g = pullback.grad(f)
    want = (g(args[0] + h, *args[1:]) - g(args[0] - h, *args[1:])) / (2 * h)
    assert pullback.hessian(f)(*args) == pytest.approx(want, rel=1e-6, abs=1e-8)
    _, t = pullback.jvp(f, args, (1.0,) + (None,) * (len(args) - 1))
    assert t == pytest.approx(g(*args), rel=1e-10)


@pytest.mark.parametrize("f", [method_positional, method_inactive_keyword])
def test_the_positional_fix_and_constant_keywords_work(f):
    check_grad(f, 0.3)
