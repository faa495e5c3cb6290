"""Dataclasses (``@dataclass``, frozen or not, with ``slots`` or not) as differentiated
values: records whose fields are attributes, the way parameters are grouped in modern Python.

A dataclass value's cotangent (and tangent) is the tuple of its fields' cotangents, in the
order of ``dataclasses.fields`` -- the convention of named tuples (records.py), so that
accumulation, ``ZERO`` entries and field reads are the tuple ones already. What users
receive is the same dataclass again (:func:`rebuilt`, called by ``tangents.materialize``),
with ``None`` in the fields that hold no float (ints, strings, None, functions), as a named
tuple's gradient has; a cotangent or tangent users give as that dataclass is turned into
the tuple by :func:`as_cotangent`.

Constructing one is the named tuple's rule (records.py: the values in field order), given
only where the constructor is that: the ``__init__`` ``dataclasses`` generated, no
``__post_init__`` and every field an ``__init__`` parameter (:func:`refusal`, otherwise).

>>> import dataclasses
>>> @dataclasses.dataclass
... class P:
...     w: float
...     n: int = 3
>>> field_position(P(1.0), "n")
1
>>> rebuilt(P(1.0), [2.0, None])
P(w=2.0, n=None)
>>> as_cotangent(P(2.0, 4))
(2.0, ZERO)
"""

from __future__ import annotations

import functools
import sys

from .records_plain import (
    LAYOUTS,
    is_plain_record,
    layout,
    plain_fields,
    plain_position,
    rebuilt_plain,
)
from .zero import ZERO

FAMILY = "records"  # its rule (fields_of) is one of the records family's


def _dataclasses():
    """The ``dataclasses`` module, which a dataclass's program has imported already: pullback
    does not import it itself (about 1.5 ms of every cold start), and asks it only of a
    class that is a dataclass."""
    return sys.modules["dataclasses"]


def _fields(cls):
    return _dataclasses().fields(cls)


def _is_dataclass(cls) -> bool:
    # what dataclasses.is_dataclass tests, without importing it
    return hasattr(cls, "__dataclass_fields__")


def is_dataclass_class(cls) -> bool:
    """Whether ``cls`` is a dataclass (the class, not an instance)."""
    return isinstance(cls, type) and _is_dataclass(cls)


def is_dataclass_value(v) -> bool:
    """Whether ``v`` is an instance of a dataclass, or a plain class's record
    (records_plain.py): a value whose cotangent is the tuple of its fields'."""
    t = type(v)
    if hasattr(t, "__dataclass_fields__"):
        return not isinstance(v, type)
    return id(t) in LAYOUTS and is_plain_record(v)  # (one dict lookup for any other value)


def is_record_value(v) -> bool:
    """Whether ``v`` is a record: a dataclass instance, a plain class's record or a named
    tuple, whose cotangent is the tuple of its fields' (a rule that hands such a value on
    passes its cotangent whole, never as an array's)."""
    if isinstance(v, tuple):
        return type(v) is not tuple and isinstance(getattr(type(v), "_fields", None), tuple)
    return is_dataclass_value(v)


def holds_record(v) -> bool:
    """Whether ``v`` is a record or a tuple or list holding one (at any depth): its
    cotangent is passed whole, never made an array's."""
    if is_record_value(v):
        return True
    return type(v) in (tuple, list) and any(holds_record(u) for u in v)


@functools.lru_cache(maxsize=512)
def _layout(cls) -> tuple:
    """``(names, {name: position})`` of ``cls``'s fields, in the order of its cotangent
    tuple: read once per class (``dataclasses.fields`` costs microseconds, and a loop
    reads fields thousands of times). A class's fields are fixed once it is made."""
    names = tuple(f.name for f in _fields(cls))
    return names, {n: k for k, n in enumerate(names)}


def field_names(cls) -> tuple:
    """The names of ``cls``'s fields, in the order of its cotangent tuple."""
    plain = layout(cls)
    return plain if plain is not None else _layout(cls)[0]


def field_position(record, name: str):
    """Where the field ``name`` of the dataclass instance ``record`` sits in its cotangent
    tuple, or None (no dataclass, or no such field)."""
    cls = type(record)
    if isinstance(record, type):
        return None
    if not hasattr(cls, "__dataclass_fields__"):
        return plain_position(record, name)
    return _layout(cls)[1].get(name)


def fields_of(record):
    """The values of a dataclass instance's fields, as a tuple in field order (a named
    tuple as it is): the value whose cotangent is the record's."""
    cls = type(record)  # (is_dataclass_value's tests, each made once: a loop reads fields)
    if hasattr(cls, "__dataclass_fields__"):
        if isinstance(record, type):
            return record
        return tuple([getattr(record, n) for n in _layout(cls)[0]])
    if id(cls) in LAYOUTS and is_plain_record(record):
        return plain_fields(record)
    return record


def field_slots(record):
    """A tuple as long as the cotangent of ``record``, a record whose field
    records.field_index found (a dataclass instance, a plain record, a named tuple): its
    class's field names, cached, or the named tuple itself. The shape a field read's
    cotangent takes (records.field_pullback), without reading every field's value as
    :func:`fields_of` does, so that a read costs the same however many fields it has."""
    cls = type(record)
    if hasattr(cls, "__dataclass_fields__"):
        return _layout(cls)[0]
    names = layout(cls)  # (field_index checked that a plain class's record is one)
    return record if names is None else names


def _fields_of_rrule(record):
    return fields_of(record), lambda dy: (dy,)  # the same cotangent: a tuple of fields


def _field_slots_rrule(record):
    return field_slots(record), lambda dy: (dy,)


def fields_of_pullback(dy, record):
    return (dy,)


fields_of_pullback.__pullback_transformable__ = True  # (registry.transformable, a layer up)


def init_fields(cls) -> tuple:
    """``(names, defaults)`` of the dataclass ``cls``'s ``__init__`` parameters, in field
    order (the fields with a ``default_factory`` have no constant default)."""
    fs = [f for f in _fields(cls) if f.init]
    defaults = {f.name: f.default for f in fs if f.default is not _dataclasses().MISSING}
    return tuple(f.name for f in fs), defaults


#: ``(what, fix)`` of PB301 for a dataclass whose constructor is no store of its fields
#: (the static check, check/static_classes.py, reports the same from a file's tree).
NOT_A_STORE = {
    "init": (
        "a dataclass with its own __init__",
        "let @dataclass generate __init__ (compute derived values in a function or a "
        "method that reads the fields), or register a rule for the class",
    ),
    "post_init": (
        "a dataclass with __post_init__ (code pullback does not run through the constructor)",
        "compute what __post_init__ computes in a method or a property instead (they "
        "are differentiated), or pass the computed values as fields",
    ),
    "init_false": (
        "a dataclass with a field that is no __init__ parameter (field(init=False))",
        "make that field an __init__ parameter, or compute it in a method or a property",
    ),
    "kw_only": (
        "a dataclass with keyword-only fields (the constructor's rule takes the fields by "
        "position)",
        "declare the fields without kw_only",
    ),
}


def field_default(cls, name: str):
    """The default value of the field ``name`` of ``cls``: its ``default_factory()`` called,
    or its default."""
    f = cls.__dataclass_fields__[name]
    return f.default_factory() if f.default_factory is not _dataclasses().MISSING else f.default


def refusal(cls):
    """Why the constructor of the dataclass ``cls`` has no rule (its fix), or None when it
    has the named tuple's rule (the generated ``__init__`` storing every field)."""
    init = cls.__dict__.get("__init__") or getattr(cls, "__init__", None)
    code = getattr(init, "__code__", None)
    if code is None or code.co_filename != "<string>" or not cls.__dataclass_params__.init:
        return NOT_A_STORE["init"]
    if hasattr(cls, "__post_init__"):
        return NOT_A_STORE["post_init"]
    if any(not f.init for f in _fields(cls)):
        return NOT_A_STORE["init_false"]
    if any(getattr(f, "kw_only", False) for f in _fields(cls)):
        return NOT_A_STORE["kw_only"]
    return None


def class_refusal(cls):
    """``(what, fix)`` of PB301 for a call of the dataclass ``cls`` with differentiated
    values (no rule); None otherwise (a plain class's: plain_classes.refusal)."""
    return refusal(cls) if _is_dataclass(cls) else None


def rebuilt(like, values):
    """An instance of ``like``'s dataclass holding ``values`` in field order, made without
    ``__init__`` (frozen, slots, ``init=False`` fields and ``__post_init__`` alike)."""
    cls = type(like)
    if not hasattr(cls, "__dataclass_fields__"):
        return rebuilt_plain(like, values)
    out = object.__new__(cls)
    for f, v in zip(_fields(cls), values, strict=True):
        object.__setattr__(out, f.name, v)
    return out


def as_cotangent(c):
    """A cotangent or tangent given as a dataclass instance (``vjp``'s ``dy``, ``jvp``'s
    tangents, ``hvp``'s ``v``), as the tuple of its fields, recursively; a field that holds
    no number (``None``, a string, a function), or an int or bool, is ``ZERO`` there (the
    gradient gives such fields ``None``); anything else unchanged."""
    if is_dataclass_value(c):
        return tuple(_field_cotangent(v) for v in fields_of(c))
    tc = type(c)
    plain = layout(tc)
    if plain is not None:  # an object of a plain record's class, made by the user
        return tuple(_field_cotangent(c.__dict__.get(n)) for n in plain)
    if tc is tuple or tc is list:
        return tc(as_cotangent(v) for v in c)
    if tc is dict:
        return {k: as_cotangent(v) for k, v in c.items()}
    return c


def swept(zero):
    """A zero cotangent as the reverse sweep holds it (``runtime.vjp_zero``): records
    (dataclass instances, plain records, named tuples) as plain tuples of their fields'
    zeros, recursively (a rebuilt record cannot be added to another cotangent, and ``+``
    of two named tuples joins them)."""
    if is_dataclass_value(zero):
        return tuple([swept(v) for v in fields_of(zero)])
    tz = type(zero)
    if isinstance(zero, (tuple, list)):
        items = [swept(v) for v in zero]
        return tz(items) if tz is list else tuple(items)
    if tz is dict:
        return {k: swept(v) for k, v in zero.items()}
    return zero


def _field_cotangent(v):
    if v is None or isinstance(v, (str, bytes, bool, int)) or callable(v):
        return ZERO
    return as_cotangent(v)


def register(reg) -> None:
    rule = reg.register(fields_of, _fields_of_rrule, family=FAMILY, trusted=True)
    reg.set_pullback_function(fields_of, fields_of_pullback)
    rule.extra["tangent"] = lambda args, tangents, kwargs: tangents[0]  # the same tuple
    # field_slots stands for fields_of where only the cotangent's length is read: the
    # record stays active through it in a second derivative, as through fields_of
    rule = reg.register(field_slots, _field_slots_rrule, family=FAMILY, trusted=True)
    reg.set_pullback_function(field_slots, fields_of_pullback)
    rule.extra["tangent"] = lambda args, tangents, kwargs: tangents[0]
