"""Second-order cases for the rules of dataclass records (pullback.records_dataclasses,
pullback.records_calls) and of a named tuple's own methods (pullback.records_named): the
fields of an instance as a tuple, ``dataclasses.replace`` (as written and as the normalizer
writes it), ``astuple``, ``asdict``, ``_replace``, ``_asdict``, and a field read
(see second_order_table.py)."""

from __future__ import annotations

import collections
import dataclasses

import numpy as np
from second_order_table import case

_RNG = np.random.default_rng(11)


@dataclasses.dataclass
class Layer:
    w: np.ndarray
    b: float
    name: str = "dense"


@dataclasses.dataclass(frozen=True)
class Model:
    layer: Layer
    scale: float


_LAYER = Layer(_RNG.normal(size=3), 0.7)
_PAIR = collections.namedtuple("_PAIR", "w b")
_MODEL = Model(Layer(_RNG.normal(size=2), -0.4), 1.3)

case("pullback.records.field_of", _LAYER, "w", wrt=(0,))
case("pullback.records.field_of", _MODEL, "scale", wrt=(0,))
case("pullback.records_dataclasses.fields_of", _LAYER, wrt=(0,))
# a named tuple's slots are the named tuple itself (a dataclass's, its field names: no
# value to differentiate)
case("pullback.records_dataclasses.field_slots", _PAIR(_RNG.normal(size=2), 0.3), wrt=(0,))
case("pullback.records_calls.replaced", _LAYER, ("b",), 2.5, wrt=(0, 2))
case("pullback.records_calls.replaced", _LAYER, ("w", "b"), _RNG.normal(size=3), -1.5)
case("dataclasses.replace", _LAYER, wrt=(0,))
# a named tuple's _replace and _asdict (records_named.py)
_NAMED = _PAIR(_RNG.normal(size=2), 0.3)
case("pullback.records_named.record_replace", _NAMED, ("b",), 2.5, wrt=(0, 2))
case("pullback.records_named.record_replace", _NAMED, ("w", "b"), _RNG.normal(size=2), -1.5)
case("pullback.records_named.record_asdict", _NAMED, wrt=(0,))
case("dataclasses.astuple", _MODEL, wrt=(0,))
case("dataclasses.asdict", _MODEL, wrt=(0,))
# asdict's cotangent turned back into the tuple of the fields, and its transpose
_DICT_COTANGENT = {"layer": {"w": _RNG.normal(size=2), "b": 0.3}, "scale": -0.8}
case("pullback.records_calls.undict", _DICT_COTANGENT, _MODEL, wrt=(0,))
case("pullback.records_calls.redict", ((_RNG.normal(size=2), 0.3, None), -0.8), _MODEL, wrt=(0,))

# a plain class's record (records_plain.py): made by its constructor function's last call,
# and the forward-mode tangent of one of its fields
from pullback.records_plain import new_record, set_layout  # noqa: E402


class Plain:
    pass


set_layout(Plain, ("w", "b"))
_PLAIN = new_record(Plain, ("w", "b"), _RNG.normal(size=3), 0.7)
case("pullback.records_plain.new_record", Plain, ("w", "b"), _RNG.normal(size=3), -0.4, wrt=(2, 3))
case("pullback.records.field_tangent", (_RNG.normal(size=3), 0.5), _PLAIN, "w", wrt=(0,))
# an object version's store (object_versions.py): the new version's fields' cotangent
# splits into the stored value's and the old version's; owned passes an object through
case("pullback.object_versions.set_field", _LAYER, "b", 2.5, wrt=(0, 2))
case("pullback.object_versions.set_field", _LAYER, "w", _RNG.normal(size=3), wrt=(0, 2))
case("pullback.object_versions.owned", _LAYER, wrt=(0,))
# the operand of a recomputed call as the call read it (recompute_state.py): passed through
case("pullback.recompute_state.as_read", None, 0, _RNG.normal(size=3), wrt=(2,))
case("pullback.recompute_state.as_read", None, 1, 0.3, wrt=(2,))
