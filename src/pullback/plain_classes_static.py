"""What ``pullback check`` says of a plain class it knows by its ``ClassDef`` only (a file
it parses, never runs): the same refusal as plain_classes.refusal for a live class, where
the class body alone decides it (no bases, no decorator), at the same line.
"""

from __future__ import annotations

import types

import gast

from .plain_classes import _FORBIDDEN, Refused, _forbidden, _Rewrite


def static_refusal(node, filename: str):
    """What :func:`refusal` says of a class ``pullback check`` knows by its ``ClassDef``
    (of the file ``filename``) only, with no bases and no decorator: a method that
    changes how objects are made or read, or an ``__init__`` the constructor
    function cannot be written from; else None."""
    init = None
    for stmt in node.body:
        if isinstance(stmt, gast.FunctionDef) and stmt.name in _FORBIDDEN:
            return _forbidden(stmt.name, node.name)
        if isinstance(stmt, gast.FunctionDef) and stmt.name == "__init__":
            init = stmt
    if init is None or init.decorator_list:
        return None
    try:
        _StaticRewrite(init, node, filename).run()
    except Refused as r:
        return f"{r.what}{' at ' + r.where if r.where else ''}", r.fix
    return None


class _StaticView:
    """What :class:`_Rewrite` reads of a loaded function, for an ``__init__`` known by its
    tree in a file (absolute lines and columns)."""

    def __init__(self, tree, filename: str):
        self.tree, self.filename = tree, filename

    def where(self, node) -> str:
        return f"{self.filename}:{node.lineno}:{node.col_offset + 1}"


class _StaticRewrite(_Rewrite):
    """:class:`_Rewrite` of an ``__init__`` known by its tree only (``pullback check``): the
    class body's plain assignments are its class attributes; it has no base."""

    def __init__(self, init, class_node, filename: str):
        super().__init__(
            _StaticView(init, filename),
            types.SimpleNamespace(__name__=class_node.name),
            lambda: (None, ()),
            as_tuple=False,
        )
        self.defs = {s.name: s for s in class_node.body if isinstance(s, gast.FunctionDef)}
        self.values = set()
        self.unbound = {
            s.name
            for s in class_node.body
            if isinstance(s, gast.FunctionDef)
            and any(isinstance(d, gast.Name) and d.id == "staticmethod" for d in s.decorator_list)
        }
        for stmt in class_node.body:
            targets = stmt.targets if isinstance(stmt, gast.Assign) else []
            if isinstance(stmt, gast.AnnAssign) and stmt.value is not None:
                targets = [stmt.target]
            self.values |= {t.id for t in targets if isinstance(t, gast.Name)}

    def class_attribute(self, attr):
        return (None,) if attr in self.values else None

    def unbound_function(self, attr) -> bool:
        return attr in self.unbound

    def kind(self, attr):
        node = self.defs.get(attr)
        if node is None:
            return None
        names = {d.id for d in node.decorator_list if isinstance(d, gast.Name)}
        if "property" in names:
            return "property"
        return "static" if "staticmethod" in names else "method" if not names else "other"

    def method_of(self, attr):
        kind = self.kind(attr)
        return (self.defs[attr], kind == "property") if kind in ("method", "property") else None
