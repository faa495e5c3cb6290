"""Method calls whose receiver's class is known before the function runs, and defines the
method in Python: ``self.fill(x)`` inside ``Canvas.render``, ``c.sort(v)`` after
``c = Heap()``, ``CANVAS.put(x)`` on a global instance.

NumPy arrays have in-place methods with the same names (``a.fill(v)``, ``a.sort()``,
``a.put(i, v)``), which the check refuses or the transform rewrites as writes. A method of
a user class with such a name is an ordinary call of Python code: refusing it would refuse
code that writes into nothing, and rewriting it as an array write would compute something
else. This module says when the receiver is such an object.

>>> class Canvas:
...     def fill(self, v):
...         return 2.0 * v
>>> python_method_of(Canvas, "fill")
True
>>> import numpy as np
>>> python_method_of(np.ndarray, "fill")
False

Where the class is not known before running, the call stays what it was (an array method);
:func:`pullback.dynamic_calls.call_method` refuses an in-place array method that reaches it
at run time.
"""

from __future__ import annotations

import inspect
import types

import gast
import numpy as np

from .guards import is_library_module_name
from .source_match import innermost_class
from .tree_walk import walk

# Built-in types whose in-place methods the check and the transform know by name.
_BUILTIN_MUTABLES = (np.ndarray, np.generic, list, dict, set, bytearray)


def python_method_of(cls, name: str) -> bool:
    """Whether instances of ``cls`` (a class that is no array or built-in container) have
    ``name`` as a method written in Python. ``cls`` may also be the ``ClassDef`` of a
    class the file checker (``pullback check``) knows by its source only."""
    if isinstance(cls, gast.ClassDef):
        return not cls.bases and any(
            isinstance(stmt, gast.FunctionDef) and stmt.name == name and not stmt.decorator_list
            for stmt in cls.body
        )
    if not isinstance(cls, type) or issubclass(cls, _BUILTIN_MUTABLES):
        return False
    attribute = inspect.getattr_static(cls, name, None)
    return isinstance(attribute, types.FunctionType)


def module_class_with(fs, name: str) -> bool:
    """Whether a class among the globals of the function's module (defined or imported
    there) has ``name`` as a Python method. Then a parameter, or what a helper of the user
    returns, may be such an object, and ``b.sum()`` is dispatched on the value when the
    code runs rather than read as ``np.sum(b)`` (which calls ``b.sum(axis=None, ...)``).
    A module without such a class keeps the array method."""
    return _module_classes(fs, "methods", name, python_method_of)


def module_class_with_property(fs, name: str) -> bool:
    """Whether a class among the globals of the function's module has ``name`` as a
    property whose getter is a Python function: then ``p.name`` of a value whose class is
    known only when it runs may be that property (transform/property_reads.py)."""
    return _module_classes(fs, "property", name, _python_property_of)


def _python_property_of(cls, name) -> bool:
    if issubclass(cls, _BUILTIN_MUTABLES):
        return False
    raw = inspect.getattr_static(cls, name, None)
    return isinstance(raw, property) and isinstance(raw.fget, types.FunctionType)


def module_class_with_any(fs, names: tuple) -> bool:
    """Whether a class among the globals of the function's module has any of ``names`` as
    a Python method: :func:`module_class_with` for a set of names, in one scan."""
    return _module_classes(fs, "any method", names, _python_method_among)


def _python_method_among(cls, names) -> bool:
    return any(python_method_of(cls, name) for name in names)


def _module_classes(fs, kind: str, key, predicate) -> bool:
    """Whether ``predicate(cls, key)`` holds for a class among the globals of the
    function's module that is not a library's (defined or imported there).

    The answer is cached on ``fs``, keyed on ``(kind, key)``: ``fs`` is the source view
    one build of an adjoint reads (``load_source`` makes a new one per build), so the
    cache lives as long as that build and only spares the scans its passes repeat; a
    class the module defines or imports later is seen by the next build. What a built
    adjoint decided stays with it, as every build's reading of the module does: an
    argument of another kind (an object where an array was) builds again (the kinds
    key), a helper rebound to another function is a guarded name, and an object that
    reaches an operator the adjoint did not dispatch is refused when it runs
    (``tangents.refuse_operator``).
    """
    cache = getattr(fs, "_pb_module_classes", None)
    if cache is None:
        cache = {}
        try:
            fs._pb_module_classes = cache
        except AttributeError:  # a source view without attributes of its own
            pass
    found = cache.get((kind, key))
    if found is None:
        fn = getattr(fs, "fn", None)
        fn = getattr(fn, "__pullback_origin__", fn)
        space = getattr(fn, "__globals__", None)
        found = cache[(kind, key)] = isinstance(space, dict) and any(
            isinstance(v, type)
            and not is_library_module_name(getattr(v, "__module__", None) or "")
            and predicate(v, key)
            for v in list(space.values())
        )
    return found


def user_function(value) -> bool:
    """A Python function of the user's (a helper whose result may be an object of theirs)."""
    return isinstance(value, types.FunctionType) and not is_library_module_name(
        getattr(value, "__module__", None) or ""
    )


def python_method_of_object(owner, name: str) -> bool:
    """:func:`python_method_of` for the class of ``owner`` (a global instance)."""
    if isinstance(owner, (types.ModuleType, type)):
        return False
    return python_method_of(type(owner), name)


def method_class(fs):
    """The class whose method ``fs`` is, known before running: what its first parameter
    (``self``) is an instance of (a subclass instance still has a class, never an array).
    Found from the function's qualified name in its module, or, in the file checker's
    view (no function object), the ``ClassDef`` around it; None for a plain function."""
    static = getattr(fs, "key", None)
    if static is not None:
        enclosing = getattr(static, "enclosing", ())
        return enclosing[-1] if enclosing and isinstance(enclosing[-1], gast.ClassDef) else None
    # a gradient differentiated again keeps the parameters of the user's function
    return _defining_class(getattr(fs.fn, "__pullback_origin__", fs.fn))


def _defining_class(fn) -> type | None:
    qualname = getattr(fn, "__qualname__", "") or ""
    owner = innermost_class(qualname)
    if owner is None or "<locals>" in qualname:
        return None
    value = inspect.getmodule(fn)
    for part in qualname.split(".")[: qualname.split(".").index(owner) + 1]:
        value = getattr(value, part, None)
    return value if isinstance(value, type) else None


def binding_values(tree) -> dict:
    """name -> the expressions the function binds it from: assignments' values (of a
    tuple target too: the whole value), loops' iterables, walrus values."""
    out: dict = {}
    for node in walk(tree):
        if isinstance(node, BINDERS):
            add_binding_value(out, node)
    return out


#: The nodes that bind names from a value (see :func:`add_binding_value`).
BINDERS = (
    gast.Assign,
    gast.AnnAssign,
    gast.AugAssign,
    gast.NamedExpr,
    gast.For,
    gast.AsyncFor,
    gast.comprehension,
)


def add_binding_value(out: dict, node) -> None:
    """Record in ``out`` (:func:`binding_values`) the names ``node`` (one of
    :data:`BINDERS`) binds and the expression it binds them from."""
    if isinstance(node, (gast.For, gast.AsyncFor, gast.comprehension)):
        targets, value = [node.target], node.iter
    else:
        targets = node.targets if isinstance(node, gast.Assign) else [node.target]
        value = node.value
    if value is None:
        return
    for target in targets:
        for n in walk(target):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                out.setdefault(n.id, []).append(value)


def holders(values: dict, makes) -> set:
    """The names that may hold an object some call makes (``makes(call)``: a user class
    with a given method), from :func:`binding_values`: bound from such a call, from a
    field read ``makes`` accepts (``makes(attribute)``), or from an
    expression reading a name that may hold one (copies, items, stack restores). One
    pass over the values, then the readers of each holder."""
    found, readers = set(), {}
    for bound, exprs in values.items():
        for value in exprs:
            if isinstance(value, gast.Attribute) and makes(value):  # `v = h.v`: a field
                found.add(bound)
            for node in walk(value):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                    readers.setdefault(node.id, set()).add(bound)
                elif isinstance(node, gast.Call) and bound not in found and makes(node):
                    found.add(bound)
    todo = list(found)
    while todo:
        for reader in readers.get(todo.pop(), ()):
            if reader not in found:
                found.add(reader)
                todo.append(reader)
    return found


def field_name_of(cls, name: str) -> bool:
    """Whether objects of ``cls`` (a user's class) may hold an attribute ``name``: a field
    of a dataclass or named tuple, a class attribute, or a name any of its functions
    stores or reads (``self.T = t`` in ``__init__``: the code object's names)."""
    if not isinstance(cls, type) or issubclass(cls, _BUILTIN_MUTABLES):
        return False
    if name in getattr(cls, "__dataclass_fields__", ()) or name in getattr(cls, "_fields", ()):
        return True
    for klass in cls.__mro__[:-1]:
        if name in vars(klass) or name in (getattr(klass, "__slots__", ()) or ()):
            return True
        for v in vars(klass).values():
            code = getattr(v, "__code__", None)
            if code is not None and name in code.co_names:
                return True
    return False


def module_class_with_field(fs, name: str) -> bool:
    """Whether a class among the globals of the function's module (defined or imported
    there, not a library's) may hold an attribute ``name`` (:func:`field_name_of`). Then
    ``p.T`` (``.real``, ``.imag``, ``.mT``) may read a record's field rather than
    transpose an array, and is dispatched on the value when the code runs."""
    return _module_classes(fs, "field", name, field_name_of)
