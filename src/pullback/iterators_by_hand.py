"""An iterator stepped by hand, ``it = iter(xs)`` then ``next(it)``, ``next(it, d)`` and
``for v in it:``, as reads of ``xs`` by a position.

Where every use of a local ``it`` is one of those (:func:`hand_iterators`, which the check
and the transform both ask), the transform (transform/hand_iteration.py) keeps ``xs`` read
once as a sequence and ``it`` as the position of the next item::

    it = iter(xs)        ->  _pb_seq_it = as_sequence(xs); it = 0
    a = next(it)         ->  a = _pb_seq_it[next_position(_pb_seq_it, (it := it + 1) - 1)]
    b = next(it, 0.0)    ->  b = _pb_seq_it[p] if (p := next_position(..., True)) >= 0 else 0.0
    for v in it: ...     ->  for v in _pb_seq_it[it:]: ...  then  it = len(_pb_seq_it)

so the gradient flows through ordinary index reads. ``next`` of an exhausted iterator
raises ``StopIteration`` as Python does (or gives the default). A loop over ``it`` with a
``break`` (which leaves it half consumed), a use of ``it`` in a nested function or
comprehension, or anything else done with it keeps the refusal (PB301).

>>> import gast, builtins
>>> tree = gast.parse("def f(xs):\\n    it = iter(xs)\\n    a = next(it)\\n    return a")
>>> class Callee:
...     kind = "object"
...     def __init__(self, obj): self.obj = obj
>>> resolve = lambda c: Callee(getattr(builtins, c.func.id, None))
>>> sorted(hand_iterators(tree.body[0], resolve)[0])
['it']
"""

from __future__ import annotations

import builtins

import gast

from .tree_walk import statements, walk

_SCOPES = (
    gast.FunctionDef,
    gast.AsyncFunctionDef,
    gast.Lambda,
    gast.ClassDef,
    gast.ListComp,
    gast.SetComp,
    gast.DictComp,
    gast.GeneratorExp,
)
_LOOPS = (gast.For, gast.While, gast.AsyncFor)


def next_position(seq, pos, has_default=False):
    """``pos`` when ``seq`` has an item there; else -1 with a default, or the
    ``StopIteration`` that ``next`` of an exhausted iterator raises."""
    if pos < len(seq):
        return pos
    if has_default:
        return -1
    raise StopIteration


def _resolves_to(call, resolve, fn) -> bool:
    if not isinstance(call, gast.Call) or not isinstance(call.func, gast.Name):
        return False
    callee = resolve(call)
    return callee is not None and callee.kind == "object" and callee.obj is fn


def _plain_args(call, low: int, high: int) -> bool:
    return (
        not call.keywords
        and low <= len(call.args) <= high
        and not any(isinstance(a, gast.Starred) for a in call.args)
    )


def _breaks_out(loop) -> bool:
    """Whether a ``break`` of ``loop`` itself is in its body (not one of a loop inside)."""
    todo = list(loop.body)
    while todo:
        node = todo.pop()
        if isinstance(node, gast.Break):
            return True
        if isinstance(node, (*_LOOPS, *_SCOPES)):
            continue
        todo.extend(gast.iter_child_nodes(node))
    return False


def _mentions(nodes, name) -> bool:
    return any(isinstance(n, gast.Name) and n.id == name for top in nodes for n in walk(top))


def hand_iterators(fn, resolve):
    """``(names, calls)``: the locals of the function ``fn`` used only as iterators
    stepped by hand (see the module docstring), and the ids of their ``iter``/``next``
    calls (the check accepts those). ``resolve(call)`` gives a call's callee."""
    stores: dict = {}  # name -> ok so far
    calls: dict = {}  # name -> ids of its iter/next calls
    params = {a.id for a in walk(fn.args) if isinstance(a, gast.Name)}
    for node in statements(fn):  # (an assignment is a statement: no expression visited)
        if not isinstance(node, gast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        if isinstance(target, gast.Name) and _resolves_to(value, resolve, builtins.iter):
            ok = _plain_args(value, 1, 1) and target.id not in params
            stores[target.id] = stores.get(target.id, True) and ok
            calls.setdefault(target.id, set()).add(id(value))
    if not any(stores.values()):
        return set(), set()  # (the common case: one walk)
    parents = {}
    for node in walk(fn):
        for child in gast.iter_child_nodes(node):
            parents[child] = node
    names = {n for n, ok in stores.items() if ok}
    for node in walk(fn):
        if not isinstance(node, gast.Name) or node.id not in names or node is fn:
            continue
        name = node.id
        parent = parents.get(node)
        if not _use_ok(node, parent, parents, fn, resolve):
            names.discard(name)
            continue
        if isinstance(parent, gast.Call):
            calls[name].add(id(parent))
    return names, {i for n in names for i in calls[n]}


def _use_ok(node, parent, parents, fn, resolve) -> bool:
    """Whether this occurrence of an iterator's name is one of the forms followed."""
    up = parent
    while up is not None and up is not fn:  # not inside a nested scope
        if isinstance(up, _SCOPES):
            return False
        up = parents.get(up)
    name = node.id
    if isinstance(node.ctx, gast.Store):  # it = iter(xs)
        assign = parents.get(node)
        return isinstance(assign, gast.Assign) and _resolves_to(
            assign.value, resolve, builtins.iter
        )
    if not isinstance(node.ctx, gast.Load):
        return False
    if isinstance(parent, gast.Call) and parent.args and parent.args[0] is node:
        if not _resolves_to(parent, resolve, builtins.next) or not _plain_args(parent, 1, 2):
            return False
        default = parent.args[1:]
        return not default or (
            isinstance(default[0], (gast.Constant, gast.Name)) and not _mentions(default, name)
        )
    if isinstance(parent, gast.For) and parent.iter is node:
        return not _breaks_out(parent) and not _mentions(parent.body, name)
    return False
