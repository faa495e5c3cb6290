"""``gast.ast_to_gast`` in about half the time: the same tree, for the long functions whose
first gradient is mostly transform time.

gast converts with an ``ast.NodeTransformer`` whose generic visit builds each node from a
dict comprehension over its fields, looks the visitor method up by name for every node and
copies positions one ``setattr`` at a time. Its per-kind visitors (``visit_Name``,
``visit_arg``, ``visit_FunctionDef``, ...) stay exactly as gast wrote them: this class only
replaces the generic parts with the same steps done once per node class (and fills each
new node's ``__dict__`` as gast's constructor would, without calling it), so every node
comes out with the same class, fields, positions and attribute order (the tests compare the
two converters on real sources with ``gast.dump(..., include_attributes=True)``); the
nodes without fields (contexts, operators) are shared, as in the trees ``ast.parse`` makes.

>>> import ast, gast
>>> tree = ast.parse("def f(x):\\n    return x * 2.0")
>>> gast.dump(ast_to_gast(tree)) == gast.dump(gast.ast_to_gast(tree))
True
"""

from __future__ import annotations

from ast import AST

import gast
from gast.ast3 import Ast3ToGAst


class _Converter(Ast3ToGAst):
    """gast's converter with a per-class dispatch table and a leaner generic visit (one
    converter per conversion: the tables hold nothing between calls)."""

    def __init__(self):
        super().__init__()
        self._visitors: dict = {}  # ast class -> bound visitor method
        self._targets: dict = {}  # ast class -> (gast class or None, fields, attributes)
        self._shared: dict = {}  # gast class without fields -> its one node

    def visit(self, node):
        kind = type(node)
        visitor = self._visitors.get(kind)
        if visitor is None:
            visitor = self._visitor(kind)
        return visitor(node)

    def _visitor(self, kind):
        """The visitor of ``kind``'s nodes, found once: gast's own ``visit_X`` if it has
        one; for a class without fields (a context, an operator) one that hands out its
        shared node (one call per node, not three); else :meth:`generic_visit`."""
        visitor = getattr(self, "visit_" + kind.__name__, None)
        if visitor is None:
            visitor = self.generic_visit
            cls = getattr(gast, kind.__name__, None)
            if cls is not None and not kind._fields and not kind._attributes:
                shared = self._shared.get(cls)
                if shared is None:
                    shared = self._shared[cls] = cls()
                visitor = lambda node, shared=shared: shared  # noqa: E731 - a tiny table entry
        self._visitors[kind] = visitor
        return visitor

    def _visit(self, node):
        if isinstance(node, AST):
            return self.visit(node)
        if isinstance(node, list):
            return [self._visit(n) for n in node]
        return node

    def generic_visit(self, node):
        kind = type(node)
        try:
            cls, fields, attributes = self._targets[kind]
        except KeyError:
            cls = getattr(gast, kind.__name__, None)
            self._targets[kind] = cls, kind._fields, kind._attributes
            fields, attributes = kind._fields, kind._attributes
        if cls is None:
            return None  # as gast: a node that is not part of the gast tree
        if not fields and not attributes:
            # A context or an operator (Load, Store, Add, ...): one node of each class per
            # conversion, shared as ast.parse shares its own, where gast makes one per use
            # (a long function's Names and BinOps would carry tens of thousands).
            shared = self._shared.get(cls)
            if shared is None:
                shared = self._shared[cls] = cls()
            return shared
        # each child converted by its visitor straight from the table (what visit does,
        # without a call of _visit and of visit per child: a long function has tens of
        # thousands)
        visitors, visit, deep = self._visitors, self.visit, self._visit
        values = {}
        for field in fields:
            try:
                value = getattr(node, field)
            except AttributeError:
                continue
            if isinstance(value, AST):
                visitor = visitors.get(type(value))
                value = visit(value) if visitor is None else visitor(value)
            elif isinstance(value, list):
                value = [visit(item) if isinstance(item, AST) else deep(item) for item in value]
            values[field] = value
        # the positions after the fields, as gast's setattr calls leave them in __dict__
        for attr in attributes:
            try:
                values[attr] = getattr(node, attr)
            except AttributeError:
                pass
        # what ``cls(**values)`` does (gast's constructor, given keywords only, updates the
        # node's __dict__ with them), without a Python call of the constructor per node
        node = cls.__new__(cls)
        node.__dict__.update(values)
        return node


    def visit_Name(self, node):
        """gast's ``visit_Name`` (a ``gast.Name`` with ``ast.copy_location``), inlined: a
        long function is mostly names."""
        # the fields as gast's constructor sets them, then the positions: one __dict__
        # update, in the same order
        values = {"id": node.id, "ctx": self.visit(node.ctx), "annotation": None,
                  "type_comment": None}  # fmt: skip
        for attr in _PLACE:  # ast.copy_location: both classes have all four
            value = getattr(node, attr, None)
            if value is not None or (attr in _ENDS and hasattr(node, attr)):
                values[attr] = value
        new_node = _Name.__new__(_Name)
        new_node.__dict__.update(values)
        return new_node

    if not hasattr(Ast3ToGAst, "visit_Num"):
        # ast.NodeVisitor.visit_Constant looks for the deprecated visit_Num / visit_Str
        # first; gast defines none of them on this Python, so it ends in generic_visit
        visit_Constant = generic_visit


_PLACE = ("lineno", "col_offset", "end_lineno", "end_col_offset")
_Name = gast.Name
_ENDS = ("end_lineno", "end_col_offset")


def ast_to_gast(node):
    """``gast.ast_to_gast(node)``: the same gast tree, built faster."""
    return _Converter().visit(node)
