"""A flag (a bool, an int, a function) passed on through a call found at run time gets the
symbolic zero as its cotangent, never ``None``.

A gradient that is differentiated again reverses a call found at run time by the callee's
generated vjp function, differentiating every argument that is no object (a flag among
them: which arguments hold floats is only known at run time). A parameter that no use
reached gets a concrete zero from that vjp function; for a flag that zero was ``None``
(the value ``grad`` gives users), and a flag passed on to two helpers then added ``None``
to ``None`` in the caller's vjp (a TypeError in the second derivative already). The vjp
function now returns ``NO_TANGENT`` there (``runtime.vjp_zero``), as a rule's pullback
does for an argument without a tangent.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest
from fd import check_grad, check_hvp

from pullback import default_registry, grad, hessian, jacobian
from pullback.adjoints import VJPRef
from pullback.tangents import NO_TANGENT


def cube_if(x, flag):
    if flag:
        return x * x * x
    return x


def twice(x, flag):
    # the flag reaches two helpers: its cotangent is added from both
    return cube_if(x, flag) * cube_if(x, flag)


def call_found_at_run_time(x, fn):
    return fn(x, True)


def _derivative(order):
    f = call_found_at_run_time
    for _ in range(order):
        f = grad(f)
    return f


@pytest.mark.parametrize("order", [1, 2, 3])
def test_flag_through_two_helpers_in_a_call_found_at_run_time(order):
    # twice(x, True) = x**6: its derivatives 6 x**5, 30 x**4, 120 x**3
    x = 1.3
    exact = {1: 6 * x**5, 2: 30 * x**4, 3: 120 * x**3}[order]
    assert _derivative(order)(x, twice) == pytest.approx(exact, rel=1e-13)


def test_third_derivative_against_central_differences_of_the_second():
    x, h = 0.8, 1e-5
    second = _derivative(2)
    fd = (second(x + h, twice) - second(x - h, twice)) / (2 * h)
    assert _derivative(3)(x, twice) == pytest.approx(fd, rel=1e-7)


def test_generated_vjp_gives_no_tangent_for_a_flag():
    ref = VJPRef(cube_if, ("x", "flag"), default_registry())
    dx, dflag = ref(2.0, 1.5, True)
    assert dx == pytest.approx(2.0 * 3 * 1.5**2)
    assert dflag is NO_TANGENT
    # a float no use reached still gets a concrete zero like it
    dx, dflag = ref(2.0, np.array([1.5, 0.5]), 1)
    np.testing.assert_array_equal(dx, [2.0 * 3 * 1.5**2, 2.0 * 3 * 0.5**2])
    assert dflag is NO_TANGENT


def unreached(x, y, n):
    return x * x


def test_generated_vjp_zeros_what_no_use_reached():
    ref = VJPRef(unreached, ("x", "y", "n"), default_registry())
    dx, dy, dn = ref(1.0, 2.0, np.zeros(3), 4)
    assert dx == 4.0
    np.testing.assert_array_equal(dy, np.zeros(3))  # a float: a concrete zero like it
    assert dn is NO_TANGENT
    # what users receive is unchanged: the fused gradient's value for a parameter no use
    # reached is a concrete zero like it
    dx, dy = grad(unreached, wrt=(0, 1))(2.0, np.ones(2), 3)
    assert dx == 4.0
    np.testing.assert_array_equal(dy, np.zeros(2))


class _Empty:  # no fields: a record whose cotangent is the empty tuple
    def half(self, p):
        return p * 0.5


class _Holds:  # one field that holds no float
    def __init__(self, act):
        self.act = act


def test_a_records_vjp_zero_is_its_cotangent_in_the_sweep_and_adds():
    """``runtime.vjp_zero`` of a record gave the record the user's gradient has (a rebuilt
    object), which the reverse sweep could not add to another cotangent of it: now the
    tuple of its fields' zeros, as the sweep holds a record's cotangent."""
    import dataclasses

    from pullback import runtime
    from pullback.plain_classes import constructor_of
    from pullback.tangents import add

    @dataclasses.dataclass
    class Pair:
        w: np.ndarray
        act: object

    Named = collections.namedtuple("Named", ["w", "k"])
    empty = constructor_of(_Empty)()
    holds = constructor_of(_Holds)(np.sin)
    assert runtime.vjp_zero(empty) == ()
    assert runtime.vjp_zero(holds) == (NO_TANGENT,)
    pair = runtime.vjp_zero(Pair(np.ones(2), np.sin))
    assert type(pair) is tuple and pair[1] is NO_TANGENT
    np.testing.assert_array_equal(pair[0], np.zeros(2))
    named = runtime.vjp_zero(Named(np.ones(2), 3))
    assert type(named) is tuple and named[1] is NO_TANGENT  # (a named tuple's + joins)
    assert add(runtime.vjp_zero(empty), runtime.vjp_zero(empty)) == ()
    nested = runtime.vjp_zero([holds, {"p": Pair(2.0, None)}])
    assert nested == [(NO_TANGENT,), {"p": (0.0, NO_TANGENT)}]


Pair = collections.namedtuple("Pair", ["w", "k"])


def _uses(p, x):
    return p.w * x


def _ignores(p, x):
    return np.sin(x)


def _helpers_found_at_run_time(x, fns):
    p = Pair(x * 2.0, 3)
    t = 0.0
    for fn in fns:
        t = t + np.sum(fn(p, x) * x)
    return t


def named_tuple_to_helpers(x):
    return _helpers_found_at_run_time(x, [_ignores, _uses, _ignores])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_named_tuple_no_use_reached_adds_as_its_fields_to_second_order(dtype):
    """The vjp zero of a named tuple was the named tuple of zeros: added to another (the
    helper that ignores it, then one that reads it), ``+`` joined the two tuples and the
    Hessian failed (``zip() argument 2 is shorter``). It is the tuple of its fields' zeros."""
    x = np.array([0.3, -0.2], dtype=dtype)
    check_grad(named_tuple_to_helpers, x)
    h = hessian(named_tuple_to_helpers)(x)
    assert h.dtype == dtype
    rtol = 1e-5 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(h, jacobian(grad(named_tuple_to_helpers))(x), rtol=rtol)
    if dtype == np.float64:
        check_hvp(named_tuple_to_helpers, x, np.array([1.0, -0.5]))
