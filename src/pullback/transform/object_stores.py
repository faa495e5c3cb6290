"""Stores on objects the differentiated function owns, made into versions of the object.

Python code keeps state on objects: ``s.m = s.m * 0.5 + p``, a Kalman filter's
``kf.predict()`` storing ``self.x`` and ``self.P``, an optimizer's ``self.t += 1``. Here
such a store becomes a new value of the object's name, a *version* (object_versions.py)::

    s.m = v               ->  s = _pb_set_field(s, 'm', v, 'f.py:9:5')
    s.n += 1              ->  s = _pb_set_field(s, 'n', s.n + 1, 'f.py:10:5')
    s.a, s.b = x, y       ->  _pb_value_s_1 = x; _pb_value_s_2 = y; s = _pb_set_field(...)...
    kf.predict()          ->  kf = _pb_version_predict(kf)
    r = opt.step(p, g)    ->  r, opt = _pb_version_step(opt, p, g)
    t = t + o.step(g)     ->  _pb_call_o_1, o = _pb_version_step(o, g); t = t + _pb_call_o_1
    Sec(c).run(xs)        ->  _pb_version_Sec_run(_pb_owned(Sec(c)), xs)[0]

(``o = _pb_owned(o)`` follows the call that makes ``o``.) A method that stores on
``self`` is called through a version of it, written the same way, which returns its final
``self`` too (``return e`` -> ``return (e, self)``), so that the caller's reads after the
call belong to the new version; SSA, the reverse sweep, forward mode and second
derivatives then follow the stores like any other assignment.

That is exact only when nothing else can see the object: the name is bound once, by a
call of a record class (a plain class whose ``__init__`` pullback rewrites, or a dataclass
whose constructor only stores its fields), and used only as ``o.attr`` (a field, a
constant or a property), ``o.attr = v``, ``o.attr op= v`` and ``o.method(...)`` (a Python
method of the class using ``self`` only so, as do the methods and properties it uses in
turn); no other name, container, call or nested function gets it. A method that returns
``self`` is versioned only where its result is dropped or the object was made for that
call alone. A call of a method that changes ``self`` must be a statement of its own, or
the one call of a simple statement (taken out first: that changes no order Python runs
things in). Anything else is left as written, to the refusals that already guard it (PB107
where a read would lose a gradient: transform/side_effects.py, escapes.py). Only fields
(the attributes ``__init__`` stores) become versions; another attribute is stored as
before.
"""

from __future__ import annotations

import copy
import inspect
import re
import types

import gast

from ..errors import PullbackError
from ..lazy_patterns import LazyPattern
from ..object_versions import owned
from ..plain_classes import compile_rewritten, constructor_of
from ..plain_methods import live_kind
from ..records_dataclasses import field_names, is_dataclass_class, refusal
from ..records_plain import layout
from ..resolve import (
    ARRAY_INPLACE_METHODS,
    CONTAINER_INPLACE_METHODS,
    bound_once,
    dotted_parts,
    local_names,
    parent_map,
    resolve_expr,
)
from ..source import load_source, with_source
from ..tree_walk import lean_nodes, statements, walk
from .object_arrays import private_arrays, private_lists
from .object_rewrite import StoreRewrite, located, replace_child, unpacked_display
from .side_effects import in_nested_scope

OWNED = "_pb_owned"
# methods that would change what storing or reading an attribute does
_OWN_ACCESS = ("__getattr__", "__getattribute__", "__delattr__")
_BLOCKS = ("body", "orelse", "finalbody")


def class_fields(cls):
    """The fields of ``cls``'s records (the names its ``__init__`` stores, a dataclass's
    fields), or None when a call of ``cls`` makes no record."""
    if not isinstance(cls, type):
        return None
    if is_dataclass_class(cls):
        if refusal(cls) is not None or any(
            name in c.__dict__ for c in cls.__mro__[:-1] for name in _OWN_ACCESS
        ):
            return None  # (a frozen dataclass's __setattr__ refuses as Python does)
        return field_names(cls)
    if not isinstance(constructor_of(cls), types.FunctionType):
        return None
    return layout(cls)


class _Versions:
    """The method versions one pass makes (each method once; a cycle of methods that
    change ``self`` is left as written)."""

    def __init__(self, cls, fields):
        self.cls = cls
        self.fields = frozenset(fields)
        self.made: dict = {}  # name -> (function, returns a value) or None (call as is)
        self.building: set = set()
        self.checked: dict = {}  # name -> whether the method keeps self to itself
        self.arrays = frozenset()  # fields written in place that only the object reaches
        self.lists = frozenset()  # list fields grown (append) that only the object reaches

    def of(self, name: str):
        """``(function, returns a value, returns self)`` of the version of method ``name``,
        or None when it changes no field of ``self`` or cannot be versioned (then called
        as is)."""
        if name in self.made:
            return self.made[name]
        if name in self.building:
            return None  # recursion: as written (its stores stay guarded by escapes.py)
        self.building.add(name)
        try:
            made = self._build(name)
        finally:
            self.building.discard(name)
        self.made[name] = made
        return made

    def _build(self, name: str):
        meth = inspect.getattr_static(self.cls, name, None)
        if not isinstance(meth, types.FunctionType):
            return None
        try:
            fs = load_source(meth)
        except PullbackError:
            return None
        tree = copy.deepcopy(fs.tree)
        params = tree.args.posonlyargs + tree.args.args
        if not params or "__class__" in meth.__code__.co_freevars or _suspends(tree):
            return None  # no self, or super(): another method runs on self unseen
        me = params[0].id
        if not _owned_uses(tree, me, self.cls, skip=None, method=True, versions=self):
            return None
        itself = any(isinstance(n, gast.Return) and _is_name(n.value, me) for n in walk(tree))
        returns = any(
            isinstance(n, gast.Return)
            and n.value is not None
            and not (isinstance(n.value, gast.Constant) and n.value.value is None)
            for n in walk(tree)
        )
        rewrite = StoreRewrite(fs, me, self, returns=returns)
        if not rewrite.block(tree.body) or not rewrite.changed:
            return None
        if not (tree.body and isinstance(tree.body[-1], gast.Return)):
            tree.body.append(located(rewrite.returned(None), tree.body[-1]))
        return _compile(fs, tree, meth, rewrite.helpers), returns, itself

    def keeps_self(self, name: str) -> bool:
        """Whether the method or property ``name`` uses ``self`` only as the object's
        own code may (:func:`_owned_uses`), and so do the methods it calls: called as it
        is, it gives no other name the object (whose versions would leave that name
        behind). A method that changes ``self`` may return it (its caller drops it or
        holds the object made for the call alone)."""
        if name not in self.checked:
            self.checked[name] = False  # (a method calling itself: not followed)
            self.checked[name] = self._keeps_self(name)
        return self.checked[name]

    def _keeps_self(self, name: str) -> bool:
        raw = inspect.getattr_static(self.cls, name, None)
        fn = raw.fget if isinstance(raw, property) else raw
        if not isinstance(fn, types.FunctionType) or "__class__" in fn.__code__.co_freevars:
            return False
        try:
            tree = load_source(fn).tree
        except PullbackError:
            return False
        params = tree.args.posonlyargs + tree.args.args
        if not params or _suspends(tree):
            return False
        versioned = not isinstance(raw, property) and self.of(name) is not None
        return _owned_uses(tree, params[0].id, self.cls, None, method=versioned, versions=self)


def _suspends(tree) -> bool:
    """Whether the function ``tree`` is a generator or a coroutine: it would hold ``self``
    while it waits, reading the version it was called with after newer ones are made."""
    return isinstance(tree, gast.AsyncFunctionDef) or any(
        isinstance(n, (gast.Yield, gast.YieldFrom, gast.Await)) for n in walk(tree)
    )


def _changed_in_place(grand, read, parents) -> bool:
    """Whether ``read`` (``me.attr``, under ``grand``) is changed in place: an item or
    slice stored or deleted (``me.a[k] = v``) or a method of it that changes its receiver
    called (``me.a.append(v)``). A version is a shallow copy: each would see the change."""
    if isinstance(grand, gast.Subscript) and grand.value is read:
        return not isinstance(grand.ctx, gast.Load)
    if isinstance(grand, gast.Attribute) and grand.value is read:
        call = parents.get(grand)
        names = ARRAY_INPLACE_METHODS | CONTAINER_INPLACE_METHODS
        return isinstance(call, gast.Call) and call.func is grand and grand.attr in names
    return False


def _is_name(node, name) -> bool:
    return isinstance(node, gast.Name) and node.id == name


def _owned_uses(tree, me: str, cls, skip, method=False, versions=None) -> bool:
    """Whether every use of the name ``me`` in ``tree`` is ``me.attr`` read (a field or
    constant, not a method handed on), stored (``me.attr = v``, ``me.attr op= v``) or
    called as a Python method of ``cls``, or, in a ``method``, returned (``return self``,
    which the caller may only drop or take from an object made for the call);
    ``skip``: the one binding allowed; ``versions``: the methods and properties used are
    checked so too (:meth:`_Versions.keeps_self`)."""
    parents = parent_map(tree)
    for node in walk(tree):
        if isinstance(node, gast.Name) and node.id in ("super", "__class__"):
            return False
        if not (isinstance(node, gast.Name) and node.id == me) or node is skip:
            continue
        if isinstance(node.ctx, gast.Param) and parents.get(parents.get(node)) is tree:
            continue
        if not isinstance(node.ctx, gast.Load) or in_nested_scope(node, tree, parents):
            return False
        parent = parents.get(node)
        if method and isinstance(parent, gast.Return) and parent.value is node:
            continue
        if not (isinstance(parent, gast.Attribute) and parent.value is node):
            return False
        if parent.attr.startswith("__"):
            return False
        grand = parents.get(parent)
        kind = live_kind(cls, parent.attr)
        if isinstance(parent.ctx, gast.Del):
            return False
        if isinstance(parent.ctx, gast.Store):
            if kind is None and (
                isinstance(grand, gast.AugAssign)
                or isinstance(grand, gast.Assign)
                and any(t is parent for t in grand.targets)
                or unpacked_display(grand, parents)
            ):
                continue
            return False
        if (
            versions is not None
            and parent.attr in versions.arrays
            and isinstance(grand, gast.Subscript)
            and isinstance(grand.ctx, gast.Store)
        ):
            continue  # written into a copy stored as a version (transform/object_arrays.py)
        if (
            versions is not None
            and parent.attr in versions.lists
            and isinstance(grand, gast.Attribute)
            and grand.attr in ("append", "extend")
        ):
            continue  # grown into a copy stored as a version (transform/object_arrays.py)
        if _changed_in_place(grand, parent, parents):
            return False  # a container or array held by every version alike
        if isinstance(grand, gast.Call) and grand.func is parent and kind is None:
            continue  # a field holding a callable (`self.activation(z)`): a read, then a call
        if isinstance(grand, gast.Call) and grand.func is parent:
            if kind != "method" or versions is not None and not versions.keeps_self(parent.attr):
                return False
            continue
        if kind == "property" and versions is not None and not versions.keeps_self(parent.attr):
            return False
        if kind not in (None, "other", "property"):
            return False  # a method handed on (holds self)
        # (a property's getter runs on the version read: transform/property_reads.py)
    return True


def _compile(fs, tree, meth, helpers: dict):
    """The method version of ``tree``: ``meth``'s globals, cells and defaults, the
    helpers its body calls as cells, carrying its source (the user's lines)."""
    made = compile_rewritten(fs, tree, meth, helpers, "_pb_version")
    made.__doc__ = f"{meth.__qualname__}, returning its changed self (pullback.object_stores)."
    made.__pullback_keeps_receiver__ = True  # (resolve.receiver_class follows it)
    return with_source(made, fs, tree)


def version_owned_objects(fs) -> None:
    """Rewrite, in ``fs.tree``, the stores on each object the function owns and the
    calls of its methods that change it (see the module docstring)."""
    tree = fs.tree
    lines = getattr(fs, "lines", None)
    if lines is not None and not _may_change_an_object("".join(lines)):
        return  # (most functions: a long one's first gradient pays no walk for this)
    receivers, temporaries = _candidates(tree)  # one walk: most functions have neither
    if temporaries:
        _version_temporaries(fs, tree, temporaries)
    if not receivers:
        return
    _one_name(fs, tree, receivers)
    found = {}  # name -> (class, its fields), for a name bound by a call of a record class
    locals_ = None
    for s in statements(tree):
        if (
            isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
            and s.targets[0].id in receivers
            and isinstance(s.value, gast.Call)
            and dotted_parts(s.value.func) is not None
        ):
            locals_ = local_names(tree) if locals_ is None else locals_
            ok, cls = resolve_expr(fs, s.value.func, locals_)
            fields = class_fields(cls) if ok else None
            if fields is not None:
                found[s.targets[0].id] = (cls, fields)
    for me, (cls, fields) in found.items():
        if bound_once(tree, me):
            _version_one(fs, tree, me, cls, fields)


def _one_name(fs, tree, receivers) -> None:
    """``b = a`` in the function's own body (no loop or branch around it), after ``a`` was
    bound there by a call of a record class (:func:`class_fields`), where neither name is
    bound anywhere else and no nested function reads ``b``: from that statement on ``b``
    and ``a`` are the same object at every use of ``b`` (before it, ``b`` is unbound), so
    the uses of ``b`` are written ``a`` and the statement is dropped. The object then has
    one name, and its stores through ``b`` become versions like those through ``a``."""
    made = {}  # name -> the call that binds it
    aliases = {}  # second name -> the name that made the object
    for s in tree.body:
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1):
            continue
        target, value = s.targets[0], s.value
        if not isinstance(target, gast.Name):
            continue
        if isinstance(value, gast.Call):
            made.setdefault(target.id, value)
        elif (
            isinstance(value, gast.Name)
            and value.id in made
            and value.id not in aliases
            and receivers & {target.id, value.id}
            and target.id != value.id
        ):
            aliases[target.id] = (value.id, s)
    if not aliases:
        return
    parents = parent_map(tree)
    locals_ = local_names(tree)
    for second, (first, s) in aliases.items():
        if not (bound_once(tree, first) and bound_once(tree, second)):
            continue
        ok, cls = resolve_expr(fs, made[first].func, locals_)
        if not ok or class_fields(cls) is None:
            continue
        uses = [n for n in walk(tree) if isinstance(n, gast.Name) and n.id == second]
        if any(in_nested_scope(n, tree, parents) for n in uses):
            continue
        for n in uses:
            n.id = first
        tree.body.remove(s)
        receivers.add(first)


def _version_one(fs, tree, me, cls, fields) -> None:
    """Version the object bound to ``me`` (see :func:`version_owned_objects`)."""
    s = next(
        (
            s
            for s in statements(tree)
            if isinstance(s, gast.Assign)
            and isinstance(s.targets[0], gast.Name)
            and s.targets[0].id == me
            and isinstance(s.value, gast.Call)
        ),
        None,
    )
    if s is None:  # (its binding is an earlier object's version now)
        return
    versions = _Versions(cls, fields)
    versions.arrays = private_arrays(cls, fields, tree, me, getattr(fs.fn, "__globals__", {}))
    versions.lists = private_lists(cls, fields, tree, me, getattr(fs.fn, "__globals__", {}))
    if not _owned_uses(tree, me, cls, skip=s.targets[0], versions=versions):
        return
    s.pb_owned_binding = me
    trial = copy.deepcopy(tree.body)
    rewrite = StoreRewrite(fs, me, versions)
    if not rewrite.block(trial) or not rewrite.changed:
        return
    tree.body[:] = trial
    _adopt_after(tree, me)  # (the tree is a module's body: walked from its function)
    fs.namespace.update(rewrite.helpers)
    fs.namespace[OWNED] = owned
    classes = getattr(fs, "owned_classes", None)
    if classes is None:
        classes = fs.owned_classes = {}
    classes[me] = cls
    chains = getattr(fs, "resolved_chains", None)
    if chains is not None:  # a method redefined later builds the gradient again
        parts = tuple(dotted_parts(s.value.func))
        for name in versions.made:
            if live_kind(cls, name) is not None:  # (not a field holding a callable)
                chains[(*parts, name)] = getattr(cls, name)


# What the text of a function that versions an object must hold: an attribute store
# (``o.w = v``, ``o.n += 1``), a method of a temporary object (``C(x).fit(y)``), or a name
# bound to a call's result (``o = C(x)``) together with a method call (``o.step(p)``).
_ATTRIBUTE_STORE = LazyPattern(r"\.\s*[^\W\d]\w*\s*(?:[-+*/%@&|^]|//|\*\*|<<|>>)?=(?!=)")
_ITEM_STORE = LazyPattern(r"\.\s*[^\W\d]\w*\s*\[[^\]\n]*\]\s*(?:[-+*/%@&|^]|//|\*\*)?=(?!=)")
_TEMPORARY_METHOD = LazyPattern(r"\)\s*\.\s*[^\W\d]\w*\s*\(")
_BOUND_TO_A_CALL = LazyPattern(
    r"^\s*[^\W\d]\w*\s*=\s*\(*\s*[^\W\d][\w.]*\s*\(", re.MULTILINE
)
_METHOD_CALL = LazyPattern(r"\w\s*\.\s*[^\W\d]\w*\s*\(")


def _may_change_an_object(text: str) -> bool:
    """Whether the function's text may hold what :func:`version_owned_objects` rewrites
    (a cheap necessary condition: the walk runs only then)."""
    if _ATTRIBUTE_STORE.search(text) or _TEMPORARY_METHOD.search(text) or _ITEM_STORE.search(text):
        return True
    return bool(_BOUND_TO_A_CALL.search(text) and _METHOD_CALL.search(text))


def _candidates(tree):
    """``(names, calls)``: the names whose attributes are stored (or deleted) or whose
    methods are called, and the calls ``C(...).m(...)`` of a method of a new object."""
    names, calls = set(), []
    attribute, call = gast.Attribute, gast.Call
    for n in lean_nodes(tree):  # (by class: a long function has tens of thousands of nodes)
        cls = n.__class__
        if cls is attribute and isinstance(n.value, gast.Name):
            if not isinstance(n.ctx, gast.Load):
                names.add(n.value.id)
        elif cls is gast.Subscript and not isinstance(n.ctx, gast.Load):
            inner = n.value  # o.buf[i] = v: an array field written in place
            if isinstance(inner, attribute) and isinstance(inner.value, gast.Name):
                names.add(inner.value.id)
        elif cls is call and isinstance(n.func, gast.Attribute):
            receiver = n.func.value
            if isinstance(receiver, gast.Name):
                names.add(receiver.id)
            elif isinstance(receiver, gast.Call) and dotted_parts(receiver.func) is not None:
                calls.append(n)
    return names, calls


def _version_temporaries(fs, tree, found) -> None:
    """``C(...).m(x)``, a method that changes ``self`` called on an object made for the
    call alone (nothing else ever sees it), as ``_pb_version_m(C(...), x)[0]``: its reads
    of what it stored follow the stores; the changed object is dropped, as Python drops
    it. (Only a method that returns a value: the version returns it first.)"""
    parents = parent_map(tree)
    locals_ = local_names(tree)
    for call in found:
        if in_nested_scope(call, tree, parents):
            continue
        ok, cls = resolve_expr(fs, call.func.value.func, locals_)
        fields = class_fields(cls) if ok else None
        if fields is None or live_kind(cls, call.func.attr) != "method":
            continue
        versions = _Versions(cls, fields)
        # (fields changed in place that only the object reaches: its methods' uses alone,
        # since the function holds no name of it)
        fn_globals = getattr(fs.fn, "__globals__", {})
        versions.arrays = private_arrays(cls, fields, tree, "", fn_globals)
        versions.lists = private_lists(cls, fields, tree, "", fn_globals)
        made = versions.of(call.func.attr)
        if made is None or not made[1]:
            continue
        helper = f"_pb_version_{cls.__name__}_{call.func.attr}"
        fs.namespace[helper] = made[0]
        fs.namespace[OWNED] = owned
        made_object = gast.Call(gast.Name(OWNED, gast.Load(), None, None), [call.func.value], [])
        new = gast.Call(
            gast.Name(helper, gast.Load(), None, None),
            [gast.copy_location(made_object, call.func.value), *call.args],
            call.keywords,
        )
        item = gast.Subscript(gast.copy_location(new, call), gast.Constant(0, None), gast.Load())
        replace_child(parents[call], call, item)
        located(item, call)
        chains = getattr(fs, "resolved_chains", None)
        if chains is not None:  # a method redefined later builds the gradient again
            chains[(*dotted_parts(call.func.value.func), call.func.attr)] = getattr(
                cls, call.func.attr
            )


def _adopt_after(tree, binding) -> None:
    """``me = _pb_owned(me)`` right after the statement that binds ``me`` (marked)."""
    for node in walk(tree):
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for k, s in enumerate(block):
                if getattr(s, "pb_owned_binding", None) == binding:
                    me = s.targets[0].id
                    call = gast.Call(
                        gast.Name(OWNED, gast.Load(), None, None),
                        [gast.Name(me, gast.Load(), None, None)],
                        [],
                    )
                    new = gast.Assign([gast.Name(me, gast.Store(), None, None)], call, None)
                    block.insert(k + 1, located(new, s))
                    return
