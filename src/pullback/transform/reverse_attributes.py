"""Attribute reads and writes on differentiated objects.

An attribute read of a varied object has no adjoint unless a rule declared it (a result
object such as ``sol.y``); an attribute write of a varied value is refused where it
would carry a gradient.
"""

from __future__ import annotations

import gast

from .escape_sites import EscapeSites
from .problems import attribute_of_varied


class AttributeAdjoints(EscapeSites):
    """:class:`~.reverse.ReverseBuilder`: attributes of differentiated objects."""

    def refuse_attribute(self, v):
        self.problems.append(attribute_of_varied(self.diagnostic, v))

    def varied_names(self) -> set:
        return self.activity.varied

    def declared_attribute(self, v) -> bool:
        """Whether ``v`` (``obj.attr``) reads an attribute that every rule defining ``obj``
        declares differentiable (``rule.extra["result_attributes"]``, e.g. ``sol.y`` of
        ``solve_ivp``)."""
        calls = [
            s.value
            for s in gast.walk(self.tree)
            if isinstance(s, gast.Assign) and s.targets[0].id == v.value.id
        ]
        for c in calls:
            callee = getattr(c, "pb_callee", None) if isinstance(c, gast.Call) else None
            rule = self.registry.lookup(callee.obj) if callee and callee.kind == "object" else None
            if rule is None or v.attr not in rule.extra.get("result_attributes", ()):
                return False
        return bool(calls)
