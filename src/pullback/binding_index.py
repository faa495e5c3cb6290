"""What a pass asks of one function's bindings, answered from one walk: whether a name is
bound exactly once, and (while a pass holds the tree's bindings fixed) each name's binding
count, its first ``name = call(...)``, and the values bound to it.

>>> import gast
>>> tree = gast.parse("def f(x): y = x; y = y + 1; return y").body[0]
>>> bound_once(tree, "y"), bound_once(tree, "x")
(False, True)
"""

from __future__ import annotations

import gast

from .receiver_classes import BINDERS, add_binding_value
from .tree_walk import statements, walk


def bound_once(tree, name: str) -> bool:
    """``tree`` binds ``name`` exactly once (a ``def``, class, parameter, assignment or
    ``del`` of it, nested scopes included) and no ``global``/``nonlocal`` names it: what
    lets a pass replace the name by what it is bound to."""
    bindings = 0
    for n in walk(tree):
        if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            bindings += n.name == name and n is not tree
        elif isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load):
            bindings += 1
        elif isinstance(n, (gast.Global, gast.Nonlocal)) and name in n.names:
            return False
    return bindings == 1


class BindingIndex:
    """What :func:`bound_once` and :func:`~pullback.resolve.receiver_class` ask of one
    tree, from one walk: how many times each name is bound (-1: named by
    ``global``/``nonlocal``) and the call of each name's first ``name = call(...)``
    statement (in :func:`statements` order)."""

    __slots__ = ("tree", "counts", "first_calls", "values", "holders")

    def __init__(self, tree):
        self.tree = tree
        counts: dict = {}
        values: dict = {}  # binding_values, from the same walk
        for n in walk(tree):
            if isinstance(n, BINDERS):
                add_binding_value(values, n)
            elif isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
                if n is not tree and counts.get(n.name, 0) >= 0:
                    counts[n.name] = counts.get(n.name, 0) + 1
            elif isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
                if counts.get(n.id, 0) >= 0:
                    counts[n.id] = counts.get(n.id, 0) + 1
            elif isinstance(n, (gast.Global, gast.Nonlocal)):
                for name in n.names:
                    counts[name] = -1
        self.counts = counts
        first: dict = {}
        for node in statements(tree):
            if (
                isinstance(node, gast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], gast.Name)
                and isinstance(node.value, gast.Call)
            ):
                first.setdefault(node.targets[0].id, node.value)
        self.first_calls = first
        self.values = values
        self.holders: dict = {}  # method name -> names that may hold such an object


class bindings_fixed:
    """``with bindings_fixed(fs):`` around a pass that reads ``fs.tree`` without binding
    any name anew (the check's visit, the normalizer's walk): inside,
    :func:`~pullback.resolve.receiver_class` answers from one :class:`BindingIndex` of
    the tree instead of a walk per question (a function with a thousand ``x.sum()`` calls
    asked a thousand walks). Outside, every question walks the tree as it is then."""

    __slots__ = ("fs", "before")

    def __init__(self, fs):
        self.fs = fs

    def __enter__(self):
        self.before = getattr(self.fs, "_pb_binding_index", None)
        try:
            self.fs._pb_binding_index = _LAZY
        except AttributeError:  # a source view without attributes of its own
            self.fs = None
        return self

    def __exit__(self, *exc):
        if self.fs is not None:
            self.fs._pb_binding_index = self.before
        return False


_LAZY = object()  # (inside bindings_fixed, before the first question)


def binding_index(fs, tree):
    """The index of ``tree`` while a pass holds its bindings fixed, else None."""
    index = getattr(fs, "_pb_binding_index", None)
    if index is None:
        return None
    if index is _LAZY or index.tree is not tree:
        index = fs._pb_binding_index = BindingIndex(tree)
    return index
