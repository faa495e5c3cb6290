"""Step 5b: activity analysis on the SSA form.

A name is *active* when it depends differentiably on a differentiated parameter (it is
*varied*) and the returned value depends differentiably on it (it is *useful*). Only
active names get adjoints; every other statement runs in the forward sweep only.

>>> # def f(x, n): k = n + 1; y = x * k; return y      (wrt x)
>>> # varied = {x, y}, useful = {y, x, k}, active = {x, y}

Which operands an operation is differentiable in is decided here too: comparisons,
``//``, ``not``, non-differentiable functions, index expressions and shape attributes
carry no gradient.
"""

from __future__ import annotations

import gast

from ..registry import NONDIFF, SCALAR
from ..tree_walk import all_nodes, lean_nodes, statements  # noqa: F401 (all_nodes: imported from here)

NONDIFF_BINOPS = (gast.FloorDiv, gast.BitAnd, gast.BitOr, gast.BitXor, gast.LShift, gast.RShift)


def _formats_a_string(value) -> bool:
    """``"W%d" % i``: printf-style formatting makes a string, which carries no gradient
    (as an f-string does), whatever the kind of the values it formats."""
    return (
        isinstance(value.op, gast.Mod)
        and isinstance(value.left, gast.Constant)
        and isinstance(value.left.value, (str, bytes))
    )


class Activity:
    """The names that depend on a differentiated input (``varied``) and those that reach
    the output (``useful``). A plain class, not a dataclass: dataclasses cost about half a
    millisecond each at import, paid by every cold start."""

    def __init__(self, varied=None, useful=None):
        self.varied = set() if varied is None else varied
        self.useful = set() if useful is None else useful

    @property
    def active(self) -> set:
        return self.varied & self.useful

    def is_active(self, name) -> bool:
        return name in self.varied and name in self.useful


def names_in(node) -> list[str]:
    """The names ``node`` reads (its ``Load`` names, in the order of ``ast.walk``)."""
    if node is None:
        return []
    cls = node.__class__
    if cls is gast.Constant:  # an atom (most operands after normalization): no walk
        return []
    if cls is gast.Name and node.annotation is None:
        return [node.id] if isinstance(node.ctx, gast.Load) else []
    return [
        n.id
        for n in lean_nodes(node)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    ]


def call_rule(call, registry):
    """The registry entry for a resolved callee (or None)."""
    callee = getattr(call, "pb_callee", None)
    if callee is None or callee.kind != "object":
        return None
    return registry.lookup(callee.obj)


def differentiable_operands(value, registry) -> list[str]:
    """Names read by ``value`` through which a gradient can flow."""
    if isinstance(value, gast.Name):
        return [value.id]
    if isinstance(value, gast.Constant):
        return []
    if isinstance(value, gast.BinOp):
        if isinstance(value.op, NONDIFF_BINOPS) or _formats_a_string(value):
            return []
        return names_in(value.left) + names_in(value.right)
    if isinstance(value, gast.UnaryOp):
        if isinstance(value.op, (gast.USub, gast.UAdd)):
            return names_in(value.operand)
        return []
    if isinstance(value, (gast.Compare, gast.BoolOp, gast.JoinedStr)):
        return []
    if isinstance(value, gast.Subscript):
        return names_in(value.value)
    if isinstance(value, gast.Attribute):
        if getattr(value, "pb_constant", False):
            return []  # shape-like attributes
        # A declared attribute of a rule's result (sol.y) carries its gradient; the others
        # are refused when their base is varied (PB501).
        return names_in(value.value)
    if isinstance(value, (gast.Tuple, gast.List, gast.Set)):  # a varied set: PB505
        return [n for e in value.elts for n in names_in(e)]
    if isinstance(value, gast.Dict):
        return [n for v in value.values for n in names_in(v)]
    if isinstance(value, gast.Call):
        callee = getattr(value, "pb_callee", None)
        kind = callee.kind if callee is not None else "dynamic"
        if kind == "object":
            rule = registry.lookup(callee.obj)
            if rule is not None and rule.kind == NONDIFF:
                return []
            # Keywords count too: a rule's varied keyword must reach the check that refuses
            # it (PB502), not silently give a zero gradient.
            return [n for a in value.args for n in names_in(a)] + [
                n for k in value.keywords for n in names_in(k.value)
            ]
        if kind == "internal":
            return [n for a in value.args for n in names_in(a)]
        # Keywords of a call found at run time count too: their pullbacks give positional
        # cotangents only, so a varied keyword is refused (PB502), not silently dropped.
        keywords = [n for k in value.keywords for n in names_in(k.value)]
        if kind == "method":
            return (
                names_in(value.func.value) + [n for a in value.args for n in names_in(a)] + keywords
            )
        # A function found at run time: its result depends on the function value too (a
        # closure over differentiated values), which the transform then refuses (PB504).
        return names_in(value.func) + [n for a in value.args for n in names_in(a)] + keywords
    return []


def assignments(tree):
    """Every ``Assign`` of the function, in order (loops and branches flattened)."""
    return [n for n in statements(tree) if isinstance(n, gast.Assign)]


def _closure(names: set, graph: dict) -> set:
    """``names`` and every name reachable from them along ``graph`` (name -> names)."""
    todo = list(names)
    while todo:
        for other in graph.get(todo.pop(), ()):
            if other not in names:
                names.add(other)
                todo.append(other)
    return names


def analyze(tree, wrt: list[str], registry) -> Activity:
    """Compute varied and useful names for ``tree`` differentiated in ``wrt``."""
    stmts = assignments(tree)
    edges = [(s.targets[0].id, differentiable_operands(s.value, registry)) for s in stmts]
    # Both closures by worklist over the dependency graph: linear in the number of edges
    # (sweeping the edges until nothing changes is quadratic for a long chain of statements).
    users: dict = {}
    operands: dict = {}
    for target, deps in edges:
        operands.setdefault(target, []).extend(deps)
        for d in deps:
            users.setdefault(d, []).append(target)
    varied = _closure(set(wrt), users)
    ret = tree.body[-1]
    useful = set(names_in(ret.value)) if isinstance(ret, gast.Return) else set()
    useful = _closure(useful, operands)
    return Activity(varied, useful)


def is_scalar_rule_call(call, registry) -> bool:
    rule = call_rule(call, registry)
    return rule is not None and rule.kind == SCALAR and not call.keywords
