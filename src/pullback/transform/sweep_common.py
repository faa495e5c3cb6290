"""Small pieces the forward and reverse sweep builders share: source text of core-language
nodes, the static zero/bound state of adjoints, and how generated code names runtime helpers.

>>> import gast
>>> index_expr(gast.parse("x[1:n]").body[0].value.slice)
'slice(1, n, None)'
"""

from __future__ import annotations

import re
import types

import gast

from ..source import transform_target


def src(node):
    return gast.unparse(node).strip()


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
    maybe zero at run time). Names not set explicitly take ``fallback(name)``."""

    def __init__(self, fallback=None):
        super().__init__()
        self.fallback = fallback or (lambda name: "Z")

    def get(self, name, default=None):
        if name in self:
            return self[name]
        return self.fallback(name)

    def copy(self):
        new = State(self.fallback)
        new.update(self)
        return new


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


IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
