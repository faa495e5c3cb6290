"""A named tuple's own methods on a differentiated record: ``p._replace(w=v)`` and
``p._asdict()``.

Both are library code (``collections``) found when the call runs, defined anew for each
named-tuple class, so no rule can be registered for them. A call of one on a named tuple
is made a call of a function of this module with the same value, whose rule is here:

* ``p._replace(w=v, ...)`` is ``record_replace(p, ("w", ...), v, ...)``: the cotangent of
  each replaced field goes to its new value, the others to ``p`` (the replaced fields'
  places in ``p``'s cotangent, the tuple of its fields' cotangents, are zero);
* ``p._asdict()`` is ``record_asdict(p)``: the dict's cotangent goes back to ``p`` field by
  field.

Their pullbacks are transformable, so second derivatives run through them, and each has
its tangent rule for forward mode. The run-time dispatchers of method calls
(dynamic_calls.py, dynamic_vjps.py, rule_tangents.py) ask :func:`record_method_call`; a
``_replace`` whose keywords carry a gradient is a star-call (transform/star_calls.py), made
the call of ``record_replace`` by a keyword shim (keyword_shims.py). (The names' cotangent
prints as ZERO: NO_TANGENT.)

>>> from collections import namedtuple
>>> P = namedtuple("P", "w b")
>>> record_replace(P(1.0, 2.0), ("b",), 5.0)
P(w=1.0, b=5.0)
>>> record_replace_pullback((3.0, 4.0), P(1.0, 2.0), ("b",), 5.0)
((3.0, ZERO), ZERO, 4.0)
>>> replaced_cotangents((3.0, 4.0), 2, (0,))
((ZERO, 4.0), ZERO, 3.0)
>>> record_asdict_pullback({"b": 4.0}, P(1.0, 2.0))
((ZERO, 4.0),)
"""

from __future__ import annotations

from .registry import transformable
from .runtime import dict_item, tuple_item
from .tangents import NO_TANGENT, ZERO, is_zero

FAMILY = "records_named"


def is_named_tuple(value) -> bool:
    """A named tuple instance (a tuple whose class has ``_fields``)."""
    return isinstance(value, tuple) and isinstance(getattr(type(value), "_fields", None), tuple)


def record_method_call(obj, name, args, kwargs):
    """``(function, positional arguments)`` computing ``obj.name(*args, **kwargs)`` for a
    named tuple's ``_replace``/``_asdict``, the record first (so the function's cotangents
    are the method call's: the record's, then the keywords' values for ``_replace``);
    None for any other call."""
    if not is_named_tuple(obj) or args:
        return None
    if name == "_replace" and all(k in type(obj)._fields for k in kwargs):
        return record_replace, (obj, tuple(kwargs), *kwargs.values())
    if name == "_asdict" and not kwargs:
        return record_asdict, (obj,)
    return None


def record_replace(record, names, *values):
    """``record._replace(**dict(zip(names, values)))``."""
    return record._replace(**dict(zip(names, values, strict=True)))


def record_places(record, names) -> tuple:
    """Where each of the fields ``names`` sits in the named tuple ``record``."""
    fields = type(record)._fields
    return tuple(fields.index(n) for n in names)


@transformable
def record_replace_pullback(dy, record, names, *values):
    return replaced_cotangents(dy, len(record), record_places(record, names))


@transformable
def replaced_cotangents(dy, n, places):
    """The cotangents ``(record's, names', *values')`` of a record of ``n`` fields with
    those at ``places`` replaced, from the new record's ``dy``: each replaced field's goes
    to its value, the others to the record (a dataclass's too: records_calls.py)."""
    kept = ()
    for k in range(n):
        if k in places:
            kept = kept + (ZERO,)
        else:
            kept = kept + (tuple_item(dy, k),)
    parts = (kept, NO_TANGENT)
    for k in places:
        parts = parts + (tuple_item(dy, k),)
    return parts


def _replace_rrule(record, names, *values):
    y = record_replace(record, names, *values)
    return y, lambda dy: record_replace_pullback(dy, record, names, *values)


def _replace_tangent(args, tangents, kwargs):
    record, names = args[0], args[1]
    places = record_places(record, names)
    own = tangents[0]
    out = []
    for k in range(len(record)):
        if k in places:
            j = 2 + places.index(k)
            out.append(tangents[j] if len(tangents) > j else ZERO)
        else:
            out.append(tuple_item(own, k))
    return tuple(out)


def record_fields(record) -> tuple:
    """The names of the named tuple ``record``'s fields, in order."""
    return type(record)._fields


def record_asdict(record):
    """``record._asdict()``: the dict of its fields, in their order."""
    return record._asdict()


@transformable
def record_asdict_pullback(dy, record):
    out = ()
    for name in record_fields(record):
        out = out + (dict_item(dy, name),)
    return (out,)


def _asdict_rrule(record):
    return record_asdict(record), lambda dy: record_asdict_pullback(dy, record)


def _asdict_tangent(args, tangents, kwargs):
    record, own = args[0], tangents[0]
    if is_zero(own) or own is NO_TANGENT:
        return ZERO
    return {name: tuple_item(own, k) for k, name in enumerate(type(record)._fields)}


def register(reg) -> None:
    rule = reg.register(record_replace, _replace_rrule, family=FAMILY, trusted=True)
    reg.set_pullback_function(record_replace, record_replace_pullback)
    rule.extra["tangent"] = _replace_tangent
    rule = reg.register(record_asdict, _asdict_rrule, family=FAMILY, trusted=True)
    reg.set_pullback_function(record_asdict, record_asdict_pullback)
    rule.extra["tangent"] = _asdict_tangent
    reg.non_differentiable(record_places, record_fields, family=FAMILY, trusted=True)
