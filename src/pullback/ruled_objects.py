"""Objects a rule makes (``interp1d(x, y)``, a user's ``@rrule(Quad)``), handed to a
function found at run time (``fn = HELPERS[k]; fn(f, q)``, ``g.value(q)``).

Such an object is a differentiated value when the data it was made from is: written by
name, the activity analysis knows that and the callee differentiates it. A call found at
run time judges its arguments by their values, and an object is no number: its cotangent
would be left out, silently zero. So an object whose class's rule declares its data
(``rule.extra["result_attributes"]``) is differentiated there as by name (its cotangent a
dict of those attributes' cotangents, what the rule's pullback takes). One whose rule
declares nothing gets an :class:`UndeclaredObject` cotangent: the callee's reads of it
cannot be followed, and its use (the constructor rule's pullback, only where the object
was made from differentiated values) raises at the user's line with the fix.

>>> import numpy as np
>>> from pullback.registry import default_registry
>>> from scipy.interpolate import interp1d
>>> made_by_rule(interp1d([0.0, 1.0], [1.0, 2.0]), default_registry()) is not None
True
>>> made_by_rule(np.ones(2), default_registry()) is None
True
"""

from __future__ import annotations

from .dynamic_attrs import is_object
from .errors import (
    NotDifferentiableError,
    RaisesWhereUsed,
    running_sweep_lines,
    users_line_parts,
)
from .records_plain import is_plain_record
from .registry import NONDIFF
from .unfollowed_objects import CALLED_VALUES


def made_by_rule(value, registry):
    """The differentiable rule of ``value``'s class (its constructor's), for an object of a
    class a rule makes; None otherwise."""
    if isinstance(value, CALLED_VALUES) or not (is_object(value) or is_plain_record(value)):
        return None  # (a plain record adopted once a method of it ran as written: too)
    try:
        rule = registry.lookup(type(value))
    except TypeError:  # an unhashable class key
        return None
    return rule if rule is not None and rule.kind != NONDIFF else None


def declared_object(value, registry) -> bool:
    """An object a rule makes whose rule declares its data: differentiated as by name."""
    rule = made_by_rule(value, registry)
    return rule is not None and bool(rule.extra.get("result_attributes"))


def undeclared_object(value, registry) -> bool:
    """An object a rule makes whose rule declares none of its data."""
    rule = made_by_rule(value, registry)
    return rule is not None and not rule.extra.get("result_attributes")


class UndeclaredObject(RaisesWhereUsed):
    """The cotangent of an object a rule made and declared no data of, handed to a
    function found at run time: any use raises, at the user's line of that call."""

    __slots__ = ("class_name", "callee", "lines")

    def __init__(self, class_name: str, callee: str, lines=()):
        self.class_name = class_name
        self.callee = callee
        self.lines = lines

    @classmethod
    def placed(cls, class_name, callee):
        return cls(class_name, callee, running_sweep_lines())

    def error(self) -> NotDifferentiableError:
        where, at, quoted = users_line_parts(self.lines)
        exc = NotDifferentiableError(
            f"{at}the {self.class_name} handed to '{self.callee}' (found when it runs) was "
            f"made by a rule from differentiated values, and that rule declares none of its "
            f"data: what '{self.callee}' reads of it cannot be differentiated (it would count "
            f"as constants).{quoted}\n"
            f"Fix: declare the {self.class_name}'s differentiable attributes on its rule, "
            f'`registry.lookup({self.class_name}).extra["result_attributes"] = ("a", ...)`, '
            f"with its cotangent a dict of them in the pullbacks; or call '{self.callee}' by "
            "its name, so that pullback sees which function it is."
        )
        exc.users_place = where
        return exc

    def __repr__(self) -> str:
        return f"UndeclaredObject({self.class_name!r}, {self.callee!r})"
