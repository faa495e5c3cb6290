"""The constructor function of a plain class: its ``__init__`` as a function of its arguments
that returns the object it builds, so that pullback differentiates it like any user function.

``Layer(W, 1.0)`` with ``W`` differentiated, for::

    class Layer:
        def __init__(self, W, b, scale=2.0):
            self.W = W * scale
            self.b = b

resolves (resolve.py) to the function pullback reads as::

    def Layer(W, b, scale=2.0):
        self_W = W * scale
        self_b = b
        return new_record(record_class, ('W', 'b'), self_W, self_b)

with the user's lines and file, so a refusal inside it names the user's ``__init__``.
Every attribute the ``__init__`` stores is a field of the record (records_plain.py): methods
then read them as a dataclass's fields. ``super().__init__(...)`` is the parent's function,
returning its fields as a tuple. Nothing else about the object is followed, so a class is
taken this way only where that is the whole of what constructing it does (:func:`refusal`):
no ``__new__``, ``__setattr__``/``__getattr__``, metaclass (but
``abc.ABCMeta``, whose ``abc.ABC`` base is empty), multiple bases,
library or C class (``__slots__`` is fine: the record holds its fields in the slots), and
an ``__init__`` that uses ``self`` only to store and read its
attributes and to call methods that only read it (plain_methods.py: such a call gets an
object holding the attributes stored so far). Any other class stays a call of the class
(refused where a differentiated value reaches it, PB301, with this module's reason).
"""

from __future__ import annotations

import abc
import copy
import types

import gast

from .errors import PullbackError
from .guards import is_library_module_name
from .plain_methods import live_kind, live_method, reads_only
from .records_plain import UNSET, new_record, set_layout
from .source import factory_code, load_source, with_source
from .tree_walk import walk

_FORBIDDEN = ("__new__", "__setattr__", "__getattr__", "__getattribute__", "__delattr__")
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement, not in C
_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)

#: The class attribute that keeps ``(the __init__ functions it was made from, function or
#: refusal)``: a cache of a fact of the class, remade when an ``__init__`` along the way is
#: replaced. Kept on the class itself, so that it dies with the class (the function refers
#: to its class: a table keyed weakly by the class would keep every class alive).
_CACHE = "__pullback_constructor__"


class Refused(Exception):
    """Why a class is no plain record class: ``(what, fix)`` and the user's place."""

    def __init__(self, what: str, fix: str, where: str = ""):
        super().__init__(what)
        self.what, self.fix, self.where = what, fix, where


def _chain(cls) -> list:
    """``cls`` and its bases up to ``object`` (excluded), one base each, or a refusal."""
    if type(cls) not in (type, abc.ABCMeta):  # ABCMeta makes objects as type does
        raise Refused(
            f"a class with the metaclass '{type(cls).__name__}' (which may change how its "
            "objects are made)",
            "use a plain class or a @dataclass, or register a rule for the class",
        )
    chain = []
    for c in cls.__mro__[:-1]:
        if c is abc.ABC:  # an empty class (its __slots__ is ()): abstract methods only
            continue
        if len(c.__bases__) != 1:
            raise Refused(
                f"a class with several bases ('{c.__name__}')",
                "use single inheritance, or register a rule for the class",
            )
        if not c.__flags__ & _HEAPTYPE:
            raise Refused(
                f"a class built on the C-extension class '{c.__name__}'",
                "keep the values as attributes of a plain class (or a @dataclass), or "
                "register a rule for the class",
            )
        # (__slots__: its objects hold the fields in slots, records_plain.new_record)
        for name in _FORBIDDEN:
            if name in c.__dict__:
                raise Refused(*_forbidden(name, c.__name__))
        chain.append(c)
    return chain


def _forbidden(method, name):
    return (
        f"a class that defines {method} ('{name}'), which changes what making or reading "
        "its objects does",
        f"remove {method} (keep plain attributes), or register a rule for the class",
    )


def refusal(cls):
    """``(what, fix)`` of PB301 for a call of ``cls`` with differentiated values where its
    constructor cannot be followed (a plain class), or None (taken, or no such class)."""
    made = constructor_of(cls)
    return made if isinstance(made, tuple) else None


def is_candidate(cls) -> bool:
    """Whether ``cls`` is a user's class that is no dataclass, named tuple or library class."""
    return (
        isinstance(cls, type)
        and not hasattr(cls, "__dataclass_fields__")
        and not issubclass(cls, BaseException)
        and not is_library_module_name(getattr(cls, "__module__", "") or "builtins")
        and cls.__mro__[-1] is object
        and not (issubclass(cls, tuple) and hasattr(cls, "_fields"))
    )


def constructor_of(cls):
    """The constructor function of ``cls`` (a plain class), ``(what, fix)`` where the class
    is refused, or None (no user's plain class)."""
    if not is_candidate(cls):
        return None
    inits = tuple(c.__dict__.get("__init__") for c in cls.__mro__[:-1])
    cached = cls.__dict__.get(_CACHE)
    if (
        cached is not None
        and len(cached[0]) == len(inits)
        and all(a is b for a, b in zip(cached[0], inits, strict=True))
    ):
        return cached[1]
    try:
        chain = _chain(cls)
        fn, names = _build(cls, chain, 0, as_tuple=False)
        set_layout(cls, names)
        made = fn
    except Refused as r:
        made = (f"{r.what}{' at ' + r.where if r.where else ''}", r.fix)
    try:
        type.__setattr__(cls, _CACHE, (inits, made))
    except (TypeError, AttributeError):  # a class that takes no attribute: made again
        pass
    return made


def _owner_index(chain, start: int):
    for k in range(start, len(chain)):
        if "__init__" in chain[k].__dict__:
            return k
    return None


def _build(cls, chain, start: int, as_tuple: bool):
    """``(function, field names)`` for the ``__init__`` found from ``chain[start]`` on,
    building records of ``cls`` (or, ``as_tuple``, returning the fields as a tuple)."""
    k = _owner_index(chain, start)
    if k is None:  # object.__init__: no arguments, no fields
        return _empty(cls, as_tuple), ()
    init = chain[k].__dict__["__init__"]
    if not isinstance(init, types.FunctionType):
        raise Refused(
            f"a class whose __init__ is no Python function ('{chain[k].__name__}')",
            "write __init__ in Python, or register a rule for the class",
        )
    try:
        fs = load_source(init)
    except PullbackError as exc:
        raise Refused(
            f"a class whose __init__ has no source ({str(exc).splitlines()[0]})",
            "define the class in a .py file, or register a rule for the class",
        ) from None
    parent = None
    if k + 1 <= len(chain):
        parent = lambda: _build(cls, chain, k + 1, as_tuple=True)  # noqa: E731
    rewrite = _Rewrite(fs, cls, parent, as_tuple)
    tree = rewrite.run()
    return _compile(fs, tree, cls, init, rewrite.cells), tuple(rewrite.fields)


def _empty(cls, as_tuple):
    if as_tuple:

        def construct():
            return ()
    else:

        def construct():
            return new_record(cls, ())

    return construct


def _name(id_, ctx=None):
    return gast.Name(id_, ctx or gast.Load(), None, None)


def _call(func, args):
    return gast.Call(func=func, args=args, keywords=[])


def _is_self(node, me) -> bool:
    return isinstance(node, gast.Name) and node.id == me


class _Rewrite:
    """The ``__init__``'s tree rewritten into the constructor function (see the module
    docstring); refusals name the user's line."""

    def __init__(self, fs, cls, parent, as_tuple):
        self.fs, self.cls, self.parent, self.as_tuple = fs, cls, parent, as_tuple
        tree = fs.tree
        params = tree.args.posonlyargs + tree.args.args
        if not params:
            raise Refused("a class whose __init__ takes no 'self'", "give __init__ a 'self'")
        self.me = params[0].id
        self.taken = {n.id for n in walk(tree) if isinstance(n, gast.Name)}
        self.fields: list = []
        self.locals: dict = {}
        self.partials: list = []  # new_record calls of the objects made for method calls
        self.cells: dict = {}

    def class_attribute(self, attr):
        return _class_attribute(self.cls, attr)

    def kind(self, attr):
        return live_kind(self.cls, attr)

    def method_of(self, attr):
        """``(gast tree, is_property)`` of the method or property getter ``attr``."""
        kind = self.kind(attr)
        if kind == "method":
            return load_source(live_method(self.cls, attr)).tree, False
        if kind == "property":
            fget = live_method(self.cls, attr).fget
            if isinstance(fget, types.FunctionType):
                return load_source(fget).tree, True
        return None

    def method_call(self, node):
        """``self.m(args)`` of a method that only reads (plain_methods.py): its function
        called on an object holding the attributes stored so far."""
        name = node.func.attr
        try:
            tree, _ = self.method_of(name)
            problem = reads_only(tree, self.method_of, {name})
        except PullbackError as exc:
            problem = f"has no source ({str(exc).splitlines()[0]})"
        if problem is not None:
            self.refuse(
                node,
                f"an __init__ that calls 'self.{name}', which {problem}",
                "call a function (or a @staticmethod) that returns the values, and store "
                "them in __init__",
            )
        made = _call(self.helper("new_record", new_record), [])
        self.partials.append(made)  # its arguments: every field's local, set in run()
        method = gast.Attribute(self.helper("record_class", self.cls), name, gast.Load())
        call = gast.Call(method, [made, *node.args], node.keywords)
        for n in (made, method, call):
            gast.copy_location(n, node)
        for k, a in enumerate(call.args[1:], 1):
            call.args[k] = self.expression(a)
        for k in call.keywords:
            k.value = self.expression(k.value)
        return call

    def unbound_function(self, attr) -> bool:
        """Whether ``self.attr`` is a static method (its call takes no object)."""
        raw = next((c.__dict__[attr] for c in self.cls.__mro__ if attr in c.__dict__), None)
        return isinstance(raw, staticmethod)

    def fresh(self, base: str) -> str:
        name = base
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        return name

    def refuse(self, node, what, fix):
        raise Refused(what, fix, self.fs.where(node))

    def field_local(self, attr: str) -> str:
        if attr not in self.locals:
            self.fields.append(attr)
            self.locals[attr] = self.fresh(f"self_{attr}")
        return self.locals[attr]

    def run(self):
        tree = copy.deepcopy(self.fs.tree)
        args = tree.args
        if args.posonlyargs:
            args.posonlyargs = args.posonlyargs[1:]
        else:
            args.args = args.args[1:]
        # every attribute stored anywhere is a field, read from its local everywhere (a
        # loop may read what an earlier iteration stored)
        stores = [
            n
            for n in walk(tree)
            if isinstance(n, gast.Attribute)
            and isinstance(n.ctx, gast.Store)
            and _is_self(n.value, self.me)
            and not n.attr.startswith("__")
        ]
        for n in sorted(stores, key=lambda n: (n.lineno, n.col_offset)):
            self.field_local(n.attr)
        if not self.as_tuple and isinstance(self.cls, type):
            # an attribute only a method stores (`fit` setting `self.w`) is a field too,
            # absent until that method runs: the method's store is then a new version of
            # the object (transform/object_stores.py), not a value kept outside
            for attr in method_stores(self.cls):
                if attr not in self.locals and self.class_attribute(attr) is None:
                    self.field_local(attr)
        body = self.statements(tree.body, top=True)
        top = {
            s.targets[0].id
            for s in body
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
        }
        unset = []
        for a in self.fields:
            target = [_name(self.locals[a], gast.Store())]
            if self.class_attribute(a) is not None:  # read before it is stored: the class's
                klass = self.helper("record_class", self.cls)
                unset.append(gast.Assign(target, gast.Attribute(klass, a, gast.Load())))
            elif self.locals[a] not in top or self.partials:  # stored on a branch only
                unset.append(gast.Assign(target, self.helper("UNSET", UNSET)))  # (absent)
        names = gast.Tuple([gast.Constant(a, None) for a in self.fields], gast.Load())
        for made in self.partials:  # the object a method call gets: the fields so far
            klass = self.helper("record_class", self.cls)
            made.args = [klass, names, *[_name(self.locals[a]) for a in self.fields]]
        end = self.result()
        if body:  # after the last line: the checks order a name's uses by their places
            last = body[-1]
            end.lineno = getattr(last, "end_lineno", None) or last.lineno
            end.col_offset = getattr(last, "end_col_offset", None) or last.col_offset
        tree.body = unset + body + [end]
        tree.name = self.cls.__name__
        for s in unset:
            gast.copy_location(s, tree)
        gast.fix_missing_locations(tree)
        return tree

    def helper(self, base, value):
        name = self.cells.setdefault(base, (self.fresh(base), value))[0]
        return _name(name)

    def result(self):
        values = [_name(self.locals[a]) for a in self.fields]
        if self.as_tuple:
            return gast.Return(gast.Tuple(values, gast.Load()))
        names = gast.Tuple([gast.Constant(a, None) for a in self.fields], gast.Load())
        func = self.helper("new_record", new_record)
        return gast.Return(_call(func, [self.helper("record_class", self.cls), names, *values]))

    def statements(self, stmts, top=False):
        out = []
        for s in stmts:
            if top and self.is_super_init(s):
                out.extend(self.super_init(s))
                continue
            if isinstance(s, gast.Return):
                if s.value is not None:
                    self.refuse(s, "an __init__ that returns a value", "return nothing")
                out.append(gast.copy_location(self.result(), s))
                continue
            if isinstance(s, gast.Delete) and any(
                isinstance(t, gast.Attribute) and _is_self(t.value, self.me) for t in s.targets
            ):
                self.refuse(
                    s,
                    "an __init__ that deletes an attribute of 'self'",
                    "store every attribute once, or compute it in a method",
                )
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    setattr(s, field, self.statements(inner))
            if isinstance(s, gast.Try):
                for h in s.handlers:
                    h.body = self.statements(h.body)
            self.expressions(s)
            out.append(s)
        return out

    def is_super_init(self, s) -> bool:
        if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Call)):
            return False
        f = s.value.func
        return (
            isinstance(f, gast.Attribute)
            and f.attr == "__init__"
            and isinstance(f.value, gast.Call)
            and isinstance(f.value.func, gast.Name)
            and f.value.func.id == "super"
            and not f.value.args
        )

    def super_init(self, s):
        call = s.value
        fn, names = self.parent()
        for a in call.args + [k.value for k in call.keywords]:
            self.expression(a)
        if not names and not call.args and not call.keywords:
            return []
        parts = self.fresh("parent_fields")
        made = [
            gast.Assign(
                [_name(parts, gast.Store())], _call(self.helper("parent_init", fn), call.args)
            )
        ]
        made[0].value.keywords = call.keywords
        for k, a in enumerate(names):
            index = gast.Subscript(_name(parts), gast.Constant(k, None), gast.Load())
            made.append(gast.Assign([_name(self.field_local(a), gast.Store())], index))
        for m in made:
            gast.copy_location(m, s)
        return made

    def expressions(self, s, blocks=("body", "orelse", "finalbody", "handlers")):
        """Rewrite each expression ``s`` holds (:meth:`expression`), in place, but for the
        fields named in ``blocks`` (a statement's nested statements, rewritten as such)."""
        for name, value in gast.iter_fields(s):
            if name in blocks:
                continue
            if isinstance(value, list):
                for k, v in enumerate(value):
                    if isinstance(v, gast.AST):
                        value[k] = self.expression(v)
            elif isinstance(value, gast.AST):
                setattr(s, name, self.expression(value))

    def expression(self, node):
        """``node`` with ``self.a`` as the field's local (or the class's attribute)."""
        if isinstance(node, gast.Attribute) and _is_self(node.value, self.me):
            return self.attribute(node)
        if (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Attribute)
            and _is_self(node.func.value, self.me)
            and node.func.attr not in self.locals
            and self.kind(node.func.attr) == "method"
        ):
            return self.method_call(node)
        if _is_self(node, self.me):
            self.refuse(
                node,
                "an __init__ that hands 'self' on (stores, passes or compares "
                "the object it builds)",
                "keep __init__ to storing attributes; register the object after "
                "constructing it, outside the differentiated function",
            )
        if isinstance(node, _SCOPES) and any(_is_self(n, self.me) for n in walk(node)):
            self.refuse(
                node,
                "an __init__ with a nested function that reads 'self'",
                "compute the value in a method instead",
            )
        if (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Name)
            and (node.func.id == "super")
        ):
            self.refuse(
                node,
                "an __init__ that calls super() other than `super().__init__(...)` as a statement",
                "call `super().__init__(...)` on its own line",
            )
        self.expressions(node, ())
        return node

    def attribute(self, node):
        attr = node.attr
        if attr.startswith("__") and attr.endswith("__"):
            self.refuse(
                node, f"an __init__ that uses 'self.{attr}'", "store and read plain attributes only"
            )
        if isinstance(node.ctx, gast.Store) or attr in self.locals:
            return gast.copy_location(_name(self.field_local(attr), node.ctx), node)
        if isinstance(node.ctx, gast.Del):
            self.refuse(
                node,
                "an __init__ that deletes an attribute of 'self'",
                "store every attribute once",
            )
        static = self.class_attribute(attr)
        if static is None and self.unbound_function(attr):
            static = (None,)  # a staticmethod: no 'self' passed
        if static is None:
            self.refuse(
                node,
                f"an __init__ that calls a method of the object it builds, or reads an "
                f"attribute it does not store ('self.{attr}')",
                "compute the value in a function (or a @staticmethod) and store it",
            )
        klass = self.helper("record_class", self.cls)
        return gast.copy_location(gast.Attribute(klass, attr, gast.Load()), node)


def method_stores(cls) -> list:
    """The attributes the Python methods of ``cls`` (but ``__init__``) store on their
    object, ``self.w = ...`` or ``self.w -= ...``, in the order the class defines them;
    a method without source stores nothing pullback follows."""
    found = {}
    for c in reversed(cls.__mro__[:-1]):
        for name, raw in c.__dict__.items():
            if name == "__init__" or not isinstance(raw, types.FunctionType):
                continue
            try:
                tree = load_source(raw).tree
            except PullbackError:
                continue
            params = tree.args.posonlyargs + tree.args.args
            if not params:
                continue
            me = params[0].id
            for n in walk(tree):
                if (
                    isinstance(n, gast.Attribute)
                    and isinstance(n.ctx, gast.Store)
                    and _is_self(n.value, me)
                    and not n.attr.startswith("__")
                    and live_kind(cls, n.attr) is None
                ):
                    found.setdefault(n.attr, None)
    return list(found)


def _class_attribute(cls, attr):
    """The class attribute ``attr`` of ``cls`` read through ``self`` in ``__init__``, where
    it is a plain value (no function, property or other descriptor), else None."""
    for c in cls.__mro__:
        if attr in c.__dict__:
            v = c.__dict__[attr]
            if hasattr(type(v), "__get__") or callable(v):
                return None
            return (v,)
    return None


def _compile(fs, tree, cls, init, cells: dict):
    """The function of ``tree`` with ``init``'s globals, its free names' cells, its defaults,
    carrying its source (``__pullback_source__``, the user's file and lines)."""
    made = compile_rewritten(fs, tree, init, dict(cells.values()), "constructor")
    made.__name__ = made.__qualname__ = cls.__name__
    made.__doc__ = f"The constructor of {cls.__qualname__} (pullback.plain_classes)."

    with_source(made, fs, tree)
    made.__pullback_class__ = cls  # a rule registered for the class is its rule (registry)
    return made


def compile_rewritten(fs, tree, fn, free: dict, base: str):
    """The function of ``tree``, a rewrite of the Python function ``fn``'s source ``fs``:
    ``fn``'s globals, cells and defaults, and the values of ``free`` (name -> value) as
    cells of their own; compiled at the user's lines (a traceback names them), named
    ``base`` (or ``base_``, ... : a name the body does not read), annotations and
    decorators left out."""
    plain = copy.deepcopy(tree)
    plain.args.defaults = []
    plain.args.kw_defaults = [None] * len(plain.args.kwonlyargs)
    plain.returns = None
    for a in plain.args.posonlyargs + plain.args.args + plain.args.kwonlyargs:
        a.annotation = None
    for a in (plain.args.vararg, plain.args.kwarg):
        if a is not None:
            a.annotation = None
    plain.decorator_list = []
    # (named as no name of the body: the class's name may be read in it, `Layer.count`)
    taken = {n.id for n in walk(tree) if isinstance(n, gast.Name)}
    plain.name = next(
        f"{base}{'_' * k}" for k in range(len(taken) + 1) if f"{base}{'_' * k}" not in taken
    )
    own = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True))
    names = sorted(set(free) | (set(own) - {"__class__"}))
    body = [plain, gast.Return(_name(plain.name))]
    code = factory_code("factory", names, body, fs.filename, fs.first_line)
    inner = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    closure = tuple(own[n] if n in own else types.CellType(free[n]) for n in inner.co_freevars)
    made = types.FunctionType(inner, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    made.__kwdefaults__ = fn.__kwdefaults__
    made.__qualname__ = fn.__qualname__
    made.__module__ = fn.__module__
    return made
