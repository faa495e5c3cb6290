"""Stores on objects the differentiated function owns, made into versions of the object.

Python code keeps state on objects: ``s.m = s.m * 0.5 + p``, a Kalman filter's
``kf.predict()`` storing ``self.x`` and ``self.P``, an optimizer's ``self.t += 1``. Here
such a store becomes a new value of the object's name, a *version* (object_versions.py)::

    s.m = v              ->  s = _pb_set_field(s, 'm', v, 'f.py:9:5')
    s.n += 1             ->  s = _pb_set_field(s, 'n', s.n + 1, 'f.py:10:5')
    kf.predict()         ->  kf = _pb_version_predict(kf)
    r = opt.step(p, g)   ->  r, opt = _pb_version_step(opt, p, g)

and a method that stores on ``self`` is called through a version of it, written the same
way, which returns its final ``self`` too (``return e`` -> ``return (e, self)``), so that
the caller's reads after the call belong to the new version. The object is still changed
as Python changes it; the versions only tell the transformation which value each read
sees, so that SSA, the reverse sweep, forward mode and second derivatives follow the
stores like any other assignment.

That is exact only when nothing else can see the object: the name is bound once, by a
call of a record class (a plain class whose ``__init__`` pullback rewrites, or a dataclass
whose constructor only stores its fields), and used only as ``o.attr`` (a field or a
constant), ``o.attr = v``, ``o.attr op= v`` and ``o.method(...)`` (a Python method of the
class, itself using ``self`` only so); no other name, container, call or nested function
gets it. A method's version is made only when every call of a method that changes
``self`` is a statement of its own (``o.step(g)`` or ``r = o.step(g)``). Anything else is
left as written, to the refusals that already guard it (PB107 where a read would lose a
gradient: transform/side_effects.py, escapes.py). Only fields (the attributes
``__init__`` stores) become versions; another attribute is stored as before.
"""

from __future__ import annotations

import copy
import inspect
import types

import gast

from ..errors import PullbackError
from ..object_versions import owned, set_field
from ..plain_classes import compile_rewritten, constructor_of
from ..plain_methods import live_kind
from ..records_dataclasses import field_names, is_dataclass_class, refusal
from ..records_plain import layout
from ..resolve import bound_once, dotted_parts, local_names, parent_map, resolve_expr
from ..source import load_source, with_source
from ..tree_walk import statements
from .side_effects import in_nested_scope

SET_FIELD = "_pb_set_field"
OWNED = "_pb_owned"
_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
_BLOCKS = ("body", "orelse", "finalbody")


def class_fields(cls):
    """The fields of ``cls``'s records (the names its ``__init__`` stores, a dataclass's
    fields), or None when a call of ``cls`` makes no record."""
    if not isinstance(cls, type):
        return None
    if is_dataclass_class(cls):
        return field_names(cls) if refusal(cls) is None else None
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

    def of(self, name: str):
        """``(function, returns_value)`` of the version of method ``name``, or None when
        it changes no field of ``self`` or cannot be versioned (then called as is)."""
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
        if not params or "__class__" in meth.__code__.co_freevars:
            return None  # no self, or super(): another method runs on self unseen
        me = params[0].id
        if not _owned_uses(tree, me, self.cls, skip=None):
            return None
        returns = any(
            isinstance(n, gast.Return)
            and n.value is not None
            and not (isinstance(n.value, gast.Constant) and n.value.value is None)
            for n in gast.walk(tree)
        )
        rewrite = _Rewrite(fs, me, self, returns=returns)
        if not rewrite.block(tree.body) or not rewrite.changed:
            return None
        if not (tree.body and isinstance(tree.body[-1], gast.Return)):
            tree.body.append(_located(rewrite.returned(None), tree.body[-1]))
        return _compile(fs, tree, meth, rewrite.helpers), returns


def _owned_uses(tree, me: str, cls, skip) -> bool:
    """Whether every use of the name ``me`` in ``tree`` is ``me.attr`` read (a field or
    constant, not a method handed on), stored (``me.attr = v``, ``me.attr op= v``) or
    called as a Python method of ``cls``; ``skip``: the one binding allowed."""
    parents = parent_map(tree)
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and node.id in ("super", "__class__"):
            return False
        if not (isinstance(node, gast.Name) and node.id == me) or node is skip:
            continue
        if isinstance(node.ctx, gast.Param) and parents.get(parents.get(node)) is tree:
            continue
        if not isinstance(node.ctx, gast.Load) or in_nested_scope(node, tree, parents):
            return False
        parent = parents.get(node)
        if not (isinstance(parent, gast.Attribute) and parent.value is node):
            return False
        if parent.attr.startswith("__"):
            return False
        grand = parents.get(parent)
        kind = live_kind(cls, parent.attr)
        if isinstance(parent.ctx, gast.Del):
            return False
        if isinstance(parent.ctx, gast.Store):
            if isinstance(grand, gast.AugAssign) or (
                isinstance(grand, gast.Assign) and grand.targets == [parent]
            ):
                if kind is None:
                    continue
            return False
        if isinstance(grand, gast.Call) and grand.func is parent:
            if kind != "method":
                return False
            continue
        if kind not in (None, "other"):
            return False  # a method handed on (holds self), a property (runs unseen)
    return True


class _Rewrite:
    """Rewrites the stores on ``me`` and the calls of its methods that change it (see the
    module docstring), block by block; ``block`` is False when a call of such a method is
    not a statement of its own (then nothing of the function is versioned)."""

    def __init__(self, fs, me, versions, returns=None):
        self.fs = fs
        self.me = me
        self.versions = versions
        self.returns = returns  # None: the differentiated function (no return rewritten)
        self.helpers = {SET_FIELD: set_field}
        self.changed = False
        self.unused = 0

    def name(self, ctx=None):
        return gast.Name(self.me, ctx or gast.Load(), None, None)

    def returned(self, value):
        """``return`` of a method's version: its final ``self``, after its value."""
        if not self.returns:
            return gast.Return(self.name())
        value = value if value is not None else gast.Constant(None, None)
        return gast.Return(gast.Tuple([value, self.name()], gast.Load()))

    def block(self, stmts) -> bool:
        k = 0
        while k < len(stmts):
            out = self.statement(stmts[k])
            if out is None:
                return False
            stmts[k : k + 1] = out
            k += len(out)
        return True

    def statement(self, s):
        if isinstance(s, _SCOPES):
            return [s]  # a nested function or class: its own returns, no use of me
        for field in _BLOCKS:
            inner = getattr(s, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                if not self.block(inner):
                    return None
        for handler in getattr(s, "handlers", None) or ():
            if not self.block(handler.body):
                return None
        if isinstance(s, gast.Return) and self.returns is not None:
            return [_located(self.returned(s.value), s)]
        store = self.field_store(s)
        if store is not None:
            return [store]
        call = self.method_call(s)
        if call is not None:
            return call
        hoisted = self.hoist(s)
        if hoisted is not None:
            out = []
            for part in hoisted:
                done = self.statement(part)
                if done is None:
                    return None
                out.extend(done)
            return out
        if self._stray_call(s):
            return None
        return [s]

    def hoist(self, s):
        """``r = r + o.step(g)``: the one call of a method that changes ``me`` in a simple
        statement, taken out first (``_pb_call_o_1 = o.step(g); r = r + _pb_call_o_1``)
        where that changes nothing Python would do: no other call in the statement (its
        order against the method's would change) and no other use of ``me``, and no
        ``and``/``or``/``if``-expression, lambda or comprehension around it (which might
        not run it)."""
        if not isinstance(s, (gast.Assign, gast.AugAssign, gast.Expr, gast.Return)):
            return None
        found = [n for n in gast.walk(s) if self._versioned_call(n) is not None]
        if len(found) != 1:
            return None
        call = found[0]
        inside = {id(n) for n in gast.walk(call)}
        for n in gast.walk(s):
            if id(n) in inside:
                continue
            if isinstance(
                n,
                (
                    gast.Call,
                    gast.BoolOp,
                    gast.IfExp,
                    gast.Lambda,
                    gast.ListComp,
                    gast.SetComp,
                    gast.DictComp,
                    gast.GeneratorExp,
                    gast.NamedExpr,
                ),
            ):
                return None
            if self._is_me(n):
                return None
        self.unused += 1
        temp = f"_pb_call_{self.me}_{self.unused}"
        _replace(parent_map(s)[call], call, gast.Name(temp, gast.Load(), None, None))
        first = gast.Assign([gast.Name(temp, gast.Store(), None, None)], call, None)
        return [_located(first, s), s]

    def _is_me(self, node) -> bool:
        return isinstance(node, gast.Name) and node.id == self.me

    def field_store(self, s):
        if isinstance(s, gast.Assign) and len(s.targets) == 1:
            target, value = s.targets[0], s.value
        elif isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Attribute):
            target = s.target
            read = gast.copy_location(gast.Attribute(self.name(), target.attr, gast.Load()), target)
            value = gast.copy_location(gast.BinOp(read, s.op, s.value), s)
        else:
            return None
        if not (isinstance(target, gast.Attribute) and self._is_me(target.value)):
            return None
        if target.attr not in self.versions.fields:
            return None  # not a field: stored as before (guarded by escapes.py)
        self.changed = True
        where = gast.Constant(self.fs.where(target), None)
        call = gast.Call(
            gast.Name(SET_FIELD, gast.Load(), None, None),
            [self.name(), gast.Constant(target.attr, None), value, where],
            [],
        )
        out = gast.Assign([self.name(gast.Store())], gast.copy_location(call, s), None)
        return _located(out, s)

    def _versioned_call(self, node):
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)):
            return None
        if not self._is_me(node.func.value):
            return None
        return self.versions.of(node.func.attr)

    def method_call(self, s):
        if isinstance(s, gast.Expr):
            call, target = s.value, None
        elif (
            isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
            and s.targets[0].id != self.me
        ):
            call, target = s.value, s.targets[0]
        else:
            return None
        made = self._versioned_call(call)
        if made is None:
            return None
        fn, returns = made
        self.changed = True
        helper = f"_pb_version_{call.func.attr}"
        self.helpers[helper] = fn
        new = gast.Call(
            gast.Name(helper, gast.Load(), None, None), [self.name(), *call.args], call.keywords
        )
        new = gast.copy_location(new, call)
        if not returns:
            out = [_located(gast.Assign([self.name(gast.Store())], new, None), s)]
            if target is not None:
                none = gast.Assign([target], gast.Constant(None, None), None)
                out.append(_located(none, s))
            return out
        if target is None:
            self.unused += 1
            target = gast.Name(f"_pb_unused_{self.me}_{self.unused}", gast.Store(), None, None)
        pair = gast.Tuple([target, self.name(gast.Store())], gast.Store())
        return [_located(gast.Assign([pair], new, None), s)]

    def _stray_call(self, s) -> bool:
        """A call of a method that changes ``me`` left inside an expression."""
        for field, value in gast.iter_fields(s):
            if field in _BLOCKS or field == "handlers":
                continue
            for node in gast.walk(value) if isinstance(value, gast.AST) else ():
                if self._versioned_call(node) is not None:
                    return True
        return False


def _replace(parent, old, new) -> None:
    """``old``, a child of ``parent``, replaced by ``new`` (placed where ``old`` was)."""
    gast.copy_location(new, old)
    for field, value in gast.iter_fields(parent):
        if value is old:
            setattr(parent, field, new)
        elif isinstance(value, list):
            value[:] = [new if v is old else v for v in value]


def _located(stmt, where):
    gast.copy_location(stmt, where)
    for node in gast.walk(stmt):
        if getattr(node, "lineno", None) is None:
            gast.copy_location(node, where)
    return stmt


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
    names = []
    for s in statements(tree):
        if (
            isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Call)
            and dotted_parts(s.value.func) is not None
            and _mentions_attribute(tree, s.targets[0].id)
        ):
            names.append(s.targets[0].id)
    locals_ = local_names(tree) if names else None
    for me in names:
        if bound_once(tree, me):
            _version_one(fs, tree, me, locals_)


def _version_one(fs, tree, me, locals_) -> None:
    """Version the object bound to ``me`` (see :func:`version_owned_objects`)."""
    s = next(
        s
        for s in statements(tree)
        if isinstance(s, gast.Assign)
        and isinstance(s.targets[0], gast.Name)
        and s.targets[0].id == me
    )
    ok, cls = resolve_expr(fs, s.value.func, locals_)
    fields = class_fields(cls) if ok else None
    if fields is None or not _owned_uses(tree, me, cls, skip=s.targets[0]):
        return
    versions = _Versions(cls, fields)
    s.pb_owned_binding = me
    trial = copy.deepcopy(tree.body)
    rewrite = _Rewrite(fs, me, versions)
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
            chains[(*parts, name)] = getattr(cls, name)


def _adopt_after(tree, binding) -> None:
    """``me = _pb_owned(me)`` right after the statement that binds ``me`` (marked)."""
    for node in gast.walk(tree):
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
                    block.insert(k + 1, _located(new, s))
                    return


def _mentions_attribute(tree, me) -> bool:
    return any(
        isinstance(n, gast.Attribute)
        and isinstance(n.value, gast.Name)
        and n.value.id == me
        and not isinstance(n.ctx, gast.Load)
        or isinstance(n, gast.Call)
        and isinstance(n.func, gast.Attribute)
        and isinstance(n.func.value, gast.Name)
        and n.func.value.id == me
        for n in gast.walk(tree)
    )
