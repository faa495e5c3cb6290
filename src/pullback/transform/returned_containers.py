"""A list or dict a user function builds and returns, as its caller's own.

``loss, grads = model.loss(X, y)`` then ``grads[k] = grads[k] + reg * W``: the caller may
change ``grads`` as a local dict (its changes rewritten as rebindings,
:mod:`pullback.transform.list_mutation`) when the callee made it itself and nothing but the
result holds it: in the callee, every ``return`` gives, at that position, a name that is a
local container of the callee (a display, ``{}`` filled in, a comprehension:
:class:`~.list_analysis.ContainerAnalysis`) whose only uses that could keep it are the
returns themselves, or a display itself (``return {"W1": w1, "W2": w2}``). A return of
another shape must be one that cannot be a tuple holding a
container (a number, arithmetic, a NumPy call that makes a new array, a name bound only to
those): ``if y is None: return scores`` beside ``return loss, grads``. (Before, the caller
had to copy it: ``grads = dict(grads)``.)

The callee is the one the call reaches before running: a global function, a global
object's method, or a method of an object of a user class the caller makes
(``model = TwoLayerNet(p)``, ``TwoLayerNet(p).loss(X, y)``); the method is guarded, so a
class whose method is replaced later builds the gradient again. ``self.loss(X, y)`` (a
subclass may override it) and calls found only at run time are not followed.

>>> import gast
>>> tree = gast.parse('''
... def f(x):
...     g = {}
...     g["w"] = 2.0 * x
...     return x, g
... ''').body[0]
>>> _returned_kind(tree, {"x", "g"}, 1, 2, None)
'dict'
"""

from __future__ import annotations

import functools
import inspect
import types

import gast

from ..check.argument_reads import _nested, bound_names
from ..guards import is_library_module_name
from ..resolve import _first_call, dotted_parts, receiver_class, resolve_call, resolve_expr
from ..source import load_source
from ..tree_walk import parent_map, walk

_ARITHMETIC = (gast.Constant, gast.BinOp, gast.UnaryOp, gast.Compare)
_DISPLAYS = (gast.Dict, gast.DictComp, gast.List, gast.ListComp)


def returned_container(fs, call, locals_, index=None, count=None, *, analysis, prove):
    """``(kind, own arrays)`` when ``call``'s result (``index``: its item at that position
    of a tuple of ``count`` items the caller unpacks) is a container the callee made and
    holds nowhere else (see the module docstring): ``kind`` "list" or "dict", ``own
    arrays`` whether every array in it is new and held by nothing else in the callee
    (check/held_arrays.py, no read keeping one at all); else None. ``analysis``: the
    container analysis (list_analysis.ContainerAnalysis) run on the callee; ``prove(fs,
    names)``: the checker's proof that the arrays in the callee's containers ``names`` are
    its own (pullback.check.returned_items_own). Both are passed in by the analysis that
    asks, which this module may not import (it imports this one)."""
    fn, chain = _callee(fs, call, locals_)
    if fn is None:
        return None
    found = _analysed(fn, fn.__code__, index, count, analysis, prove)
    if found is not None and chain is not None:
        chains = getattr(fs, "resolved_chains", None)
        if chains is None:
            return None
        chains[chain[0]] = chain[1]  # a method replaced later builds the gradient again
    return found


def _callee(fs, call, locals_):
    """``(the user function call reaches, (chain, value) to guard or None)``, or
    ``(None, None)``."""
    callee = resolve_call(fs, call, locals_)
    if callee.kind == "object":
        obj = callee.obj
        if isinstance(obj, types.MethodType) and not isinstance(obj.__self__, type):
            obj = obj.__func__  # MODEL.loss(x): the chain MODEL.loss is guarded already
        return (obj, None) if _user_function(obj) else (None, None)
    if callee.kind != "method" or not isinstance(call.func, gast.Attribute):
        return None, None
    receiver, name = call.func.value, call.func.attr
    made = None
    if isinstance(receiver, gast.Call):  # TwoLayerNet(p).loss(X, y)
        made = receiver
    elif isinstance(receiver, gast.Name):
        params = fs.tree.args.posonlyargs + fs.tree.args.args
        if params and params[0].id == receiver.id:
            return None, None  # self.loss(x): a subclass may define it otherwise
        made = _first_call(fs.tree, receiver.id)
    if made is None:
        return None, None
    parts = dotted_parts(made.func)
    found, cls = resolve_expr(fs, made.func, locals_)
    if parts is None or not found or not isinstance(cls, type):
        return None, None
    if isinstance(receiver, gast.Name) and receiver_class(fs, receiver, locals_) is not cls:
        return None, None
    method = inspect.getattr_static(cls, name, None)
    if not _user_function(method) or not _no_instance_attribute(cls, name):
        return None, None
    return method, ((*parts, name), method)


def _user_function(fn) -> bool:
    return isinstance(fn, types.FunctionType) and not is_library_module_name(
        getattr(fn, "__module__", None) or "builtins"
    )


def _no_instance_attribute(cls, name) -> bool:
    """Whether no method of ``cls`` stores an attribute ``name`` on ``self`` (which would
    hide the method on the instance)."""
    for attribute in vars(cls).values():
        code = getattr(attribute, "__code__", None)
        if code is not None and name in code.co_names:
            try:
                tree = load_source(attribute).tree
            except Exception:  # noqa: BLE001 - no source: it may store anything
                return False
            if any(
                isinstance(n, gast.Attribute) and n.attr == name and isinstance(n.ctx, gast.Store)
                for n in walk(tree)
            ):
                return False
    return True


@functools.lru_cache(maxsize=256)
def _analysed(fn, code, index, count, analysis, prove) -> str | None:
    """(``code``: ``fn``'s, so that a function whose code is replaced is read again.)"""
    try:
        fs = load_source(fn)
    except Exception:  # noqa: BLE001 - no source: nothing is known of its result
        return None
    tree = fs.tree
    if not isinstance(tree, gast.FunctionDef):
        return None
    own = bound_names(tree)
    containers = analysis(fs, tree, own, follow_returns=False)  # (one level)
    names = set()
    kind = _returned_kind(tree, own, index, count, containers, names)
    if kind is None:
        return None
    return kind, prove(fs, names)


def _returned_kind(tree, own, index, count, analysis, names=None) -> str | None:
    """The kind of container every return of ``tree`` gives at ``index`` (see
    :func:`returned_container`), or None. (``analysis`` None: the name's first binding
    tells, for the doctest.)"""
    parents = parent_map(tree)
    returns = [
        n for n in walk(tree) if isinstance(n, gast.Return) and not _nested(n, tree, parents)
    ]
    found, kinds = set(), set()
    for node in returns:
        value = node.value
        if index is not None and isinstance(value, gast.Tuple):
            if len(value.elts) != count:
                return None
            others = [e for k, e in enumerate(value.elts) if k != index]
            value = value.elts[index]
            if isinstance(value, gast.Name) and any(
                isinstance(n, gast.Name) and n.id == value.id for e in others for n in walk(e)
            ):
                return None  # return h, h: the caller gets it under two names
        elif index is not None and not _never_a_tuple(value, tree):
            return None
        elif index is not None:
            continue  # `return scores`: not a tuple, which the caller's unpacking refuses
        if isinstance(value, _DISPLAYS):  # return {"W": ...}: a new one (its items unproved)
            kinds.add("dict" if isinstance(value, (gast.Dict, gast.DictComp)) else "list")
            if names is not None:
                names.add("")
            continue
        if not isinstance(value, gast.Name) or value.id not in own:
            return None
        found.add(value.id)
    if names is not None:
        names.update(found)
    for name in found:
        kinds.add(_kind(name, tree, analysis))
        if analysis is not None and not _returned_only(name, analysis, parents):
            return None
    if len(kinds) != 1:
        return None
    kind = kinds.pop()
    return kind if kind in ("list", "dict") else None


def _kind(name, tree, analysis):
    if analysis is not None:
        return analysis.kind(name)
    for n in walk(tree):
        if isinstance(n, gast.Assign) and getattr(n.targets[0], "id", None) == name:
            return "dict" if isinstance(n.value, gast.Dict) else None
    return None


def _returned_only(name, analysis, parents) -> bool:
    """Whether every use of the callee's container ``name`` that could keep it is a return
    of it (``return g``, ``return loss, g``)."""
    for use in analysis.uses.get(name, ()):
        parent = parents.get(use)
        if isinstance(parent, gast.Tuple):
            parent = parents.get(parent)
        if not isinstance(parent, gast.Return):
            return False
    return True


def _never_a_tuple(value, tree) -> bool:
    """A value that is no tuple: a number, arithmetic, or a name bound only to those."""
    if isinstance(value, _ARITHMETIC):
        return True
    if not isinstance(value, gast.Name):
        return False
    bindings = [
        n
        for n in walk(tree)
        if isinstance(n, gast.Name) and n.id == value.id and not isinstance(n.ctx, gast.Load)
    ]
    for n in bindings:
        assign = next(
            (
                a
                for a in walk(tree)
                if isinstance(a, (gast.Assign, gast.AugAssign))
                and (a.targets[0] if isinstance(a, gast.Assign) else a.target) is n
            ),
            None,
        )
        if assign is None or not isinstance(assign.value, _ARITHMETIC):
            return False
    return bool(bindings)
