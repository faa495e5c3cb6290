"""``global``/``nonlocal`` in a differentiated function: names of the module or of an
enclosing function that the function reads and writes (a call counter, a log).

A write of a value that carries no gradient just runs, once per call, as in the primal
(``global n_calls; n_calls += 1``): the generated code reads such a name where it runs
and writes it back to the module's globals or the closure's cell. A write of a value
computed from a differentiated one would hide that value's gradient from the rest of the
program, and is refused (PB401), as is a name bound any other way than by ``name = v``,
``name op= v`` or ``name: T = v`` (a loop target, a tuple target, ``del``, an import).

>>> import gast
>>> tree = gast.parse("def f(x):\\n    global n\\n    n += 1\\n    return x").body[0]
>>> sorted(free_declarations(tree))
['n']
>>> free_write_refusal(tree, "n", tainted={"x"}) is None
True
"""

from __future__ import annotations

import gast

from ..resolve import own_nodes, parent_map
from ..tree_walk import statements


def free_declarations(tree) -> dict:
    """``{name: the global or nonlocal statement}`` declared in ``tree``'s own scope."""
    out = {}
    if not any(isinstance(s, (gast.Global, gast.Nonlocal)) for s in statements(tree)):
        return out  # most functions declare none: found without visiting an expression
    for node in own_nodes(tree.body):
        if isinstance(node, (gast.Global, gast.Nonlocal)):
            for name in node.names:
                out.setdefault(name, node)
    return out


def _simple_store(node, parents) -> bool:
    parent = parents.get(node)
    if isinstance(parent, gast.Assign):
        return parent.targets == [node]
    return isinstance(parent, (gast.AugAssign, gast.AnnAssign)) and parent.target is node


def free_write_refusal(tree, name: str, tainted, parents=None) -> str | None:
    """Why the declared ``name`` cannot be written as in the primal, or None."""
    parents = parent_map(tree) if parents is None else parents
    if name in tainted:
        return f"'{name}' may be given a value computed from a differentiated argument"
    for node in own_nodes(tree.body):
        if isinstance(node, gast.Name) and node.id == name and not isinstance(node.ctx, gast.Load):
            if not _simple_store(node, parents):
                return f"'{name}' is bound other than by `{name} = ...` or `{name} += ...`"
        elif isinstance(node, (gast.FunctionDef, gast.ClassDef)) and node.name == name:
            return f"'{name}' is bound by a definition"
    return None
