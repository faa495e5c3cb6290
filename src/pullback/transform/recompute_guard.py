"""The differentiable-again texts of a user call that keep the state it read
(pullback.recompute_state): the forward records it around the call, in the variable
that holds the call's pullback at first order (``None`` there before), and the reverse, which
recomputes the call through its vjp function, checks it and runs on the operands as the call
read them.

>>> print(forward_text("_t1", "c.f(x)", "_pb_t1", "'f'", ["c", "None"], ("_sb", "_sa")))
_pb_t1 = _sb('f', c, None); _t1 = c.f(x); _pb_t1 = _sa(_pb_t1)
>>> read_text("_r1", "_pb_t1", ("f.py:3:10", "y = c.scaled(x)"), "_sar")
"_r1 = _sar(_pb_t1, 'f.py:3:10', 'y = c.scaled(x)'); "
"""

from __future__ import annotations

import gast

from .. import recompute_state
from .sweep_common import src


def forward_text(t, call, pb, callee, operands, stamps) -> str:
    """``{pb} = state_before(callee, *operands); {t} = call; {pb} = state_after({pb})``."""
    before, after = stamps
    return f"{pb} = {before}({', '.join([callee, *operands])}); {t} = {call}; {pb} = {after}({pb})"


def read_text(r, pb, place, state_as_read) -> str:
    """The statement before the recompute, binding ``r`` to the operands as read."""
    where, line = place
    return f"{r} = {state_as_read}({pb}, {where!r}, {line.strip()!r}); "


class RecomputeGuards:
    """:class:`~.reverse.ReverseBuilder`: the texts above for one call."""

    def kept_operands(self, nodes) -> list:
        """The operand texts the record keeps: each argument that carries no gradient and
        is a name or an attribute of one (an object, a list; a captured variable's
        ``cell.cell_contents``); ``None`` in the place of the others."""
        return [src(n) if _kept(n) and not self.is_active_arg(n) else "None" for n in nodes]

    def stamped_forward(self, t, call, pb, callee, nodes) -> str:
        before = self.bind("state_before", recompute_state.state_before)
        after = self.bind("state_after", recompute_state.state_after)
        return forward_text(t, call, pb, callee, self.kept_operands(nodes), (before, after))

    def read_operands(self, pb, v, nodes):
        """``(prefix, texts)``: the check before the recompute and each operand's text
        (as read where the record keeps it)."""
        r = self.temp()
        check = self.bind("state_as_read", recompute_state.state_as_read)
        filename, line, col = self.fs.location(v)
        place = (f"{filename}:{line}:{col + 1}", self.fs.file_line(line))
        prefix = read_text(r, pb, place, check)
        as_read = self.bind("as_read", recompute_state.as_read)
        texts = [
            f"{as_read}({r}, {k}, {kept})" if kept != "None" else src(n)
            for k, (n, kept) in enumerate(zip(nodes, self.kept_operands(nodes), strict=True))
        ]
        return prefix, texts


def _kept(node) -> bool:
    while isinstance(node, gast.Attribute):
        node = node.value
    return isinstance(node, gast.Name)
