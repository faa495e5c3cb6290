"""Named tuples (``collections.namedtuple``, ``typing.NamedTuple``) as differentiated values:
a tuple whose items also have names.

As arguments they are tuples already (indexing, unpacking and iteration differentiate, and
the gradient comes back as the same named tuple: ``tangents.materialize``). Here:

* constructing one, ``Params(w, b)``, through a rule every named-tuple class gets from the
  registry's provider (:func:`record_rule`); keyword arguments are put in their places by
  the normalizer, so the rule takes the fields in order;
* reading a field of a differentiated one, ``p.w``: the transformation calls
  :func:`field_of`, which is ``p[k]`` for the field's position ``k``. On anything but a
  named tuple or a dataclass it refuses, naming the user's line (an object's attribute
  carries no gradient pullback can follow).

Dataclasses are records the same way (records_dataclasses.py): their cotangent is the
tuple of their fields', so the constructor's rule and the field reads here serve both.

>>> import collections
>>> Point = collections.namedtuple("Point", "x y")
>>> field_of(Point(1.0, 2.0), "y", "f.py:3:12")
2.0
>>> record_rule(Point).name
'pullback.records.Point'
"""

from __future__ import annotations

import functools

from .errors import UnsupportedCallError
from .escapes import ESCAPE_RECORD, changed_outside
from .records_dataclasses import (
    field_position,
    field_slots,
    init_fields,
    is_dataclass_class,
    refusal,
)
from .records_plain import is_plain_record, layout, new_record, plain_position
from .registry import RULE, Rule, default_registry, transformable
from .runtime import tuple_item
from .tangents import NO_TANGENT, ZERO, getitem_cotangent

FAMILY = "records"


def is_record_class(cls) -> bool:
    """Whether ``cls`` is a named-tuple class (a tuple subclass with ``_fields``)."""
    return (
        isinstance(cls, type)
        and issubclass(cls, tuple)
        and isinstance(getattr(cls, "_fields", None), tuple)
    )


def field_index(record, name: str, where: str = "") -> int:
    """Where the field ``name`` sits in ``record`` (a named tuple, or a dataclass instance
    whose cotangent is the tuple of its fields: records_dataclasses.py), or a refusal."""
    if not ESCAPE_RECORD.attributes:
        k = plain_position(record, name)  # a field of a plain record or a dataclass: the
        if k is None and not isinstance(record, tuple):  # common case, read on every
            k = field_position(record, name)  # step of a loop (and its reverse)
        if k is not None:
            return k
    fields = getattr(type(record), "_fields", None)
    if isinstance(record, tuple) and isinstance(fields, tuple) and name in fields:
        return fields.index(name)
    k = field_position(record, name)
    if ESCAPE_RECORD.attributes and (id(record), name) in ESCAPE_RECORD.attributes:
        _refuse_stored(record, name, where)
    if k is not None:
        return k
    if is_plain_record(record):
        return _plain_attribute(record, name, where)
    if _class_constant(record, name):
        return None  # `p.K`: a class attribute read through the instance, a constant
    if is_dataclass_class(type(record)):
        raise UnsupportedCallError(f"{where}: PB501 {dataclass_attribute(record, name)}")
    raise UnsupportedCallError(
        f"{where}: PB501 attribute '{name}' of a differentiated value, a "
        f"{type(record).__name__}, cannot be differentiated: pullback differentiates arrays, "
        "scalars, named tuples, dataclasses and containers of them, not arbitrary objects.\n"
        "Fix: make the class a @dataclass with that field, or pass the attribute's value as "
        "an argument (or in a dict or a named tuple) instead of the object "
        "(see docs/limitations.md#PB501)."
    )


def _refuse_stored(record, name: str, where: str):
    """A field stored on the differentiated ``record`` while the gradient ran where the
    transformation made no version of the object (escapes.setattr_escaping): its gradient
    through that store would be lost. The message names the store's line and why."""
    cls = type(record).__name__
    found = ESCAPE_RECORD.values.get(id(getattr(record, name, None)))
    at = f" at {found[1]}" if found is not None else ""
    if field_position(record, name) is None and not isinstance(record, tuple):
        if is_dataclass_class(type(record)):  # its fields are the ones it declares
            raise UnsupportedCallError(
                f"{where}: PB107 this reads back '{name}' of a differentiated {cls}, "
                f"stored{at} while the gradient ran: '{name}' is not a field of the "
                f"dataclass {cls}, and pullback follows stores on a dataclass only into its "
                "fields, so the gradient through that store would be lost.\n"
                f"Fix: declare it as a field of {cls} (`{name}: float = 0.0`) and have the "
                "method return a new object instead of storing on this one "
                f"(`return dataclasses.replace(self, {name}=v)`, used as "
                f"`obj = obj.with_{name}(v)`) (see docs/limitations.md#PB107)."
            )
        # (the attributes any method of the class stores are fields: plain_classes.py's
        # method_stores; this one was stored from outside the class)
        raise UnsupportedCallError(
            f"{where}: PB107 this reads back '{name}' of a differentiated {cls}, stored{at} "
            f"while the gradient ran from outside the class: no method of {cls} stores "
            f"`self.{name}`, and pullback follows stores on an object only into the "
            "attributes its class's own methods store, so the gradient through that store "
            "would be lost.\n"
            f"Fix: store it in a method of {cls} (`def set_{name}(self, v): self.{name} = v`) "
            f"and call that method (`obj.set_{name}(v)`) in the function that made the "
            "object, or return the value and pass it on (see docs/limitations.md#PB107)."
        )
    raise UnsupportedCallError(
        f"{where}: PB107 this reads back '{name}' of a differentiated {cls}, stored{at} "
        "while the gradient ran on an object pullback could not follow there (the object "
        "had a second name, was in a container, came in as an argument or was handed on by "
        "a call or a method, or a method changed a list or array it holds in place): the "
        "gradient through that store would be lost.\n"
        f"Fix: keep the object under the one name that made it (`obj = {cls}(...)`, no "
        "`b = obj` in a loop or branch, no list or call holding it) and store through that "
        "name, a list as a tuple (`self.items = self.items + (v,)`), or return the new "
        "value from the method that computes it and use that "
        "(see docs/limitations.md#PB107)."
    )


def field_tangent(tangent, record, name: str, where: str = ""):
    """The tangent of ``record.name`` (forward mode), from ``record``'s tangent: its
    field's entry, ZERO for a constant attribute of a plain record."""
    if type(tangent) is dict and isinstance(record, dict):
        # a solver's result (a dict read by attribute, ``sol.y``): the entry's tangent, as
        # rule_tangents.rule_tangent gives it; ZERO for an entry that carries none
        return tangent.get(name, ZERO)
    if declared_attribute(record, name):  # a library object's declared data (its dict)
        return ZERO if tangent is ZERO else tangent.get(name, ZERO)
    k = field_index(record, name, where)
    if ESCAPE_RECORD.containers and changed_outside(getattr(record, name, None)) is not None:
        _refuse_stored(record, name, where)
    return ZERO if k is None or tangent is ZERO else tangent[k]


@transformable
def field_tangent_pullback(dy, tangent, record, name, where=""):
    # linear in ``tangent``: its cotangent is the field's entry, as field_of's pullback
    return field_pullback(dy, record, name, where)[0], NO_TANGENT, NO_TANGENT, NO_TANGENT


def _field_tangent_rrule(tangent, record, name, where=""):
    y = field_tangent(tangent, record, name, where)
    return y, lambda dy: field_tangent_pullback(dy, tangent, record, name, where)


def _class_constant(record, name: str) -> bool:
    """Whether ``record.name`` of a dataclass instance or a named tuple that is no field
    reads a class attribute holding a plain value (``K = 3.0`` in the class body): a
    constant of the class, no descriptor (a property, a method) and nothing callable."""
    if name in (getattr(record, "__dict__", None) or ()):
        return False
    cls = type(record)
    static = next((c.__dict__[name] for c in cls.__mro__ if name in c.__dict__), _MISSING)
    return not (static is _MISSING or hasattr(type(static), "__get__") or callable(static))


_MISSING = object()


def _in_slot(record, name: str) -> bool:
    """Whether ``record.name`` is a value held in a slot of its class's ``__slots__``."""
    for c in type(record).__mro__:
        slots = c.__dict__.get("__slots__", ())
        if name in ((slots,) if isinstance(slots, str) else slots):
            return hasattr(record, name)
    return False


def _plain_attribute(record, name: str, where: str):
    """None for an attribute of a plain record that is no field and holds a constant: a
    class attribute that is a plain value, or an attribute stored later with no gradient
    (one stored with a gradient is refused by :func:`field_of`, escapes.py); a refusal for
    a method, a property or any other descriptor."""
    cls = type(record)
    if name not in (getattr(record, "__dict__", None) or ()) and not _in_slot(record, name):
        static = next((c.__dict__[name] for c in cls.__mro__ if name in c.__dict__), None)
        if static is None or hasattr(type(static), "__get__") or callable(static):
            what = "property" if isinstance(static, property) else "attribute"
            if isinstance(static, functools.cached_property):
                raise UnsupportedCallError(
                    f"{where}: PB501 cached property '{name}' of a differentiated "
                    f"{cls.__name__} cannot be differentiated here: the object may change (a "
                    "method call, a store) or be handed on before the read, so its cache "
                    "may hold a value of other fields.\n"
                    f"Fix: read it on an object the function makes and only reads "
                    f"(`{cls.__name__}(...).{name}`, or a name bound to it used only for "
                    f"attribute reads), or write it as a method and call it, `.{name}()` "
                    "(see docs/limitations.md#PB501)."
                )
            raise UnsupportedCallError(
                f"{where}: PB501 {what} '{name}' of a differentiated {cls.__name__} cannot "
                "be differentiated: pullback follows the attributes its __init__ stores and "
                "its methods' calls.\n"
                f"Fix: write it as a method and call it, `.{name}()`, or store it in "
                "__init__ (see docs/limitations.md#PB501)."
            )
    return None


def dataclass_attribute(record, name: str) -> str:
    """Why ``record.name`` of a differentiated dataclass that is no field is refused."""
    cls = type(record).__name__
    if isinstance(getattr(type(record), name, None), property):
        what = f"property '{name}' of a differentiated {cls} (a dataclass)"
        fix = f"write it as a method and call it, `.{name}()`: methods are differentiated"
    else:
        what = f"attribute '{name}' of a differentiated {cls} (a dataclass), not one of its fields,"
        fix = f"declare it a field of the dataclass, or read it from the class (`{cls}.{name}`)"
    return (
        f"{what} cannot be differentiated: pullback follows a dataclass's fields only.\n"
        f"Fix: {fix} (see docs/limitations.md#PB501)."
    )


def _result_entry(record, name: str) -> bool:
    """Whether ``record.name`` reads an entry of a dict whose attributes are its entries
    (SciPy's ``OptimizeResult``, ``OdeResult``): a solver's result reached where the
    transformation could not see the solver (``minimize(f, x0, **options)``, a call found
    at run time). Its cotangent is a dict by key, as the solver's rule takes it."""
    return type(record) is not dict and isinstance(record, dict) and name in record


def declared_attribute(record, name: str) -> bool:
    """Whether ``record.name`` reads an attribute that the rule of ``record``'s class
    declares differentiable (``rule.extra["result_attributes"]``: ``interp1d``'s ``x`` and
    ``y``). Such an object's cotangent is a dict by attribute, as that rule's pullback takes
    it: a transformable pullback that takes the object (a method's, marked
    ``__pullback_receiver_cotangent__``) reads the object's data this way, and a derivative
    of that pullback reaches the data (any other attribute of it stays refused)."""
    if isinstance(record, (tuple, dict)) or is_plain_record(record):
        return False
    try:
        rule = default_registry().lookup(type(record))
    except TypeError:  # an unhashable class
        return False
    return rule is not None and name in rule.extra.get("result_attributes", ())


def field_of(record, name: str, where: str = ""):
    """``record.name`` of a differentiated named tuple or dataclass instance. A field that
    holds a list or dict to which a method added a differentiated value in this evaluation
    (``self.items.append(y)`` in a method, then ``acc.items`` or another method's
    ``sum(self.items)``) is refused: the gradient through that store would be lost."""
    try:
        k = field_index(record, name, where)
    except UnsupportedCallError:  # (the common reads pay nothing for this case)
        if _result_entry(record, name):
            return record[name]
        if declared_attribute(record, name):
            return getattr(record, name)
        raise
    value = record[k] if isinstance(record, tuple) and k is not None else getattr(record, name)
    if ESCAPE_RECORD.containers and changed_outside(value) is not None:
        _refuse_stored(record, name, where)
    return value


@transformable
def field_pullback(dy, record, name, where=""):
    if _result_entry(record, name) or declared_attribute(record, name):
        # a solver's result, a library object's declared data: the entry's cotangent, by key
        return ({name: dy} if dy is not ZERO else ZERO), NO_TANGENT, NO_TANGENT
    k = field_index(record, name, where)
    if k is None:  # a constant attribute of a plain record
        return ZERO, NO_TANGENT, NO_TANGENT
    return getitem_cotangent(ZERO, field_slots(record), k, dy), NO_TANGENT, NO_TANGENT


def _field_of_rrule(record, name, where=""):
    y = field_of(record, name, where)
    return y, lambda dy: field_pullback(dy, record, name, where)


@transformable
def record_pullback(dy, *values):
    """The cotangent of each field given to a named tuple's constructor."""
    parts = ()
    for k in range(len(values)):
        parts = parts + (tuple_item(dy, k),)
    return parts


def _record_rrule(cls):
    def record_rrule(*values):
        return cls(*values), lambda dy: record_pullback(dy, *values)

    record_rrule.__name__ = f"{cls.__name__}_rrule"
    return record_rrule


def record_rule(cls) -> Rule | None:
    """The registry's provider: the rule of a named-tuple class (its constructor), or of a
    dataclass whose constructor only stores its fields (records_dataclasses.py)."""
    if not is_record_class(cls) and not (is_dataclass_class(cls) and refusal(cls) is None):
        return None
    return Rule(
        fn=cls,
        kind=RULE,
        rrule=_record_rrule(cls),
        name=f"{cls.__module__}.{cls.__qualname__}",
        family=FAMILY,
        trusted=True,
        notes="a named tuple's constructor: the fields in order",
        pullback_fn=record_pullback,
        extra={"tangent": _fields_tangent(cls)} if is_dataclass_class(cls) else None,
    )


def _fields_tangent(cls):
    """A dataclass's tangent from its constructor's: the tuple of its fields' tangents (a
    field left to its default is a constant: ``ZERO``)."""
    n = len(init_fields(cls)[0])

    def tangent(args, tangents, kwargs):
        return tuple(tangents) + (ZERO,) * (n - len(tangents))

    return tangent


@transformable
def new_record_pullback(dy, cls, names, *values):
    """The cotangent of each value a plain class's constructor function stored."""
    parts = (NO_TANGENT, NO_TANGENT)
    for k in range(len(values)):
        parts = parts + (tuple_item(dy, k),)
    return parts


def _new_record_rrule(cls, names, *values):
    return new_record(cls, names, *values), lambda dy: new_record_pullback(dy, cls, names, *values)


def _new_record_tangent(args, tangents, kwargs):
    n = len(layout(args[0]) or args[1])
    found = tuple(tangents[2:])
    return found + (ZERO,) * (n - len(found))


def register(reg) -> None:
    rule = reg.register(new_record, _new_record_rrule, family=FAMILY, trusted=True)
    reg.set_pullback_function(new_record, new_record_pullback)
    rule.extra["tangent"] = _new_record_tangent
    reg.register(field_of, _field_of_rrule, family=FAMILY, trusted=True)
    reg.register(field_tangent, _field_tangent_rrule, family=FAMILY, trusted=True)
    reg.set_pullback_function(field_tangent, field_tangent_pullback)
    reg.set_pullback_function(field_of, field_pullback)
    reg.non_differentiable(field_index, family=FAMILY, trusted=True)
    reg.non_differentiable(_result_entry, declared_attribute, family=FAMILY, trusted=True)
    reg.providers.append(record_rule)
