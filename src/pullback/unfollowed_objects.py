"""The cotangent of an object that a rule's transformable pullback takes but does not
differentiate, where that pullback is differentiated again.

A method's rule (``interp1d.__call__``, a user's ``Model.__call__``) gives its receiver a
cotangent at first order: the object is a differentiated value (made from differentiated
data by its class's rule). A second derivative runs through the rule's pullback function,
which reads the object; unless the function is marked to differentiate it
(``__pullback_receiver_cotangent__``: it reads the object's data through attributes its
class's rule declares, ``rule.extra["result_attributes"]``, or through primitives with
rules, records.declared_attribute), the derivative in the object would be lost: its data
would count as constants. The object's cotangent is then an :class:`UnfollowedObject`,
which refuses (``HigherOrderError``) wherever it is used -- only where the object is
differentiated, so an object made from constants (built outside) still works.

>>> import numpy as np
>>> from pullback.unfollowed_objects import UnfollowedObject
>>> c = UnfollowedObject("Model.__call__", "Model")
>>> try:
...     c + np.ones(2)
... except Exception as err:
...     print(type(err).__name__)
HigherOrderError
"""

from __future__ import annotations

import functools
import types

from .dynamic_attrs import is_object
from .errors import HigherOrderError, RaisesWhereUsed

# Values that are objects to dynamic_attrs.is_object but are called, not read: a
# solver's function argument, a method, a class (never a rule's differentiated receiver).
CALLED_VALUES = (
    types.FunctionType,
    types.MethodType,
    types.BuiltinFunctionType,
    types.ModuleType,
    functools.partial,
    type,
)


class UnfollowedObject(RaisesWhereUsed):
    """The cotangent of an object whose data a differentiated pullback read as constants:
    any use raises, naming the rule, the object's class and the fix."""

    __slots__ = ("rule_name", "class_name")

    def __init__(self, rule_name: str, class_name: str):
        self.rule_name = rule_name
        self.class_name = class_name

    def error(self) -> HigherOrderError:
        return HigherOrderError(
            f"a second derivative through '{self.rule_name}' with respect to the "
            f"{self.class_name} it is called on (made from differentiated values) needs the "
            "derivative of its pullback in that object's data, which the pullback does not "
            "follow: it would count them as constants.\nFix: make the object from constants "
            "(outside the differentiated function), or, for your own rule, mark its pullback "
            "function `fn.__pullback_receiver_cotangent__ = True` and read the object's data "
            "through attributes its class's rule declares "
            '(`rule.extra["result_attributes"]`).'
        )

    def __repr__(self) -> str:
        return f"UnfollowedObject({self.rule_name!r}, {self.class_name!r})"


def unfollowed(function, value) -> bool:
    """Whether ``value``, the argument right after the cotangent of ``function`` (a
    method rule's receiver), is an object a rule's transformable pullback reads without
    differentiating it (see the module docstring)."""
    if not getattr(function, "__pullback_transformable__", False):
        return False  # a generated vjp function: its objects are the user's own
    if getattr(function, "__pullback_receiver_cotangent__", False):
        return False
    if value is None or isinstance(value, CALLED_VALUES):
        return False
    return is_object(value)


def refused_slots(function, names, values, label: str = "") -> dict:
    """``{position: UnfollowedObject}`` for the arguments of ``function`` (its parameter
    ``names`` and the ``values`` given) that are objects it reads as constants: the one
    after the cotangent of a rule's pullback function (:func:`unfollowed`), and, in a vjp
    function of such a function (the next order), those its target read so
    (``__pullback_unfollowed_names__``, which :func:`mark_vjp` sets)."""
    inherited = getattr(function, "__pullback_unfollowed_names__", ())
    label = (
        label
        or getattr(function, "__pullback_unfollowed_label__", "")
        or getattr(function, "__qualname__", "the rule")
    )
    out = {}
    for k, (name, value) in enumerate(zip(names, values, strict=False)):
        if (k == 1 and unfollowed(function, value)) or (name in inherited and is_object(value)):
            out[k] = UnfollowedObject(label, type(value).__name__)
    return out


def mark_vjp(function, target, names, values, wrt) -> None:
    """Record on ``function``, the generated vjp function of ``target`` with respect to
    ``wrt``, the objects ``target`` reads as constants: their cotangents refuse in
    call_cotangents.spread_cotangents, and the vjp function of ``function`` (an order
    more) inherits them."""
    slots = refused_slots(target, names, values)
    function.__pullback_unfollowed__ = {k: c for k, c in slots.items() if names[k] not in wrt}
    function.__pullback_unfollowed_names__ = tuple(names[k] for k in slots)
    if slots:
        function.__pullback_unfollowed_label__ = next(iter(slots.values())).rule_name
