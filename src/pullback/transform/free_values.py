"""Free names, calls and attributes in the normalized core language: what the function
reads from outside (baked in and guarded, or read live), which callee a call reaches, and
the objects whose indexing or attribute stores are calls.

A mixin of the normalizer (:mod:`pullback.transform.normalize`); the names generated code
keeps for itself live here too.

>>> is_reserved("densify"), is_reserved("x")
(True, False)
"""

from __future__ import annotations

import builtins
import functools
import operator
import sys
from types import FunctionType, ModuleType

import gast
import numpy as np

from ..callables import (
    rule_call_function,
    ruled_method,
    super_method_function,
    user_method_function,
)
from ..containers import BUILDERS
from ..containers_mutation import store_item
from ..dynamic_attrs import array_attribute_of, flat_of
from ..guards import is_baked_value
from ..receiver_classes import module_class_with_field
from ..records import is_record_class
from ..records_dataclasses import field_default, init_fields, is_dataclass_class
from ..registry import qualified_name
from ..resolve import (
    ARRAY_ATTRIBUTES,
    ARRAY_METHODS,
    ARRAY_VARARG_METHODS,
    CONSTANT_ATTRIBUTES,
    Callee,
    dotted_parts,
    local_names,
    resolve_call,
    resolve_expr,
)
from ..star_runtime import RRULES
from ..tree_walk import walk
from . import nodes as N
from .side_effects import may_read_back

# Indexing the transformation models itself (arrays, containers, strings, ranges).
_MODELLED_INDEXING = (np.ndarray, np.generic, list, tuple, dict, str, bytes, range)

RESERVED = frozenset(
    "ZERO NO_TANGENT add unbroadcast densify getitem_cotangent fold_reads tuple_item dict_item "
    "sequence_cotangent pow_exponent_cotangent pow_base_derivative zero_safe_product "
    "zero_safe_fixed "
    "plus_cotangents "
    "times_cotangents matmul_lhs_cotangent "
    "matmul_rhs_cotangent as_sequence zero_cotangent _partial _np _math "
    "rule_tangent list_tangent function_tangent method_tangent "
    "list_append list_appended dict_set _caught _pullback_errors _pullback_break "
    "_pullback_continue _pullback_return _pullback_jump".split()
)


def is_reserved(name: str) -> bool:
    """Whether generated code uses ``name`` for itself (helpers, ``_pb_*`` bindings)."""
    return name in RESERVED or name.startswith("_pb_")


def rename_reserved_locals(tree, local=None) -> dict:
    r"""Rename, in place, every parameter and local of ``tree`` whose name the generated
    code uses for its own helpers (a parameter called ``densify``); return the renaming.

    >>> import gast
    >>> t = gast.parse("def f(densify, y):\n    add = densify * y\n    return add").body[0]
    >>> rename_reserved_locals(t)
    {'add': '_user_add', 'densify': '_user_densify'}

    ``local``: ``local_names(tree)`` when the caller has it (it is only read here).
    """
    local = local_names(tree) if local is None else local
    clashing = sorted(n for n in local if is_reserved(n))
    renames = {}
    for name in clashing:
        new = f"_user_{name.lstrip('_')}"
        while new in local or new in renames.values():
            new = "_" + new
        renames[name] = new
    if renames:
        for node in walk(tree):
            if isinstance(node, gast.Name) and node.id in renames:
                node.id = renames[node.id]
    return renames


class FreeValues:
    """Normalizer methods for free names, attribute reads and stores, indexing objects and
    calls (see the module docstring)."""

    def bind_global(self, node) -> gast.AST:
        """Make a resolvable global chain usable in generated code; return the node.

        A global whose name the generated code uses for itself (``add``, ``ZERO``, ...) is
        bound under another name, and the node renamed to match.
        """
        parts = dotted_parts(node)
        found, value = self.fs.lookup(parts[0])
        if found:
            name = parts[0]
            if is_reserved(name):
                name = f"_user_{name}"
                root = node
                while isinstance(root, gast.Attribute):
                    root = root.value
                root.id = name
            self.namespace[name] = value
        return node

    def bound_call(self, fn, args, where, keywords=(), name=None, qualified=None):
        """A call of the library or runtime function ``fn``, which generated code reaches
        under ``name`` in its namespace (``fn.__name__`` by default); the call's callee is
        ``fn`` itself, so its rule is found as for a call the user wrote."""
        name = name or fn.__name__
        self.namespace[name] = fn
        call = gast.copy_location(N.call(name, args, keywords), where)
        call.pb_callee = Callee("object", fn, name=qualified or qualified_name(fn))
        return call

    def live_read(self, name: str, where_node) -> gast.AST:
        """The expression that reads the free data name ``name`` when the generated code
        runs (its global or its closure cell), so a rebinding after the gradient was built
        is seen, exactly as the function itself would see it."""
        where, _ = self.fs.resolved[name]
        self.live.add(name)
        if where[0] == "cell":
            cell = f"_pb_cell_{name}"
            self.namespace[cell] = self.fs.fn.__closure__[where[1]]
            node = N.attr(cell, "cell_contents")
        else:
            self.namespace["_pb_globals"] = self.fs.fn.__globals__
            node = N.subscript("_pb_globals", N.const(name))
        return gast.copy_location(node, where_node)

    def free_name(self, e) -> gast.AST:
        """A free name used as a value: a live read for data, a baked binding otherwise."""
        if e.id in self.declared:  # global n / nonlocal n: as it is when the line runs
            return self.free_read(e.id, e)
        found, value = self.fs.lookup(e.id)
        if not found:
            return N.load(e.id)
        where = self.fs.resolved[e.id][0]
        if where[0] not in ("builtin", "import") and not is_baked_value(value):
            return self.live_read(e.id, e)
        self.bind_global(e)
        return N.load(e.id)

    def bind_free_names(self, stmt) -> None:
        """Bind, in place, the free names of a statement that runs as written and carries
        no gradient (``raise BadInput(...)``, ``assert np.all(x > 0), msg``): the generated
        code runs in a namespace of its own, where an exception class or a module the user
        imported is found only once bound. Names a lambda or comprehension inside binds
        stay as they are."""
        bound = {
            n.id
            for n in walk(stmt)
            if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)
        }
        normalizer = self

        class _Bind(gast.NodeTransformer):
            def visit_Name(self, node):
                if (
                    isinstance(node.ctx, gast.Load)
                    and node.id not in normalizer.locals
                    and node.id not in bound
                ):
                    return normalizer.free_name(node)
                return node

        _Bind().visit(stmt)

    def _explicit_super(self, e) -> None:
        """``super()`` in a method as ``super(__class__, self)`` (in place): the generated
        code is no method of the class, so the zero-argument form would find no
        ``__class__`` cell; the method's own cell gives the class."""
        fn = self.fs.fn
        if e.args or e.keywords or not (isinstance(e.func, gast.Name) and e.func.id == "super"):
            return
        if "__class__" not in fn.__code__.co_freevars or self.fs.lookup("super")[1] is not super:
            return
        a = self.fs.tree.args
        first = (a.posonlyargs + a.args)[:1]
        if first:
            e.args = [gast.copy_location(N.load("__class__"), e), N.located(N.load(first[0].id), e)]

    # -- statements -------------------------------------------------------------------

    def attribute_store(self, target, value, stmts, where):
        """``obj.attr = value`` as the statement ``setattr(obj, "attr", value)``: it runs in
        the forward sweep as in the primal; the transformation refuses it (PB107) when a
        gradient would have to flow through the stored value."""
        obj = self.atom(target.value, stmts)
        self.namespace["_pb_setattr"] = builtins.setattr
        call = gast.copy_location(N.call("_pb_setattr", [obj, N.const(target.attr), value]), where)
        call.pb_callee = Callee("object", builtins.setattr, name="setattr")
        call.pb_attribute_store = target
        root = target.value
        call.pb_read_back = not isinstance(root, gast.Name) or may_read_back(
            self.fs.tree, root.id, target.attr, self.parents(), after=where
        )
        return N.expr_stmt(call, where)

    def object_item_store(self, target, value, stmts, where):
        """``obj.attr[key] = value`` as the statement ``store_item(obj.attr, key, value)``:
        a dict or list held by an object gets the value as in the primal (an array there
        is refused when it runs); the transformation refuses it (PB107) where a gradient
        would flow through the stored value back into the function."""
        container = self.atom(target.value, stmts)
        key = self.key_value(target.slice, stmts)
        here = N.const(self.fs.where(where))
        call = self.bound_call(store_item, [container, key, value, here], where)
        call.pb_item_store = target
        if isinstance(target.value, gast.Name):  # a dict parameter's item: never read back
            call.pb_read_back = False  # (side_effects.kept_parameter_item)
            return N.expr_stmt(call, where)
        root = target.value.value
        call.pb_read_back = not isinstance(root, gast.Name) or may_read_back(
            self.fs.tree, root.id, target.value.attr, self.parents(), after=where
        )
        return N.expr_stmt(call, where)

    def indexed_object(self, node):
        """The object of ``G[...]`` when ``G`` is a global object with an indexing of its
        own (``np.r_``, ``np.c_``, ``np.s_``, a user's lookup table object): its
        ``__getitem__`` is a call like any other, with a rule or refused; not an array,
        container, class or module, whose indexing the transformation models itself."""
        parts = dotted_parts(node)
        if parts is None or parts[0] in self.locals:
            return None
        found, obj = resolve_expr(self.fs, node, self.locals)
        if not found or isinstance(obj, _MODELLED_INDEXING) or isinstance(obj, (type, ModuleType)):
            return None
        if not hasattr(type(obj), "__getitem__"):
            return None
        return obj

    def getitem_call(self, e, obj, stmts):
        """``G[key]`` as a call of ``G``'s ``__getitem__`` (slices become ``slice(...)``):
        the bound method of a baked object (``np.r_``); for data read live, the method of
        its class, called with the live object (its class guarded)."""
        parts = dotted_parts(e.value)
        key = self.key_value(e.slice, stmts)
        name = "_pb_getitem_" + "_".join(parts)
        _, root = self.fs.lookup(parts[0])
        if is_baked_value(root):
            method, args = obj.__getitem__, [key]
            shown = ".".join(parts) + ".__getitem__"
        else:
            method = type(obj).__getitem__
            args = [self.atom(e.value, stmts), key]
            self.fs.type_guards[tuple(parts)] = type(obj)
            shown = f"{type(obj).__qualname__}.__getitem__"
        self.namespace[name] = method
        call = gast.copy_location(N.call(name, args), e)
        call.pb_callee = Callee("object", method, name=shown)
        return call

    def key_value(self, node, stmts):
        """An index expression as a value: a tuple of atoms, slices built by ``slice``."""
        if isinstance(node, gast.Slice):
            parts = [
                N.const(None) if getattr(node, f) is None else self.atom(getattr(node, f), stmts)
                for f in ("lower", "upper", "step")
            ]
            self.namespace["_pb_slice"] = builtins.slice
            call = gast.copy_location(N.call("_pb_slice", parts), node)
            call.pb_callee = Callee("object", builtins.slice, name="slice")
            name = self.fresh("k")
            stmts.append(N.assign(name, call, node))
            return N.load(name)
        if isinstance(node, gast.Tuple):
            elts = [self.key_value(x, stmts) for x in node.elts]
            name = self.fresh("k")
            stmts.append(N.assign(name, N.tuple_(elts), node))
            return N.load(name)
        return self.atom(node, stmts)

    def attribute(self, e, stmts):
        parts = dotted_parts(e)
        if parts is not None and parts[0] not in self.locals:
            found, _ = resolve_expr(self.fs, e, self.locals)
            root_found, root = self.fs.lookup(parts[0])
            if found and root_found and is_baked_value(root):
                # np.pi, math.tau, MyClass.CONST: the root is guarded, the attribute
                # is read when the code runs.
                return self.bind_global(e)
        base = self.atom(e.value, stmts)
        if e.attr == "flat":  # an array's elements in order (a record's field: its own)
            self.namespace["_pb_flat_of"] = flat_of
            c = N.call("_pb_flat_of", [base, N.const(self.fs.where(e))])
            c.pb_callee = Callee("object", flat_of, name="pullback.dynamic_attrs.flat_of")
            return gast.copy_location(c, e)
        if e.attr in ARRAY_ATTRIBUTES and module_class_with_field(self.fs, e.attr):
            # (a record's field T in this module: an array's T or the field, when it runs)
            self.namespace["_pb_array_attribute_of"] = array_attribute_of
            where = N.const(self.fs.where(e))
            c = N.call("_pb_array_attribute_of", [base, N.const(e.attr), where])
            c.pb_callee = Callee(
                "object", array_attribute_of, name="pullback.dynamic_attrs.array_attribute_of"
            )
            return gast.copy_location(c, e)
        if e.attr in ARRAY_ATTRIBUTES:
            fn = ARRAY_ATTRIBUTES[e.attr]
            c = N.call(N.attr("_np", fn.__name__), [base])
            c.pb_callee = Callee("object", fn, name=f"numpy.{fn.__name__}")
            return gast.copy_location(c, e)
        node = gast.copy_location(gast.Attribute(value=base, attr=e.attr, ctx=gast.Load()), e)
        node.pb_constant = e.attr in CONSTANT_ATTRIBUTES
        return node

    def _field_default(self, cls, name, where, stmts):
        """A local holding the default of the field ``name`` of the dataclass ``cls`` (its
        ``default_factory()`` called, as the constructor would), for a call that gives a
        later field by keyword; it carries no gradient."""
        helper = f"_pb_default_{cls.__name__}_{name}"
        while getattr(self.namespace.get(helper), "args", (cls, name)) != (cls, name):
            helper += "_"  # another class of the same name: its own helper
        maker = functools.partial(field_default, cls, name)
        call = self.bound_call(maker, [], where, name=helper, qualified="field_default")
        self.namespace[helper] = maker
        local = self.fresh("default")
        stmts.append(N.assign(local, call, where))
        return N.load(local)

    def _super_method(self, e, stmts) -> None:
        """``super().name(x)`` in a method, where ``name`` is a plain method of a parent, as
        ``super_method_function(__class__, self, "name")(self, x)`` (in place; a static or
        class method is called without ``self``): ``self`` is
        then an argument of the parent's method, and a record ``self`` (its fields carry a
        gradient) gets its cotangent through it, where ``super(__class__, self)`` would be
        a call of the class ``super`` with a differentiated argument."""
        fn, head = self.fs.fn, e.func
        if not (isinstance(head, gast.Attribute) and isinstance(head.value, gast.Call)):
            return
        inner = head.value
        if (
            inner.args
            or inner.keywords
            or not (isinstance(inner.func, gast.Name) and inner.func.id == "super")
        ):
            return
        if "__class__" not in fn.__code__.co_freevars or self.fs.lookup("super")[1] is not super:
            return
        a = self.fs.tree.args
        first = (a.posonlyargs + a.args)[:1]
        cell = fn.__closure__[fn.__code__.co_freevars.index("__class__")]
        owner = next((c for c in cell.cell_contents.__mro__[1:] if head.attr in c.__dict__), None)
        raw = owner.__dict__[head.attr] if owner is not None else None
        if not first or not isinstance(raw, (FunctionType, staticmethod, classmethod)):
            return  # an attribute of a parent: super(__class__, self) as it is
        receiver = first[0].id
        method = isinstance(raw, FunctionType)  # else called without self
        lookup = self.bound_call(
            super_method_function,
            [
                self.free_name(N.located(N.load("__class__"), e)),
                N.located(N.load(receiver), e),
                N.const(head.attr),
                N.const(method),
            ],
            e,
            name="_pb_super_method",
        )
        local = self.fresh("super")
        stmts.append(N.assign(local, lookup, e))
        e.func = N.located(N.load(local), e)
        if method:
            e.args = [N.located(N.load(receiver), e), *e.args]

    def call(self, e, stmts):
        self._super_method(e, stmts)
        self._explicit_super(e)
        callee = resolve_call(self.fs, e, self.locals)
        if callee.kind == "object" and is_record_class(callee.obj):
            _fields_in_order(e, callee.obj._fields, callee.obj._field_defaults)
        elif callee.kind == "object" and is_dataclass_class(callee.obj):
            cls = callee.obj
            _fields_in_order(e, *init_fields(cls), lambda f: self._field_default(cls, f, e, stmts))
        elif callee.kind == "object" and _is_dataclasses_replace(callee.obj):
            if len(e.args) == 1 and all(k.arg is not None for k in e.keywords):
                # replace(p, w=v) as replaced(p, ("w",), v): records_calls.py
                names = N.const(tuple(k.arg for k in e.keywords))
                values = [self.atom(k.value, stmts) for k in e.keywords]
                args = [self.atom(e.args[0], stmts), names, *values]
                # (records_calls imports dataclasses, which this program has: see below)
                from ..records_calls import replaced

                return self.bound_call(replaced, args, e, name="_pb_replaced")
        spelled = operator_expression(callee, e)
        if spelled is not None:
            # operator.mul(a, b) is a * b (functools.reduce(operator.mul, xs) too): the
            # operator itself, whose derivatives of any order the transform writes
            return self.operation(spelled, stmts)
        owner = getattr(callee.obj, "__self__", None) if callee.kind == "object" else None
        if isinstance(owner, np.ndarray) and isinstance(e.func, gast.Attribute):
            # W.dot(x) with a global array W: the same as x.dot(...) on a local one.
            name = e.func.attr
            if name in ARRAY_METHODS or name in ARRAY_VARARG_METHODS:
                fn = ARRAY_METHODS.get(name) or ARRAY_VARARG_METHODS[name]
                callee = Callee(
                    "array_method",
                    fn,
                    name=name,
                    receiver=e.func.value,
                    vararg=name in ARRAY_VARARG_METHODS,
                )
        if _is_user_method(callee, e.func) or _is_ruled_method(callee, e.func, self.registry):
            # MODEL.loss(x) on a global object: dispatched on the object as it is when the
            # code runs (read live), like a method of a local value.
            callee = Callee("method", name=e.func.attr, receiver=e.func.value)
        args = [self.atom(a, stmts) for a in e.args]
        keywords = [gast.keyword(arg=k.arg, value=self.atom(k.value, stmts)) for k in e.keywords]
        method = None
        if callee.kind == "object":
            method = rule_call_function(callee.obj, self.registry)
        if method is not None:
            # vec(x) with a np.vectorize object: Python calls type(vec).__call__(vec, x),
            # and that function's rule is the call's (the object is guarded as bound).
            receiver = self.bind_global(e.func) if dotted_parts(e.func) else e.func
            name = self.fresh(f"{type(callee.obj).__name__}_call")
            return self.bound_call(method, [receiver, *args], e, keywords, name=name)
        builder = _builder_name(callee)
        if builder is not None:
            # list_append(acc, v) in a generated gradient differentiated again: the
            # normalizer's own call, as when it wrote it (containers.py)
            call = self.bound_call(BUILDERS[builder], args, e, name=builder)
            call.pb_callee = Callee("internal", BUILDERS[builder], name=builder)
            return call
        if callee.kind == "object" and callee.obj in RRULES and not keywords:
            # star_call(f, args, keywords) in a generated gradient differentiated again:
            # the star-call the normalizer wrote first (star_runtime.py), not a function
            call = self.bound_call(callee.obj, args, e, name=callee.obj.__name__)
            call.pb_callee = Callee("star", callee.obj, name=callee.obj.__name__)
            return call
        if callee.kind == "object":
            func = self.bind_global(e.func) if dotted_parts(e.func) else e.func
        elif callee.kind == "array_method":
            receiver = self.atom(callee.receiver, stmts)
            fn = callee.obj
            func = N.attr("_np", fn.__name__)
            if callee.vararg and len(args) > 1:
                args = [N.tuple_(args)]
            if (
                fn is np.clip
                and len(args) == 1
                and not any(k.arg in ("max", "a_max") for k in keywords)
            ):
                # x.clip(lo) leaves the top open; np.clip(x, lo) would be missing a_max
                args = args + [N.const(None)]
            args = [receiver] + args
            callee = Callee("object", fn, name=f"numpy.{fn.__name__}")
        elif callee.kind == "method":
            receiver = self.atom(callee.receiver, stmts)
            func = gast.Attribute(value=receiver, attr=callee.name, ctx=gast.Load())
            callee.receiver = receiver
        else:
            func = self.atom(e.func, stmts) if callee.kind == "dynamic" else e.func
        node = gast.copy_location(gast.Call(func=func, args=args, keywords=keywords), e)
        node.pb_callee = callee
        return node


_BINARY = {
    operator.add: gast.Add,
    operator.sub: gast.Sub,
    operator.mul: gast.Mult,
    operator.truediv: gast.Div,
    operator.floordiv: gast.FloorDiv,
    operator.mod: gast.Mod,
    operator.pow: gast.Pow,
    operator.matmul: gast.MatMult,
}
_UNARY = {operator.neg: gast.USub, operator.pos: gast.UAdd}


def operator_expression(callee, e):
    """``a + b`` for ``operator.add(a, b)`` (and the other arithmetic operators of the
    ``operator`` module, which compute exactly what the operator computes), or None."""
    if callee.kind != "object" or e.keywords or any(isinstance(a, gast.Starred) for a in e.args):
        return None
    try:
        binary, unary = _BINARY.get(callee.obj), _UNARY.get(callee.obj)
    except TypeError:  # an unhashable callee
        return None
    if binary is not None and len(e.args) == 2:
        node = gast.BinOp(left=e.args[0], op=binary(), right=e.args[1])
    elif unary is not None and len(e.args) == 1:
        node = gast.UnaryOp(op=unary(), operand=e.args[0])
    else:
        return None
    return gast.copy_location(node, e)


def _builder_name(callee):
    """The name of a list/dict building helper (``list_append``) that ``callee`` calls."""
    if callee.kind != "object":
        return None
    for name, fn in BUILDERS.items():
        if callee.obj is fn:
            return name
    return None


def _is_user_method(callee, func) -> bool:
    """``obj.method(...)`` on a global object whose method is user Python code."""
    if callee.kind != "object" or not isinstance(func, gast.Attribute):
        return False
    return user_method_function(callee.obj) is not None


def _is_ruled_method(callee, func, registry) -> bool:
    """``A.dot(x)`` on a global object of a library's class whose method has a rule: read
    live and dispatched as a method of a local value is (dynamic_calls.call_method)."""
    if callee.kind != "object" or not isinstance(func, gast.Attribute):
        return False
    return ruled_method(callee.obj, registry) is not None


def _fields_in_order(e, fields, defaults, made=None) -> None:
    """``Params(b=b, w=w)`` as ``Params(w, b)`` (in place): a named tuple's (or a
    dataclass's) rule takes its fields by position; a field left out before a given one
    gets its default (read from the class) where that is a constant, or else the value
    ``made(name)`` gives (a dataclass's default object or ``default_factory``)."""
    if not e.keywords or any(k.arg is None for k in e.keywords):
        return
    if any(isinstance(a, gast.Starred) for a in e.args):
        return
    given = {k.arg: k.value for k in e.keywords}
    if set(given) - set(fields[len(e.args) :]):
        return  # Python's own TypeError, when the call runs
    values = list(e.args)
    for name in fields[len(e.args) :]:
        if name in given:
            values.append(given[name])
        elif not any(later in given for later in fields[fields.index(name) :]):
            break  # the rest are left out: the constructor gives their defaults
        elif name in defaults and isinstance(
            defaults[name], (int, float, complex, str, bool, type(None))
        ):
            default = defaults[name]
            values.append(gast.copy_location(gast.Constant(value=default, kind=None), e))
        elif made is not None:
            values.append(made(name))
        else:
            return  # keep the call as written (a named tuple's default that is an object)
    e.args, e.keywords = values, []


def _is_dataclasses_replace(obj) -> bool:
    """``obj is dataclasses.replace``, without importing ``dataclasses`` (pullback does not,
    for its cold start: a program that calls ``replace`` has imported it)."""
    module = sys.modules.get("dataclasses")
    return module is not None and obj is module.replace
