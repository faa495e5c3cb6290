"""Whether a called function only reads one of its parameters: the callee side of
``Y[i + 1] = Y[i] + dt * f(Y[i])`` (check/alias_uses.py ``_consumed_by_store``).

A row of ``Y`` passed to ``f`` is a view of ``Y``; a later write into ``Y`` would change what
``f`` kept of it, if it kept anything (``history.append(y)``, ``self.last = y``, a closure
list). ``f`` keeps nothing of its parameter when every use of the parameter is read at once:
an operand of arithmetic or a comparison, an index read (itself read at once), an index, a
constant attribute (``y.shape``), an argument of a call that returns a new object, an item
of a list display passed to such a call, or the returned value (which the caller consumes).
Anything else (a method call, a name bound to it, a nested function reading it) may keep it.

>>> import gast
>>> makes_array = lambda call: gast.unparse(call.func).strip() == "np.array"
>>> fn = gast.parse("def f(y, k):\\n    return np.array([y[1], -k * y[0]])").body[0]
>>> reads_only(fn, 0, makes_array)
True
>>> fn = gast.parse("def f(y):\\n    kept.append(y)\\n    return 2 * y").body[0]
>>> reads_only(fn, 0, makes_array)
False
>>> fn = gast.parse("def f(y):\\n    return y").body[0]
>>> reads_only(fn, 0, makes_array), reads_only(fn, 0, makes_array, returned=False)
(True, False)
"""

from __future__ import annotations

import gast

from ..resolve import CONSTANT_ATTRIBUTES, parent_map
from ..tree_walk import walk

_ARITHMETIC = (gast.BinOp, gast.UnaryOp, gast.Compare)


def reads_only(fn, position: int, fresh_call, returned: bool = True) -> bool:
    """Whether ``fn`` (a FunctionDef) only reads its ``position``-th positional parameter;
    ``fresh_call(call)`` tells whether a call in ``fn`` returns a new object keeping none of
    its arguments. ``returned=False``: and does not return it, or an index read of it (a
    row is a view), as it is: for a caller that keeps the call's result.

    >>> fn = gast.parse("def f(b, u):\\n    b[0] = u[1] * 2\\n    return b").body[0]
    >>> reads_only(fn, 1, None, returned=False), reads_only(fn, 0, None, returned=False)
    (True, False)
    >>> fn = gast.parse("def f(y):\\n    return y[1:]").body[0]
    >>> reads_only(fn, 0, None), reads_only(fn, 0, None, returned=False)
    (True, False)
    """
    params = fn.args.posonlyargs + fn.args.args
    if position >= len(params) or not isinstance(params[position], gast.Name):
        return False
    name = params[position].id
    parents = parent_map(fn)
    for node in walk(fn):
        if node is params[position] or not (isinstance(node, gast.Name) and node.id == name):
            continue
        if not isinstance(node.ctx, gast.Load) or _nested(node, fn, parents):
            return False  # rebound, deleted, or read by a function that may outlive the call
        if not _read_at_once(node, parents, fresh_call, returned):
            return False
    return True


def bound_names(fn) -> set:
    """The names ``fn`` binds (its parameters among them): a call of one of them is no
    call of the module's function of that name."""
    return {
        n.id for n in walk(fn) if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)
    } | {n.name for n in walk(fn) if isinstance(n, gast.FunctionDef) and n is not fn}


def _nested(node, fn, parents) -> bool:
    node = parents.get(node)
    while node is not None and node is not fn:
        if isinstance(node, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            return True
        node = parents.get(node)
    return False


def _read_at_once(node, parents, fresh_call, returned=True) -> bool:
    while True:
        parent = parents.get(node)
        if isinstance(parent, gast.Subscript):
            if parent.value is not node:
                return True  # an index
            if not isinstance(parent.ctx, gast.Load):
                return False  # y[i] = v: a write into the caller's array
            node = parent
            continue
        if isinstance(parent, gast.Return):
            return returned
        if isinstance(parent, _ARITHMETIC) or isinstance(parent, gast.Slice):
            return True
        if isinstance(parent, gast.Attribute):
            return parent.attr in CONSTANT_ATTRIBUTES
        if isinstance(parent, (gast.List, gast.Tuple)) and isinstance(parent.ctx, gast.Load):
            node = parent  # np.array([y[1], ...]): as the display is read
            call = parents.get(parent)
            if not (isinstance(call, gast.Call) and any(a is parent for a in call.args)):
                return False
            continue
        if isinstance(parent, gast.Call):
            return (
                parent.func is not node
                and any(a is node for a in parent.args)
                and fresh_call(parent)
            )
        return False
