"""An object built around a local dict for one method call: ``TwoLayerNet(params).loss(X,
y)`` in an optimiser's loop that then changes ``params``.

The object holds ``params`` (``self.params = params``), but only for the statement that
builds it: when neither its ``__init__`` nor the method hands the object or the dict on
(``self`` appears only as ``self.<field>``, never passed, returned or stored, and no method
of it is called; the dict's field is only read item by item, iterated over for its keys,
or measured), nothing holds the dict once the statement ends. The change of ``params``
that follows is then the rebinding the container rewrite makes
(:class:`~.list_analysis.ContainerAnalysis`): the call is a read of the dict, like
``len(params)``. The class's ``__init__`` and the method are guarded (a method replaced
later builds the gradient again).

>>> import gast
>>> init = gast.parse("def __init__(self, p):\\n    self.p = p").body[0]
>>> _kept_fields(init, 1)
{'p'}
"""

from __future__ import annotations

import inspect
import types

import gast

from ..guards import is_library_module_name
from ..resolve import dotted_parts, resolve_expr
from ..source import load_source
from ..tree_walk import parent_map, walk

# Special methods that would run on the object besides __init__ and the method.
_HOOKS = ("__new__", "__setattr__", "__getattr__", "__getattribute__", "__del__")
# Reads of the dict's field that keep nothing of it: `self.p[k]`, `self.p.keys()`, ...
_READERS = frozenset({"keys", "items", "values", "get"})


def temporary_holder(fs, call, node, locals_, parents) -> bool:
    """Whether ``call`` (``C(..., node, ...)``, ``node`` a local dict or list) builds an
    object of a user class that only the method call made on it in the same expression
    uses, and that keeps ``node`` no longer (see the module docstring). ``parents``: the
    parent map of the function's tree."""
    method_call = _method_call_on(call, parents)
    if method_call is None:
        return False
    found, cls = resolve_expr(fs, call.func, locals_)
    parts = dotted_parts(call.func)
    if not found or not isinstance(cls, type) or parts is None:
        return False
    if is_library_module_name(getattr(cls, "__module__", None) or "builtins"):
        return False
    if any(inspect.getattr_static(cls, hook, None) not in (None, getattr(object, hook, None))
           for hook in _HOOKS):  # fmt: skip
        return False
    init = inspect.getattr_static(cls, "__init__", None)
    method = inspect.getattr_static(cls, method_call.func.attr, None)
    if not (isinstance(init, types.FunctionType) and isinstance(method, types.FunctionType)):
        return False
    position = _position(call, node, init)
    if position is None:
        return False
    trees = [_tree(init), _tree(method)]
    if None in trees:
        return False
    fields = _kept_fields(trees[0], position)
    if fields is None or not _self_only_fields(trees[0], cls, fields, init=True):
        return False
    if not _self_only_fields(trees[1], cls, fields):
        return False
    chains = getattr(fs, "resolved_chains", None)
    if chains is None:
        return False
    chains[(*parts, "__init__")] = init  # replaced later: the gradient is built again
    chains[(*parts, method_call.func.attr)] = method
    return True


def _method_call_on(call, parents):
    """The call ``C(...).m(...)`` of which ``call`` is the receiver, else None."""
    attribute = parents.get(call)
    outer = parents.get(attribute)
    if (
        isinstance(attribute, gast.Attribute)
        and attribute.value is call
        and isinstance(outer, gast.Call)
        and outer.func is attribute
    ):
        return outer
    return None


def _position(call, node, init):
    """The index of ``init``'s parameter that ``node`` is passed to (``self`` is 0)."""
    if any(isinstance(a, gast.Starred) for a in call.args):
        return None
    params = list(inspect.signature(init).parameters.values())
    if node in call.args:
        k = call.args.index(node) + 1
        ok = k < len(params) and params[k].kind is params[k].POSITIONAL_OR_KEYWORD
        return k if ok else None
    for keyword in call.keywords:
        if keyword.value is node:
            names = [p.name for p in params]
            return names.index(keyword.arg) if keyword.arg in names else None
    return None


def _tree(fn):
    try:
        tree = load_source(fn).tree
    except Exception:  # noqa: BLE001 - no source: it may keep anything
        return None
    return tree if isinstance(tree, gast.FunctionDef) else None


def _kept_fields(init, position):
    """The fields ``__init__`` stores its ``position``-th parameter in as it is
    (``self.params = params``), when it uses the parameter only so or by reading its
    items; else None."""
    params = init.args.posonlyargs + init.args.args
    if position >= len(params) or init.args.vararg is not None:
        return None
    name = params[position].id
    parents = parent_map(init)
    fields = set()
    for n in walk(init):
        if not (isinstance(n, gast.Name) and n.id == name) or isinstance(n.ctx, gast.Param):
            continue
        if not isinstance(n.ctx, gast.Load):
            return None  # rebound
        parent = parents.get(n)
        if (
            isinstance(parent, gast.Assign)
            and parent.value is n
            and len(parent.targets) == 1
            and isinstance(parent.targets[0], gast.Attribute)
            and isinstance(parent.targets[0].value, gast.Name)
            and parent.targets[0].value.id == params[0].id
        ):
            fields.add(parent.targets[0].attr)
        elif not _reads_items(n, parent, parents):
            return None
    return fields


def _reads_items(n, parent, parents) -> bool:
    """Whether the load ``n`` of the dict reads items or keys only."""
    if isinstance(parent, gast.Subscript) and parent.value is n:
        return isinstance(parent.ctx, gast.Load)
    if isinstance(parent, (gast.For, gast.comprehension)) and parent.iter is n:
        return True
    if isinstance(parent, gast.Compare) and n in parent.comparators:
        return True
    if isinstance(parent, gast.Attribute) and parent.attr in _READERS:
        call = parents.get(parent)
        return isinstance(call, gast.Call) and call.func is parent
    call = parent
    return (
        isinstance(call, gast.Call)
        and isinstance(call.func, gast.Name)
        and call.func.id == "len"
        and call.args == [n]
    )


def _self_only_fields(fn, cls, fields, init=False) -> bool:
    """Whether ``self`` appears in ``fn`` only as ``self.<field>``, no method or property
    of ``cls`` read through it, the ``fields`` holding the dict only read by item (and
    stored, in ``__init__``), and no function nested in ``fn`` (which could keep
    ``self``)."""
    params = fn.args.posonlyargs + fn.args.args
    if not params:
        return False
    me = params[0].id
    parents = parent_map(fn)
    for n in walk(fn):
        if n is not fn and isinstance(n, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            return False
        if isinstance(n, (gast.Global, gast.Nonlocal)):
            return False
        if not (isinstance(n, gast.Name) and n.id == me) or n is params[0]:
            continue
        if not isinstance(n.ctx, gast.Load):
            return False  # self rebound
        attribute = parents.get(n)
        if not (isinstance(attribute, gast.Attribute) and attribute.value is n):
            return False  # self passed, returned or stored
        if inspect.getattr_static(cls, attribute.attr, None) is not None:
            return False  # a method, property or class attribute: it may see self
        if attribute.attr not in fields or isinstance(attribute.ctx, gast.Store):
            continue
        if isinstance(attribute.ctx, gast.Del):
            return False
        if not _reads_items(attribute, parents.get(attribute), parents):
            return False
    return True
