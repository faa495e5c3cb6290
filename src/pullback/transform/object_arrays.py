"""Array fields of an owned object written in place (``self.buf[i] = v`` in a method called
in a loop, ``s.state[:, k] = x`` in the function): where no one but the object can reach
the array, the write is the store of a written copy (transform/object_rewrite.py)::

    self.buf[i] = v   ->  _pb_array_buf_1 = self.buf.copy(); _pb_array_buf_1[i] = v
                          self = _pb_set_field(self, 'buf', _pb_array_buf_1, ...)

a new version of the object holding a local array (written in place as any local array
is), so the object's versions keep their own arrays. Python changes the one array in
place; the two agree exactly when nothing else holds that array. :func:`private_arrays`
proves that from the source of the class (every method, ``__init__`` included) and of the
function: each store of the field is a fresh array (``np.zeros(n)``, ``np.array(x)``,
``x.copy()``, ...), and each read of it makes a new value at once (an operand of
arithmetic or a comparison, an item or slice read so used, the argument of a ufunc or a
reduction, a ``.copy()``), so no name, container or view ever holds the array. Any other field
written in place stays refused when it runs (PB101, containers_mutation.py), with the
copy-and-store form as the fix.
"""

from __future__ import annotations

import types

import gast
import numpy as np

from ..errors import PullbackError
from ..resolve import parent_map
from ..source import load_source
from ..tree_walk import walk

# calls that return a new array (the ``*_like`` forms copy no data either)
_FRESH = frozenset(
    {
        np.zeros,
        np.ones,
        np.empty,
        np.full,
        np.zeros_like,
        np.ones_like,
        np.empty_like,
        np.full_like,
        np.array,
        np.eye,
        np.identity,
        np.arange,
        np.linspace,
    }
)
# calls whose result holds none of their argument's memory
_CONSUMING = frozenset(
    {np.sum, np.mean, np.prod, np.max, np.min, np.dot, np.vdot, np.linalg.norm, np.trace}
)
_VALUE_MAKERS = (gast.BinOp, gast.UnaryOp, gast.Compare)


def _resolved(fn_globals, node):
    """The object ``np.zeros`` (a dotted chain read in ``fn_globals``) names, or None."""
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name) or node.id not in fn_globals:
        return None
    value = fn_globals[node.id]
    for attr in reversed(parts):
        value = getattr(value, attr, None)
    return value


def _fresh(value, fn_globals) -> bool:
    if not isinstance(value, gast.Call):
        return False
    func = value.func
    if isinstance(func, gast.Attribute) and func.attr == "copy" and not value.args:
        return not value.keywords
    made = _resolved(fn_globals, func)
    if made is np.array and any(k.arg == "copy" for k in value.keywords):
        return False
    return any(made is f for f in _FRESH)


def _use_ok(read, parents, fn_globals) -> bool:
    """Whether the read ``recv.attr`` (``read``) makes a new value at once, or is the
    array a subscript store writes into."""
    up = parents.get(read)
    if isinstance(up, gast.Subscript) and up.value is read:
        if not isinstance(up.ctx, gast.Load):
            return isinstance(up.ctx, gast.Store)  # (the write rewritten; del refused)
        read, up = up, parents.get(up)  # an item or slice: a view unless used at once
    if isinstance(up, _VALUE_MAKERS):
        return True
    if isinstance(up, gast.Attribute) and up.attr == "copy":
        call = parents.get(up)
        return isinstance(call, gast.Call) and call.func is up and not call.args
    if isinstance(up, gast.Call) and read in up.args and not up.keywords:
        made = _resolved(fn_globals, up.func)  # (a ufunc without out=: a new array)
        return isinstance(made, np.ufunc) or any(made is f for f in _CONSUMING)
    return False


def _written(node, up) -> bool:
    return isinstance(up, gast.Subscript) and up.value is node and isinstance(up.ctx, gast.Store)


def _array_use_ok(read, parents, fn_globals, me) -> bool:
    return _use_ok(read, parents, fn_globals)


def _scan(tree, me: str, changed: set, fn_globals, verdicts: dict, form) -> None:
    """Note in ``verdicts`` (attr -> still private) what ``tree`` does with ``me.attr``,
    and in ``changed`` the fields it changes in place; ``form``: ``(changes, fresh,
    use_ok)``, the tests of an array field's or a list field's."""
    changes, fresh, use_ok = form
    parents = parent_map(tree)
    for node in walk(tree):
        if not (
            isinstance(node, gast.Attribute)
            and isinstance(node.value, gast.Name)
            and node.value.id == me
        ):
            continue
        name = node.attr
        up = parents.get(node)
        if changes(node, up):
            changed.add(name)
        if isinstance(node.ctx, gast.Store):
            ok = isinstance(up, gast.Assign) and up.targets == [node]
            verdicts[name] = verdicts.get(name, True) and ok and fresh(up.value, fn_globals)
        elif isinstance(node.ctx, gast.Load):
            ok = use_ok(node, parents, fn_globals, me)
            verdicts[name] = verdicts.get(name, True) and ok
        else:
            verdicts[name] = False


def private_arrays(cls, fields, tree, me: str, fn_globals) -> frozenset:
    """The fields of ``cls`` written in place (by the function ``tree``, where the object is
    ``me``, or by a method) that only the object reaches (see the module docstring); the
    empty set when a method's source cannot be read."""
    return _private(cls, fields, tree, me, fn_globals, (_written, _fresh, _array_use_ok))


def _private(cls, fields, tree, me: str, fn_globals, form) -> frozenset:
    """The fields changed in place whose every use passes ``form``'s tests (:func:`_scan`),
    in the function ``tree`` and every method of ``cls`` (a property's getter, static and
    class methods too); the empty set when a method's source cannot be read."""
    verdicts: dict = {}
    changed: set = set()
    _scan(tree, me, changed, fn_globals, verdicts, form)
    for c in cls.__mro__[:-1]:
        for raw in c.__dict__.values():
            fn = raw.fget if isinstance(raw, property) else raw
            if isinstance(fn, (staticmethod, classmethod)):
                fn = fn.__func__
            if not isinstance(fn, types.FunctionType):
                continue
            try:
                method = load_source(fn).tree
            except PullbackError:
                return frozenset()
            params = method.args.posonlyargs + method.args.args
            if params:
                _scan(method, params[0].id, changed, fn.__globals__, verdicts, form)
    return frozenset(n for n in changed if n in fields and verdicts.get(n, False))


# Lists kept on an owned object and grown by its methods (``self.layers.append(layer)``,
# ``self.history.append(loss)``) are made versions the same way: ``me.a.append(v)`` is the
# store of a grown copy, ``t = me.a + []; t.append(v); me.a = t``. Python grows the one
# list; the two agree exactly when nothing else holds it, which :func:`private_lists`
# proves as :func:`private_arrays` does: each store of the field is a new list (a display,
# a comprehension, ``list(...)``), and each read of it is the receiver of ``append`` or
# ``extend`` as a statement of its own, an item or slice read (a list's items are not
# changed by growing it), ``len``, a reduction or array maker that keeps no reference to the
# list, or the iterable of a ``for`` loop that grows no list of the object while it runs.
_GROW = frozenset({"append", "extend"})
_LIST_READERS = frozenset(
    {
        len,
        sum,
        min,
        max,
        np.array,
        np.asarray,
        np.stack,
        np.vstack,
        np.hstack,
        np.concatenate,
        np.mean,
        np.sum,
        np.prod,
        np.max,
        np.min,
    }
)


def _fresh_list(value, fn_globals) -> bool:
    if isinstance(value, (gast.List, gast.ListComp)):
        return True
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Name):
        return value.func.id == "list" and "list" not in fn_globals and not value.keywords
    return False


def _grows(tree, me: str) -> bool:
    """Whether ``tree`` grows a list of ``me`` (``me.a.append(v)``) or calls a method
    of it (which may)."""
    for node in walk(tree):
        if (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Attribute)
            and (
                isinstance(node.func.value, gast.Attribute)
                and isinstance(node.func.value.value, gast.Name)
                and node.func.value.value.id == me
                and node.func.attr in _GROW
                or isinstance(node.func.value, gast.Name)
                and node.func.value.id == me
            )
        ):
            return True
    return False


def _grown(node, up) -> bool:
    return isinstance(up, gast.Attribute) and up.attr in _GROW and up.value is node


def _list_use_ok(read, parents, fn_globals, me: str) -> bool:
    up = parents.get(read)
    if isinstance(up, gast.Subscript) and up.value is read:
        return isinstance(up.ctx, gast.Load)
    if isinstance(up, gast.Attribute) and up.attr in _GROW:
        call = parents.get(up)
        return (
            isinstance(call, gast.Call)
            and call.func is up
            and isinstance(parents.get(call), gast.Expr)
        )
    if isinstance(up, (gast.If, gast.While, gast.IfExp)) and up.test is read:
        return True  # `if self.layers:`: its truth, no reference kept
    if isinstance(up, gast.BoolOp) or isinstance(up, gast.UnaryOp) and isinstance(up.op, gast.Not):
        return isinstance(parents.get(up), (gast.If, gast.While, gast.IfExp))
    if isinstance(up, gast.For) and up.iter is read:
        return not any(_grows(s, me) for s in up.body + up.orelse)
    if isinstance(up, gast.Call) and read in up.args and not up.keywords:
        made = up.func.id if isinstance(up.func, gast.Name) else None
        builtin = {"len": len, "sum": sum, "min": min, "max": max}.get(made)
        if builtin is not None and made not in fn_globals:
            return True
        return any(_resolved(fn_globals, up.func) is f for f in _LIST_READERS)
    return False


def private_lists(cls, fields, tree, me: str, fn_globals) -> frozenset:
    """The fields of ``cls`` grown by ``append``/``extend`` (by the function ``tree``, where
    the object is ``me``, or by a method) that only the object reaches (see above); the
    empty set when a method's source cannot be read."""
    return _private(cls, fields, tree, me, fn_globals, (_grown, _fresh_list, _list_use_ok))
