"""Loop-carried names that hold one object in every iteration: the tape need not save them.

A loop that writes into a local array in place rebinds the array's name at every write,
``out_2 = _pb_array_set(out_1, i, v)`` and ``out_1 = out_2`` at the end of the body, and
the reverse sweep reads ``out_1`` (its shape, for the write's pullback). The tape used to
save ``out_1`` once per iteration; but ``array_set`` returns its first argument itself,
so every iteration's ``out_1`` *is* the object the loop started with: saving a reference
to it per iteration restores the same object each time, and reading the name's final
value gives exactly that object (a reference is saved, never a copy, so what a pullback
sees of the array's contents is the same either way).

The proof, on the SSA form of the loop (:class:`~.ssa.LoopInfo`), is conservative:

* every binding of a name in the group, anywhere in the loop (nested loops too), is a plain
  ``m = k`` or ``m = setter(k, ...)`` with ``k`` a name of the group and ``setter`` one of
  :data:`IDENTITY_SETTERS` (checked by identity of the helper bound in the generated
  namespace: functions that return their first argument, always, or raise); a name also
  bound any other way (a ``for`` target, unpacking, ``del``) is not in any group;
* a group holds exactly one carried name of the loop (two, like ``a, b = b, a`` written
  through setters, would swap objects between iterations), whose value on entry is the
  one object every name of the group is bound to.

>>> import gast
>>> from .ssa import LoopInfo
>>> loop = gast.parse("for i in r:\\n    o_2 = s(o_1, i, v)\\n    o_1 = o_2").body[0]
>>> info = LoopInfo(loop, None)
>>> info.carried = {"o": "o_1"}
>>> sorted(same_object_names(info, {"s": arrays_inplace.array_set}))
['o_1', 'o_2']
>>> sorted(same_object_names(info, {"s": arrays_inplace.array_set_copy}))
[]
"""

from __future__ import annotations

import gast

from .. import arrays_inplace, arrays_inplace_calls, containers, containers_inplace
from .analyze import all_nodes

#: Helpers that write in place and return their first argument itself (or raise).
IDENTITY_SETTERS = (
    arrays_inplace.array_set,
    arrays_inplace.array_add_set,
    arrays_inplace.array_sub_set,
    arrays_inplace_calls.array_fill,
    arrays_inplace_calls.array_copyto,
    arrays_inplace_calls.array_add_at,
    containers.list_append,
    containers_inplace.list_set,
    containers_inplace.list_insert,
    containers_inplace.list_delete,
)


def name_bindings(nodes) -> tuple[dict, dict]:
    """``(bindings, values)`` over ``nodes``: how many times each name is bound (any store
    or ``del``), and the values of its plain ``name = value`` assignments."""
    bindings: dict[str, int] = {}
    values: dict[str, list] = {}
    for node in nodes:
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
            bindings[node.id] = bindings.get(node.id, 0) + 1
        elif (
            isinstance(node, gast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], gast.Name)
        ):
            values.setdefault(node.targets[0].id, []).append(node.value)
    return bindings, values


def _source(value, setters):
    """The name whose object ``value`` is, when provably so, else None."""
    if isinstance(value, gast.Name):
        return value.id
    if (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Name)
        and value.func.id in setters
        and value.args
        and isinstance(value.args[0], gast.Name)
    ):
        return value.args[0].id
    return None


def same_object_names(info, namespace) -> set[str]:
    """Names the loop of ``info`` binds to one and the same object in every iteration,
    by the rules of the module docstring (empty when nothing is proved)."""
    heads = set(info.carried.values())
    if not heads:
        return set()
    setters = {n for n, v in namespace.items() if any(v is f for f in IDENTITY_SETTERS)}
    if not setters:
        return set()
    bindings, values = name_bindings(all_nodes(info.node))
    sources = {name: [_source(v, setters) for v in found] for name, found in values.items()}
    group = {
        name
        for name, found in sources.items()
        if len(found) == bindings.get(name, 0) and None not in found
    }
    changed = True
    while changed:  # the greatest set whose every binding reads a name of the set
        changed = False
        for name in sorted(group):
            if any(k not in group for k in sources[name]):
                group.discard(name)
                changed = True
    invariant: set[str] = set()
    for component in _components(group, sources):
        if len(component & heads) == 1:
            invariant |= component
    return invariant


def _components(group, sources):
    """The connected parts of ``group`` under ``name -- source`` edges."""
    neighbours: dict[str, set] = {name: set() for name in group}
    for name in group:
        for k in sources[name]:
            neighbours[name].add(k)
            neighbours[k].add(name)
    seen: set[str] = set()
    for start in sorted(group):
        if start in seen:
            continue
        part, todo = set(), [start]
        while todo:
            name = todo.pop()
            if name not in part:
                part.add(name)
                todo.extend(neighbours[name] - part)
        seen |= part
        yield part


class LoopIdentities:
    """:class:`~.reverse.ReverseBuilder`: a loop's invariants (see
    :meth:`~.reverse_flow.ControlFlowAdjoints.loop_invariants`) include the names that
    hold one object in every iteration (:func:`same_object_names`)."""

    def loop_invariants(self, info) -> set[str]:
        return super().loop_invariants(info) | same_object_names(info, self.ns)
