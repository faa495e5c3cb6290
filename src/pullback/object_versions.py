"""Stores on an object the differentiated function owns, as new versions of the object.

``o.attr = v`` on an object that the function made itself and that no other name,
container or object holds (transform/object_stores.py proves that from the source) is
written ``o = set_field(o, "attr", v, where)``: a new value of ``o``, a *version*, with its
own cotangent. Each version is a shallow copy of the one before holding the new value,
and the old one keeps its values: a derivative that is differentiated again runs a call
again from the values it was given (a method's vjp recomputes its forward sweep from
``self``), which must be the object as it was then, not as later stores left it. Nothing
but the function sees the object (that is what the transformation proves), so nothing can
tell the copy from the object changed in place: the code reads and computes exactly the
values Python's run does. The object's cotangent is the
tuple of its fields' (records_plain.py, records_dataclasses.py), so the store's pullback
hands the new version's entry for ``attr`` to ``v`` and the other entries to the old
version, whose ``attr`` entry is zero: what the store overwrote reaches nothing after it.

A method that stores on its ``self`` is called through a version of it that returns its
final ``self`` too, and the caller rebinds the receiver (transform/object_stores.py), so
every read after the call belongs to the new version.

>>> class P:
...     pass
>>> from pullback.records_plain import new_record, set_layout
>>> set_layout(P, ("w", "b"))
>>> p = new_record(P, ("w", "b"), 1.0, 2.0)
>>> q = set_field(p, "b", 5.0)
>>> (q.w, q.b), (p.w, p.b)
((1.0, 5.0), (1.0, 2.0))
>>> set_field_pullback((3.0, 4.0), p, "b", 5.0)
((3.0, ZERO), ZERO, 4.0, ZERO)
"""

from __future__ import annotations

import copy

from .errors import UnsupportedCallError
from .escapes import ESCAPE_RECORD
from .records import field_index
from .records_dataclasses import field_slots
from .records_plain import (
    adopt_copies,
    adopt_object,
    is_plain_record,
    plain_position,
    register_record,
)
from .registry import transformable
from .runtime import tuple_item
from .tangents import NO_TANGENT, ZERO

FAMILY = "object_versions"


def field_place(record, name: str, where: str = "") -> int:
    """Where the field ``name`` sits in ``record``'s cotangent tuple; a refusal for an
    attribute that is no field (the transformation versions fields only). An object of a
    plain record class made where no gradient reached its constructor (the class itself
    ran) becomes a record here: the function owns it, and its fields are the layout's."""
    if not ESCAPE_RECORD.attributes:  # a plain record's field: a loop stores it each step
        k = plain_position(record, name)
        if k is not None:
            return k
    adopt_object(record)
    k = field_index(record, name, where)
    if k is None:  # pragma: no cover - the transformation versions a class's fields only
        raise UnsupportedCallError(
            f"{where}: PB107 '{name}' is not one of the attributes "
            f"{type(record).__name__}.__init__ stores, so its gradient has no place.\n"
            f"Fix: give it a first value in __init__ (`self.{name} = None`) "
            "(see docs/limitations.md#PB107)."
        )
    return k


def set_field(record, name: str, value, where: str = ""):
    """``record.name = value`` on a new version of ``record``: a shallow copy holding
    ``value`` (see the module docstring: the old version stays as it was)."""
    field_place(record, name, where)
    new = snapshot(record)
    setattr(new, name, value)  # (a frozen dataclass refuses it as Python does)
    return new


def snapshot(record):
    """A shallow copy of ``record`` that is a record too, with the stores escapes.py
    recorded on ``record`` recorded on it (a read of one stays refused)."""
    cls = type(record)
    fields = getattr(record, "__dict__", None)
    if type(fields) is dict:
        new = object.__new__(cls)
        new.__dict__.update(fields)
        if is_plain_record(record):
            register_record(new)  # (records_plain.adopt_copies of one copy)
    else:  # a dataclass with __slots__
        new = copy.copy(record)
        adopt_copies(record, new)
    stored = ESCAPE_RECORD.attributes
    if stored:
        for key, obj in list(stored.items()):
            if obj is record:
                stored[(id(new), key[1])] = new
    return new


@transformable
def set_field_pullback(dy, record, name, value, where=""):
    """The new version's cotangent ``dy`` split: its ``name`` entry goes to ``value``, the
    others to the old version (whose ``name`` entry is zero: it was overwritten)."""
    k = field_place(record, name, where)
    if type(dy) is tuple:  # (a loop's version: one slice each side, not a loop of items)
        return dy[:k] + (ZERO,) + dy[k + 1 :], NO_TANGENT, dy[k], NO_TANGENT
    kept = ()
    for j in range(len(field_slots(record))):
        if j == k:
            kept = kept + (ZERO,)
        else:
            kept = kept + (tuple_item(dy, j),)
    return kept, NO_TANGENT, tuple_item(dy, k), NO_TANGENT


def _set_field_rrule(record, name, value, where=""):
    y = set_field(record, name, value, where)
    return y, lambda dy: set_field_pullback(dy, record, name, value, where)


def _set_field_tangent(args, tangents, kwargs):
    """The new version's tangent: the old one's, with ``value``'s at ``name``'s place."""
    record, name = args[0], args[1]
    k = field_place(record, name)
    own = tangents[0]
    new = tangents[2] if len(tangents) > 2 else ZERO
    out = []
    for j in range(len(field_slots(record))):
        out.append(new if j == k else tuple_item(own, j))
    return tuple(out)


def owned(obj):
    """``obj`` itself, made a record if a plain record class's constructor ran as written
    (no gradient reached it): the transformation writes ``o = owned(o)`` after the call
    that makes an object it versions, whose fields are read before any store."""
    adopt_object(obj)
    return obj


@transformable
def owned_pullback(dy, obj):
    return (dy,)


def _owned_rrule(obj):
    return owned(obj), lambda dy: (dy,)


# (resolve.receiver_class follows a name through these: each returns its first argument)
set_field.__pullback_keeps_receiver__ = True
owned.__pullback_keeps_receiver__ = True


def register(reg) -> None:
    rule = reg.register(owned, _owned_rrule, family="records", trusted=True)
    reg.set_pullback_function(owned, owned_pullback)
    rule.extra["tangent"] = lambda args, tangents, kwargs: tangents[0]
    # family "records": a field of its result is read through field_of (reverse_attributes)
    rule = reg.register(set_field, _set_field_rrule, family="records", trusted=True)
    reg.set_pullback_function(set_field, set_field_pullback)
    rule.extra["tangent"] = _set_field_tangent
    reg.non_differentiable(field_place, family=FAMILY, trusted=True)
