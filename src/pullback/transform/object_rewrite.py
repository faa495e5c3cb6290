"""The statements of one function rewritten so that stores on an object it owns, and
calls of the object's methods that change it, make new versions of the object (see
transform/object_stores.py, which decides where this is exact and calls it).

>>> import gast
>>> class Versions:
...     fields = frozenset({"m"})
...     def of(self, name):
...         return None
>>> tree = gast.parse("def f(p): s.m = s.m * p").body[0]
>>> rewrite = StoreRewrite(None, "s", Versions(), where=lambda node: "f.py:2:5")
>>> rewrite.block(tree.body), gast.unparse(tree.body[0]).strip()
(True, "s = _pb_set_field(s, 'm', s.m * p, 'f.py:2:5')")
"""

from __future__ import annotations

import gast

from ..object_versions import set_field
from ..resolve import parent_map
from ..tree_walk import walk

SET_FIELD = "_pb_set_field"
SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
_BLOCKS = ("body", "orelse", "finalbody")


class StoreRewrite:
    """Rewrites the stores on ``me`` and the calls of its methods that change it (see the
    module docstring), block by block; ``block`` is False when a call of such a method is
    not a statement of its own (then nothing of the function is versioned)."""

    def __init__(self, fs, me, versions, returns=None, where=None):
        self.where = fs.where if where is None else where
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
        if isinstance(s, SCOPES):
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
            hoisted = self.hoist(s)  # return self.step(g): the call first
            if hoisted is not None:
                return self.statements(hoisted)
            if self._stray_call(s):
                return None
            return [located(self.returned(s.value), s)]
        split = self.split_assignment(s)
        if split is not None:
            return self.statements(split)
        written = self.array_write(s)
        if written is not None:
            return self.statements(written)
        grown = self.list_growth(s)
        if grown is not None:
            return self.statements(grown)
        store = self.field_store(s)
        if store is not None:
            return [store]
        call = self.method_call(s)
        if call is not None:
            return call
        hoisted = self.hoist(s)
        if hoisted is not None:
            return self.statements(hoisted)
        if self._stray_call(s):
            return None
        return [s]

    def statements(self, parts):
        """:meth:`statement` of each of ``parts`` (one statement rewritten into several)."""
        out = []
        for part in parts:
            done = self.statement(part)
            if done is None:
                return None
            out.extend(done)
        return out

    def split_assignment(self, s):
        """``me.a, me.b = x, y`` and ``me.a = me.b = v`` as one assignment a target, in
        Python's order: the values first (into temporaries), then each target from the
        left; None for any other statement (or one that stores no field of ``me``)."""
        if not isinstance(s, gast.Assign):
            return None
        parents = parent_map(s)
        if len(s.targets) == 1 and unpacked_display(s.targets[0], parents):
            targets, values = s.targets[0].elts, s.value.elts
        elif len(s.targets) > 1:
            targets, values = s.targets, [s.value]
        else:
            return None
        if not any(isinstance(t, gast.Attribute) and self._is_me(t.value) for t in targets):
            return None
        temps = []
        out = []
        for v in values:
            self.unused += 1
            temps.append(f"_pb_value_{self.me}_{self.unused}")
            keep = gast.Assign([gast.Name(temps[-1], gast.Store(), None, None)], v, None)
            out.append(located(keep, s))
        for k, t in enumerate(targets):
            temp = gast.Name(temps[k] if len(temps) > 1 else temps[0], gast.Load(), None, None)
            out.append(located(gast.Assign([t], temp, None), s))
        return out

    def array_write(self, s):
        """``me.buf[i] = v`` (or ``op=``) of a field only the object reaches
        (transform/object_arrays.py) as the store of a written copy: ``t = me.buf.copy()``,
        ``t[i] = v``, ``me.buf = t``; None for any other statement."""
        target = s.targets[0] if isinstance(s, gast.Assign) and len(s.targets) == 1 else None
        target = s.target if isinstance(s, gast.AugAssign) else target
        if not (
            isinstance(target, gast.Subscript)
            and isinstance(target.value, gast.Attribute)
            and self._is_me(target.value.value)
            and target.value.attr in getattr(self.versions, "arrays", ())
        ):
            return None
        attr = target.value.attr
        self.unused += 1
        temp = f"_pb_array_{attr}_{self.unused}"
        read = gast.Attribute(self.name(), attr, gast.Load())
        copy = gast.Call(gast.Attribute(read, "copy", gast.Load()), [], [])
        first = gast.Assign([gast.Name(temp, gast.Store(), None, None)], copy, None)
        target.value = gast.Name(temp, gast.Load(), None, None)
        gast.copy_location(target.value, target)
        stored = gast.Attribute(self.name(), attr, gast.Store())
        last = gast.Assign([stored], gast.Name(temp, gast.Load(), None, None), None)
        return [located(first, s), s, located(last, s)]

    def list_growth(self, s):
        """``me.a.append(v)`` (or ``extend``) of a list field only the object reaches
        (transform/object_arrays.py) as the store of a grown copy: ``t = me.a + []``,
        ``t.append(v)``, ``me.a = t``; None for any other statement."""
        call = s.value if isinstance(s, gast.Expr) else None
        if not (
            isinstance(call, gast.Call)
            and isinstance(call.func, gast.Attribute)
            and call.func.attr in ("append", "extend")
            and isinstance(call.func.value, gast.Attribute)
            and self._is_me(call.func.value.value)
            and call.func.value.attr in getattr(self.versions, "lists", ())
        ):
            return None
        attr = call.func.value.attr
        self.unused += 1
        temp = f"_pb_list_{attr}_{self.unused}"
        read = gast.Attribute(self.name(), attr, gast.Load())
        # (a concatenation: a new list, which the checks see as one the function owns)
        copy = gast.BinOp(read, gast.Add(), gast.List([], gast.Load()))
        first = gast.Assign([gast.Name(temp, gast.Store(), None, None)], copy, None)
        call.func.value = gast.Name(temp, gast.Load(), None, None)
        gast.copy_location(call.func.value, call.func)
        stored = gast.Attribute(self.name(), attr, gast.Store())
        last = gast.Assign([stored], gast.Name(temp, gast.Load(), None, None), None)
        return [located(first, s), s, located(last, s)]

    def hoist(self, s):
        """``r = r + o.step(g)``: the one call of a method that changes ``me`` in a simple
        statement, taken out first (``_pb_call_o_1 = o.step(g); r = r + _pb_call_o_1``)
        where that changes nothing Python would do: no other call in the statement (its
        order against the method's would change) and no other use of ``me``, and no
        ``and``/``or``/``if``-expression, lambda or comprehension around it (which might
        not run it)."""
        if not isinstance(s, (gast.Assign, gast.AugAssign, gast.Expr, gast.Return)):
            return None
        found = [n for n in walk(s) if self._versioned_call(n) is not None]
        if len(found) != 1 or self._versioned_call(found[0])[2]:
            return None
        call = found[0]
        inside = {id(n) for n in walk(call)}
        for n in walk(s):
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
        replace_child(parent_map(s)[call], call, gast.Name(temp, gast.Load(), None, None))
        first = gast.Assign([gast.Name(temp, gast.Store(), None, None)], call, None)
        return [located(first, s), s]

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
        where = gast.Constant(self.where(target), None)
        call = gast.Call(
            gast.Name(SET_FIELD, gast.Load(), None, None),
            [self.name(), gast.Constant(target.attr, None), value, where],
            [],
        )
        out = gast.Assign([self.name(gast.Store())], gast.copy_location(call, s), None)
        return located(out, s)

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
        if made is None or made[2] and target is not None:
            return None  # (a method returning self: a second name for the object)
        fn, returns, _ = made
        self.changed = True
        helper = f"_pb_version_{call.func.attr}"
        self.helpers[helper] = fn
        new = gast.Call(
            gast.Name(helper, gast.Load(), None, None), [self.name(), *call.args], call.keywords
        )
        new = gast.copy_location(new, call)
        if not returns:
            out = [located(gast.Assign([self.name(gast.Store())], new, None), s)]
            if target is not None:
                none = gast.Assign([target], gast.Constant(None, None), None)
                out.append(located(none, s))
            return out
        if target is None:
            self.unused += 1
            target = gast.Name(f"_pb_unused_{self.me}_{self.unused}", gast.Store(), None, None)
        pair = gast.Tuple([target, self.name(gast.Store())], gast.Store())
        return [located(gast.Assign([pair], new, None), s)]

    def _stray_call(self, s) -> bool:
        """A call of a method that changes ``me`` left inside an expression."""
        for field, value in gast.iter_fields(s):
            if field in _BLOCKS or field == "handlers":
                continue
            for node in walk(value) if isinstance(value, gast.AST) else ():
                if self._versioned_call(node) is not None:
                    return True
        return False


def unpacked_display(target, parents) -> bool:
    """Whether ``target`` is the tuple target of ``a, b = x, y`` (a display as long)."""
    assign = parents.get(target)
    return (
        isinstance(target, gast.Tuple)
        and isinstance(assign, gast.Assign)
        and assign.targets == [target]
        and isinstance(assign.value, gast.Tuple)
        and len(assign.value.elts) == len(target.elts)
        and not any(isinstance(e, gast.Starred) for e in target.elts + assign.value.elts)
    )


def replace_child(parent, old, new) -> None:
    """``old``, a child of ``parent``, replaced by ``new`` (placed where ``old`` was)."""
    gast.copy_location(new, old)
    for field, value in gast.iter_fields(parent):
        if value is old:
            setattr(parent, field, new)
        elif isinstance(value, list):
            value[:] = [new if v is old else v for v in value]


def located(stmt, where):
    gast.copy_location(stmt, where)
    for node in walk(stmt):
        if getattr(node, "lineno", None) is None:
            gast.copy_location(node, where)
    return stmt
