"""Side effects that carry a differentiated value out of the function: may it come back?

``self.cache = z`` or ``log.append(z)`` with ``z`` differentiated run as written: the
object outside gets the value, as in the primal. The gradient is still exact as long as
the function does not read that value back (it only leaves). Whether it can is decided on
the user's own code, conservatively: the stored attribute (or the appended-to object) is
read again, or the object is handed to a call (which may read it), anywhere in the
function. Then the transformation refuses the store (PB107) or the append (PB106).

>>> import gast
>>> tree = gast.parse('''
... def f(self, x):
...     self.cache = x * 2
...     return x * self.w
... ''').body[0]
>>> may_read_back(tree, "self", "cache")
False
>>> may_read_back(tree, "self", "w")
True
"""

from __future__ import annotations

import gast

from ..resolve import parent_map

# Methods that only add to a container (their result is not the container's content).
_WRITES = frozenset({"append", "extend", "insert", "add", "update", "setdefault"})


def may_read_back(tree, root: str, attr: str | None = None, parents=None) -> bool:
    """Whether the function ``tree`` may read back what it stores in ``root.attr`` (or,
    with ``attr=None``, what it adds to the container ``root``); ``parents`` is
    :func:`~pullback.resolve.parent_map` of ``tree`` when the caller has it."""
    parents = parent_map(tree) if parents is None else parents
    for node in gast.walk(tree):
        if not (isinstance(node, gast.Name) and node.id == root):
            continue
        if not isinstance(node.ctx, gast.Load):
            continue
        parent = parents.get(node)
        if isinstance(parent, gast.Attribute) and parent.value is node:
            grand = parents.get(parent)
            called = isinstance(grand, gast.Call) and grand.func is parent
            if attr is not None:
                if parent.attr == attr and isinstance(parent.ctx, gast.Load):
                    return True  # root.attr read (or root.attr.method(...))
                if called:
                    return True  # a method of root may read root.attr
                continue
            if called and parent.attr in _WRITES:
                continue  # another write into the container
            return True
        if isinstance(parent, gast.Call) or attr is None:
            return True  # handed to a call, or the container itself read
    return False
