"""``xs[t][k] = v``: a write into an array held in a local list or dict (PB101).

min-char-rnn's one-hot input (``xs[t] = np.zeros(n); xs[t][inputs[t]] = 1``) and a dict of
parameter arrays updated in place write into an array through the container. The
transform (transform/list_mutation.py ``held_array_store``) writes it as

    _o = xs[t]; _a = _pb_array_set_copy(_o, k, v); xs[t] = _a

a new array stored back, which the sweeps differentiate with the rules they have. That is
what Python computes exactly when no other name, container or call holds the array
``xs[t]`` was (else Python's write would show through it, and the copy's would not). This
module proves that, or names the expression that may hold such an array:

* ``xs`` is a local list or dict whose changes are modelled (transform/list_analysis.py);
* every array put into it is new: each binding is a display or comprehension of new values
  (``{}``, ``[np.zeros(n) for _ in ..]``), and each change puts in a new value
  (``xs[t] = np.zeros(n)``, ``xs.append(w * 2.0)``: check/aliasing.py ``fresh_expr``);
* no read of it keeps an item while it still changes: ``xs[t]`` only read (an operand, an
  argument of a call that keeps nothing, ``xs[t][k]`` of elements), ``len(xs)``; a use of
  the whole container or ``a = xs[t]`` only after the last change, outside the loops
  that change it.
"""

from __future__ import annotations

import gast

from .alias_uses import selects_elements

# Methods of a list or dict that put no item in (or one that ``_put`` looks at).
_NEUTRAL = frozenset({"pop", "clear", "reverse", "popitem"})


class Unproved:
    """Why the arrays of a container are not provably its own: ``node`` puts in a value
    that may be held elsewhere (``kept`` False) or may keep one of its arrays (True)."""

    def __init__(self, node, kept=False):
        self.node = node
        self.kept = kept


def held_arrays_refusal(checker, name: str, ever: bool = False):
    """None when every array the local container ``name`` holds is its own (see the
    module docstring), else an :class:`Unproved`. ``ever``: no read keeps one at all, not
    only while it changes (a container the function returns, whose arrays its caller then
    changes: transform/returned_containers.py)."""
    analysis = checker._container_analysis()
    aliases = checker._aliases()
    if analysis.kind(name) not in ("list", "dict"):
        return Unproved(None)
    for value in analysis.bindings.get(name, ()):
        if not _new_items(value, aliases, analysis):
            return Unproved(value)
    changes = analysis.changes.get(name, [])
    receivers = set()
    for change in changes:
        receivers.add(id(_root(change)))
        bad = _put(change, analysis, aliases)
        if bad is not None:
            return Unproved(bad)
    during = analysis._while_changing(changes) if changes else (lambda node: False)
    if ever:
        during = lambda node: True  # noqa: E731
    for node in analysis._loads(name, receivers):
        if ever and _returned_whole(node, analysis):
            continue  # return loss, grads: the container itself, to the caller
        kept = _kept(node, analysis, aliases)
        if kept is not None and during(kept):
            return Unproved(kept, kept=True)
    return None


def _new_items(value, aliases, analysis) -> bool:
    """A new container of new values (a display, a comprehension, ``dict()``)."""
    if isinstance(value, (gast.List, gast.Tuple)):
        return all(aliases.fresh_expr(e) for e in value.elts)
    if isinstance(value, gast.Dict):
        return all(aliases.fresh_expr(v) for v in value.values) and None not in value.keys
    if isinstance(value, gast.ListComp):
        return aliases.fresh_expr(value.elt)
    if isinstance(value, gast.DictComp):
        return aliases.fresh_expr(value.value)
    if isinstance(value, gast.Call):
        if id(value) in analysis.own_item_results:
            return True  # loss, grads = f(x): f's own dict of new arrays (held by nothing)
        return (
            not value.args
            and not value.keywords
            and analysis.new_container(value)
            in (
                "list",
                "dict",
            )
        )
    return False


def _put(change, analysis, aliases):
    """The expression by which ``change`` puts into the container a value that may be
    held elsewhere, else None."""
    statement = analysis.parents.get(change)
    if isinstance(change, gast.AugAssign):  # xs += [...]
        return None if _new_items(change.value, aliases, analysis) else change.value
    if isinstance(change, gast.Subscript):
        if isinstance(change.ctx, gast.Del):
            return None
        if isinstance(change.value, gast.Subscript):  # xs[t][k] = v: the write itself
            return change if isinstance(change.value.slice, gast.Slice) else None
        if isinstance(change.slice, gast.Slice):
            return change
        if isinstance(statement, gast.Assign):
            return None if aliases.fresh_expr(statement.value) else statement.value
        if isinstance(statement, (gast.Tuple, gast.List)):  # _, xs[t] = f(x): what f gave
            value = analysis._paired_value(statement, change)  # (a display's item)
            return None if value is not None and aliases.fresh_expr(value) else change
        return None  # xs[t] += v: the array itself, changed (or rewritten: owned_items)
    if isinstance(change, gast.Call) and isinstance(change.func, gast.Attribute):
        method = change.func.attr
        if method in _NEUTRAL:
            return None
        if method in ("append", "insert", "setdefault") and change.args:
            value = change.args[-1]
            return None if aliases.fresh_expr(value) else value
        if method == "extend" and len(change.args) == 1:
            value = change.args[0]
            return None if _new_items(value, aliases, analysis) else value
    return change


def _kept(node, analysis, aliases):
    """The expression by which a load of the container may keep one of its arrays, else
    None."""
    parent = analysis.parents.get(node)
    if analysis._length_only(node):
        return None
    if analysis.kind(node.id) == "dict" and _keys_only(node, parent):
        return None
    if not (isinstance(parent, gast.Subscript) and parent.value is node):
        return None if analysis._numpy_argument(node) else node
    if isinstance(parent.slice, gast.Slice):
        return parent  # a new list of the same arrays
    grand = analysis.parents.get(parent)
    if (
        isinstance(grand, gast.Subscript)
        and grand.value is parent
        and isinstance(grand.ctx, gast.Load)
        and selects_elements(grand.slice)
        and isinstance(analysis.parents.get(grand), gast.Assign)
    ):
        return None  # y = xs[t][k]: elements, a copy or a number
    return None if aliases._harmless_use(parent) else parent


def _returned_whole(node, analysis) -> bool:
    parent = analysis.parents.get(node)
    if isinstance(parent, gast.Tuple):
        parent = analysis.parents.get(parent)
    return isinstance(parent, gast.Return)


def _keys_only(node, parent) -> bool:
    """Whether a load ``node`` of a dict reads its keys only: ``for k in d``,
    ``d.keys()``, ``k in d`` (the keys of a dict of parameters updated in a loop,
    ``for k in grads: grads[k] += reg * W[k]``)."""
    if isinstance(parent, (gast.For, gast.comprehension)) and parent.iter is node:
        return True
    if isinstance(parent, gast.Compare) and node in parent.comparators:
        return all(isinstance(op, (gast.In, gast.NotIn)) for op in parent.ops)
    return isinstance(parent, gast.Attribute) and parent.attr == "keys"


def _root(change):
    """The name node a change changes."""
    node = change
    if isinstance(node, gast.AugAssign):
        node = node.target
    elif isinstance(node, gast.Call):
        node = node.func.value
    while isinstance(node, gast.Subscript):
        node = node.value
    return node
