"""np.vectorize over a function proved elementwise in its arrays: ONE vjp of the function
over the broadcast arrays (rules/numpy_functional.py ``_one_call_pullback``,
numpy_functional_pullbacks.py ``vectorize_one_call_pullback``) must give what one vjp per
element gives, to rounding, and what central finite differences give."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make
from test_numpy_functional import Vectorized

import pullback.rules.numpy_functional as nf
import pullback.rules.numpy_functional_pullbacks as pbs
from pullback import grad, hessian
from pullback.registry import default_registry
from pullback.tangents import NO_TANGENT, ZERO
from pullback.testing import check_grads, check_rrule
from pullback.testing.second_order import check_rrule_second_order

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
TOL = {np.float64: 1e-12, np.float32: 1e-5}


def smooth(t, c):
    return np.exp(-c * t * t) * np.sin(3.0 * t) + c * t


def two_arrays(a, b):
    u = a * b - 0.5
    return np.tanh(u) + np.where(a > b, a * a, -b)


def powered(t, n):
    return t**n + n * np.cos(t)


def reads_indices(t, p):
    return p[0] * np.sin(p[1] * t) + t


def one_value(t, c):
    return 2.0 * c


def branchy(t, c):
    if t > 0:
        return c * t * t
    return np.sin(c * t)


def _rule():
    return default_registry().lookup(np.vectorize.__call__)


def _cotangents(vec, args, dy, fast=True, monkeypatch=None):
    """The rule's cotangents, through the one call (``fast``) or one vjp per element."""
    if fast:
        return _rule().rrule(vec, *args)[1](dy)
    with monkeypatch.context() as m:
        m.setattr(nf, "one_call_modes", lambda vec, args: None)
        return _rule().rrule(vec, *args)[1](dy)


def _close(a, b, dtype):
    if a is ZERO or a is NO_TANGENT or b is ZERO or b is NO_TANGENT:
        assert a is b or np.all(np.asarray(a if b in (ZERO, NO_TANGENT) else b) == 0)
        return
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=TOL[dtype], atol=TOL[dtype])


def _agree(monkeypatch, vec, args, dtype, fast_expected=True):
    """The one call is (or is not) taken, and agrees with the per-element path."""
    assert (pbs.one_call_modes(vec, args) is not None) is fast_expected
    y = vec(*args)
    dy = make("real", np.shape(y), np.float64, seed=7)
    fast = _cotangents(vec, args, dy)
    slow = _cotangents(vec, args, dy, fast=False, monkeypatch=monkeypatch)
    assert len(fast) == len(slow) == 1 + len(args)
    for a, b in zip(fast, slow, strict=True):
        _close(a, b, dtype)
    # the transformable pullback (second order runs through it) gives the same
    trans = pbs.vectorize_pullback(dy, vec, *args)
    for a, b in zip(trans, slow, strict=True):
        _close(a, b, dtype)


@D
def test_two_arrays_broadcast(dtype, monkeypatch):
    vf = Vectorized(two_arrays)
    x, y = make("distinct", (2, 3), dtype), make("real", (3,), dtype, seed=1)
    _agree(monkeypatch, vf, (x, y), dtype)
    check_rrule(np.vectorize.__call__, vf, x, y)
    check_rrule(np.vectorize.__call__, vf, y, make("real", (4, 1), dtype, seed=2))


@D
def test_scalar_parameter_and_0d_inputs(dtype, monkeypatch):
    vf = Vectorized(smooth)
    x = make("real", (5,), dtype)
    for args in ((x, 0.7), (x, dtype(0.3)), (dtype(0.4), dtype(1.1)), (dtype(0.4), x)):
        _agree(monkeypatch, vf, args, dtype)
        check_rrule(np.vectorize.__call__, vf, *args)


@D
def test_an_integer_argument(dtype, monkeypatch):
    vf = Vectorized(powered)
    x = make("positive", (2, 3), dtype)
    _agree(monkeypatch, vf, (x, 3), dtype)  # a 0-d integer: passed whole
    check_rrule(np.vectorize.__call__, vf, x, 3)
    n = np.array([1, 2, 3])  # an integer array NumPy maps over: per element
    _agree(monkeypatch, vf, (x, n), dtype, fast_expected=False)
    check_rrule(np.vectorize.__call__, vf, x, n)


@D
def test_excluded_arguments(dtype, monkeypatch):
    x = make("real", (4,), dtype)
    p = make("real", (2,), dtype, seed=3)
    vf = Vectorized(reads_indices, excluded={1})  # an array read at constant indices
    _agree(monkeypatch, vf, (x, p), dtype)
    check_rrule(np.vectorize.__call__, vf, x, p)
    vs = Vectorized(smooth, excluded={1})  # a scalar
    _agree(monkeypatch, vs, (x, dtype(0.8)), dtype)
    check_rrule(np.vectorize.__call__, vs, x, dtype(0.8))
    # an excluded array read whole is not proved: per element (it cannot be vectorized)
    assert pbs.one_call_modes(Vectorized(smooth, excluded={1}), (x, p)) is None


@D
def test_a_value_for_all_elements(dtype, monkeypatch):
    vf = Vectorized(one_value, otypes=[dtype])
    x = make("real", (3, 2), dtype)
    _agree(monkeypatch, vf, (x, dtype(1.5)), dtype)
    check_rrule(np.vectorize.__call__, vf, x, dtype(1.5))


@D
def test_a_branch_on_the_value_takes_the_per_element_path(dtype, monkeypatch):
    vf = Vectorized(branchy)
    x = make("distinct", (6,), dtype)
    _agree(monkeypatch, vf, (x, dtype(1.3)), dtype, fast_expected=False)
    check_rrule(np.vectorize.__call__, vf, x, dtype(1.3))


def test_second_order(monkeypatch):
    x, y = make("distinct", (5,)), make("real", (5,), seed=1)
    check_rrule_second_order(np.vectorize.__call__, Vectorized(two_arrays), x, y, wrt=(1, 2))
    check_rrule_second_order(np.vectorize.__call__, Vectorized(smooth), x, 0.7, wrt=(1, 2))
    check_rrule_second_order(np.vectorize.__call__, Vectorized(np.arctan2), x, y, wrt=(1, 2))

    def loss(v, c):
        return np.sum(np.vectorize(smooth)(v, c) ** 2)

    h = hessian(loss)(x, 0.7)
    with monkeypatch.context() as m:
        m.setattr(pbs, "one_call_modes", lambda vec, args: None)
        m.setattr(nf, "one_call_modes", lambda vec, args: None)
        h_slow = hessian(loss)(x, 0.7)
    np.testing.assert_allclose(h, h_slow, rtol=1e-12, atol=1e-12)
    check_grads(loss, x, 0.7, wrt=(0, 1), order=2)


@D
def test_a_closure_through_grad(dtype, monkeypatch):
    def loss(v, c):
        f = np.vectorize(lambda t: np.exp(c * t) * t)
        return np.sum(f(v))

    x = make("real", (6,), dtype)
    seen = []

    def recorded(vec, args):
        seen.append(pbs.one_call_modes(vec, args))
        return seen[-1]

    monkeypatch.setattr(nf, "one_call_modes", recorded)
    check_grads(loss, x, dtype(0.6), wrt=(0, 1))
    assert seen and all(m == ("array", "as is") for m in seen)  # c: excluded, one call
    g = grad(loss, wrt=(0, 1))(x, dtype(0.6))
    expected = np.exp(0.6 * x.astype(np.float64)) * (1 + 0.6 * x.astype(np.float64))
    np.testing.assert_allclose(g[0], expected, rtol=TOL[dtype] * 10)


@D
def test_empty_and_list_inputs(dtype, monkeypatch):
    vf = Vectorized(smooth, otypes=[dtype])
    _agree(monkeypatch, vf, (make("real", (0,), dtype), dtype(0.7)), dtype)
    check_rrule(np.vectorize.__call__, vf, make("real", (0, 3), dtype), dtype(0.7))
    values = [dtype(0.2), dtype(-0.4), dtype(1.1)]
    _agree(monkeypatch, Vectorized(two_arrays), (values, make("real", (3,), dtype)), dtype)
    check_rrule(np.vectorize.__call__, Vectorized(two_arrays), values, make("real", (3,), dtype))


def test_what_is_not_proved_keeps_the_per_element_path():
    x = make("real", (3,))
    for fn, args in (
        (smooth, (x, np.arange(3.0).astype(np.complex128))),  # a complex array
        (smooth, (x, [1, 2, 3])),  # an integer array NumPy maps over
        (abs, (x,)),  # neither a Python function nor a ufunc
        (lambda t, c: np.sum(t) * c, (x, 0.5)),  # a reduction
        (lambda t, c: t * c[0], (x, make("real", (2,)))),  # a mapped array indexed
    ):
        assert pbs.one_call_modes(Vectorized(fn), args) is None
    assert pbs.one_call_modes(Vectorized(smooth, signature="(),()->()"), (x, 0.5)) is None


@D
def test_a_vectorized_ufunc(dtype, monkeypatch):
    x, y = make("positive", (2, 3), dtype), make("real", (3,), dtype, seed=1)
    for vf, args in (
        (Vectorized(np.sin), (x,)),
        (Vectorized(np.arctan2), (x, y)),
        (Vectorized(np.power), (x, 3)),
        (Vectorized(np.hypot, excluded={1}), (x, dtype(0.5))),
    ):
        _agree(monkeypatch, vf, args, dtype)
        check_rrule(np.vectorize.__call__, vf, *args)
    assert pbs.one_call_modes(Vectorized(np.add, excluded={1}), (x, y)) is None  # an array


def doubled_flag(t, flag):
    return t * (flag + flag)


def big_power(t, n):
    return t * n**20


@pytest.mark.parametrize("fast", [True, False], ids=["one call", "per element"])
def test_integers_and_booleans_are_python_values(fast, monkeypatch):
    """np.vectorize calls the function on Python ints and bools: ``True + True`` is 2, and
    ``10 ** 20`` does not wrap around; the gradient is that function's, on both paths (a
    0-d flag goes through the one call, an array of them through one vjp per element)."""
    x = np.array([1.0, 2.0])
    flag = np.array(True) if fast else np.array([True, True])
    n = np.array(10) if fast else np.array([10, 10])
    for fn, other, slope in ((doubled_flag, flag, 2.0), (big_power, n, 1e20)):
        vf = Vectorized(fn)
        assert (pbs.one_call_modes(vf, (x, other)) is not None) is fast
        np.testing.assert_allclose(vf(x, other), slope * x, rtol=1e-15)
        cots = _rule().rrule(vf, x, other)[1](np.ones(2))
        np.testing.assert_allclose(cots[1], [slope, slope], rtol=1e-15)
        trans = pbs.vectorize_pullback(np.ones(2), vf, x, other)
        np.testing.assert_allclose(trans[1], [slope, slope], rtol=1e-15)
        check_rrule(np.vectorize.__call__, vf, x, other)
