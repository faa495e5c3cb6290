"""Small pieces the forward and reverse sweep builders share: source text of core-language
nodes, the static zero/bound state of adjoints, and how generated code names runtime helpers.

>>> import gast
>>> index_expr(gast.parse("x[1:n]").body[0].value.slice)
'slice(1, n, None)'
"""

from __future__ import annotations

import types

import gast

from ..lazy_patterns import LazyPattern
from ..source import transform_target


def src(node):
    """The source text of ``node``, exactly as ``gast.unparse(node).strip()`` writes it.

    The sweeps ask for the text of tens of thousands of names, numbers and ``a op b`` on a
    long function, and ``gast.unparse`` converts each node to ``ast`` and runs an unparser
    object: the shapes below (atoms, ``a op b`` of atoms, calls of a dotted name on atoms)
    are written directly (the same text), the rest unparsed."""
    text = _atom(node)
    if text is not None:
        return text
    if type(node) is gast.BinOp:
        op = _BINOPS.get(type(node.op))
        left = _atom(node.left)
        right = _atom(node.right) if left is not None else None
        if op is not None and right is not None:
            return f"{left} {op} {right}"
    elif type(node) is gast.Call and not node.keywords:  # math.sin(_t1): f(atoms)
        func = _dotted(node.func)
        if func is not None:
            args = [_atom(a) for a in node.args]
            if None not in args:
                return f"{func}({', '.join(args)})"
    return gast.unparse(node).strip()


def _dotted(node):
    """The text of a name or a chain of attributes of one (``np.linalg.norm``), as the
    unparser writes it; ``None`` for anything else."""
    cls = type(node)
    if cls is gast.Attribute:
        value = _dotted(node.value)
        return None if value is None else f"{value}.{node.attr}"
    if cls is gast.Name and node.annotation is None:
        return node.id
    return None


def _atom(node):
    """The text of a plain name or a finite int/float constant (``None`` for anything
    else): what the unparser writes for them whatever the precedence around them."""
    cls = type(node)
    if cls is gast.Name:
        return node.id if node.annotation is None else None
    if cls is gast.Constant and node.kind is None:
        value = node.value
        kind = type(value)
        if kind is int or (kind is float and value - value == 0.0):  # not inf/nan, not bool
            return repr(value)
    return None


_BINOPS = {
    gast.Add: "+",
    gast.Sub: "-",
    gast.Mult: "*",
    gast.MatMult: "@",
    gast.Div: "/",
    gast.Mod: "%",
    gast.LShift: "<<",
    gast.RShift: ">>",
    gast.BitOr: "|",
    gast.BitXor: "^",
    gast.BitAnd: "&",
    gast.FloorDiv: "//",
    gast.Pow: "**",
}


def index_expr(node) -> str:
    """An index (slices, tuples, None, ...) as a value expression: ``slice(1, None, None)``."""
    if isinstance(node, gast.Slice):
        parts = [src(p) if p is not None else "None" for p in (node.lower, node.upper, node.step)]
        return f"slice({', '.join(parts)})"
    if isinstance(node, gast.Tuple):
        inner = ", ".join(index_expr(e) for e in node.elts)
        return f"({inner},)" if len(node.elts) == 1 else f"({inner})"
    return src(node)


class State(dict):
    """Static state of each adjoint: "Z" (symbolically zero, unbound) or "M" (bound,
    maybe zero at run time). Names not set explicitly take ``fallback(name)``.

    :meth:`copy` (a branch's state) is an overlay on its parent: it holds only the names
    the branch sets, so a branch costs what it touches and merging two branches
    (reverse_flow.merge_states) visits only those names, not every adjoint of the
    function (a function with 800 ``if`` blocks copied and merged all its names 1600
    times). The parent must not change while an overlay of it is in use."""

    def __init__(self, fallback=None, parent=None):
        super().__init__()
        self.fallback = fallback or (lambda name: "Z")
        self.parent = parent

    def get(self, name, default=None):
        state = self
        while name not in state:
            if state.parent is None:
                return state.fallback(name)
            state = state.parent
        return state[name]

    def copy(self):
        """An overlay: reads fall through to this state, writes stay in the copy (whose
        keys are the names it changed)."""
        return State(self.fallback, parent=self)


def has_source(obj) -> bool:
    """Whether a callee is a Python function pullback can transform (else it needs a rule)."""
    return isinstance(transform_target(obj), types.FunctionType)


def source_position(diagnostic):
    """The sort key of diagnostics: their place in the user's file."""
    return (diagnostic.filename, diagnostic.line, diagnostic.col)


def short_name(name: str) -> str:
    return name.replace("numpy.", "").replace(".", "_")


def runtime_function(name):
    from .. import runtime

    return getattr(runtime, name)


IDENTIFIER = LazyPattern(r"[A-Za-z_][A-Za-z0-9_]*")
