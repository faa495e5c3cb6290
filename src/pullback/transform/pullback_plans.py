"""Which statements of the reverse sweep need a pullback: before any code is written,
:meth:`PullbackPlans.plan_pullbacks` names the pullback of every active statement that
calls through a rule (or a callee found at run time), and refuses, all at once, the calls
the sweeps cannot be built through (a varied function value, a varied set, a random draw
that moves with its parameters, a varied keyword a pullback gives no cotangent).

Apart from reverse_calls.py because it is a planning pass over the whole tree, run once
(transform/build.py), where reverse_calls.py writes each call's code.
"""

from __future__ import annotations

import gast

from ..errors import UnsupportedSyntaxError
from ..registry import RULE
from ..tree_walk import lean_nodes, statements
from .problems import (
    RUN_TIME_CALL,
    call_varied_values_through_call_method,
    calls_and_sets,
    foreign_varied_calls,
    no_rule_for_varied_call,
    varied_function_values,
    varied_keyword,
    varied_random_draws,
    varied_sets,
)
from .sweep_common import has_source, source_position


class PullbackPlans:
    """:class:`~.reverse.ReverseBuilder`: the pullbacks the sweeps will need."""

    def plan_pullbacks(self):
        """Name the pullback of every active statement that calls through a rule."""
        # one walk for the five checks: the builder's own when the tree is as it was built
        nodes, self.first_walk = self.first_walk, None
        if nodes is None:
            nodes = lean_nodes(self.tree)
        nodes = calls_and_sets(nodes)  # what the five checks below look at
        is_active = self.activity.is_active
        call_varied_values_through_call_method(self.tree, is_active, nodes)
        refused = varied_function_values(self.tree, is_active, self.diagnostic, nodes)
        refused += varied_sets(self.tree, is_active, self.diagnostic, nodes)
        refused += varied_random_draws(
            self.tree, self.activity.varied.__contains__, self.registry, self.diagnostic, nodes
        )
        refused += foreign_varied_calls(
            self.tree,
            self.activity.varied.__contains__,
            is_active,
            self.registry,
            self.diagnostic,
            nodes,
        )
        if refused:  # the sweeps cannot be built through these calls
            raise UnsupportedSyntaxError(self.fs.name, sorted(refused, key=source_position))
        self.route_escapes()  # values kept outside, and reads from outside (escapes.py)
        for s in statements(self.tree):
            if not isinstance(s, gast.Assign):
                continue
            t = s.targets[0].id
            v = s.value
            needs = False
            if (
                isinstance(v, gast.Attribute)
                and not getattr(v, "pb_constant", False)
                and isinstance(v.value, gast.Name)
                and v.value.id in self.activity.varied
                and not self.declared_attribute(v)
            ):
                v = self.field_read(s)  # a named tuple's field (records.py), or refused
            if not self.activity.is_active(t):
                continue
            if isinstance(v, gast.Call):
                callee = v.pb_callee
                if callee.kind == "internal":
                    needs = False
                elif callee.kind == "object":
                    rule = self.registry.lookup(callee.obj)
                    if (
                        rule is None
                        and callee.name.endswith(".__getitem__")
                        and not (has_source(callee.obj))
                    ):
                        self.problems.append(
                            no_rule_for_varied_call(self.diagnostic, v, callee.name)
                        )
                    needs = not self.inline_scalar(rule, v)
                    if (
                        needs
                        and rule is not None
                        and self.direct_pullback(rule, v)
                        and not self.keeps_closure(rule, v)
                    ):
                        needs = False  # its pullback is a plain function, called directly
                    if rule is not None and rule.kind == RULE:
                        self.check_keywords(v, rule)
                else:
                    needs = True
                    if callee.kind in ("method", "dynamic"):
                        self.check_keywords(v, None)  # found at run time: positional only
            if needs:
                name = self.internal(f"_pb_{t.lstrip('_')}")
                self.pb_names[id(s)] = name
                self.primal.add(name)
                for info in self.loops_containing(s):
                    info.assigned.add(name)

    def check_keywords(self, v, rule):
        """PB502 for a keyword argument that depends on a differentiated value where the
        callee's pullback gives it no cotangent: a rule's undeclared keyword, or any keyword
        of a call found at run time (``rule`` None: ``obj.method(x, scale=s)``), whose
        pullback returns the positional cotangents only."""
        declared = rule.extra.get("keyword_cotangents", ()) if rule is not None else ()
        if rule is not None and _library_function(v.pb_callee.obj):
            declared = (*declared, *STRUCTURAL_KEYWORDS)
        callee = v.pb_callee.name if rule is not None else RUN_TIME_CALL
        for k in v.keywords:
            if k.arg in declared:
                continue
            if isinstance(k.value, gast.Name) and k.value.id in self.activity.varied:
                fn = v.pb_callee.obj if rule is not None else None
                aliases = rule.extra.get("keyword_aliases") if rule is not None else None
                problem = varied_keyword(self.diagnostic, k.value, k.arg, callee, fn, aliases)
                self.problems.append(problem)


# Keywords of NumPy's and SciPy's functions that hold integers, flags or names only (an
# axis, a tuple of axes, a dtype, a memory order, a boolean mask): whatever they depend on, their
# derivative is zero, so no gradient is lost where a varied one is given by keyword. A
# second derivative meets them: an axis that varies per loop iteration comes back from
# the first derivative's tape, which also holds differentiated values (`for ax in [(0,),
# (1,)]: s += np.max(x, axis=ax)`), and reaches the rules' own pullbacks (np.mean(x,
# axis=axis) in var's). Not ddof nor ord: NumPy takes floats there.
STRUCTURAL_KEYWORDS = ("axis", "axes", "keepdims", "dtype", "order", "where")


def _library_function(fn) -> bool:
    """Whether ``fn`` is NumPy's or SciPy's (whose keywords above mean what they say)."""
    module = getattr(fn, "__module__", None)
    if module is None:  # a ufunc's method (np.add.reduce): its ufunc's class
        module = type(getattr(fn, "__self__", None)).__module__
    return (module or "").split(".")[0] in ("numpy", "scipy")
