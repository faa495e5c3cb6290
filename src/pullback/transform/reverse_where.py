"""The reverse sweep's masks for the subgraphs that feed one branch of a ``np.where``.

:mod:`.where_branches` finds the subgraphs; here the reverse sweep of the ``where``
statement computes each branch's mask once (``_pb_mask = _branch_mask(c, t, a,
negate)``, ``None`` where the shapes do not allow an exact mask), and every contribution
a member's statement sends out of the subgraph is wrapped in ``_masked(..., _pb_mask)``
-- inside ``unbroadcast(...)``, so a broadcast operand (a scalar parameter, a row) sums
the masked cotangent. Contributions between members take ``_pb_inner``, ``None`` when
every member has the branch's shape (their NaN is masked on the way out); the
differentiable-again text masks them all. Scalars take ``(contribution if _pb_mask is not
False else 0.0)``: nothing is computed for the branch that was not selected. Functions
without a selection pay two dictionary lookups per reversed assignment.

In a loop, the differentiable-again text also computes the mask in the forward sweep,
after the ``where``, and rebinds each member to ``kept(member, mask)`` (:meth:`kept_lines`):
the tape then carries that root of the selection from the forward loop to the reverse one,
so that a Hessian masks the forward loop's members too.
"""

from __future__ import annotations

import ast
import re

import gast

from .. import where_helpers, where_masks
from ..rules._elementwise import elementwise_in_x
from .analyze import names_in
from .code import Line
from .kinds import SCALAR
from .sweep_common import src
from .where_branches import where_groups


class WhereMasks:
    """:class:`~.reverse.ReverseBuilder`: masks of ``np.where``'s branches."""

    _where_groups = None  # {member: [WhereGroup]}, on first use
    _where_targets = None  # {where target: [WhereGroup]}
    where_context: tuple = ()  # the groups of the statement being reversed

    def plan_where_masks(self):
        groups = where_groups(self.tree, self.registry, self.activity.is_active)
        self._where_groups = groups
        targets: dict = {}
        for gs in groups.values():
            for g in gs:
                targets.setdefault(g.target, {})[id(g)] = g
        self._where_targets = {t: list(d.values()) for t, d in targets.items()}

    def where_mask_lines(self, t, line) -> list:
        """The mask lines of the branches of the ``where`` assigned to ``t`` (none if
        ``t`` is no such ``where``)."""
        if self._where_groups is None:
            self.plan_where_masks()
        out = []
        for g in self._where_targets.get(t, ()):
            if not any(self.activity.is_active(m) for m in g.members):
                continue
            if g.mask is None:
                g.mask = self.internal("_pb_mask")
            text, reads = self.mask_assignment(g, t, g.mask)
            out.append(Line(text, reads, line))
            if len(g.members) > 1 and not self.scalar_group(g):
                # the contributions between members: masked only where a member has not
                # the branch's shape (the differentiable-again code masks them all, see
                # full_masks_in_alt)
                if g.inner is None:
                    g.inner = self.internal("_pb_inner")
                fn = self.bind("inner_mask", where_masks.inner_mask)
                members = ", ".join(sorted(g.members))  # (no tuple: read for shapes only)
                text = f"{g.inner} = {fn}({g.mask}, {members})"
                out.append(Line(text, frozenset(g.members), line, alt=text))
        return out

    def mask_assignment(self, g, t, name):
        """``(text, reads)`` of ``name = <the mask of g's selection>``, ``t`` the group's
        target (the root the reverse sweep meets first)."""
        if len(g.roots) == 1 and g.select is not None:  # one np.select's choice
            fn = self.bind("select_mask", where_masks.select_mask)
            conditions, k, result = g.select
            branch = g.roots[0][1]
            text = f"{name} = {fn}({src(conditions)}, {k}, {result}, {branch})"
            reads = frozenset(names_in(conditions)) | {result, branch}
        elif len(g.roots) == 1 and g.roots[0][2] is None:  # one np.where's branch
            fn = self.bind("branch_mask", where_masks.branch_mask)
            branch = g.roots[0][1]
            text = f"{name} = {fn}({src(g.condition)}, {t}, {branch}, {g.negate})"
            reads = frozenset(names_in(g.condition)) | {t, branch}
        else:
            text, reads = self.selection_line(g, name)
        if g.helpers:  # each user helper proved elementwise at this call, or no mask
            proof = self.bind("elementwise_in_x", elementwise_in_x)
            tests = []
            for helper, args in g.helpers:
                h = self.bind(getattr(helper, "__name__", "helper"), helper)
                rest = "".join(f"{src(a)}, " for a in args[1:])
                tests.append(f"{proof}({h}, ({rest}))")
                reads = reads | {n for a in args[1:] for n in names_in(a)}
            text += f" if {' and '.join(tests)} else None"
        return text, reads

    def stepped_mask_defaults(self) -> list:
        """``mask = None`` lines for the masks of the groups that span the steps of a
        lowered ``try`` (where_branches): a member's step may have completed where the
        root's did not, and its reverse then reads a mask the root's never assigned (its
        cotangent is zero there: no mask is needed)."""
        if not self._where_groups:
            return []
        names = {
            n
            for gs in self._where_groups.values()
            for g in gs
            if g.stepped
            for n in (g.mask, g.inner)
            if n is not None
        }
        return [Line(" = ".join(sorted(names)) + " = None")] if names else []

    def kept_lines(self, stmts) -> dict:
        """``{target: [Line]}`` for the selections whose roots are in ``stmts``, a block
        inside a loop: in the differentiable-again text, after the group's target, the
        mask as the reverse sweep computes it and each member rebound to ``kept(member,
        mask)`` (alt-only lines: the sweeps run as before; no statement after the target
        reads a member but for its shape, and the loop's tape then saves the kept value).

        The reverse sweep reads a member only in contributions masked by its selection (or
        for its shape), so the cotangent a derivative of the gradient sends back into it,
        through the tape, is zero where the branch was not selected, and ``kept``'s rule
        masks it; ``kept(member, mask)`` is a root of that selection there
        (where_branches), in the block of the member's statements, which makes them members
        too: the forward loop's ``log(x)`` is masked as in straight-line code."""
        if not self._where_groups:
            return {}
        out: dict = {}
        for s in stmts:
            if type(s) is not gast.Assign:
                continue
            t = s.targets[0].id
            groups = self._where_targets.get(t)
            if not groups or not self.loops_containing(s):
                continue
            fn = None
            for g in groups:
                members = sorted(m for m in g.members if self.activity.is_active(m))
                if g.mask is None or not members:
                    continue
                name = self.internal("_pb_kept")
                text, _ = self.mask_assignment(g, t, name)
                lines = out.setdefault(t, [])
                lines.append(Line("", src=s.lineno, alt=text))
                fn = fn or self.bind("kept", where_masks.kept)
                for m in members:
                    lines.append(Line("", src=s.lineno, alt=f"{m} = {fn}({m}, {name})"))
        return out

    def spread_helper_call(self, call: str, g: str, v):
        """``call`` (a user helper's pullback, the helper a member of a branch proved
        elementwise at run time) wrapped so that the cotangent of a scalar argument after
        the first, summed inside the helper, is summed over the selected positions only
        (where_helpers.py); None where the call has no such argument."""
        fn = v.pb_callee.obj
        group = next((gr for gr in self.where_context if any(h is fn for h, _ in gr.helpers)), None)
        if group is None or v.keywords or any(isinstance(a, gast.Starred) for a in v.args):
            return None
        positions = [k for k, a in enumerate(v.args) if self.is_active_arg(a)]
        scalars = [k for k in positions if self.kinds.get(getattr(v.args[k], "id", None)) == SCALAR]
        if not any(k > 0 for k in scalars):
            return None
        spread = self.bind("spread_scalar_cotangents", where_helpers.spread_scalar_cotangents)
        h = self.bind(getattr(fn, "__name__", "helper"), fn)
        args = ", ".join(src(a) for a in v.args) + ("," if len(v.args) == 1 else "")
        at = ", ".join(map(str, positions)) + ("," if len(positions) == 1 else "")
        return f"{spread}({call}, {g}, {group.mask}, {h}, ({args}), ({at}))"

    def scalar_group(self, g) -> bool:
        return all(self.kinds.get(m) == SCALAR for m in g.members)

    def full_masks_in_alt(self, body):
        """In the differentiable-again text of the reverse sweep, the contributions between
        members take the full mask (its roots there are what keeps a second derivative
        finite, see where_branches)."""
        if self._where_groups is None:
            return
        inner = {
            g.inner: g.mask for gs in self._where_groups.values() for g in gs if g.inner is not None
        }
        if inner:
            pattern = re.compile(r"\b(" + "|".join(map(re.escape, inner)) + r")\b")
            _swap_in_alt(body, pattern, inner)

    def selection_line(self, g, name):
        """The mask line of a group of several roots (see where_masks.selection_mask)."""
        fn = self.bind("selection_mask", where_masks.selection_mask)
        selects = []
        if g.select is not None:  # np.select's choice (its roots are the choices)
            conditions, k, result = g.select
            selects = [
                f"({src(conditions)}, {k}, {result}, {branch})"
                for _, branch, mask in g.roots
                if mask is None
            ]
        wheres = [f"({t}, {branch})" for t, branch, mask in g.roots if mask is None and not selects]
        maskeds = [f"({branch}, {mask})" for _, branch, mask in g.roots if mask is not None]

        def tup(items):
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

        condition = "None" if g.condition is None else src(g.condition)
        text = f"{name} = {fn}({condition}, {g.negate}, {tup(wheres)}, {tup(maskeds)}"
        text += f", {tup(selects)})" if selects else ")"
        reads = frozenset(names_in(g.condition)) if g.condition is not None else frozenset()
        if g.select is not None:
            reads |= frozenset(names_in(g.select[0])) | {g.select[2]}
        reads |= {n for root in g.roots for n in root if n is not None}
        return text, reads

    def where_groups_of(self, s) -> tuple:
        """The groups whose masks the contributions of ``s`` (``t = value``) take."""
        if self._where_groups is None:
            self.plan_where_masks()
        if not self._where_groups:
            return ()
        groups = self._where_groups.get(s.targets[0].id, ())
        return tuple(g for g in groups if g.mask is not None)

    def mask_contribution(self, name: str, expr: str) -> str:
        """``expr``, a contribution to ``name`` from the statement being reversed, masked
        by each of its groups: to a member too, which may be a scalar or a row inside the
        branch (``masked`` leaves a contribution that has not the branch's shape)."""
        for g in self.where_context:
            if self.scalar_group(g):
                # a scalar: the contribution is not computed at all where the branch was
                # not selected (Python's 1.0 / 0.0 raises)
                expr = f"({expr} if {g.mask} is not False else 0.0)"
                continue
            fn = self.bind("masked", where_masks.masked)
            mask = g.inner if name in g.members and g.inner is not None else g.mask
            expr = _wrap(expr, fn, mask)
        return expr


def _swap_in_alt(body, pattern, names):
    for item in body:
        if isinstance(item, Line):
            if item.alt is not None and item.alt == item.text and pattern.match(item.text):
                continue  # the inner mask's own line
            base = item.alt if item.alt is not None else item.text
            if pattern.search(base):
                item.alt = pattern.sub(lambda m: names[m.group(1)], base)
        else:
            _swap_in_alt(item.body, pattern, names)
            _swap_in_alt(item.orelse, pattern, names)


def _wrap(expr: str, fn: str, mask: str) -> str:
    """``fn(expr, mask)``, inside a top-level ``unbroadcast(inner, x)`` (mask before the
    sum over broadcast axes)."""
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError:  # pragma: no cover - generated expressions parse
        return f"{fn}({expr}, {mask})"
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "unbroadcast"
        and len(node.args) == 2
        and not node.keywords
    ):
        inner = ast.get_source_segment(expr, node.args[0])
        target = ast.get_source_segment(expr, node.args[1])
        return f"unbroadcast({fn}({inner}, {mask}), {target})"
    return f"{fn}({expr}, {mask})"


__all__ = ["WhereMasks"]
