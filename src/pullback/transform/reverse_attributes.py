"""Attribute reads and writes on differentiated objects.

An attribute read of a varied object has no adjoint unless a rule declared it (a result
object such as ``sol.y``); an attribute write of a varied value is refused where it
would carry a gradient.
"""

from __future__ import annotations

import gast

from .problems import attribute_of_varied, varied_attribute_store, varied_outside_append


class AttributeAdjoints:
    """:class:`~.reverse.ReverseBuilder`: attributes of differentiated objects."""

    def refuse_attribute(self, v):
        self.problems.append(attribute_of_varied(self.diagnostic, v))

    def refuse_varied_attribute_store(self, call):
        """``obj.attr = v`` and ``outside.append(v)`` with ``v`` differentiated run as
        written unless the function may read the value back (then its gradient would be
        lost): see transform/side_effects.py."""
        if not getattr(call, "pb_read_back", False):
            return
        appended = getattr(call, "pb_outside_append", None)
        if appended is not None:
            if any(isinstance(a, gast.Name) and a.id in self.activity.varied for a in call.args):
                receiver = gast.unparse(appended.value).strip()
                self.problems.append(varied_outside_append(self.diagnostic, call, receiver))
            return
        item = getattr(call, "pb_item_store", None)
        if item is not None:  # self.cache[k] = v: refused as its attribute would be
            value = call.args[2]
            if isinstance(value, gast.Name) and value.id in self.activity.varied:
                obj = gast.unparse(item.value.value).strip()
                self.problems.append(
                    varied_attribute_store(self.diagnostic, item, obj, item.value.attr)
                )
            return
        target = getattr(call, "pb_attribute_store", None)
        if target is None:
            return
        value = call.args[2]
        if isinstance(value, gast.Name) and value.id in self.activity.varied:
            obj = gast.unparse(target.value).strip()
            self.problems.append(varied_attribute_store(self.diagnostic, target, obj, target.attr))

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
