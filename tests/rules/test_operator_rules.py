"""The operator module's functions and itemgetter objects against finite differences."""

from __future__ import annotations

import operator

import pytest
from rule_inputs import FLOATS, make, make_complex

from pullback.registry import NONDIFF, default_registry
from pullback.tangents import NO_TANGENT, ZERO
from pullback.testing import check_rrule

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)

BINARY = [
    (operator.add, "real", "real"),
    (operator.sub, "real", "real"),
    (operator.mul, "real", "real"),
    (operator.truediv, "real", "nonzero"),
    (operator.pow, "positive", "real"),
    (operator.mod, (0.1, 0.9), (1.1, 2.0)),
]


@D
@pytest.mark.parametrize("op,da,db", BINARY, ids=lambda v: getattr(v, "__name__", ""))
def test_binary(op, da, db, dtype):
    check_rrule(op, make(da, (2, 3), dtype), make(db, (3,), dtype, seed=1))  # broadcasting
    check_rrule(op, make(da, (), dtype), make(db, (2,), dtype, seed=1))
    check_rrule(op, dtype(make(da, (), seed=2)), dtype(make(db, (), seed=3)))
    a, b = float(make(da, (), seed=4)), float(make(db, (), seed=5))
    check_rrule(op, a, b)  # Python floats stay floats
    assert type(default_registry().lookup(op).rrule(a, b)[0]) is float


@D
@pytest.mark.parametrize("op", [operator.neg, operator.pos, operator.abs], ids=lambda f: f.__name__)
def test_unary(op, dtype):
    check_rrule(op, make("nonzero", (2, 3), dtype))
    check_rrule(op, dtype(-0.5))
    check_rrule(op, -1.5)


@D
def test_matmul(dtype):
    check_rrule(operator.matmul, make("real", (2, 3), dtype), make("real", (3, 4), dtype, seed=1))
    check_rrule(operator.matmul, make("real", (3,), dtype), make("real", (3,), dtype, seed=1))


def test_complex():
    check_rrule(operator.mul, make_complex((3,)), make_complex((3,), seed=1))
    check_rrule(operator.abs, make_complex((3,)) + 0.1)


def test_sequences():
    # add/mul are elementwise rules (their inline derivatives are for numbers); their
    # rrule also concatenates and repeats lists and tuples: check that form as a rule.
    reg = default_registry().copy()
    for op in (operator.add, operator.mul):
        reg.register(op, default_registry().lookup(op).rrule)
    check_rrule(operator.add, [1.5, make("real", (2,))], [2.5], registry=reg)  # concatenation
    check_rrule(operator.add, (1.5, 2), (0.5,), registry=reg)
    check_rrule(operator.mul, [1.5, 0.5], 3, registry=reg)  # repetition sums the copies
    check_rrule(operator.mul, 2, (make("real", (2,)),), registry=reg)
    y, back = default_registry().lookup(operator.mul).rrule([1.5], 0)
    assert y == [] and back([]) == ([ZERO], NO_TANGENT)  # no copies: no cotangent


def _check_getter(getter, obj):
    """check_rrule of ``getter(obj)`` through the itemgetter rule (getters compare by
    identity, so the rule is checked through a wrapper registered in a test registry)."""
    rule = default_registry().lookup(operator.itemgetter.__call__)
    reg = default_registry().copy()

    def read(o):
        return getter(o)

    def read_rrule(o):
        y, back = rule.rrule(getter, o)
        return y, lambda dy: back(dy)[1:]

    reg.register(read, read_rrule)
    check_rrule(read, obj, registry=reg)


@D
def test_itemgetter(dtype):
    x = make("real", (4, 3), dtype)
    _check_getter(operator.itemgetter(1), x)
    _check_getter(operator.itemgetter(0, 2, 0), x)  # an item read twice
    _check_getter(operator.itemgetter(slice(1, 3)), x)
    _check_getter(operator.itemgetter("b"), {"a": 1.0, "b": x})
    _check_getter(operator.itemgetter(1, 0), [dtype(0.5), x, 2.0])


def test_non_differentiable():
    for f in (operator.floordiv, operator.lt, operator.itemgetter, operator.not_):
        assert default_registry().lookup(f).kind == NONDIFF


def test_second_order():
    from pullback.testing import check_grads

    def f(x, w):
        h = operator.matmul(w, operator.mul(x, x))
        return operator.add(operator.truediv(operator.pow(h, 2.0), 3.0), -operator.neg(x[0]))

    check_grads(f, make("real", (3,)), make("real", (3,), seed=1), order=2)
