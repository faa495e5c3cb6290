"""Cotangents of named tuples add field by field (tangents.add): a tuple subclass's ``+``
joins the tuples, which would silently give a cotangent of the wrong length."""

from __future__ import annotations

import collections

import numpy as np

from pullback.tangents import NO_TANGENT, ZERO, add

Pair = collections.namedtuple("Pair", "w b")


def test_named_tuple_cotangents_add_per_field():
    total = add(Pair(1.0, np.array([1.0, 2.0])), Pair(3.0, np.array([0.5, 0.5])))
    assert type(total) is Pair
    assert total.w == 4.0
    assert total.b.tolist() == [1.5, 2.5]


def test_zero_fields_are_free():
    total = add(Pair(ZERO, 2.0), Pair(1.0, NO_TANGENT))
    assert total == Pair(1.0, 2.0)


def test_nested_named_tuples():
    Outer = collections.namedtuple("Outer", "inner scale")
    a = Outer(Pair(1.0, 2.0), 3.0)
    b = Outer(Pair(0.5, 0.25), 1.0)
    assert add(a, b) == Outer(Pair(1.5, 2.25), 4.0)
