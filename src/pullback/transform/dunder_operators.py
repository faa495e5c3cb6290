"""Operators whose operands are not proved numbers or arrays, dispatched at run time.

``c = a + b`` where ``a`` or ``b`` is of unknown kind (an object of a user's class, a
value a call returned) may run the class's own ``__add__`` (or ``__radd__`` of the right
operand, ``__neg__``, ``__abs__``), which the inline arithmetic of the sweeps knows nothing
of. After kinds are inferred, such a statement, where a gradient flows through it, becomes
the call of a pseudo method ``c = a.__pb_add__(b)`` found at run time
(:mod:`pullback.operator_dispatch`): Python's dispatch runs there, the user's method is
differentiated as any method found at run time (reverse, differentiated again, forward
mode), and numbers, arrays, lists and tuples take the ``operator`` module's rule.

Statements whose operands are proved numbers or arrays (kinds ``scalar``, ``("array",
n)``), or constants, are left as they are: their generated code does not change.
"""

from __future__ import annotations

import builtins
import types

import gast

from ..dynamic_attrs import array_attribute_of, attribute_of
from ..guards import is_library_module_name
from ..object_items import ITER, LIST, TUPLE
from ..operator_dispatch import INPLACE, KEYS, OPERATORS, SLICE
from ..receiver_classes import method_class, module_class_with_any, python_method_of
from ..resolve import Callee
from ..runtime import as_sequence
from ..tree_walk import lean_nodes, statements
from ..unpacking import unpack_items, zip_bounded

_BINARY = {
    gast.Add: "__pb_add__",
    gast.Sub: "__pb_sub__",
    gast.Mult: "__pb_mul__",
    gast.Div: "__pb_truediv__",
    gast.FloorDiv: "__pb_floordiv__",
    gast.Mod: "__pb_mod__",
    gast.Pow: "__pb_pow__",
    gast.MatMult: "__pb_matmul__",
}
_UNARY = {gast.USub: "__pb_neg__", gast.UAdd: "__pb_pos__"}
_ATOMS = (gast.Name, gast.Constant)
_INPLACE_FUNCTIONS = {function: name for name, (_, _, function) in INPLACE.items()}


def _operands(value):
    """``(pseudo name, operands)`` of an operator on atoms, else None."""
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
        index = value.slice
        if isinstance(index, _ATOMS):  # `d[i]`: a class's own __getitem__
            return "__pb_getitem__", [value.value, index]
        if isinstance(index, gast.Tuple) and all(isinstance(e, _ATOMS) for e in index.elts):
            return KEYS, [value.value, *index.elts]  # `d[i, j]`: the key's items
        if isinstance(index, gast.Slice):  # `d[i:j]`: its bounds, None where left out
            bounds = [index.lower, index.upper, index.step]
            bounds = [gast.Constant(None, None) if b is None else b for b in bounds]
            if all(isinstance(b, _ATOMS) for b in bounds):
                return SLICE, [value.value, *bounds]
        return None
    if isinstance(value, gast.BinOp) and type(value.op) in _BINARY:
        if isinstance(value.left, _ATOMS) and isinstance(value.right, _ATOMS):
            name = _BINARY[type(value.op)]
            if getattr(value, "pb_inplace", False):  # `a += b`: a's __iadd__ first
                name = "__pb_i" + name[5:]
            return name, [value.left, value.right]
    elif isinstance(value, gast.UnaryOp) and type(value.op) in _UNARY:
        if isinstance(value.operand, _ATOMS):
            return _UNARY[type(value.op)], [value.operand]
    elif isinstance(value, gast.Call) and len(value.args) == 1 and not value.keywords:
        callee = getattr(value, "pb_callee", None)
        if callee is not None and callee.kind == "object" and callee.obj is builtins.abs:
            if isinstance(value.args[0], _ATOMS):
                return "__pb_abs__", [value.args[0]]
    items = _items_operands(value)
    if items is not None:
        return items
    if isinstance(value, gast.Call) and len(value.args) == 2 and not value.keywords:
        # operator.iadd(a, b): `a += b` as a derivative's code writes it (reverse_calls)
        callee = getattr(value, "pb_callee", None)
        if callee is not None and callee.kind == "object" and callee.obj in _INPLACE_FUNCTIONS:
            if all(isinstance(a, _ATOMS) for a in value.args):
                return _INPLACE_FUNCTIONS[callee.obj], list(value.args)
    return None


def _items_operands(value):
    """``(pseudo name, operands)`` of a loop's sequence (``as_sequence(v)``), an unpacking
    (``unpack_items(v, 2)``) or ``list(v)``, ``tuple(v)``: what a user's ``__iter__`` may give."""
    if not isinstance(value, gast.Call) or value.keywords or not value.args:
        return None
    callee = getattr(value, "pb_callee", None)
    fn = getattr(callee, "obj", None)
    if not all(isinstance(a, _ATOMS) for a in value.args):
        return None
    if fn is as_sequence and len(value.args) == 1:
        return ITER, [value.args[0]]
    if fn is builtins.list and len(value.args) == 1:
        return LIST, [value.args[0]]
    if fn is builtins.tuple and len(value.args) == 1:
        return TUPLE, [value.args[0]]
    if fn is unpack_items and len(value.args) in (2, 3):
        at_least = value.args[2] if len(value.args) == 3 else gast.Constant(False, None)
        return ITER, [*value.args[:2], at_least]
    return None


_ARRAY_MODULES = ("numpy", "math", "cmath", "scipy")
_KEYED = ("__pb_getitem__", SLICE, KEYS)  # d[k], d[lo:hi], d[i, j]: a class's __getitem__
_FIELD_READS = (attribute_of, array_attribute_of)  # `h.v` in a derivative's own code
_TAKEN = (*_KEYED, ITER, LIST, TUPLE)  # what takes one item, or the items, out of a value


def _from_array_library(fn) -> bool:
    """A function of NumPy, SciPy or ``math``: it returns numbers or arrays, whatever it
    was given."""
    module = getattr(fn, "__module__", None) or ""
    return module.split(".")[0] in _ARRAY_MODULES


def _own_helper(fn) -> bool:
    """A builtin function or class (``len``, ``max``, ``slice``), one of pullback's
    helpers or a function it generated: its result is an object only if an argument is."""
    if isinstance(fn, types.BuiltinFunctionType):
        return True
    if isinstance(fn, type):  # slice, tuple, float: a builtin class makes no user object
        return fn.__module__ == "builtins"
    if not isinstance(fn, types.FunctionType):
        return False
    if fn.__code__.co_filename.startswith("<pullback"):
        return True  # a vjp function pullback generated (in a derivative's own code)
    return (getattr(fn, "__module__", None) or "").split(".")[0] == "pullback"


def _proved_plain(value, objects, kinds, fields=frozenset()) -> bool:
    """Whether ``value`` is proved not to be an object of a user's class: a constant, a
    name of a known kind or bound only to such values, an operator or a call of a rule on
    such names, a NumPy/SciPy/``math`` function's result, a display or an item of them.
    ``fields``: the names bound to an attribute (a field, taken to be a value, but what a
    method found on it when the code runs returns is not proved: ``h.v.scale(s)``)."""
    if isinstance(value, gast.Constant):
        return True
    if isinstance(value, gast.Name):
        return kinds.get(value.id) is not None or value.id not in objects
    if isinstance(value, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.BoolOp)):
        parts = [getattr(value, f, None) for f in ("left", "right", "operand")]
        parts += list(getattr(value, "values", ()) or ())
        parts += list(getattr(value, "comparators", ()) or ())
        parts = [p for p in parts if p is not None]
        return all(_proved_plain(p, objects, kinds, fields) for p in parts)
    if isinstance(value, (gast.Tuple, gast.List)):
        return all(_proved_plain(e, objects, kinds, fields) for e in value.elts)
    if isinstance(value, gast.Subscript):
        return _proved_plain(value.value, objects, kinds, fields)
    if isinstance(value, gast.Attribute):
        return True  # a field (`p.pos`): an object's fields are taken to be values
    if isinstance(value, gast.Call):
        callee = getattr(value, "pb_callee", None)
        if _cotangents_call(value):
            return True
        if callee is not None and callee.kind == "method" and not callee.python_method:
            # `x.copy()` of an array, a container's method: the receiver decides
            receiver = value.func.value if isinstance(value.func, gast.Attribute) else None
            if isinstance(receiver, gast.Name) and receiver.id in fields:
                return False  # a method of a field's value: maybe a user's object's
            return receiver is not None and _proved_plain(receiver, objects, kinds, fields)
        if callee is None or callee.kind not in ("object", "array_method", "internal"):
            return False
        if callee.kind in ("object", "array_method") and _from_array_library(callee.obj):
            return True
        if callee.kind == "object" and not _own_helper(callee.obj):
            return False  # a class, a user's function, a callable object: maybe an object
        args = list(value.args) + [k.value for k in value.keywords]
        return all(_proved_plain(a, objects, kinds, fields) for a in args)
    return False


def may_be_objects(tree, kinds: dict, params, seeds=()) -> set:
    """The names that may hold an object of a user's class when the code runs: a
    parameter of unknown kind, a name bound by anything but ``name = value`` with a value
    :func:`_proved_plain` does not prove (a user function's result, an item of such a
    container or of such a parameter), to a fixed point over the SSA form's carried
    names. ``seeds``: names known to be such already (fields of such objects)."""
    # A parameter of unknown kind is an operand that may be an object, and so are its
    # items and what operators make of it (`a, b = pair` of a tuple of objects: a tuple
    # of arrays has a known kind, and so have its items); the fields of such names come
    # in as ``seeds`` (dispatch_operators, _fields_of: `h.v` may be an object too).
    parameters = {p for p in params if kinds.get(p) is None}
    objects = set(parameters) | set(seeds)
    assigned, targets = [], set()
    nodes = lean_nodes(tree)
    for node in nodes:
        if isinstance(node, gast.Assign) and len(node.targets) == 1:
            if isinstance(node.targets[0], gast.Name):
                assigned.append((node.targets[0].id, node.value))
                targets.add(id(node.targets[0]))
    attributes = frozenset(n for n, v in assigned if isinstance(v, gast.Attribute))
    for node in nodes:  # a loop's target, an unpacking, a `with ... as`: not proved
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            if id(node) not in targets and kinds.get(node.id) is None:
                objects.add(node.id)
    changed = True
    while changed:
        changed = False
        for name, value in assigned:
            if name not in objects and not _proved_plain(value, objects, kinds, attributes):
                objects.add(name)
                changed = True
    return objects | parameters


def _cotangents_call(call) -> bool:
    """A pullback called in a derivative's code that is differentiated again (``_cot2 =
    _pb_t3(d)``: user code has no ``_pb_`` names): it returns cotangents."""
    func = call.func
    callee = getattr(call, "pb_callee", None)
    if callee is not None and callee.kind == "object":
        return False  # a function the transform bound under such a name (_pb_unpack_items)
    return isinstance(func, gast.Name) and func.id.startswith("_pb_")


def _user_call(call) -> bool:
    """A call of user code: a class, a user's function, a method or a value called at run
    time (not one of pullback's helpers, such as a loop's sequence of a list)."""
    if _cotangents_call(call):
        return False
    callee = getattr(call, "pb_callee", None)
    if callee is None or callee.kind in ("method", "dynamic"):
        return True
    if callee.kind != "object":
        return False
    return not (_own_helper(callee.obj) or _from_array_library(callee.obj))


def _fields_of(tree, made, kinds) -> set:
    """The names bound to a field of what may be an object (``v = h.v`` after ``h =
    Holder(...)``, of an item ``a`` of ``a, b = pair``), or of such a field
    (``h.inner.v``), of no known kind: each may be an object."""
    reads = []
    for node in lean_nodes(tree):
        if isinstance(node, gast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if not isinstance(target, gast.Name) or kinds.get(target.id) is not None:
                continue
            owner = _field_owner(value)
            if owner is not None:
                reads.append((target.id, owner))
    out, changed = set(), True
    while changed:
        changed = False
        for target, owner in reads:
            if target not in out and (owner in made or owner in out):
                out.add(target)
                changed = True
    return out


def _held_of(tree, made, kinds) -> set:
    """``made`` and the names of no known kind bound to what may be a user's object taken
    out of one of them, to a fixed point: a field (``v = h.v``), an item (``p = pairs[0]``,
    or its dispatched form), an item of the list a loop or an unpacking reads from one
    (``p = _seq[k]`` after ``_seq = ps.__pb_iter__()``). Those lists themselves keep their
    inline indexing: only what they hold may be an object."""
    reads = []  # (target, source, whether the target is such a list)
    for node in lean_nodes(tree):
        if not (isinstance(node, gast.Assign) and len(node.targets) == 1):
            continue
        target, value = node.targets[0], node.value
        if not isinstance(target, gast.Name) or kinds.get(target.id) is not None:
            continue
        source = _field_owner(value) or _bounded_source(value)
        listed = False
        if source is None and isinstance(value, gast.Subscript):
            source = value.value.id if isinstance(value.value, gast.Name) else None
        elif source is None and isinstance(value, gast.Call) and value.args:
            found = _items_operands(value)
            if found is None and isinstance(value.func, gast.Attribute):  # dispatched
                receiver = value.func.value
                if isinstance(receiver, gast.Name) and value.func.attr in _TAKEN:
                    found = value.func.attr, [receiver]
            if found is not None and isinstance(found[1][0], gast.Name):
                source, listed = found[1][0].id, found[0] not in _KEYED
        if source is not None:
            reads.append((target.id, source, listed))
    held, lists, changed = set(made), set(), True
    while changed:
        changed = False
        for target, source, listed in reads:
            into = lists if listed else held
            if target not in into and (source in held or not listed and source in lists):
                into.add(target)
                changed = True
    return held


def _bounded_source(value):
    """The name ``v`` of ``zip_bounded(v, n)``, which is ``v`` itself unless ``v`` is an
    iterator (what a loop over a zip reads of an argument: loop_iterables.py)."""
    callee = getattr(value, "pb_callee", None)
    if callee is None or getattr(callee, "obj", None) is not zip_bounded:
        return None
    first = value.args[0] if value.args else None
    return first.id if isinstance(first, gast.Name) else None


def _field_owner(value):
    """The name whose field ``value`` reads: ``h`` of ``h.v``, or of ``attribute_of(h,
    "v", where)`` (the read of a differentiated record's field in a derivative's code,
    differentiated again); else None."""
    if isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name):
        return value.value.id
    if isinstance(value, gast.Call) and value.args and isinstance(value.args[0], gast.Name):
        callee = getattr(value, "pb_callee", None)
        if callee is not None and callee.kind == "object" and callee.obj in _FIELD_READS:
            return value.args[0].id
    return None


def made_objects(tree, objects) -> set:
    """The names bound to what a call that may make an object returned (``d = Data(x)``,
    ``v = make(w)``), or to a copy of such a name (the SSA form's carried copies): the
    receivers whose ``d[i]`` runs their class's ``__getitem__`` (a container built in the
    function, a list display of objects, keeps its inline indexing)."""
    made, copies = set(), []
    for node in lean_nodes(tree):
        if isinstance(node, gast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, gast.Name) and isinstance(node.value, gast.Call):
                if target.id in objects and _user_call(node.value):
                    made.add(target.id)
            elif isinstance(target, gast.Name) and isinstance(node.value, gast.Name):
                copies.append((target.id, node.value.id))
    changed = True
    while changed:
        changed = False
        for target, source in copies:
            if source in made and target not in made:
                made.add(target)
                changed = True
    return made


# The methods an operator or subscript may run: a class of the module defining one in
# Python is what makes a call's result possibly such an object. (A class with its own
# __iter__ makes a loop, an unpacking or list() over such a result dispatched: _ITEMS.)
_DUNDER_NAMES = tuple(
    sorted(
        {m for first, reflected, _, _ in OPERATORS.values() for m in (first, reflected) if m}
        | {v[0] for v in INPLACE.values()}
    )
)


_ITEMS = ("__iter__",)


def dispatches_operators(fn, fs) -> frozenset:
    """Whether ``fn``'s operators may run a user's dunder methods: only in a function whose
    module holds (defines or imports) a class of the user's that defines an operator or
    ``__getitem__`` in Python (:func:`pullback.receiver_classes.module_class_with_any`,
    one scan of its globals for all the names); never
    in pullback's own functions (rule pullbacks computing with arrays of any backend, the
    operator functions marked ``__pullback_operands_plain__``). Elsewhere a helper's result
    is an array or a number as before: its arithmetic keeps its inline code (and the masks
    of np.where branches), and an object that reaches an operator is refused when it runs
    (tangents.refuse_operator) with the fix of calling its method by name. Returns what
    is dispatched, empty for nothing: ``"operators"`` (and subscripts), ``"items"`` (a
    loop, an unpacking or ``list()`` over a value, where a class of the module defines
    ``__iter__`` in Python: :mod:`pullback.object_items`), and in any user function
    ``"keys"``: a subscript whose key depends on the inputs of a value a call made (whose
    class may be one no name of the module shows, returned by a helper of another module),
    which the analysis took for an index, so that its key's gradient is not dropped."""
    if getattr(fn, "__pullback_operands_plain__", False):
        return frozenset()
    if (getattr(fn, "__module__", None) or "").split(".")[0] == "pullback":
        return frozenset()
    found = {"keys"}
    if _class_with_any(fs, _DUNDER_NAMES):
        found.add("operators")
    if _class_with_any(fs, _ITEMS):
        found.add("items")
    return frozenset(found)


def _class_with_any(fs, names) -> bool:
    """Whether a class of the user's that defines one of ``names`` in Python is among the
    module's globals (one scan, cached for the build), the names the function resolved
    (a class it calls from a closure: ``Grid(x)[i]`` in a test's nested function, or
    through a module, ``mod.Grid(x)``), or is the class of ``self`` (a nested class's
    method: ``self[k]``)."""
    if module_class_with_any(fs, names):
        return True
    seen = [value for _, value in getattr(fs, "resolved", {}).values()]
    seen += list(getattr(fs, "resolved_chains", {}).values())  # `mod.Grid(x)`
    seen.append(method_class(fs))
    return any(
        isinstance(v, type)
        and not is_library_module_name(getattr(v, "__module__", None) or "")
        and any(python_method_of(v, n) for n in names)
        for v in seen
    )


def dispatch_operators(
    tree, kinds: dict, carries, params=(), families=("operators",), varies=None
) -> bool:
    """Rewrite, in place, each ``t = a op b`` (``-a``, ``+a``, ``abs(a)``, ``d[i]``) with an operand
    ``carries`` accepts (a name a gradient or tangent flows through) that may hold an
    object of a user's class (:func:`may_be_objects`) into the pseudo method call of
    :mod:`pullback.operator_dispatch`; ``families``: what :func:`dispatches_operators`
    found the module's classes define (a loop's, an unpacking's or ``list``'s items of an
    object a call made only with ``"items"``). ``varies``: whether a name depends on the
    differentiated inputs; a subscript whose key does (``b[x]`` of an interpolant, a float
    key) is dispatched even where the analysis, which takes a key for an index, found no
    gradient through it. Returns whether it rewrote a statement (then the caller analyses
    activity again: the key is an argument now)."""
    objects = None
    rewrote = False
    for s in statements(tree):
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1):
            continue
        if not isinstance(s.targets[0], gast.Name):
            continue
        found = _operands(s.value)
        if found is None:
            continue
        name, operands = found
        if ("items" if name in (ITER, LIST, TUPLE) else "operators") not in families:
            if not (name in _KEYED and "keys" in families):
                continue
        names = [a.id for a in operands if isinstance(a, gast.Name)]
        keyed = varies is not None and name in _KEYED and any(varies(n) for n in names[1:])
        if not keyed and "operators" not in families and name in _KEYED:
            continue
        if not (keyed or carries(s.targets[0].id) and any(carries(n) for n in names)):
            continue
        if all(kinds.get(n) is not None for n in names):
            continue  # numbers, arrays, sequences the kinds pass proved: as before
        if objects is None:
            objects = may_be_objects(tree, kinds, params)
            # `d[i]`, `for c in d`: of an object a call made, or handed in as a parameter
            # of unknown kind (a helper's `d`, a method's `self`); a container the
            # function builds keeps its own indexing and iteration
            unknown = {p for p in params if kinds.get(p) is None}
            fields = set()
            while True:  # `h.v`, `h.inner.v`, `pair[0].v` of what may be an object
                made = made_objects(tree, objects) | fields
                # (a parameter's own fields are taken to be values: `self.x + o.x` in a
                # class's methods keeps its inline arithmetic)
                more = _fields_of(tree, (objects - unknown) | made, kinds)
                if more <= objects:
                    break
                fields |= more
                objects = may_be_objects(tree, kinds, params, fields)
            made |= unknown
            # `h.v[0]`, `a, b = h.v`, `for x in h.v` of a parameter's field, of an item of
            # a parameter (`a, b = pairs[0]`): each may be a user's object (no operator
            # runs on them here, so inline arithmetic on a parameter's fields is kept)
            held = _held_of(tree, made, kinds)
        if name in _KEYED or name in (ITER, LIST, TUPLE):
            if not (isinstance(operands[0], gast.Name) and operands[0].id in held):
                continue
        elif not any(n in objects and kinds.get(n) is None for n in names):
            continue
        receiver, *rest = operands
        func = gast.Attribute(value=receiver, attr=name, ctx=gast.Load())
        call = gast.Call(func=func, args=rest, keywords=[])
        gast.copy_location(func, s.value)
        gast.copy_location(call, s.value)
        call.pb_callee = Callee("method", name=name, receiver=receiver)
        s.value = call
        rewrote = True
    return rewrote


__all__ = ["OPERATORS", "dispatch_operators"]
