"""Attribute reads and writes on differentiated objects.

An attribute read of a varied object is a named tuple's field or a record's method
(``attribute_of``, which refuses
any other object where it runs), or an attribute a rule declared on its result object
(``sol.y``); other attributes of a rule's result or of an array are refused before
running. Writes of varied values outside the function are routed by
:class:`~.escape_sites.EscapeSites`: refused where the function reads them back,
recorded otherwise.
"""

from __future__ import annotations

import gast

from ..dynamic_attrs import attribute_of
from ..resolve import Callee
from ..tree_walk import statements
from . import nodes as N
from .escape_sites import EscapeSites
from .kinds import is_real
from .problems import attribute_of_varied


class AttributeAdjoints(EscapeSites):
    """:class:`~.reverse.ReverseBuilder`: attributes of differentiated objects."""

    def field_read(self, s):
        """``t = p.name`` of a differentiated ``p`` as ``t = attribute_of(p, "name", where)``:
        a field of a named tuple, with its pullback, or a record's method as its bound method
        (dynamic_attrs.py); anything else is refused there, at the user's line (records.py).
        Returns the new value."""
        v = s.value
        if self.made_by_a_rule(v) or is_real(self.kinds.get(v.value.id)):
            # a result object (sol.y_events) or an array (x.mT): no named tuple
            self.problems.append(attribute_of_varied(self.diagnostic, v))
            return v
        where = N.const(self.fs.where(v))
        self.ns["attribute_of"] = attribute_of
        call = gast.copy_location(N.call("attribute_of", [v.value, N.const(v.attr), where]), v)
        call.pb_callee = Callee("object", attribute_of, name="pullback.dynamic_attrs.attribute_of")
        s.value = call
        return call

    def varied_names(self) -> set:
        return self.activity.varied

    def _defining_rules(self, v) -> list:
        """The rule of each call that defines ``v``'s object (None for a definition that is
        no call through a rule)."""
        rules = []
        for s in statements(self.tree):
            if isinstance(s, gast.Assign) and s.targets[0].id == v.value.id:
                c = s.value
                callee = getattr(c, "pb_callee", None) if isinstance(c, gast.Call) else None
                found = callee is not None and callee.kind == "object"
                rules.append(self.registry.lookup(callee.obj) if found else None)
        return rules

    def made_by_a_rule(self, v) -> bool:
        """Whether every definition of ``v``'s object is a call through a rule that is no
        named tuple's constructor or field read (a result object, whose undeclared
        attributes carry no gradient pullback follows) nor a copy (``copy.copy(m)``: the
        value it copies)."""
        rules = self._defining_rules(v)
        return bool(rules) and all(
            r is not None
            and r.family not in ("records", "dynamic_attrs")  # a field read, getattr
            and not r.extra.get("passes_value")
            for r in rules
        )

    def declared_attribute(self, v) -> bool:
        """Whether ``v`` (``obj.attr``) reads an attribute that every rule defining ``obj``
        declares differentiable (``rule.extra["result_attributes"]``, e.g. ``sol.y`` of
        ``solve_ivp``)."""
        rules = self._defining_rules(v)
        return bool(rules) and all(
            r is not None and v.attr in r.extra.get("result_attributes", ()) for r in rules
        )
