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
    object: the shapes below (atoms, ``a op b`` of atoms, calls of a dotted name on atoms,
    and, through ``_SIMPLE``, dotted names, ``-a``, ``a < b``, ``a[i]``, ``a[1:-1]`` and
    ``a if c else b`` of primaries) are written directly (the same text), the rest
    unparsed. A function made only of such shapes never imports gast's unparser (with
    ``string``, about 1.5 ms of a first gradient)."""
    text = _atom(node)
    if text is not None:
        return text
    cls = type(node)
    if cls is gast.BinOp:
        op = _BINOPS.get(type(node.op))
        left = _atom(node.left)
        right = _atom(node.right) if left is not None else None
        if op is not None and right is not None:
            return f"{left} {op} {right}"
    elif cls is gast.Call and not node.keywords:  # math.sin(_t1): f(atoms)
        func = _dotted(node.func)
        if func is not None:
            args = [_atom(a) for a in node.args]
            if None not in args:
                return f"{func}({', '.join(args)})"
    elif cls in _SIMPLE:
        text = _SIMPLE[cls](node)
        if text is not None:
            return text
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


def _unary(node):
    """``-a``, ``+a``, ``~a``, ``not a`` of an atom (the unparser spaces only ``not``)."""
    op = _UNARYOPS.get(type(node.op))
    operand = _atom(node.operand)
    return None if op is None or operand is None else op + operand


def _compare(node):
    """``a < b`` (or a chain) of atoms."""
    parts = [_atom(node.left)]
    for op, right in zip(node.ops, node.comparators, strict=True):
        parts += [_CMPOPS.get(type(op)), _atom(right)]
    return None if None in parts else " ".join(parts)


def _slice_part(node):
    """A slice bound: an atom, ``-`` of one, or missing ("")."""
    if node is None:
        return ""
    return _unary(node) if type(node) is gast.UnaryOp else _atom(node)


def _subscript(node):
    """``a[i]``, ``a.b[i, j]``, ``a[1:-1]``, ``a[::2]`` of atoms (a one-element tuple
    keeps its comma, as the unparser writes it)."""
    value = _atom(node.value) or _dotted(node.value)
    if value is None:
        return None
    index = node.slice
    if type(index) is gast.Slice:
        parts = [_slice_part(index.lower), _slice_part(index.upper)]
        if index.step is not None:
            parts.append(_slice_part(index.step))
        if None in parts:
            return None
        return f"{value}[{':'.join(parts)}]"
    if type(index) is gast.Tuple:
        items = [_atom(e) for e in index.elts]
        if not items or None in items:
            return None
        return f"{value}[{', '.join(items)}{',' if len(items) == 1 else ''}]"
    item = _atom(index)
    return None if item is None else f"{value}[{item}]"


def _literal(node):
    """An atom, or ``True``/``False``/``None``, or a string the unparser writes as its
    ``repr`` (printable, without quotes or backslashes)."""
    text = _atom(node)
    if text is not None or type(node) is not gast.Constant or node.kind is not None:
        return text
    value = node.value
    if value is None or value is True or value is False:
        return repr(value)
    if type(value) is str and value.isprintable() and not any(c in value for c in "'\"\\"):
        return repr(value)
    return None


def _primary(node):
    """Text of a node the unparser never puts in parentheses where an operand of
    ``if``/``else`` stands: literals, dotted names, ``a[i]`` and calls of a dotted name on
    literals (``read_item(_t6, 0, 'f.py:3', True)``)."""
    text = _literal(node)
    if text is not None:
        return text
    cls = type(node)
    if cls is gast.Attribute:
        return _dotted(node)
    if cls is gast.Subscript:
        return _subscript(node)
    if cls is gast.Call and not node.keywords:
        func = _dotted(node.func)
        args = [_literal(a) for a in node.args]
        if func is not None and None not in args:
            return f"{func}({', '.join(args)})"
    return None


def _if_expression(node):
    """``a if c else b`` of primaries (an escaped read: ``read_item(...) if f else t[0]``)."""
    parts = (_primary(node.body), _primary(node.test), _primary(node.orelse))
    return None if None in parts else f"{parts[0]} if {parts[1]} else {parts[2]}"


_SIMPLE = {
    gast.Attribute: lambda node: _dotted(node),
    gast.UnaryOp: _unary,
    gast.Compare: _compare,
    gast.Subscript: _subscript,
    gast.IfExp: _if_expression,
}
_UNARYOPS = {gast.USub: "-", gast.UAdd: "+", gast.Invert: "~", gast.Not: "not "}
_CMPOPS = {
    gast.Eq: "==",
    gast.NotEq: "!=",
    gast.Lt: "<",
    gast.LtE: "<=",
    gast.Gt: ">",
    gast.GtE: ">=",
    gast.Is: "is",
    gast.IsNot: "is not",
    gast.In: "in",
    gast.NotIn: "not in",
}

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


IDENTIFIER = LazyPattern(r"[^\W\d]\w*")
