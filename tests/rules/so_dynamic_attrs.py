"""Second-order cases for the rules of pullback.dynamic_attrs: ``getattr`` with a name
known when it runs (a dataclass's and a named tuple's field, a missing attribute's
default), a record's field read by the transform (``attribute_of``) and its forward-mode
tangent (see second_order_table.py; bound methods: tests/test_dynamic_attrs_methods.py)."""

from __future__ import annotations

import collections
import dataclasses

import numpy as np
from second_order_table import case

from pullback.testing.second_order import Built

_RNG = np.random.default_rng(23)


@dataclasses.dataclass
class _Layer:
    w: np.ndarray
    b: float


_PAIR = collections.namedtuple("_PAIR", "w b")
_LAYER = _Layer(_RNG.normal(size=3), 0.7)

case("getattr", _LAYER, "w", wrt=(0,))
case("getattr", _PAIR(_RNG.normal(size=2), -0.4), "b", wrt=(0,))
case("getattr", _LAYER, "missing", _RNG.normal(size=2), wrt=(0, 2))
case("pullback.dynamic_attrs.attribute_of", _LAYER, "w", wrt=(0,))
case("pullback.dynamic_attrs.attribute_of", _PAIR(_RNG.normal(size=2), -0.4), "w", wrt=(0,))
case("pullback.dynamic_attrs.attribute_tangent", (_RNG.normal(size=3), 0.5), _LAYER, "w", wrt=(0,))
case("pullback.dynamic_attrs.attribute_tangent", (_RNG.normal(size=3), 0.5), _LAYER, "b", wrt=(0,))
# a record's bound method held in a field of another record (outer.act = inner.apply): the
# bound method's cotangent moved into that field of the holder, and back
case("pullback.dynamic_attrs.held_cotangent", _RNG.normal(size=3), _LAYER, "w", wrt=(0,))
case(
    "pullback.dynamic_attrs.held_field",
    ((_RNG.normal(size=3), 0.4), _RNG.normal(size=2)),
    _LAYER,
    "b",
    wrt=(0,),
)


@dataclasses.dataclass
class _Affine:
    w: np.ndarray
    b: float

    def apply(self, z):
        return self.w * z + self.b


# the record a bound method runs on (method_vjp's transformable pullback reads it so that a
# derivative reaches it): its cotangent is the method's
def _affine_apply(w, b):
    return _Affine(w, b).apply


# (the probe builds the bound method from floats at each call, so that the second derivative
# runs through the method into the record's fields)
case(
    "pullback.dynamic_attrs.bound_self",
    Built(_affine_apply, _RNG.normal(size=3), 0.2),
    wrt=(0,),
)


@dataclasses.dataclass
class _Thermo:  # a field named like an array view (a temperature) and one named flat
    T: np.ndarray
    flat: np.ndarray


_THERMO = _Thermo(_RNG.normal(size=3), _RNG.normal(size=2))
_M = _RNG.normal(size=(2, 3))
case("pullback.dynamic_attrs.array_attribute_of", _THERMO, "T", wrt=(0,))
case("pullback.dynamic_attrs.array_attribute_of", _M, "T", wrt=(0,))
case("pullback.dynamic_attrs.array_attribute_of", _M + 0.5j * _M**2, "imag", wrt=(0,))
case("pullback.dynamic_attrs.array_attribute_of", _M + 0.5j * _M**2, "real", wrt=(0,))
case("pullback.dynamic_attrs.flat_of", _M, wrt=(0,))
case("pullback.dynamic_attrs.flat_of", _THERMO, wrt=(0,))
