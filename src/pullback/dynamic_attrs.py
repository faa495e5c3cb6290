"""Attributes of differentiated records found only when the function runs.

* ``getattr(obj, name)`` (and ``getattr(obj, name, default)``) with ``name`` a variable
  (``for name in ("w1", "w2"): np.sum(getattr(params, name) ** 2)``): the rule of
  ``builtins.getattr``. A field of a record (a named tuple, a dataclass instance, a plain
  record: records.py) gets its cotangent as ``params.w1`` does; the default gets it when
  the attribute is missing; anything not differentiated (a module, ``getattr(np, fname)``,
  a class) gets none. A constant name never gets here: ``getattr(obj, "w")`` is rewritten
  as ``obj.w`` before the transform (dict_calls.constant_getattr).
* a method of a differentiated record read as a value (``f = self.layer1``,
  ``ops = [self.a, self.b]``, ``getattr(model, "predict")``): the bound method, whose
  cotangent is the record's (the receiver is the only differentiated value it holds).
  Calling it is calling the method on the record (:func:`method_receiver`, used by
  dynamic_calls.py at first and higher order), so the receiver's cotangent reaches it.
  Held in a field of another record (``outer = Layer(inner.apply, w)``, then
  ``self.act(z)``), its cotangent is that field's (:func:`held_method`,
  :func:`held_cotangent`), in reverse and forward mode and at second order.

Anything else keeps the refusals of records.field_of (an attribute of an array, of an
arbitrary object, a property).
"""

from __future__ import annotations

import builtins
import inspect
import types

import numpy as np

from .errors import UnsupportedCallError
from .guards import is_library_module_name
from .records import field_index, field_of, field_pullback, field_tangent, field_tangent_pullback
from .records_dataclasses import is_dataclass_value
from .records_plain import is_plain_record, layout
from .registry import transformable
from .tangents import NO_TANGENT, ZERO, densify, is_zero, unbroadcast

FAMILY = "dynamic_attrs"


def _is_record(v) -> bool:
    """A named tuple, a dataclass instance or a plain record: a differentiated value whose
    methods are differentiated with the receiver."""
    if isinstance(v, type):
        return False
    if isinstance(v, tuple):
        return isinstance(getattr(type(v), "_fields", None), tuple)
    if is_dataclass_value(v) or is_plain_record(v):
        return True
    # an object of a plain record class that code run as written made (differentiated
    # again): records_plain.adopt_object's test, without registering it
    return layout(type(v)) is not None and isinstance(getattr(v, "__dict__", None), dict)


def record_method(record, name):
    """``record.name`` as a bound method when ``name`` is a Python method of the class of
    the record ``record`` (not a field, not an attribute of the instance, not library code
    such as a named tuple's ``_replace``), else None."""
    if not isinstance(name, str) or isinstance(record, type):
        return None
    if type(getattr(type(record), name, None)) is not types.FunctionType:
        return None  # a field's read (on every step of a loop) costs one class lookup
    if not _is_record(record):
        return None
    own = getattr(record, "__dict__", None)
    if isinstance(own, dict) and name in own:
        return None
    raw = inspect.getattr_static(type(record), name, None)
    if type(raw) is not types.FunctionType:
        return None
    if is_library_module_name(getattr(raw, "__module__", None) or ""):
        return None
    return types.MethodType(raw, record)


def method_receiver(value, name: str):
    """``(record, method name)`` when calling ``value.name`` (``name`` is ``"__call__"``:
    ``f(x)`` with ``f`` varied) is calling a Python method on a differentiated record
    (``value`` made by :func:`record_method`), else None."""
    if name != "__call__" or type(value) is not types.MethodType:
        return None
    record, function = value.__self__, value.__func__
    if not _is_record(record):
        return None
    for cls in type(record).__mro__:
        for key, found in vars(cls).items():
            if found is function and inspect.getattr_static(type(record), key, None) is function:
                return record, key
    return None


def held_method(obj, name, callee) -> bool:
    """Whether ``callee``, what ``obj.name`` found on the instance, is a record's bound
    method held in a field of the record ``obj`` (``outer = Layer(inner.apply, w)``, then
    ``self.act(z)``): its cotangent, the inner record's, is that field's
    (:func:`held_cotangent`)."""
    return method_receiver(callee, "__call__") is not None and _is_record(obj)


def held_cotangent(d, obj, name):
    """The cotangent of the record ``obj`` whose field ``name`` (a bound method) has the
    cotangent ``d``: that field's entry, the others zero."""
    if is_zero(d):
        return ZERO
    return attribute_pullback(d, obj, name)[0]


def held_callee(site, obj, name):
    """What ``obj.name(...)`` calls when it is a record's bound method held in a field of
    the record ``obj`` (:func:`held_method`), else None."""
    own = getattr(obj, "__dict__", None)
    if not isinstance(name, str) or not isinstance(own, dict) or name not in own:
        return None
    callee = own[name]
    return callee if held_method(obj, name, callee) else None


def held_field(dy, obj, name):
    """The transpose of :func:`held_cotangent` on a method_vjp cotangent ``dy`` (one per
    output: the record ``obj``'s, then each argument's): its first entry's field
    ``name``, the bound method's cotangent, the others as they are."""
    if is_zero(dy):
        return ZERO
    first = dy[0]
    k = field_index(obj, name)
    return (ZERO if is_zero(first) else first[k],) + tuple(dy)[1:]


@transformable
def held_cotangent_pullback(dd, d, obj, name):
    # held_cotangent is linear in d: its transpose reads the field back (held_field's)
    return held_field((dd,), obj, name)[0], NO_TANGENT, NO_TANGENT


@transformable
def held_field_pullback(dd, dy, obj, name):
    # held_field is linear in dy: its transpose moves the first entry into the field
    if dd is ZERO or dd is NO_TANGENT:
        return ZERO, NO_TANGENT, NO_TANGENT
    return (held_cotangent(dd[0], obj, name),) + tuple(dd)[1:], NO_TANGENT, NO_TANGENT


def bound_self(method):
    """The record a bound method of a record runs on (``method.__self__``), read so that a
    derivative reaches it: a bound method's cotangent is its record's, so the pullback
    passes the cotangent through."""
    return method.__self__


@transformable
def bound_self_pullback(dy, method):
    return (dy,)


def _bound_self_rrule(method):
    return method.__self__, lambda dy: (dy,)


def _bound_self_tangent(args, tangents, kwargs):
    return tangents[0]


def is_bound_to(method, record) -> bool:
    """Whether ``method`` is a bound method running on ``record``."""
    return type(method) is types.MethodType and method.__self__ is record


def _linear_rrule(fn, pullback):
    def linear_rrule(c, obj, name):
        return fn(c, obj, name), lambda d: pullback(d, c, obj, name)

    return linear_rrule


def attribute_of(record, name, where=""):
    """``record.name`` of a differentiated ``record``: a method as its bound method
    (:func:`record_method`), else a field (records.field_of, which refuses the rest)."""
    if type(getattr(type(record), name, None)) is not types.FunctionType:
        return field_of(record, name, where)  # a field (on every step of a loop): no more
    method = record_method(record, name)
    return method if method is not None else field_of(record, name, where)


@transformable
def attribute_pullback(dy, record, name, where=""):
    # a bound method's cotangent is its record's; a field's is records.field_pullback's
    if record_method(record, name) is not None:
        return dy, NO_TANGENT, NO_TANGENT
    return field_pullback(dy, record, name, where)


def _attribute_rrule(record, name, where=""):
    if type(getattr(type(record), name, None)) is not types.FunctionType:
        # a field (read on every step of a loop): records.field_of's rule, no more
        return field_of(record, name, where), lambda dy: field_pullback(dy, record, name, where)
    y = attribute_of(record, name, where)
    if type(y) is types.MethodType and record_method(record, name) is not None:
        return y, lambda dy: (dy, NO_TANGENT, NO_TANGENT)
    return y, lambda dy: field_pullback(dy, record, name, where)  # attribute_pullback's


def attribute_tangent(tangent, record, name, where=""):
    """The tangent of ``record.name`` (forward mode) from ``record``'s: a bound method's is
    the record's, a field's records.field_tangent's."""
    if record_method(record, name) is not None:
        return tangent
    return field_tangent(tangent, record, name, where)


@transformable
def attribute_tangent_pullback(dy, tangent, record, name, where=""):
    if record_method(record, name) is not None:
        return dy, NO_TANGENT, NO_TANGENT, NO_TANGENT
    return field_tangent_pullback(dy, tangent, record, name, where)


def _attribute_tangent_rrule(tangent, record, name, where=""):
    y = attribute_tangent(tangent, record, name, where)
    return y, lambda dy: attribute_tangent_pullback(dy, tangent, record, name, where)


def flat_of(obj, where=""):
    """``obj.flat``, which the normalizer writes as this call (transform/free_values.py):
    of an array, its elements in C order as ``np.ravel`` gives them (a subscript then reads
    them: ``x.flat[i]``, ``x.flat[2:5]``, ``x.flat[[0, 4]]``); of anything else, the
    attribute itself (a record's field gets its cotangent as :func:`attribute_of`'s)."""
    if isinstance(obj, np.ndarray):
        return np.ravel(obj)
    return obj.flat


@transformable
def flat_pullback(dy, obj, where=""):
    if isinstance(obj, np.ndarray):
        return np.reshape(densify(dy), np.shape(obj)), NO_TANGENT
    return attribute_pullback(dy, obj, "flat", where)[0], NO_TANGENT


def _flat_rrule(obj, where=""):
    if isinstance(obj, np.ndarray):
        return np.ravel(obj), lambda dy: flat_pullback(dy, obj, where)
    y, back = _attribute_rrule(obj, "flat", where)
    return y, lambda dy: (back(dy)[0], NO_TANGENT)


def _flat_tangent(args, tangents, kwargs):
    obj = args[0]
    if is_zero(tangents[0]):
        return ZERO
    if isinstance(obj, np.ndarray):
        return np.ravel(tangents[0])
    return attribute_tangent(tangents[0], obj, "flat", *args[1:])


# What ``x.T``, ``x.mT``, ``x.real`` and ``x.imag`` compute for an array or a number.
_ARRAY_VIEWS = {"T": np.transpose, "real": np.real, "imag": np.imag}
if hasattr(np, "matrix_transpose"):  # NumPy 2
    _ARRAY_VIEWS["mT"] = np.matrix_transpose


def _array_like(obj) -> bool:
    return isinstance(obj, (np.ndarray, np.generic, float, int, complex))


def array_attribute_of(obj, name, where=""):
    """``obj.T`` (``.mT``, ``.real``, ``.imag``) where ``obj`` may be an object of the
    user's class with a field of that name (a record's ``T``, a temperature): the
    normalizer writes the read as this call in a module holding such a class
    (transform/free_values.py); elsewhere as NumPy's function. Of an array or a number,
    NumPy's view; of anything else, the attribute itself (a record's field gets its
    cotangent as :func:`attribute_of`'s)."""
    if _array_like(obj):
        return _ARRAY_VIEWS[name](obj)
    return attribute_of(obj, name, where)


@transformable
def view_cotangent(dy, obj, name):
    """The cotangent of an array ``obj`` from that of its view ``obj.name``."""
    g = densify(dy)
    if name == "T":
        return np.transpose(g)
    if name == "mT":
        return np.swapaxes(g, -1, -2)
    if name == "real":
        return unbroadcast(g, obj)
    if not np.iscomplexobj(obj):  # imag of a real value: a constant zero
        return unbroadcast(np.zeros_like(g), obj)
    return unbroadcast(1j * np.real(g), obj)


@transformable
def array_attribute_pullback(dy, obj, name, where=""):
    if _array_like(obj):
        return view_cotangent(dy, obj, name), NO_TANGENT, NO_TANGENT
    return attribute_pullback(dy, obj, name, where)[0], NO_TANGENT, NO_TANGENT


def _array_attribute_rrule(obj, name, where=""):
    y = array_attribute_of(obj, name, where)
    return y, lambda dy: array_attribute_pullback(dy, obj, name, where)


def _array_attribute_tangent(args, tangents, kwargs):
    obj, name = args[0], args[1]
    if is_zero(tangents[0]):
        return ZERO
    if _array_like(obj):
        return _ARRAY_VIEWS[name](tangents[0])  # (each view is linear)
    return attribute_tangent(tangents[0], obj, name, *args[2:])


def property_getter(obj, name):
    """The getter of ``name`` when it is a property of ``obj``'s class whose getter is the
    user's Python function (``m.first`` of a ``Model`` with ``@property def first(self)``),
    else None (a field, a method, a library's property, an attribute of a class)."""
    if isinstance(obj, type) or not isinstance(name, str):
        return None
    raw = inspect.getattr_static(type(obj), name, None)
    if not isinstance(raw, property) or not isinstance(raw.fget, types.FunctionType):
        return None
    return None if is_library_module_name(raw.fget.__module__ or "") else raw.fget


@transformable
def read_attribute_or_property(obj, name):
    """``obj.name`` where ``obj``'s class is known only when it runs and some class of the
    function's module has a property of that name (transform/property_reads.py): the
    getter called with ``obj`` (differentiated as the user's function it is, ``obj``
    carrying the gradient), else the attribute as ``getattr`` reads it (a record's field
    gets its cotangent)."""
    getter = property_getter(obj, name)
    if getter is None:
        return getattr(obj, name)
    return getter(obj)


def _differentiated(obj) -> bool:
    """Whether ``obj``'s attributes may carry a gradient (a record); a module, a class, a
    function or any other object read with ``getattr`` is a constant."""
    return _is_record(obj)


def is_object(v) -> bool:
    """A value a gradient never flows through: an instance of a user class, a function,
    a module (numbers, strings, None, arrays, containers and dataclass instances are not
    objects here)."""
    if is_dataclass_value(v):
        return False
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes, list, tuple, dict)):
        return False
    if isinstance(v, (np.ndarray, np.generic)):
        return False
    return not hasattr(v, "shape") or not hasattr(v, "dtype")  # Dask and array-API arrays


def _lost_attribute(obj, name):
    """The refusal of ``getattr(obj, name)`` (a name known when it runs) of a
    differentiated value that is no record (an array, a list): what Python reads there
    (``x.T``, a method) is no field whose gradient pullback can follow."""
    return UnsupportedCallError(
        f"PB501 getattr of a differentiated {type(obj).__name__} with the name {name!r}, "
        "known only when it runs, cannot be differentiated: pullback follows the fields "
        "and methods of named tuples, dataclasses and plain records read so.\n"
        f"Fix: write the attribute in the code (`x.{name}`, or an `if` on the name), or "
        "keep the values in a dict read by key (see docs/limitations.md#PB501)."
    )


def read_attribute(obj, name, *default):
    """``getattr(obj, name, *default)`` as Python reads it, a record's field or method as
    :func:`attribute_of` reads it (so that its cotangent can reach the record)."""
    if _differentiated(obj) and (not default or hasattr(obj, name)):
        return attribute_of(obj, name)
    return getattr(obj, name, *default)


def check_attribute_source(obj, name):
    """Refuses ``getattr(obj, name)`` whose result carries a gradient when ``obj`` is a
    differentiated value that is no record (:func:`_lost_attribute`)."""
    if not _differentiated(obj) and not is_object(obj):
        raise _lost_attribute(obj, name)


@transformable
def getattr_pullback(dy, obj, name, *default):
    if default and not hasattr(obj, name):
        return (ZERO, NO_TANGENT, dy)
    if _differentiated(obj):
        return (attribute_pullback(dy, obj, name)[0], NO_TANGENT) + (ZERO,) * len(default)
    check_attribute_source(obj, name)  # an array's x.T: its gradient would be lost
    return (NO_TANGENT, NO_TANGENT) + (ZERO,) * len(default)


def _getattr_tangent(args, tangents, kwargs):
    """Forward mode's ``getattr``: the tangent of the field or bound method read (the
    record's for a method), of the default when the attribute is missing, else none."""
    obj, name, *default = args
    if default and not hasattr(obj, name):
        return tangents[2] if len(tangents) > 2 else ZERO
    if tangents and not is_zero(tangents[0]):
        if _differentiated(obj):
            return attribute_tangent(tangents[0], obj, name)
        check_attribute_source(obj, name)
    return ZERO


def _attribute_of_tangent(args, tangents, kwargs):
    return attribute_tangent(tangents[0], *args) if not is_zero(tangents[0]) else ZERO


def _getattr_rrule(obj, name, *default):
    y = read_attribute(obj, name, *default)
    return y, lambda dy: getattr_pullback(dy, obj, name, *default)


def register(reg) -> None:
    # (the tangent given: one found through the pullback would see a bound method's
    # cotangent as none, rule_tangents.rule_tangent)
    rule = reg.register(attribute_of, _attribute_rrule, family=FAMILY, trusted=True)
    rule.extra["tangent"] = _attribute_of_tangent
    reg.set_pullback_function(attribute_of, attribute_pullback)
    reg.register(attribute_tangent, _attribute_tangent_rrule, family=FAMILY, trusted=True)
    reg.set_pullback_function(attribute_tangent, attribute_tangent_pullback)
    for fn, pullback in (
        (held_cotangent, held_cotangent_pullback),
        (held_field, held_field_pullback),
    ):  # in method_vjp's transformable pullback (rules/runtime_call_pullbacks.py)
        reg.register(fn, _linear_rrule(fn, pullback), family=FAMILY, trusted=True)
        reg.set_pullback_function(fn, pullback)
    rule = reg.register(bound_self, _bound_self_rrule, family=FAMILY, trusted=True)
    rule.extra["tangent"] = _bound_self_tangent
    reg.set_pullback_function(bound_self, bound_self_pullback)
    rule = reg.register(flat_of, _flat_rrule, family=FAMILY, trusted=True)
    rule.extra["tangent"] = _flat_tangent
    reg.set_pullback_function(flat_of, flat_pullback)
    rule = reg.register(array_attribute_of, _array_attribute_rrule, family=FAMILY, trusted=True)
    rule.extra["tangent"] = _array_attribute_tangent
    reg.set_pullback_function(array_attribute_of, array_attribute_pullback)
    rule = reg.register(builtins.getattr, _getattr_rrule, family=FAMILY, trusted=True)
    rule.extra["tangent"] = _getattr_tangent
    reg.set_pullback_function(builtins.getattr, getattr_pullback)
    # the tests the pullbacks make (no gradient flows through them)
    for helper in (
        _is_record,
        _array_like,
        _differentiated,
        record_method,
        check_attribute_source,
        held_callee,
        is_bound_to,
        property_getter,
    ):
        reg.non_differentiable(helper, family=FAMILY, trusted=True)
