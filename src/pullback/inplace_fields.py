"""Arrays on an object that a call pullback does not differentiate changes in place.

A forward sweep keeps references to the arrays its pullbacks need: ``MODEL.predict(x)``
reading ``self.v`` keeps ``self.v`` itself, not a copy. A statement that runs as the primal
runs it because no gradient flows through it (``MODEL.step()``) may then change that array
in place (``self.v += 0.5`` in ``step``): the backward sweep would read the changed values
and the gradient would be that of another function, silently. (Code pullback transforms
writes such an update as a new array, which keeps the old one intact: this is only about
calls it runs natively.)

So around such a call of a method of a user's class, the generated forward sweep takes
:func:`inplace_snapshot` of the array fields the method (or a method of its class that it
calls on ``self``) changes in place -- found from its source: ``self.a += v``,
``self.a[k] = v``, ``self.a.fill(v)``, ``out=self.a``, ``np.copyto(self.a, v)`` -- and
after it :func:`inplace_verify` refuses when one of those arrays, still the field's, was
changed and something besides the object holds it (a pullback's reference, a view). A
field only the object holds cannot be in a pullback, so a running statistic updated in
place (``self.running_mean *= 0.9``) goes on as before.

>>> import numpy as np
>>> class M:
...     def __init__(self):
...         self.v = np.ones(2)
...     def step(self):
...         self.v += 0.5
>>> m = M()
>>> inplace_fields(M.step)
('v',)
>>> snap = inplace_snapshot(m, "step", read=("v",))  # the caller reads m.v
>>> m.step()
>>> inplace_verify(snap, "f.py:3:5")  # nothing else holds m.v: fine
>>> kept = m.v  # as a pullback keeps it
>>> snap = inplace_snapshot(m, "step", read=("v",))
>>> m.step()
>>> inplace_verify(snap, "f.py:3:5")
Traceback (most recent call last):
...
pullback.errors.NotDifferentiableError: f.py:3:5: M.step() changed the array in the field 'v' ...
"""

from __future__ import annotations

import sys
import types
import weakref

import gast
import numpy as np

from .errors import NotDifferentiableError, PullbackError
from .source import load_source
from .tree_walk import walk

# ndarray methods that write into the array itself
_WRITING_METHODS = frozenset(
    {"fill", "sort", "put", "partition", "resize", "itemset", "setfield", "__setitem__"}
    | {"__iadd__", "__isub__", "__imul__", "__itruediv__", "__ipow__", "__ifloordiv__"}
)
# NumPy functions whose first argument is written into
_WRITING_FUNCTIONS = frozenset(
    {"copyto", "put", "place", "putmask", "put_along_axis", "fill_diagonal", "at"}
)
_FOLLOWED = 3  # how deep calls of the class's own methods on self are followed
_FIELDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def inplace_fields(fn, _depth=0, _seen=None) -> tuple:
    """The names of the fields of ``self`` that the method ``fn`` (or a method of the
    same class it calls on ``self``) may change in place; cached while its code is the
    same. Without source: none (a library's method is not one of a user's class)."""
    cached = _FIELDS.get(fn)
    if cached is not None and cached[0] is fn.__code__:
        return cached[1]
    read = _method_tree(fn)
    if read is None:
        return ()
    found, called = _written_fields(*read)
    cls = _owner_class(fn)
    seen = set() if _seen is None else _seen
    seen.add(fn)
    if cls is not None and _depth < _FOLLOWED:
        for name in called:
            other = getattr(cls, name, None)
            if isinstance(other, types.FunctionType) and other not in seen:
                found |= set(inplace_fields(other, _depth + 1, seen))
    fields = tuple(sorted(found))
    if _seen is None:
        _FIELDS[fn] = (fn.__code__, fields)
    return fields


def _owner_class(fn):
    """The class ``fn`` is defined in, from its qualified name and module."""
    parts = fn.__qualname__.split(".")
    if len(parts) < 2 or "<locals>" in parts:
        return None
    owner = sys.modules.get(fn.__module__)
    for part in parts[:-1]:
        owner = getattr(owner, part, None)
    return owner if isinstance(owner, type) else None


def _written_fields(tree, me: str):
    """``(fields written in place, names of methods called on self)`` in ``tree``."""

    def field(node):
        if isinstance(node, gast.Subscript):
            node = node.value
        if (
            isinstance(node, gast.Attribute)
            and isinstance(node.value, gast.Name)
            and node.value.id == me
        ):
            return node.attr
        return None

    found, called = set(), set()
    for node in walk(tree):
        if isinstance(node, gast.AugAssign):
            name = field(node.target)
            if name is not None:
                found.add(name)
        elif isinstance(node, (gast.Assign, gast.AnnAssign)):
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, gast.Subscript):
                    name = field(t)
                    if name is not None:
                        found.add(name)
        elif isinstance(node, gast.Call):
            func = node.func
            if isinstance(func, gast.Attribute):
                receiver = field(func.value) if isinstance(func.value, gast.Attribute) else None
                if receiver is not None and func.attr in _WRITING_METHODS:
                    found.add(receiver)
                if isinstance(func.value, gast.Name) and func.value.id == me:
                    called.add(func.attr)
                if func.attr in _WRITING_FUNCTIONS and node.args:
                    name = field(node.args[0])
                    if name is not None:
                        found.add(name)
            for k in node.keywords:
                if k.arg == "out":
                    outs = k.value.elts if isinstance(k.value, gast.Tuple) else [k.value]
                    found.update(n for n in map(field, outs) if n is not None)
    return found, called


def read_fields(cls, mutator: str) -> frozenset:
    """The fields of ``self`` that the methods of ``cls`` read, other than the method
    ``mutator`` and the methods it calls on ``self`` (its own ``self.v += ...`` reads ``v``
    to change it); cached per class while the methods' code is the same."""
    methods = _methods(cls)
    codes = tuple(f.__code__ for f in methods)
    per_mutator = _READS.setdefault(cls, {})  # (one entry per mutator: calls alternate)
    cached = per_mutator.get(mutator)
    if cached is not None and cached[0] == codes:
        return cached[1]
    excluded = _reachable(cls, mutator)
    found = set()
    for fn in methods:
        read = None if fn in excluded else _method_tree(fn)
        if read is None:
            continue
        tree, me = read
        for node in walk(tree):
            if (
                isinstance(node, gast.Attribute)
                and isinstance(node.ctx, gast.Load)
                and isinstance(node.value, gast.Name)
                and node.value.id == me
            ):
                found.add(node.attr)
    reads = frozenset(found)
    per_mutator[mutator] = (codes, reads)
    return reads


def _methods(cls) -> list:
    """The Python functions of ``cls`` and its user bases (not ``object``'s)."""
    out, seen = [], set()
    for klass in cls.__mro__[:-1]:
        for name, value in vars(klass).items():
            if isinstance(value, types.FunctionType) and name not in seen:
                seen.add(name)
                out.append(value)
    return out


def _reachable(cls, name: str) -> set:
    """The method ``name`` of ``cls`` and the methods it calls on ``self``, transitively."""
    out, todo = set(), [name]
    while todo:
        fn = getattr(cls, todo.pop(), None)
        if not isinstance(fn, types.FunctionType) or fn in out:
            continue
        out.add(fn)
        read = _method_tree(fn)
        if read is not None:
            todo.extend(_written_fields(*read)[1])
    return out


def _method_tree(fn):
    """``(definition, name of its first parameter)`` of the method ``fn``, or None (no
    source, or no parameter to be ``self``)."""
    try:
        tree = load_source(fn).tree
    except (PullbackError, OSError, TypeError):
        return None
    return (tree, tree.args.args[0].id) if tree.args.args else None


_READS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def inplace_snapshot(obj, name: str, read=()):
    """Before ``obj.name(...)`` runs natively: ``(obj, method, [(field, array, copy)])``
    of the array fields the method may change in place and that the differentiated code
    may have read (``read``: the attributes the calling function reads itself; and what
    the other methods of the class read), or None (nothing to watch)."""
    method = getattr(type(obj), name, None)
    if not isinstance(method, types.FunctionType):
        return None  # (a method of a class written in C: no source to read)
    fields = inplace_fields(method)
    if not fields:
        return None
    others = read_fields(type(obj), name)
    fields = [f for f in fields if f in read or f in others]
    watched = []
    for field in fields:
        value = getattr(obj, field, None)
        if type(value) is np.ndarray:
            watched.append((field, value, value.copy()))
    return (obj, method, watched) if watched else None


def _changed(snapshot):
    """``(field, references to its array)`` of each watched array that is still the
    field's and was changed in place."""
    obj, _, watched = snapshot
    for field, array, before in watched:
        if getattr(obj, field, None) is not array:
            continue  # rebound: the old array, which a pullback may hold, is intact
        if not np.array_equal(array, before, equal_nan=True):
            yield field, sys.getrefcount(array)


def _own_references() -> int:
    """The references to a changed field's array that :func:`_changed` itself sees when
    only the object holds it (the field, the snapshot's entry, the loop's name,
    getrefcount's argument: counted, not assumed, as interpreters count differently)."""

    class Holder:
        pass

    holder = Holder()
    holder.v = np.zeros(1)
    snapshot = (holder, None, [("v", holder.v, np.ones(1))])
    return next(_changed(snapshot))[1]


_OWN_REFERENCES = _own_references()


def inplace_verify(snapshot, where: str) -> None:
    """After the call: refuse if an array :func:`inplace_snapshot` watched is still the
    field's, was changed, and is held by something besides the object (what a pullback
    keeps, or a view of it): the backward sweep would read the changed values."""
    if snapshot is None:
        return
    obj, method = snapshot[0], snapshot[1]
    for field, references in _changed(snapshot):
        if references <= _OWN_REFERENCES:
            continue  # only the object holds it: no pullback reads it
        cls = type(obj).__name__
        raise NotDifferentiableError(
            f"{where}: {cls}.{method.__name__}() changed the array in the field '{field}' "
            "of its object in place, after the differentiated code read it (the call "
            "carries no gradient and runs as written): the backward sweep keeps that array "
            "and would read the changed values, a gradient of another function.\n"
            f"Fix: in {cls}.{method.__name__}, bind the field to a new array instead "
            f"(`self.{field} = self.{field} + ...` for `self.{field} += ...`), or make the "
            "call after the gradient is computed."
        )


__all__ = ["inplace_fields", "inplace_snapshot", "inplace_verify", "read_fields"]
