"""A user's rule whose transformable pullback takes an object (unfollowed_objects.py,
records.declared_attribute): a method's rule gives the object it is called on a
cotangent, so a second derivative through that pullback must follow the object's data or
refuse -- never count it as constants.

``Quad(a)(q) = a q^2``: ``Quad``'s rule declares ``a`` (``result_attributes``); its
``__call__`` rule's pullback function reads ``obj.a``. Marked
``__pullback_receiver_cotangent__``, or unmarked with the object's data declared (the
object is then differentiated as by name, ruled_objects.py), it differentiates the object
(every second derivative and the third, against central differences); unmarked with
nothing declared, the derivative in ``a`` through the object is refused, and an object made
from constants still differentiates."""

from __future__ import annotations

import re

import numpy as np
import pytest

import pullback
from pullback.errors import HigherOrderError
from pullback.registry import transformable
from pullback.tangents import ZERO
from pullback.testing import check_grads

FLOATS = (np.float64, np.float32)


class Quad:
    """A library-like object made by its rule: ``q -> a * q**2`` (``a`` a number)."""

    def __init__(self, a):
        self.a = a

    def __call__(self, q):
        return self.a * q**2


@transformable
def quad_pullback(dobj, a):
    if dobj is ZERO:
        return (ZERO,)
    return (dobj["a"],)


@transformable
def quad_call_pullback(dy, obj, q):
    return {"a": np.sum(dy * q**2)}, dy * 2.0 * obj.a * q


@transformable
def quad_call_unmarked(dy, obj, q):
    return {"a": np.sum(dy * q**2)}, dy * 2.0 * obj.a * q


quad_call_pullback.__pullback_receiver_cotangent__ = True


def _register(registry, call_pullback, declare=True):
    @pullback.rrule(Quad, registry=registry)
    def _(a):
        return Quad(a), lambda dobj: quad_pullback(dobj, a)

    @pullback.rrule(Quad.__call__, registry=registry)
    def _(obj, q):
        return obj(q), lambda dy: call_pullback(dy, obj, q)

    if declare:
        registry.lookup(Quad).extra["result_attributes"] = ("a",)
    registry.set_pullback_function(Quad, quad_pullback)
    registry.set_pullback_function(Quad.__call__, call_pullback)


@pytest.fixture(params=["marked", "unmarked", "undeclared"])
def rules(request):
    """Whether the second derivative through the object is followed: marked, or unmarked
    with the object's data declared; not for an unmarked pullback of an object whose rule
    declares nothing."""
    registry = pullback.default_registry().copy()
    marked = request.param == "marked"
    declare = request.param != "undeclared"
    _register(registry, quad_call_pullback if marked else quad_call_unmarked, declare)
    with pullback.use_registry(registry):
        yield declare


def chained(a, q):
    return np.sum(np.sin(Quad(a)(q)))


def named(a, q):
    f = Quad(a)
    return np.sum(f(q) * a)


MADE = Quad(1.5)


def outside(q):
    return np.sum(np.sin(MADE(q)))


SECOND = (
    re.escape(
        "with respect to the Quad it is called on (made from differentiated values) needs the "
        "derivative of its pullback in that object's data, which the pullback does not follow: "
        "it would count them as constants."
    )
    + r"(\n        [^\n]+)?\n"
    + re.escape(  # the user's source line, then the fix
        "Fix: make the object from constants (outside the "
        "differentiated function), or, for your own rule, mark its pullback function "
        "`fn.__pullback_receiver_cotangent__ = True` and read the object's data through "
        'attributes its class\'s rule declares (`rule.extra["result_attributes"]`).'
    )
)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn", [chained, named])
def test_mixed_second_derivatives(rules, fn, dtype):
    a, q = dtype(1.3), np.array([0.4, -0.7], dtype=dtype)
    if rules:
        assert check_grads(fn, a, q, wrt=(0, 1), order=2) == "reverse over reverse"
        return
    with pytest.raises(HigherOrderError, match=SECOND):
        pullback.hessian(fn, wrt=(0, 1))(a, q)


def scalar(a, q):
    return Quad(a)(q)


def wavy(a, q):
    return np.sin(Quad(a)(q))


def test_every_form_of_second_and_third_derivative(rules):
    # sin(a q^2): d2/da dq = 2q cos(a q^2) - 2 a q^3 sin(a q^2); (a q^2: d3/da dq2 = 2)
    a, q = 1.5, 0.7
    want = 2 * q * np.cos(a * q**2) - 2 * a * q**3 * np.sin(a * q**2)
    gq = pullback.grad(wavy, wrt=1)
    forms = {
        "grad(grad)": lambda: pullback.grad(gq, wrt=0)(a, q),
        "jvp(grad)": lambda: pullback.jvp(gq, (a, q), (1.0, 0.0))[1],
        "hessian": lambda: pullback.hessian(wavy, wrt=(0, 1))(a, q)[1][0],
    }
    for name, run in forms.items():
        if rules:
            np.testing.assert_allclose(run(), want, rtol=1e-12, err_msg=name)
        else:
            with pytest.raises(HigherOrderError, match=SECOND):
                run()
    third = pullback.grad(pullback.grad(pullback.grad(scalar, wrt=1), wrt=1), wrt=0)
    if rules:
        np.testing.assert_allclose(third(a, q), 2.0, rtol=1e-12)
    else:
        with pytest.raises(HigherOrderError, match=SECOND):
            third(a, q)


def test_an_object_of_constants_differentiates(rules):
    # made outside: nothing to follow, marked or not
    assert check_grads(outside, np.array([0.4, -0.7]), order=2) == "reverse over reverse"
    np.testing.assert_allclose(pullback.hessian(scalar, wrt=1)(1.5, 0.7), 3.0, rtol=1e-12)
