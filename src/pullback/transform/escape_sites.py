"""Where a differentiated value leaves the differentiated variables (kept on an object or
in a container the function did not build) and where a value is read from outside them:
the statements :mod:`pullback.escapes` records and checks while a gradient runs.

A mixin of both sweep builders (reverse: :class:`~.reverse.ReverseBuilder` through
:class:`~.reverse_attributes.AttributeAdjoints`; forward: :class:`~.forward.ForwardBuilder`),
which supply ``tree``, ``ns`` (the generated code's namespace), ``kinds``, ``fs``,
``registry``, ``problems``, ``diagnostic`` and ``varied_names()``. Each method rewrites
one normalized statement in place, after the activity analysis and before the sweeps are
written::

    self.cache["y"] = y       ->  store_item_escaping(_t1, 'y', y, 'model.py:8:9')
    out = layer.out           ->  out = read_attribute(layer, 'out', 'model.py:14:23', True)
    helper(x, acc)            ->  effect_call(_pb_effect_registry, helper, (x, acc), {})
"""

from __future__ import annotations

import gast

from ..containers_mutation import store_item
from ..escapes import (
    ESCAPE_RECORD,
    append_escaping,
    checked_call,
    effect_call,
    effect_star_call,
    effect_star_method,
    read_again,
    read_attribute,
    read_item,
    setattr_escaping,
    store_item_escaping,
)
from ..resolve import (
    ARRAY_INPLACE_METHODS,
    ARRAY_METHODS,
    ARRAY_VARARG_METHODS,
    CONTAINER_INPLACE_METHODS,
    Callee,
)
from ..star_runtime import star_call, star_method
from ..tree_walk import parent_map, statements, walk
from . import nodes as N
from .analyze import names_in
from .kinds import is_real
from .problems import as_written, varied_attribute_store, varied_outside_append
from .sweep_common import has_source

# Method names of arrays and containers (whose receiver may be one: their own rules).
ARRAY_NAMES = frozenset(ARRAY_METHODS) | ARRAY_VARARG_METHODS.keys() | ARRAY_INPLACE_METHODS
ARRAY_NAMES |= CONTAINER_INPLACE_METHODS | {"copy", "get", "keys", "values", "items"}


# Methods that store or read single items (a read of one is checked where it is made).
_ITEM_METHODS = frozenset({"append", "extend", "insert", "get", "setdefault", "update", "pop"})
_ITEM_STORES = frozenset({store_item, store_item_escaping, setattr_escaping, append_escaping})
# The effect_call of each star-call's primal (star_runtime.py), by its operands.
_STAR_EFFECTS = {star_call: effect_star_call, star_method: effect_star_method}


def _length_of(use, parent) -> bool:
    """Whether ``parent`` is ``len(use)``: the number of items, no item's value."""
    return (
        isinstance(parent, gast.Call)
        and parent.args == [use]
        and not parent.keywords
        and getattr(getattr(parent, "pb_callee", None), "obj", None) is len
    )


class EscapeSites:
    """Stores that keep a differentiated value outside, calls made for their effect, and
    reads from outside (see the module docstring)."""

    def route_escapes(self) -> None:
        """Every such statement of the function, rewritten."""
        self.keeps_outside = False  # whether a statement here may keep a value outside
        self.outside_reads = set()  # names bound by one: `vals = logger.vals`, used whole
        assigns = []
        self.route_constant_records()
        for s in statements(self.tree):
            if isinstance(s, gast.Expr):
                self.route_outside_store(s.value)
                self.route_effect_call(s)
            elif isinstance(s, gast.Assign):
                self.check_outside_read(s)
                assigns.append(s)
        if self.keeps_outside:
            for s in assigns:
                self.check_constant_call(s)
        if self.outside_reads:
            self.tree.body = self._read_again_before_uses(self.tree.body)

    def route_constant_records(self) -> None:
        """``p = Param("dec", 0.3)`` of a plain class, no argument differentiated, whose
        object goes into a list, tuple or dict (``d = {"amp": Param("amp", a), "dec": p}``,
        ``d["dec"] = p``): made by the class's constructor function too, as a record
        (records_plain.py) whose fields carry no gradient, so that a field read of it where
        the container, differentiated, has its items read (``d["dec"].value``) is a read of
        a constant, not of an object pullback cannot follow. (The constructor function is
        the whole of what the class's construction does: plain_classes.py.)"""
        varied = self.varied_names()
        held = set()  # (a display may be an item store's new dict: `{"dec": p}`, merged)
        for s in statements(self.tree):
            value = s.value if isinstance(s, gast.Assign) else None
            if isinstance(value, (gast.Dict, gast.List, gast.Tuple)):
                items = value.values if isinstance(value, gast.Dict) else value.elts
                held.update(n.id for n in items if isinstance(n, gast.Name))
            elif isinstance(value, gast.Name) and isinstance(s.targets[0], gast.Subscript):
                held.add(value.id)
        copies = [
            (s.targets[0].id, s.value.id)
            for s in statements(self.tree)
            if isinstance(s, gast.Assign)
            and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Name)
        ]
        grew = True
        while grew:  # `_v7 = fixed; d = {"dec": _v7}`: what a held name copies is held
            grew = False
            for target, source in copies:
                if target in held and source not in held:
                    held.add(source)
                    grew = True
        for s in statements(self.tree):
            call = s.value if isinstance(s, gast.Assign) else None
            callee = getattr(call, "pb_callee", None)
            made = getattr(callee, "obj", None)
            if (
                callee is None
                or callee.kind != "object"
                or getattr(made, "__pullback_class__", None) is None
                or not isinstance(s.targets[0], gast.Name)
                or s.targets[0].id not in held
                or any(n in varied for n in names_in(call))
            ):
                continue
            name = f"_pb_constructor_{made.__name__}"
            while self.ns.get(name, made) is not made:  # (two classes of one name)
                name += "_"
            self.ns[name] = made
            call.func = N.located(N.load(name), call.func)

    def _read_again_before_uses(self, stmts):
        """Before each statement that uses a name bound by an outside read (a list or dict
        of an object, used whole), a check of it again: a call between the read and the use
        may have kept a differentiated value in that very container (a method appending to
        ``self.vals``), which the read, made before, could not see. One attribute test while
        nothing is kept outside."""
        out = []
        for s in stmts:
            if not isinstance(s, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
                for field in ("body", "orelse", "finalbody"):
                    if getattr(s, field, None):
                        setattr(s, field, self._read_again_before_uses(getattr(s, field)))
                for handler in getattr(s, "handlers", ()) or ():
                    handler.body = self._read_again_before_uses(handler.body)
            used = {
                n.id
                for n in _own_expression_nodes(s)
                if isinstance(n, gast.Name)
                and isinstance(n.ctx, gast.Load)
                and n.id in self.outside_reads
            }
            for name in sorted(used):
                out.append(self._read_again(name, s))
            out.append(s)
        return out

    def _read_again(self, name, s):
        where = N.const(self.fs.where(s))
        call = N.located(N.call("read_again", [N.load(name), where]), s)
        call.pb_callee = Callee("object", read_again, name="read_again")
        self.ns["read_again"] = read_again
        check = self._while_keeping(call, N.load(name), s)
        return N.located(gast.Expr(value=check), s)

    def _while_keeping(self, checked, plain, at):
        """``checked if <a value is kept outside in this evaluation> else plain``: the
        check runs only while something is kept (every call but a few pay one attribute
        test instead of a call)."""
        self.ns["_pb_escaped"] = ESCAPE_RECORD
        test = N.attr("_pb_escaped", "values")
        return N.located(gast.IfExp(test=test, body=checked, orelse=plain), at)

    def route_outside_store(self, call):
        """``obj.attr = v``, ``obj.attr[k] = v`` and ``outside.append(v)`` with ``v``
        differentiated run as written unless the function may read the value back (then
        its gradient would be lost: refused, see transform/side_effects.py). Where it does
        not, another function may: the store is recorded as it runs, and such a read
        refused there (escapes.py)."""
        appended = getattr(call, "pb_outside_append", None)
        item = getattr(call, "pb_item_store", None)
        target = getattr(call, "pb_attribute_store", None)
        if appended is None and item is None and target is None:
            return
        value = call.args[0] if appended is not None else call.args[2]
        if not (isinstance(value, gast.Name) and value.id in self.varied_names()):
            return
        if not getattr(call, "pb_read_back", False):
            self._record_escape(call, appended)
        elif appended is not None:
            written = getattr(call, "pb_outside_value", None)  # the user's argument
            value = "v" if written is None else gast.unparse(written).strip()
            self.problems.append(
                varied_outside_append(self.diagnostic, call, appended.value, value)
            )
        elif item is not None:  # self.cache[k] = v: refused as its attribute would be
            # (the user's spelling: gast would print params["W1"] as params['W1'])
            obj = as_written(self.fs, item.value.value)
            key = as_written(self.fs, item.slice)
            self.problems.append(
                varied_attribute_store(self.diagnostic, item, obj, item.value.attr, key)
            )
        else:
            obj = as_written(self.fs, target.value)
            self.problems.append(varied_attribute_store(self.diagnostic, target, obj, target.attr))

    def _record_escape(self, call, appended):
        """The store as its recording form (escapes.py), in place."""
        self.keeps_outside = True
        where = N.const(self.fs.where(call))
        if appended is not None:
            helper, args = append_escaping, [appended.value, call.args[0], where]
        elif getattr(call, "pb_item_store", None) is not None:
            helper, args = store_item_escaping, list(call.args)
        else:
            helper, args = setattr_escaping, [*call.args, where]
        self.ns[helper.__name__] = helper
        call.func = gast.copy_location(N.load(helper.__name__), call)
        call.args = args
        call.keywords = []
        call.pb_callee = Callee("object", helper, name=helper.__name__)

    def _used_whole(self, name: str) -> bool:
        """Whether the value of ``name`` is used other than to read, store or append items
        (then a list or dict it holds is checked as a whole where it is read)."""
        uses = getattr(self, "_escape_uses", None)
        if uses is None:
            uses = self._escape_uses = {}
            for child, node in parent_map(self.tree).items():
                if isinstance(child, gast.Name) and isinstance(child.ctx, gast.Load):
                    uses.setdefault(child.id, []).append((child, node))
        for use, parent in uses.get(name, ()):
            if isinstance(parent, gast.Subscript) and parent.value is use:
                continue  # c[k]: its own read, checked
            if isinstance(parent, gast.Attribute) and parent.attr in _ITEM_METHODS:
                continue  # c.append(v), c.get(k)
            if (
                isinstance(parent, gast.Call)
                and parent.args
                and parent.args[0] is use
                and getattr(getattr(parent, "pb_callee", None), "obj", None) in _ITEM_STORES
            ):
                continue  # store_item(c, k, v)
            if _length_of(use, parent):
                continue  # len(c): reads no item (a history kept on self, then its length)
            return True
        return False

    def route_effect_call(self, s) -> None:
        """``helper(x, out)`` or ``obj.method(x)`` whose result is unused, with a
        differentiated argument, of user code (or found at run time): made through
        ``effect_call``, which runs the callee's generated forward sweep so that what it
        keeps outside the differentiated variables is recorded (escapes.py); a plain call
        would keep it unseen, and a read of it elsewhere would lose its gradient."""
        call = s.value
        if not isinstance(call, gast.Call) or any(
            getattr(call, mark, None) is not None
            for mark in ("pb_outside_append", "pb_attribute_store", "pb_item_store")
        ):
            return
        if self._route_star_effect(s):
            return
        if not self._user_callee(call):
            return
        varied = self.varied_names()
        func = call.func
        receiver = isinstance(func, gast.Attribute) and any(
            n in varied for n in names_in(func.value)
        )
        if receiver and func.attr in ARRAY_NAMES and not _python_method(call):
            return  # an array's or a container's method: its own rules
        # (a method of a record, a dataclass or a plain class's object, may store on it
        # what it computes: effect_call records that, and a field read of it is refused)
        operands = list(call.args) + [k.value for k in call.keywords]
        if not receiver and not any(isinstance(a, gast.Name) and a.id in varied for a in operands):
            return
        if _spread(call):
            return
        self.ns["effect_call"] = effect_call
        self.ns["_pb_effect_registry"] = self.registry
        packed, keywords = _packed(call)
        # the arguments that carry a gradient by name: an object built from a differentiated
        # value but not (yet) a record, `net.add(Dense(W1))`, carries one although its value
        # does not show it (effect_call)
        marked = [k for k, a in enumerate(call.args) if isinstance(a, gast.Name) and a.id in varied]
        marked += [
            k.arg for k in call.keywords if isinstance(k.value, gast.Name) and k.value.id in varied
        ]
        args = [N.load("_pb_effect_registry"), func, packed, keywords]
        if marked:
            args.append(N.const(tuple(marked)))
        new = N.located(N.call("effect_call", args), call)
        new.pb_callee = Callee("object", effect_call, name="effect_call")
        s.value = new
        self.keeps_outside = True
        self.calls_user_code = True  # it may run the callee's sweep: recursion, escapes

    def _route_star_effect(self, s) -> bool:
        """A star-call whose result is unused (``MODEL.keep(x, scale=s)``, a method found
        at run time with a computed keyword; ``helper(*args, **kw)``), with an operand that
        carries a gradient: made through ``effect_star_call``/``effect_star_method``, the
        ``effect_call`` of the call it spells (see :meth:`route_effect_call`). Whether it
        was one."""
        call = s.value
        callee = getattr(call, "pb_callee", None)
        helper = _STAR_EFFECTS.get(getattr(callee, "obj", None))
        if callee is None or callee.kind != "star" or helper is None:
            return False
        if star_method is callee.obj:
            name = call.args[1]
            if isinstance(name, gast.Constant) and name.value in ARRAY_NAMES:
                return True  # an array's or a container's method: its own rules
        varied = self.varied_names()
        if not any(n in varied for a in call.args for n in names_in(a)):
            return True
        self.ns[helper.__name__] = helper
        self.ns["_pb_effect_registry"] = self.registry
        args = [N.load("_pb_effect_registry"), *call.args]
        new = N.located(N.call(helper.__name__, args), call)
        new.pb_callee = Callee("object", helper, name=helper.__name__)
        s.value = new
        self.keeps_outside = True
        self.calls_user_code = True
        return True

    def check_constant_call(self, s) -> None:
        """``t = obj.method()`` or ``t = helper(c)`` of user code with no differentiated
        argument runs as in the primal: in a function that keeps values outside (a store,
        or ``s.push(v)`` through ``effect_call``), such a call whose object or arguments
        hold one is refused (``checked_call``), since a read of it inside the callee would
        lose its gradient (``s.total()`` summing what ``push`` appended)."""
        call = s.value
        if not isinstance(call, gast.Call) or not self._user_callee(call) or _spread(call):
            return
        func = call.func
        if isinstance(func, gast.Attribute) and func.attr in ARRAY_NAMES:
            return  # a container's method: the item reads are checked where they are made
        varied = self.varied_names()
        if any(n in varied for n in names_in(call)):
            return  # differentiated through its own adjoint
        packed, keywords = _packed(call)
        where = N.const(self.fs.where(call))
        checked = N.located(N.call("checked_call", [func, packed, keywords, where]), call)
        checked.pb_callee = Callee("object", checked_call, name="checked_call")
        self.ns["checked_call"] = checked_call
        s.value = self._while_keeping(checked, call, call)

    def _user_callee(self, call) -> bool:
        """Whether ``call`` calls user code (or a callable found at run time) that no rule
        covers."""
        callee = getattr(call, "pb_callee", None)
        if callee is None or callee.kind not in ("object", "method", "dynamic"):
            return False
        return callee.kind != "object" or (
            self.registry.lookup(callee.obj) is None and has_source(callee.obj)
        )

    def check_outside_read(self, s) -> None:
        """``t = obj.attr`` or ``t = c[k]`` of an object or container that carries no
        gradient (not an array: an escaped value is never an array's element) as a read
        that refuses a value another function kept there with its gradient (escapes.py)."""
        v = s.value
        if isinstance(v, gast.Attribute):
            if getattr(v, "pb_constant", False):
                return
            helper, key = read_attribute, N.const(v.attr)
        elif isinstance(v, gast.Subscript) and not any(
            isinstance(n, gast.Slice) for n in walk(v.slice)
        ):
            helper, key = read_item, v.slice
        else:
            return
        base = v.value
        if not isinstance(base, gast.Name) or base.id in self.varied_names():
            return
        if base.id in self.ns and not (base.id == "_pb_globals" or base.id.startswith("_pb_cell_")):
            return  # a module, class or function the code baked in
        if is_real(self.kinds.get(base.id)):
            return
        used_whole = self._used_whole(s.targets[0].id)
        # a user's name may be used after a call that changed what it holds (a generated
        # temporary, `_t3 = c[0]`, is used by the next statement of its line)
        if used_whole and not s.targets[0].id.startswith("_"):
            self.outside_reads.add(s.targets[0].id)
        whole = N.const(used_whole)
        where = N.const(self.fs.where(v))
        call = gast.copy_location(N.call(helper.__name__, [base, key, where, whole]), v)
        call.pb_callee = Callee("object", helper, name=helper.__name__)
        self.ns[helper.__name__] = helper
        s.value = self._while_keeping(call, v, v)


def _own_expression_nodes(s):
    """The nodes of statement ``s``'s own expressions (not those of the statements it
    holds: a loop's body is visited statement by statement)."""
    for field, value in gast.iter_fields(s):
        if field in ("body", "orelse", "finalbody", "handlers"):
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, gast.AST):
                yield from walk(item)


def _spread(call) -> bool:
    """Whether ``call`` spreads ``*args`` or ``**kwargs``."""
    return any(isinstance(a, gast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    )


def _packed(call):
    """``call``'s positional arguments as a tuple display and its keywords as a dict."""
    packed = N.located(gast.Tuple(elts=list(call.args), ctx=gast.Load()), call)
    keywords = N.located(
        gast.Dict(
            keys=[N.const(k.arg) for k in call.keywords],
            values=[k.value for k in call.keywords],
        ),
        call,
    )
    return packed, keywords


def _python_method(call) -> bool:
    """Whether ``call`` is ``obj.name(...)`` of an object whose class, known before running,
    defines ``name`` in Python: ``acc.add(v)`` of a plain class's object is its method,
    not a set's ``add``."""
    callee = getattr(call, "pb_callee", None)
    return callee is not None and callee.kind == "method" and callee.python_method
