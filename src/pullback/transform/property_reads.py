"""Property reads of objects whose class is known before running, as calls of the getter;
subscripts of such objects as calls of the class's ``__getitem__`` (the fast path of the
operators' run-time dispatch).

``self.kinetic`` in a method of ``Particle``, or ``p.kinetic`` after ``p = Particle(...)``,
where ``Particle.kinetic`` is a ``property`` whose getter is a Python function, is what
Python runs: ``Particle.kinetic.fget(self)``. Written as that call (the getter bound to a
fresh name in the function's namespace), it is differentiated as any user function, with
the object carrying the gradient, in every mode; a field read could only refuse it.

Only where the class is certain: ``self`` of a method (``receiver_classes.method_class``)
when no subclass of that class defines the name again, a local bound once by a call of
the class, or the call itself (``Particle(m, v).kinetic``). Any other property read stays
an attribute read (refused where a gradient flows through it, PB501). What a rewrite
bakes in is guarded (``fs.property_guards``, guards.current_property): a subclass defined
later that overrides the property, or another property given to the class, makes the
adjoint be built again.

A ``functools.cached_property`` of a class known so is read the same way, as a call of its
function, where the object is one the function makes and only reads (``C(x).sq``, or
``c = C(x)`` whose every use is an attribute read): the primal's first read computes the
value and later reads reuse it, computed from the same unchanged object, so each read's
call is that value, differentiated through the first computation's inputs (the object's
fields). Other receivers stay attribute reads (PB501).

``g[i]`` of an object whose class's ``__getitem__`` is a Python function (a grid, a table,
a dataset) runs that method: the operators' run-time dispatch (``transform/dunder_operators.py``,
``operator_dispatch.py``) finds it when the code runs, for any object a call made or a
parameter holds. Where the class is known here, before running, the subscript is written as
the call Python makes, ``Grid.__getitem__(g, i)`` (slices as ``slice(...)``, guarded as a
property is), differentiated like the getter: the same method, without the dispatch's
look-up on every call (a loop of ``d[k]`` costs half as much). The class's method is chosen
by the dispatch's own test (``operator_dispatch.own_class_method``).

``sum(v)`` (``max(v)``, ``min(v)``, ``sorted(v)``) of a value that may be an object whose
class has a Python ``__iter__`` (a name that may hold one, or a field, ``h.v``, of what a
parameter holds) is written ``sum(list(v))``, whose ``list(v)`` the dispatch runs through
the class's ``__iter__`` (``object_items.py``).
"""

from __future__ import annotations

import builtins
import functools
import re
import types

import gast
import numpy as np

from ..dynamic_attrs import read_attribute_or_property
from ..guards import current_property
from ..operator_dispatch import own_class_method
from ..receiver_classes import module_class_with, module_class_with_property
from ..resolve import bindings_fixed, local_names, may_hold_method, receiver_class
from ..tree_walk import walk


def _property(cls, name: str):
    if not isinstance(cls, type):
        return None
    raw = current_property(cls, name)
    if not isinstance(raw, property) or not isinstance(raw.fget, types.FunctionType):
        return None
    return raw


def _cached_property(cls, name: str):
    """``cls.name`` when it is a ``functools.cached_property`` with a Python getter that
    every object of ``cls`` runs (no subclass defines ``name`` again), else None."""
    if not isinstance(cls, type):
        return None
    raw = current_property(cls, name)
    if not isinstance(raw, functools.cached_property) or not isinstance(
        raw.func, types.FunctionType
    ):
        return None
    return raw


def _only_read(tree, value, params) -> bool:
    """Whether the receiver ``value`` of a cached property read is an object no statement
    of the function changes or hands on before it is read: the call that makes it
    (``C(x).sq``), or a local that is no parameter, bound once, whose every other use is
    an attribute read (``c = C(x); c.sq + c.w``). Every read of the property then finds
    the cache as the first one left it, holding the getter's value of the same object:
    the getter's call is what each read is."""
    if isinstance(value, gast.Call):
        return True
    if not isinstance(value, gast.Name) or any(p.id == value.id for p in params):
        return False
    parents = {}
    for node in walk(tree):
        for child in gast.iter_child_nodes(node):
            parents[child] = node
    stores = 0
    for node in walk(tree):
        if not (isinstance(node, gast.Name) and node.id == value.id):
            continue
        if not isinstance(node.ctx, gast.Load):
            stores += 1
            continue
        parent = parents.get(node)
        if not (isinstance(parent, gast.Attribute) and isinstance(parent.ctx, gast.Load)):
            return False
        grand = parents.get(parent)
        if isinstance(grand, gast.Call) and grand.func is parent:
            return False  # a method call may change it
    return stores == 1


def _made_class(fs, call, locals_):
    """The class ``call`` makes, ``C(...)`` with ``C`` a global or closure name bound to a
    class (its binding is guarded as every resolved name), or None."""
    func = call.func
    if not isinstance(func, gast.Name) or func.id in locals_:
        return None
    found, value = fs.lookup(func.id)
    return value if found and isinstance(value, type) else None


def read_properties_as_calls(fs, nodes=None, local=None) -> bool:
    """Rewrite ``obj.name`` (a property of a known class) in ``fs.tree`` as a call of its
    getter, ``obj[key]`` (a known class with a Python ``__getitem__``) as a call of that
    method, and ``sum(v)`` of a value that may be an object with a Python ``__iter__`` as
    ``sum(list(v))`` (``max``, ``min``, ``sorted`` too); returns whether anything changed
    (``nodes``: the tree's nodes when the caller walked it, ``local``: their
    ``local_names`` then, read only)."""
    tree = fs.tree
    if nodes is None:
        nodes, local = list(walk(tree)), None
    params = tree.args.posonlyargs + tree.args.args
    locals_ = local if local is not None else None
    classes = {}  # receiver name -> its class known before running (or None)
    found = {}

    def local_set():
        nonlocal locals_
        if locals_ is None:
            locals_ = local_names(tree, nodes)
        return locals_

    def class_of(value):
        local_set()
        if isinstance(value, gast.Call):  # Particle(m, v).kinetic
            return _made_class(fs, value, locals_)
        if not isinstance(value, gast.Name):
            return None
        receiver = value.id
        if receiver not in classes:
            known = bool(params) and params[0].id == receiver or receiver in locals_
            classes[receiver] = receiver_class(fs, value, locals_) if known else None
        return classes[receiver]

    methods = set()  # the methods called (`m.go()`): a call of the method, not a read
    with bindings_fixed(fs):  # (this walk only reads the tree)
        for node in nodes:
            if node.__class__ is gast.Call:
                methods.add(id(node.func))
            if node.__class__ is gast.Call and _sums_an_object(fs, node, local_set):
                found[id(node)] = _OVER_ITEMS
                continue
            if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Load):
                cls = class_of(node.value)
                method = _item_method(cls) if cls is not None else None
                if method is not None:
                    found[id(node)] = method
                    fs.property_guards[(cls, "__getitem__")] = method
                continue
            if not (
                isinstance(node, gast.Attribute)
                and isinstance(node.ctx, gast.Load)
                and not node.attr.startswith("__")
            ):
                continue
            cls = class_of(node.value)
            prop = _property(cls, node.attr) if cls is not None else None
            cached = _cached_property(cls, node.attr) if cls is not None else None
            if cached is not None and _only_read(tree, node.value, params):
                found[id(node)] = cached.func  # (functools.cached_property: see the docstring)
                fs.property_guards[(cls, node.attr)] = cached
            elif prop is not None:
                found[id(node)] = prop.fget
                # what the adjoint bakes in: guarded (a subclass defined later may
                # override the property, or the class may be given another one)
                fs.property_guards[(cls, node.attr)] = prop
            elif cls is None and id(node) not in methods and _maybe_property(fs, node, local_set):
                found[id(node)] = read_attribute_or_property
    if not found:
        return False
    names = {}

    def called(node, fn, args):
        if id(fn) not in names:
            # (a lambda getter's qualname holds `<locals>.<lambda>`: no identifier)
            name = re.sub(r"\W", "_", f"{fn.__qualname__}_getter")
            while name in locals_ or name in fs.namespace:
                name += "_"
            fs.namespace[name] = fn
            names[id(fn)] = name
        func = gast.Name(names[id(fn)], gast.Load(), None, None)
        if isinstance(node.value, gast.Call):
            receiver = node.value  # the object made there, once
        else:
            receiver = gast.Name(node.value.id, gast.Load(), None, None)
        call = gast.Call(func=func, args=[receiver, *args], keywords=[])
        for n in walk(call):  # (made nodes take the place of what they replace)
            if "lineno" in n._attributes and getattr(n, "lineno", None) is None:
                gast.copy_location(n, node)
        return call

    class Rewrite(gast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            if found.get(id(node)) is _OVER_ITEMS:  # sum(v): sum(list(v)), v's own items
                fs.namespace["_pb_list"] = list
                func = gast.Name("_pb_list", gast.Load(), None, None)
                listed = gast.Call(func, [node.args[0]], [])
                for n in (listed, listed.func):
                    gast.copy_location(n, node.args[0])
                node.args[0] = listed
            return node

        def visit_Attribute(self, node):
            self.generic_visit(node)
            fget = found.get(id(node))
            if fget is read_attribute_or_property:  # `h.first` of a class known when it runs
                return called(node, fget, [gast.Constant(node.attr, None)])
            return node if fget is None else called(node, fget, [])

        def visit_Subscript(self, node):
            self.generic_visit(node)
            method = found.get(id(node))
            return node if method is None else called(node, method, [_key(node.slice)])

    Rewrite().visit(fs.tree)
    return True


# The builtins that go over an iterable's items (one positional argument; a start value
# for sum): over an object with its own __iter__ they take list(v), its items.
_OVER_ITEMS = (builtins.sum, builtins.max, builtins.min, builtins.sorted)


def _sums_an_object(fs, call, local_set) -> bool:
    """``sum(v)`` (a start value too; ``max(v)``, ``min(v)``, ``sorted(v)``, their keywords
    too) with ``v`` maybe an object of a user's class with a Python ``__iter__``: taken
    over ``list(v)``, whose items the run-time dispatch reads through that method
    (object_items.py); the builtin's own pullback would take the items' cotangents for
    the object's fields. ``max(a, b)`` compares its arguments: left as it is."""
    func = call.func
    if not (isinstance(func, gast.Name) and call.args):
        return False
    if isinstance(call.args[0], gast.Starred):
        return False
    if func.id == "sum":
        if len(call.args) > 2 or call.keywords:
            return False
    elif func.id not in ("max", "min", "sorted") or len(call.args) > 1:
        return False
    locals_ = local_set()
    if func.id in locals_:
        return False
    found, value = fs.lookup(func.id)
    if not (found and value is getattr(builtins, func.id)):
        return False
    arg = call.args[0]
    if isinstance(arg, gast.Attribute):  # `sum(h.v)`: a field may hold such an object
        return module_class_with(fs, "__iter__")
    return may_hold_method(fs, arg, "__iter__", locals_)


def _maybe_property(fs, node, local_set) -> bool:
    """``p.name`` (a read) of a local name whose class is known only when it runs (a
    parameter, ``m.first``, or a name bound to a field or an item of one), where a class
    of the module has a property ``name`` with a Python getter."""
    if not (isinstance(node.value, gast.Name) and node.value.id in local_set()):
        return False
    if hasattr(np.ndarray, node.attr):  # `x.shape`, `x.T`: an array's, as they were read
        return False
    return module_class_with_property(fs, node.attr)


def _item_method(cls):
    """``cls.__getitem__`` when the dispatch would run it (a Python function of a user
    class) and the class is no list, tuple or dict subclass (whose indexing is left to
    the dispatch when it runs), else None."""
    if not isinstance(cls, type) or issubclass(cls, (list, tuple, dict)):
        return None
    if not own_class_method(cls, "__getitem__"):
        return None
    method = current_property(cls, "__getitem__")
    return method if isinstance(method, types.FunctionType) else None


def _key(node):
    """An index expression as a value: slices written as ``slice(...)`` calls."""
    if isinstance(node, gast.Slice):
        parts = [
            p if p is not None else gast.Constant(None, None)
            for p in (node.lower, node.upper, node.step)
        ]
        return gast.Call(gast.Name("slice", gast.Load(), None, None), parts, [])
    if isinstance(node, gast.Tuple):
        return gast.Tuple([_key(e) for e in node.elts], gast.Load())
    return node
