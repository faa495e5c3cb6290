"""``dataclasses.replace``, ``astuple`` and ``asdict`` of a differentiated dataclass.

A dataclass's cotangent is the tuple of its fields' (records_dataclasses.py), so:

* ``dataclasses.replace(p, w=v)`` is written by the normalizer as ``replaced(p, ("w",), v)``
  (transform/free_values.py), whose rule hands each replaced field's cotangent to its new
  value and the others to ``p``;
* ``dataclasses.astuple(p)`` holds the same values in the same nesting (nested dataclasses
  become tuples, lists and dicts stay): its cotangent is ``p``'s, unchanged;
* ``dataclasses.asdict(p)``'s cotangent is a dict per dataclass, turned back into the
  tuple of its fields (:func:`undict`).

>>> import dataclasses
>>> @dataclasses.dataclass
... class P:
...     w: float
...     b: float
>>> replaced(P(1.0, 2.0), ("b",), 5.0)
P(w=1.0, b=5.0)
>>> undict({"b": 3.0}, P(1.0, 2.0))
(ZERO, 3.0)
"""

from __future__ import annotations

import dataclasses

from .errors import UnsupportedCallError
from .records_dataclasses import field_names, fields_of, is_dataclass_value, refusal
from .records_named import replaced_cotangents
from .registry import transformable
from .runtime import tuple_item
from .tangents import NO_TANGENT, ZERO

FAMILY = "records_calls"
REQUIRES = "dataclasses"  # registered once a program has imported it (rules/__init__.py)


def replaced(record, names, *values):
    """``dataclasses.replace(record, **dict(zip(names, values)))``, for a dataclass whose
    constructor stores its fields (anything else is refused: its ``__init__`` or
    ``__post_init__`` would run on the new values)."""
    if is_dataclass_value(record) and refusal(type(record)) is not None:
        what, fix = refusal(type(record))
        raise UnsupportedCallError(
            f"PB301 dataclasses.replace of a differentiated {type(record).__name__}, {what}.\n"
            f"Fix: {fix} (see docs/limitations.md#PB301)."
        )
    return dataclasses.replace(record, **dict(zip(names, values, strict=True)))


def replaced_places(record, names) -> tuple:
    """Where each replaced field sits in ``record``'s cotangent tuple."""
    fields = field_names(type(record))
    return tuple(fields.index(n) for n in names)


@transformable
def replaced_pullback(dy, record, names, *values):
    return replaced_cotangents(dy, len(fields_of(record)), replaced_places(record, names))


def _replaced_rrule(record, names, *values):
    return replaced(record, names, *values), lambda dy: replaced_pullback(
        dy, record, names, *values
    )


def _replaced_tangent(args, tangents, kwargs):
    record, names = args[0], args[1]
    places = replaced_places(record, names)
    own = tangents[0]
    out = []
    for k in range(len(fields_of(record))):
        if k in places:
            out.append(
                tangents[2 + places.index(k)] if len(tangents) > 2 + places.index(k) else ZERO
            )
        else:
            out.append(tuple_item(own, k))
    return tuple(out)


def _replace_rrule(record, **changes):
    """``dataclasses.replace`` as written, where the normalizer left it (no rewrite into
    :func:`replaced`): the changed fields' values get no gradient here, which the
    transformation makes exact by refusing a differentiated keyword (PB502)."""
    names = tuple(changes)
    y, pullback = _replaced_rrule(record, names, *changes.values())
    return y, lambda dy: pullback(dy)[:1]


@transformable
def replace_pullback(dy, record):
    # dataclasses.replace(record) with no change (a copy): the same cotangent
    return (dy,)


def _astuple_rrule(record):
    return dataclasses.astuple(record), lambda dy: (dy,)  # the same nesting of tuples


@transformable
def astuple_pullback(dy, record):
    return (dy,)


def undict(c, like):
    """The cotangent of ``asdict(like)`` (dicts for dataclasses) as ``like``'s: tuples.
    Linear in ``c``; its transpose is :func:`redict` (their rules are each other)."""
    if c is ZERO or c is NO_TANGENT:
        return ZERO
    if is_dataclass_value(like):
        names = field_names(type(like))
        return tuple(undict(c.get(n, ZERO), v) for n, v in zip(names, fields_of(like), strict=True))
    if type(like) in (tuple, list):
        return type(like)(undict(ci, v) for ci, v in zip(c, like, strict=True))
    if type(like) is dict:
        return {k: undict(ci, like[k]) for k, ci in c.items()}
    return c


def redict(t, like):
    """The tangent of ``asdict(like)`` from ``like``'s (tuples for dataclasses): dicts."""
    if t is ZERO or t is NO_TANGENT:
        return ZERO
    if is_dataclass_value(like):
        names = field_names(type(like))
        return {
            n: redict(tuple_item(t, k), v)
            for k, (n, v) in enumerate(zip(names, fields_of(like), strict=True))
        }
    if type(like) in (tuple, list):
        return type(like)(redict(ti, v) for ti, v in zip(t, like, strict=True))
    if type(like) is dict:
        return {k: redict(ti, like[k]) for k, ti in t.items()}
    return t


def _asdict_rrule(record):
    return dataclasses.asdict(record), lambda dy: (undict(dy, record),)


@transformable
def asdict_pullback(dy, record):
    return (undict(dy, record),)


@transformable
def undict_pullback(d, c, like):
    return redict(d, like), NO_TANGENT


@transformable
def redict_pullback(d, t, like):
    return undict(d, like), NO_TANGENT


def _linear_rrule(fn, transpose):
    def linear_rrule(c, like):
        return fn(c, like), lambda d: (transpose(d, like), NO_TANGENT)

    return linear_rrule


def register(reg) -> None:
    # family "records": a field of its result is read through field_of (reverse_attributes)
    rule = reg.register(replaced, _replaced_rrule, family="records", trusted=True)
    reg.set_pullback_function(replaced, replaced_pullback)
    rule.extra["tangent"] = _replaced_tangent
    reg.non_differentiable(replaced_places, family=FAMILY, trusted=True)
    reg.register(dataclasses.replace, _replace_rrule, family="records", trusted=True)
    reg.set_pullback_function(dataclasses.replace, replace_pullback)
    rule = reg.register(dataclasses.astuple, _astuple_rrule, family=FAMILY, trusted=True)
    reg.set_pullback_function(dataclasses.astuple, astuple_pullback)
    rule.extra["tangent"] = lambda args, tangents, kwargs: tangents[0]
    rule = reg.register(dataclasses.asdict, _asdict_rrule, family=FAMILY, trusted=True)
    reg.set_pullback_function(dataclasses.asdict, asdict_pullback)
    rule.extra["tangent"] = lambda args, tangents, kwargs: redict(tangents[0], args[0])
    for fn, transpose, pullback in (
        (undict, redict, undict_pullback),
        (redict, undict, redict_pullback),
    ):
        reg.register(fn, _linear_rrule(fn, transpose), family=FAMILY, trusted=True)
        reg.set_pullback_function(fn, pullback)
