"""A loop over a local dict that replaces the value at the key it visits.

``for k in params: params[k] = params[k] - lr * grads[k]`` (also ``for k in params.keys()``,
``for k, v in params.items(): params[k] = v - ...``) iterates over a dict while changing it.
Python allows it: storing at a key the dict already has changes no key, so the iteration
visits every key once, in order. Visiting key ``k``, it reads the value stored at ``k``
before the loop (nothing stored at a key not yet visited). So the loop sees nothing of its
own changes, and iterating over the dict as it was when the loop began (which is what the
rewrite of each store as a new dict does: :mod:`pullback.transform.list_mutation`)
computes the same values. :class:`~pullback.transform.list_analysis.ContainerAnalysis`
then counts the loop's iteration as no use that keeps the dict.

A loop that changes the dict any other way (a store at another key, ``del``, ``pop``,
``update``, a store at the loop's key after the key was bound anew) stays a use that shares
it (PB106): the iteration could see its own changes.

>>> import gast
>>> tree = gast.parse('''
... def f(p, g):
...     for k in p:
...         p[k] -= g[k]
... ''').body[0]
>>> loop = tree.body[0]
>>> key_loop_target(loop.iter, loop, "p")
'k'
"""

from __future__ import annotations

import gast

from ..tree_walk import walk

VIEWS = ("keys", "items", "values")


def iterates_keys(use, name, parents, changes) -> bool:
    """Whether ``use`` (a load of the dict ``name``) is the iteration of a loop over its keys
    that changes the dict only by replacing the value at the key it visits."""
    loop = parents.get(use)
    while isinstance(loop, (gast.Attribute, gast.Call)):
        loop = parents.get(loop)
    key = key_loop_target(use, loop, name)
    return key is not None and replaces_visited_values(loop, changes, key)


def key_loop_target(use, loop, name) -> str | None:
    """The key variable of ``loop`` when ``use`` (a load of ``name``) is the loop's
    iteration over the dict's keys (``for k in d``, ``for k in d.keys()``, ``for k, v in
    d.items()``), else None. ``for v in d.values()`` names no key: None."""
    if not isinstance(loop, gast.For) or loop.orelse:
        return None
    it, target = loop.iter, loop.target
    if isinstance(it, gast.Call) and isinstance(it.func, gast.Attribute):
        if it.args or it.keywords or it.func.value is not use or it.func.attr not in VIEWS:
            return None
        if it.func.attr == "items":
            ok = isinstance(target, gast.Tuple) and len(target.elts) == 2
            target = target.elts[0] if ok else None
        elif it.func.attr == "values":
            return None
    elif it is not use:
        return None
    return target.id if isinstance(target, gast.Name) and use.id == name else None


def replaces_visited_values(loop, changes, key) -> bool:
    """Whether every change (of ``changes``, the change nodes of the dict) inside ``loop``
    is an item store ``d[key] (op)= v`` at the loop's ``key``, which the loop's body never
    binds anew."""
    inside = [c for c in changes if _within(c, loop)]
    for change in inside:
        if not (
            isinstance(change, gast.Subscript)
            and isinstance(change.ctx, gast.Store)
            and isinstance(change.slice, gast.Name)
            and change.slice.id == key
        ):
            return False
    return not any(
        isinstance(n, gast.Name) and n.id == key and not isinstance(n.ctx, gast.Load)
        for stmt in loop.body
        for n in walk(stmt)
    )


def _within(node, loop) -> bool:
    return any(node is n for stmt in loop.body for n in walk(stmt))


def comprehension_view(attribute, call, parents) -> bool:
    """``{k: np.zeros_like(v) for k, v in params.items()}``: a view of the dict iterated by a
    comprehension, which runs to its end at once (a read, as ``for .. in params`` is)."""
    outer = parents.get(call)
    return (
        attribute.attr in VIEWS
        and not call.args
        and isinstance(outer, gast.comprehension)
        and outer.iter is call
    )
