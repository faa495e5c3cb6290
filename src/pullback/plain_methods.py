"""Methods an ``__init__`` calls on the object it is building, ``self.W = self.init_W(n)``:
which of them the constructor function (plain_classes.py) may call on the object made so far.

The constructor function keeps the attributes in locals until it returns the object, so a
method called in the middle receives an object holding the attributes stored so far (made
for the call). That is what Python's method sees only when the method *reads*: it may read
attributes and call methods that only read in turn, and do anything else with other values;
it may not store, delete or hand on ``self`` (its stores would land on the object made for
the call, not on the one returned; a registered ``self`` would be the wrong object). This
module says whether a method is such a reader, from its source (the methods it calls on
``self`` too).

>>> import gast
>>> tree = gast.parse("def scale(self, k):\\n    return k * self.w").body[0]
>>> reads_only(tree, lambda name: None) is None
True
>>> tree = gast.parse("def reset(self):\\n    self.w = 0.0").body[0]
>>> reads_only(tree, lambda name: None)
"stores 'self.w'"
"""

from __future__ import annotations

import inspect
import types

import gast

from .tree_walk import walk

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)


def live_kind(cls, name: str) -> str | None:
    """What ``self.name`` is for an object of ``cls``: "method" (a Python function),
    "static" (a staticmethod), "property", "other" (another descriptor or class value),
    or None (no attribute of the class, or a slot of its ``__slots__``: an object's own)."""
    for c in cls.__mro__:
        if name in c.__dict__:
            raw = c.__dict__[name]
            if isinstance(raw, types.MemberDescriptorType):
                return None
            if isinstance(raw, types.FunctionType):
                return "method"
            if isinstance(raw, staticmethod):
                return "static"
            return "property" if isinstance(raw, property) else "other"
    return None


def live_method(cls, name: str):
    """The Python function ``self.name`` calls for an object of ``cls``."""
    return inspect.getattr_static(cls, name)


def reads_only(tree, method_of, seen=None) -> str | None:
    """None when the method ``tree`` (a gast ``FunctionDef``) only reads its first
    parameter's attributes and calls methods that only read (``method_of(name)`` gives
    ``(tree, is_property)`` of the method or property getter ``name``, or None when
    ``name`` is neither); else what it does."""
    params = tree.args.posonlyargs + tree.args.args
    if not params:
        return "takes no 'self'"
    me = params[0].id
    seen = set() if seen is None else seen
    reads = {}
    for node in walk(tree):
        if isinstance(node, _SCOPES) and node is not tree:
            if any(isinstance(n, gast.Name) and n.id == me for n in walk(node)):
                return "reads 'self' in a nested function"
        if isinstance(node, gast.Attribute) and _is(node.value, me):
            if not isinstance(node.ctx, gast.Load):
                return f"stores 'self.{node.attr}'"
            if node.attr.startswith("__"):
                return f"uses 'self.{node.attr}'"
            reads[id(node.value)] = node
    called = {
        id(n.func)
        for n in walk(tree)
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
    }
    for node in walk(tree):
        if _is(node, me) and id(node) not in reads and not isinstance(node.ctx, gast.Param):
            return "hands 'self' on"
    for attribute in reads.values():
        found = method_of(attribute.attr)
        if found is None:
            continue
        inner, is_property = found
        if id(attribute) not in called and not is_property:
            return f"hands the method 'self.{attribute.attr}' on"
        if attribute.attr not in seen:
            seen.add(attribute.attr)
            problem = reads_only(inner, method_of, seen)
            if problem is not None:
                return f"calls 'self.{attribute.attr}', which {problem}"
    return None


def _is(node, name: str) -> bool:
    return isinstance(node, gast.Name) and node.id == name
