"""Step 2 of the pipeline: what each called name or attribute chain refers to.

>>> import numpy as np
>>> def f(x):
...     return np.sum(x) + x.mean()
>>> from pullback.source import load_source      # doctest: +SKIP
>>> fs = load_source(f)                            # doctest: +SKIP
>>> call = fs.tree.body[0].value.left              # doctest: +SKIP
>>> resolve_call(fs, call, local_names(fs.tree)).obj is np.sum   # doctest: +SKIP
True

Names are looked up as the function would see them: closure cells, then globals, then
builtins. Method calls on array values map to their NumPy functions (``x.sum()`` is
``np.sum(x)``), so one rule serves both spellings.
"""

from __future__ import annotations

import types

import gast
import numpy as np

from .binding_index import BindingIndex, binding_index, bindings_fixed, bound_once  # noqa: F401 (imported from here)
from .plain_classes import constructor_of
from .receiver_classes import (
    binding_values,
    holders,
    method_class,
    module_class_with,
    python_method_of,
    user_function,
)
from .sparse_values import is_sparse
from .tree_walk import all_nodes, lean_nodes, parent_map, statements, walk  # noqa: F401 (parent_map: imported from here)

# ndarray methods that are NumPy functions of the array (``x.m(*a)`` == ``np.m(x, *a)``).
ARRAY_METHODS = {
    name: getattr(np, name)
    for name in (
        "sum mean prod max min std var dot ravel squeeze cumsum cumprod clip round "
        "argmax argmin argsort conj conjugate trace diagonal swapaxes all any nonzero "
        "repeat take ptp searchsorted"
    ).split()
    # only methods arrays have: x.ptp() is an AttributeError from NumPy 2 on, so it must
    # not quietly become np.ptp(x)
    if hasattr(np, name) and hasattr(np.ndarray, name)
}
ARRAY_METHODS["flatten"] = np.ravel
# (x.compress(c) is np.compress(c, x), the array second: it runs as a method, through the
# rule of np.ndarray.compress.)
# Methods whose arguments may be given spread out: x.reshape(2, 3), x.transpose(1, 0).
ARRAY_VARARG_METHODS = {"reshape": np.reshape, "transpose": np.transpose}
# Attribute reads on arrays.
ARRAY_ATTRIBUTES = {"T": np.transpose, "real": np.real, "imag": np.imag}
if hasattr(np, "matrix_transpose"):  # NumPy 2: x.mT swaps the last two axes
    ARRAY_ATTRIBUTES["mT"] = np.matrix_transpose
CONSTANT_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype", "itemsize", "nbytes"})

# Methods that change their receiver in place (arrays, lists, dicts, sets).
ARRAY_INPLACE_METHODS = frozenset(
    "sort fill resize put itemset setfield partition byteswap setflags".split()
)
CONTAINER_INPLACE_METHODS = frozenset(
    "append extend pop insert remove clear update setdefault popitem reverse add discard".split()
)


class Callee:
    """What a call's function expression refers to.

    ``kind`` is one of:

    * ``"object"`` — resolved at transform time to ``obj``;
    * ``"array_method"`` — ``receiver.name(...)`` mapped to the NumPy function ``obj``
      (``vararg`` when the method takes a spread-out shape or axes);
    * ``"method"`` — a method of a local value, known only at run time (an array method's
      name too, where a binding of the receiver may make it an object of a user class with
      its own method of that name: ``b = Box(x) if flag else x``; ``b.sum()``);
    * ``"dynamic"`` — a local variable holding a callable, known only at run time;
    * ``"unbound"`` — a name that the function cannot see.

    ``python_method``: for ``"method"``, the receiver's class is known before running and
    defines ``name`` in Python (``self.fill(x)`` in a class with a ``fill`` method), so an
    array method of the same name is not what runs (:mod:`pullback.receiver_classes`).

    (A plain class, not a dataclass: dataclasses cost about half a millisecond each at
    import, which every cold start pays.)
    """

    def __init__(
        self, kind: str, obj=None, name: str = "", receiver=None, vararg=False, python_method=False
    ):
        self.kind = kind
        self.obj = obj
        self.name = name
        self.receiver = receiver
        self.vararg = vararg
        self.python_method = python_method

    def __repr__(self) -> str:
        return f"Callee(kind={self.kind!r}, obj={self.obj!r}, name={self.name!r})"


SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)


def own_nodes(stmts):
    """Every node of ``stmts`` outside nested scopes (functions, lambdas, classes), the
    scope nodes themselves included."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, SCOPES):
            stack.extend(gast.iter_child_nodes(node))


#: Attributes of an array that are views of it (``x.T[0, 1] = v`` writes into ``x``).
VIEW_ATTRIBUTES = frozenset({"T", "mT", "real", "imag", "flat", "base"})


def object_item_target(target) -> bool:
    """``obj.attr[key]`` (a store target): an item of a container held by an object (not a
    view of an array, ``x.T[i, j]``, which is a write into ``x``)."""
    return (
        isinstance(target, gast.Subscript)
        and isinstance(target.value, gast.Attribute)
        and target.value.attr not in VIEW_ATTRIBUTES
        and dotted_parts(target.value) is not None
    )


def parameter_names(tree: gast.FunctionDef) -> list[str]:
    """Every parameter of ``tree`` in order, ``*args``/``**kwargs`` included (a tuple and a
    dict inside the function)."""
    a = tree.args
    star = [p for p in (a.vararg, a.kwarg) if p is not None]
    return [p.id for p in a.posonlyargs + a.args + a.kwonlyargs + star]


def local_names(tree: gast.FunctionDef, nodes=None) -> set[str]:
    """Parameters and every name the function body assigns (``nodes``: ``lean_nodes(tree)``
    or ``all_nodes(tree)`` when the caller walks it anyway)."""
    names = set()
    args = tree.args
    for a in args.posonlyargs + args.args + args.kwonlyargs:
        names.add(a.id)
    if args.vararg:
        names.add(args.vararg.id)
    if args.kwarg:
        names.add(args.kwarg.id)
    # by class (no class derives from these): a long function has tens of thousands of nodes
    name, store, delete = gast.Name, gast.Store, gast.Del
    for node in lean_nodes(tree) if nodes is None else nodes:
        if node.__class__ is name and (node.ctx.__class__ is store or node.ctx.__class__ is delete):
            names.add(node.id)
    return names


def dotted_parts(node) -> list[str] | None:
    """``a.b.c`` as ``['a', 'b', 'c']``; ``None`` when the chain does not start at a name."""
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def resolve_expr(fs, node, locals_: set[str]):
    """Resolve a Name/Attribute chain to ``(True, object)`` or ``(False, None)``."""
    parts = dotted_parts(node)
    if parts is None or parts[0] in locals_:
        return False, None
    found, value = fs.lookup(parts[0])
    if not found:
        return False, None
    for attr in parts[1:]:
        try:
            value = getattr(value, attr)
        except AttributeError:
            return False, None
    chains = getattr(fs, "resolved_chains", None)  # a file's static view records none
    if chains is not None and len(parts) > 1:
        chains[tuple(parts)] = value
    return True, value


def _python_method(fs, func: gast.Attribute, locals_) -> bool:
    """Whether ``receiver.name`` is a user class's Python method, known before running;
    asked only for names that arrays and containers change their receiver with."""
    if func.attr not in ARRAY_INPLACE_METHODS and func.attr not in CONTAINER_INPLACE_METHODS:
        return False
    return _user_method(fs, func, locals_)


def _user_method(fs, func: gast.Attribute, locals_) -> bool:
    """Whether ``receiver.name`` is a Python method of the user's class of ``receiver``,
    known before running (``self``, or a local bound once by a call of the class)."""
    cls = receiver_class(fs, func.value, locals_)
    return cls is not None and python_method_of(cls, func.attr)


def _spread_shape(call, name: str) -> bool:
    """``b.reshape(2, 3)``, ``b.transpose(*axes)``: a shape spread out, which only the
    array method's rewrite packs (``np.reshape(b, (2, 3))``); a call found at run time
    would pass it on to ``np.reshape`` as is, so such a call keeps the array method."""
    return name in ARRAY_VARARG_METHODS and (
        len(call.args) > 1 or any(isinstance(a, gast.Starred) for a in call.args)
    )


def _may_hold_method(fs, receiver, name: str, locals_) -> bool:
    """Whether the local ``receiver``, of a class not known before running, may hold an
    object of a user class defining ``name`` in Python: some binding of it (an assignment,
    a loop over values, a walrus) calls such a class in its value, or reads a name that
    may hold one (``b = Box(x) if flag else Box(2 * x)``, ``for b in (Box(x), Box(y))``,
    copies and stack restores in a generated gradient differentiated again), or is a
    field of a local (``v = h.v``) where the module holds such a class. Then ``b.sum()``
    is not ``np.sum(b)`` (which calls ``b.sum(axis=None, ...)``). An over-estimate costs
    only a dispatch when the code runs."""
    if not isinstance(receiver, gast.Name) or receiver.id not in locals_:
        return False
    tree = fs.tree
    if receiver.id in (a.id for a in tree.args.posonlyargs + tree.args.args):
        # a parameter: an object of a class of the module's with its own method (the
        # first parameter of a method is self, whose class receiver_class knows)
        return module_class_with(fs, name)
    index = binding_index(fs, tree)

    def makes(call):
        if isinstance(call, gast.Attribute):  # `v = h.v` of a local: a field may hold one
            return _field_of_local(call, locals_) and module_class_with(fs, name)
        if _calls_class_with(fs, call, name, locals_):
            return True
        # a helper's result: ``b = make_box(x)``
        found, value = resolve_expr(fs, call.func, locals_)
        return found and user_function(value) and module_class_with(fs, name)

    if index is None:
        return receiver.id in holders(binding_values(fs.tree), makes)
    found = index.holders.get(name)
    if found is None:
        found = index.holders[name] = holders(index.values, makes)
    return receiver.id in found


# the methods that only a SciPy sparse matrix has among the values a function computes with
_SPARSE_MAKERS = frozenset("tocsr tocsc tocoo todia tolil tobsr asformat multiply".split())


def _may_be_sparse(fs, receiver, locals_) -> bool:
    """Whether ``receiver`` may be a SciPy sparse matrix the function built: a call of a
    ``scipy.sparse`` function or class (``sp.diags(k)``), of a conversion method
    (``K.tocsr()``), or a local bound from one (or from an expression reading one). An
    over-estimate costs only a dispatch when the code runs."""

    def makes(call):
        if not isinstance(call, gast.Call):
            return False
        if isinstance(call.func, gast.Attribute) and call.func.attr in _SPARSE_MAKERS:
            # K.tocsr(), M.multiply(w); not np.multiply(a, b) of a module
            found_base, base = resolve_expr(fs, call.func.value, locals_)
            return not (found_base and isinstance(base, types.ModuleType))
        found, value = resolve_expr(fs, call.func, locals_)
        module = getattr(value, "__module__", None) if found else None
        return isinstance(module, str) and module.startswith("scipy.sparse")

    if isinstance(receiver, gast.Call):
        return makes(receiver)
    if isinstance(receiver, (gast.BinOp, gast.UnaryOp)):  # (s * A).sum()
        return any(
            _may_be_sparse(fs, part, locals_)
            for part in walk(receiver)
            if part is not receiver and isinstance(part, (gast.Name, gast.Call))
        )
    if isinstance(receiver, gast.Name) and receiver.id not in locals_:
        found, value = resolve_expr(fs, receiver, locals_)  # a global matrix
        return found and is_sparse(value)
    if not isinstance(receiver, gast.Name) or receiver.id not in locals_:
        return False
    cached = getattr(fs, "_sparse_locals", None)
    if cached is None:
        cached = holders(binding_values(fs.tree), makes)
        try:
            fs._sparse_locals = cached
        except AttributeError:  # a source view without attributes of its own
            pass
    return receiver.id in cached


def _field_of_local(value, locals_) -> bool:
    """Whether ``value`` reads a field of a local name (``h.v``, ``h.inner.v``), not an
    attribute of a module or a class the function reads from outside (``np.pi``)."""
    while isinstance(value, gast.Attribute):
        value = value.value
    return isinstance(value, gast.Name) and value.id in locals_


def may_hold_method(fs, value, name: str, locals_) -> bool:
    """Whether ``value`` (a local name, or a call) may be an object of a user class that
    defines ``name`` in Python, before running: a local as for ``b.sum()`` above, a call of
    such a class, or of a user's function where the module holds such a class."""
    if isinstance(value, gast.Call):
        if _calls_class_with(fs, value, name, locals_):
            return True
        found, fn = resolve_expr(fs, value.func, locals_)
        return found and user_function(fn) and module_class_with(fs, name)
    return _may_hold_method(fs, value, name, locals_)


def _calls_class_with(fs, call, name: str, locals_) -> bool:
    """Whether ``call`` makes an object of a user class defining ``name``: the class, or
    (in generated code) its constructor function (``__pullback_class__``)."""
    found, cls = resolve_expr(fs, call.func, locals_)
    if not found:
        return False
    if not isinstance(cls, type):
        cls = getattr(cls, "__pullback_class__", None)
    return isinstance(cls, type) and python_method_of(cls, name)


def receiver_class(fs, receiver, locals_):
    """The class of ``receiver`` known before running, or None: ``self`` of a method
    (:func:`~pullback.receiver_classes.method_class`), or a local bound once, by a call of a
    class (``c = Heap()``), or bound by such a call and then only to versions of that object
    (transform/object_stores.py: ``c = _pb_set_field(c, ...)``, copies of those names, and
    in generated code their values restored from a stack)."""
    if not isinstance(receiver, gast.Name):
        return None
    owned = getattr(fs, "owned_classes", None)  # versioned by transform/object_stores.py
    if owned and receiver.id in owned:
        return owned[receiver.id]
    tree = fs.tree
    params = tree.args.posonlyargs + tree.args.args
    if params and params[0].id == receiver.id:
        return method_class(fs)
    index = binding_index(fs, tree)
    if index is not None:
        once = index.counts.get(receiver.id, 0) == 1
        call = index.first_calls.get(receiver.id) if once else None
    else:
        once = bound_once(tree, receiver.id)
        call = _first_call(tree, receiver.id) if once else None
    if once:
        if call is None:
            return None
        found, cls = resolve_expr(fs, call.func, locals_)
        return cls if found and isinstance(cls, type) else None
    if not _has_versions(fs):
        return None
    return _versions_class(fs, receiver.id, locals_)


def _first_call(tree, name: str):
    """The call of ``tree``'s first ``name = call(...)`` statement, or None."""
    return next(
        (
            node.value
            for node in statements(tree)
            if isinstance(node, gast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], gast.Name)
            and node.targets[0].id == name
            and isinstance(node.value, gast.Call)
        ),
        None,
    )


def _has_versions(fs) -> bool:
    """Whether ``fs``'s function can see a function that returns a version of an object
    (transform/object_stores.py; generated code differentiated again calls them): only
    then are a name's bindings followed (a walk of the function), once per function."""
    found = getattr(fs, "_pb_has_versions", None)
    if found is None:
        # (a function of a file `pullback check` parsed has no live function: no globals)
        live = getattr(fs, "fn", None)
        scopes = (getattr(fs, "namespace", None) or {}, getattr(live, "__globals__", {}))
        found = any(
            isinstance(v, types.FunctionType) and "__pullback_keeps_receiver__" in v.__dict__
            for scope in scopes
            for v in list(scope.values())
        )
        fs._pb_has_versions = found
    return found


def _bindings(tree) -> dict:
    """name -> [(value, (position, length) in a tuple target, or None)] of the
    assignments of ``tree``; any other binding of a name counts as ``(None, None)``."""
    out: dict = {}
    counted = set()
    for node in walk(tree):
        if isinstance(node, gast.Assign) and len(node.targets) == 1:
            t = node.targets[0]
            if isinstance(t, gast.Name):
                out.setdefault(t.id, []).append((node.value, None))
                counted.add(id(t))
            elif isinstance(t, gast.Tuple):
                for k, e in enumerate(t.elts):
                    if isinstance(e, gast.Name):
                        out.setdefault(e.id, []).append((node.value, (k, len(t.elts))))
                        counted.add(id(e))
        elif isinstance(node, (gast.FunctionDef, gast.ClassDef)) and node is not tree:
            out.setdefault(node.name, []).append((None, None))
        elif isinstance(node, (gast.Global, gast.Nonlocal)):
            for n in node.names:
                out.setdefault(n, []).append((None, None))
    for node in walk(tree):
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
            if id(node) not in counted:
                out.setdefault(node.id, []).append((None, None))
    return out


def _versions_class(fs, name: str, locals_):
    """The class of the object every binding of ``name`` holds, through versions of it
    (functions marked ``__pullback_keeps_receiver__`` return their first argument, or a
    pair whose last item is it), copies and stack restores; else None."""
    bindings = _bindings(fs.tree)
    classes, seen, todo = set(), set(), [name]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        for value, place in bindings.get(n, [(None, None)]):
            if isinstance(value, gast.Name) and place is None:
                todo.append(value.id)  # a copy
            elif isinstance(value, gast.Name):  # restored from a stack: what it pushed
                pushed = [v for v, p in bindings.get(value.id, ()) if p is None]
                for v in pushed:
                    if isinstance(v, gast.Constant) and v.value is None:
                        continue
                    if not (isinstance(v, gast.Tuple) and len(v.elts) == place[1]):
                        return None
                    item = v.elts[place[0]]
                    if not isinstance(item, gast.Name):
                        return None
                    todo.append(item.id)
                if not pushed:
                    return None
            elif isinstance(value, gast.Call):
                found, fn = resolve_expr(fs, value.func, locals_)
                if not found:
                    return None
                if isinstance(fn, type) and place is None:
                    classes.add(fn)
                elif getattr(fn, "__pullback_keeps_receiver__", False) and value.args:
                    if place is not None and place[0] != place[1] - 1:
                        return None
                    if not isinstance(value.args[0], gast.Name):
                        return None
                    todo.append(value.args[0].id)
                else:
                    return None
            elif isinstance(value, gast.Constant) and value.value is None and place is None:
                continue  # generated code's declaration of its names
            else:
                return None
    return classes.pop() if len(classes) == 1 else None


def resolve_call(fs, call: gast.Call, locals_: set[str]) -> Callee:
    """Classify the function of ``call`` (see :class:`Callee`)."""
    func = call.func
    found, value = resolve_expr(fs, func, locals_)
    if found:
        parts = dotted_parts(func)
        if isinstance(value, type):  # a plain class: its constructor function
            made = constructor_of(value)
            if isinstance(made, types.FunctionType):
                chains = getattr(fs, "resolved_chains", None)
                if chains is not None:  # guarded: a replaced __init__ builds the gradient again
                    chains[(*parts, "__init__")] = value.__init__
                value = made
        return Callee("object", value, name=".".join(parts))
    if isinstance(func, gast.Attribute):
        base_parts = dotted_parts(func.value)
        base_is_global = base_parts is not None and base_parts[0] not in locals_
        if base_is_global:
            found_base, _ = resolve_expr(fs, func.value, locals_)
            if found_base:  # a module or object that lacks this attribute
                return Callee("unbound", name=".".join(base_parts + [func.attr]))
        name = func.attr
        if _is_namespace(fs, func.value):
            # xp.sum(x) on a namespace found at run time is the namespace's function,
            # dispatched on the value of xp when the code runs (not the method x.sum).
            return Callee("method", name=name, receiver=func.value)
        if (name in ARRAY_METHODS or name in ARRAY_VARARG_METHODS) and _may_be_sparse(
            fs, func.value, locals_
        ):
            # S.sum(axis=0) of a SciPy sparse matrix the function built: its own method
            # (dispatched on the value when the code runs), not np.sum of an array
            return Callee("method", name=name, receiver=func.value)
        if name in ARRAY_METHODS or name in ARRAY_VARARG_METHODS:
            cls = receiver_class(fs, func.value, locals_)
            if cls is not None and python_method_of(cls, name):
                # b.clip(x) of an object of the user's class that defines clip: its method,
                # not the array method of the same name
                return Callee("method", name=name, receiver=func.value, python_method=True)
            if (
                cls is None
                and not _spread_shape(call, name)
                and _may_hold_method(fs, func.value, name, locals_)
            ):
                # b = Box(x) if flag else Box(2 * x); b.sum(): an object of a class with its
                # own sum, or an array: dispatched on the value when the code runs
                # (dynamic_calls.call_method runs np.sum's rule only for an array)
                return Callee("method", name=name, receiver=func.value)
        if name in ARRAY_METHODS:
            return Callee("array_method", ARRAY_METHODS[name], name=name, receiver=func.value)
        if name in ARRAY_VARARG_METHODS:
            return Callee(
                "array_method",
                ARRAY_VARARG_METHODS[name],
                name=name,
                receiver=func.value,
                vararg=True,
            )
        python_method = _python_method(fs, func, locals_)
        return Callee("method", name=name, receiver=func.value, python_method=python_method)
    if isinstance(func, gast.Name):
        if func.id in locals_:
            return Callee("dynamic", name=func.id)
        return Callee("unbound", name=func.id)
    return Callee("dynamic", name=gast.unparse(func).strip())


# Calls that return an array-API namespace: ``array_api_compat.array_namespace(x)``
# (also re-exported by SciPy and scikit-learn under these names), ``x.__array_namespace__()``.
_NAMESPACE_GETTERS = frozenset({"array_namespace", "get_namespace", "__array_namespace__"})


def _is_namespace(fs, receiver) -> bool:
    """Whether ``receiver`` is a local name that the function binds to an array-API
    namespace and never to anything else (so ``receiver.sum`` is not an array method)."""
    if not isinstance(receiver, gast.Name):
        return False
    return receiver.id in namespace_locals(fs)


def namespace_locals(fs) -> frozenset:
    """The local names that the function binds only to the result of a namespace getter
    (computed once per function source)."""
    cached = getattr(fs, "_namespace_locals", None)
    if cached is not None:
        return cached
    tree = getattr(fs, "tree", None)
    # A name also bound some other way (a loop target, a second assignment) is not sure.
    stores: dict[str, int] = {}
    assigns: dict[str, int] = {}
    for node in walk(tree) if tree is not None else ():
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, gast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, gast.Name) and _is_namespace_call(node.value):
                assigns[target.id] = assigns.get(target.id, 0) + 1
    names = frozenset(n for n, count in assigns.items() if stores.get(n) == count)
    try:
        fs._namespace_locals = names
    except AttributeError:  # a source view without attributes of its own
        pass
    return names


def _is_namespace_call(value) -> bool:
    if not isinstance(value, gast.Call):
        return False
    func = value.func
    name = func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", None)
    return name in _NAMESPACE_GETTERS
