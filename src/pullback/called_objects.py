"""Objects called like functions in a star-call (``obj(x, s=v)``, keywords present).

A star-call ``fn(*args, **kwargs)`` differentiates its arguments; the callee itself gets
no cotangent. An object of a user's class whose ``__call__`` is a Python function may hold
differentiated values (a closure record of :mod:`pullback.closure_cells`, a callable
model), whose cotangent is its receiver's: such a call is the star method call of
``__call__`` (star_runtime.py), whose cotangents these helpers lay out as the star-call's.

>>> class Scale:
...     def __call__(self, t):
...         return 2.0 * t
>>> Scale.__module__ = "model"  # a user's module (a doctest's is pullback's)
>>> called_object(Scale()), called_object(abs), called_object(lambda t: t)
(True, False, False)
>>> object_method_as_call(("obj", "name", ("x",), {"s": 1.0}))
('obj', ('x',), {'s': 1.0})
"""

from __future__ import annotations

import functools
import types

import numpy as np

from .closure_cells import MODULE as CLOSURE_RECORDS
from .errors import NotDifferentiableError
from .guards import is_library_module_name
from .records_plain import is_plain_record, layout
from .tangents import is_differentiable_value
from .zero import NO_TANGENT, ZERO, is_zero


def called_object(fn) -> bool:
    """Whether ``fn`` is an object of a user's class whose ``__call__`` is a Python
    function: the object may hold differentiated values (a closure record,
    closure_cells.py), whose cotangent the call gives as its receiver's. Its star-call is
    the star method call of ``__call__`` (star_runtime.star_method_rrule), which gives it;
    the function path would drop it (a silently wrong gradient)."""
    cls = type(fn)
    return (
        type(cls.__dict__.get("__call__") or _inherited_call(cls)) is types.FunctionType
        and not isinstance(fn, (type, types.FunctionType, types.MethodType))
        and not is_library_module_name(getattr(cls, "__module__", None) or "builtins")
    )


def _inherited_call(cls):
    """The ``__call__`` a class has from its bases (None: none)."""
    for base in cls.__mro__[1:]:
        if "__call__" in base.__dict__:
            return base.__dict__["__call__"]
    return None


def call_as_object_method(dy):
    """A star-call's cotangents ``(fn's, args', *dicts)`` of an object called
    (:func:`called_object`) as those of the star method call of its ``__call__``:
    ``(obj's, NO_TANGENT (the name), args', *dicts)``. Linear; its transpose is
    :func:`object_method_as_call`."""
    if is_zero(dy):
        return ZERO
    dy = tuple(dy)
    return (dy[0], NO_TANGENT, *dy[1:])


def object_method_as_call(c):
    """A star method call's cotangents ``(obj's, name's, args', *dicts)`` as those of the
    star-call of the object itself ``(fn's, args', *dicts)``: the name's place dropped.
    The transpose of :func:`call_as_object_method`."""
    if is_zero(c):
        return ZERO
    c = tuple(c)
    return (c[0], *c[2:])


# -- user objects handed to library code ----------------------------------------------
# A rule that takes a callable (quad's ``func``, a root finder's ``f``) differentiates
# through its parameters (``args``) only: a user object made in the differentiated code
# (a plain record, records_plain.py) whose fields hold what the gradient flows through,
# handed over as the callable, as a bound method of it or inside ``args``, would be called
# natively, its fields as constants: a gradient of 0 where it is not. Refused instead.

# (exact types that hold no user object: arrays and NumPy scalars are most of what a solver
# is given, and the guard runs on every gradient of such a call)
_PLAIN = frozenset(
    (float, int, bool, str, complex, type(None), types.FunctionType, types.BuiltinFunctionType)
    + (np.ndarray, np.float64, np.float32, np.float16, np.int64, np.int32, np.bool_)
    + (np.complex128, np.complex64)
)


def hidden_record(value, _depth: int = 0):
    """The plain record (made by the differentiated code, ``records_plain.new_record``)
    that ``value`` hands on with differentiable values in its fields, or None: ``value``
    itself, the receiver of a bound method, what a ``functools.partial`` binds, an item of
    a list, tuple or dict (nested a few levels).

    >>> from pullback.records_plain import new_record, set_layout
    >>> class D:
    ...     def __call__(self, t):
    ...         return self.p * t
    >>> set_layout(D, ("p",))
    >>> d = new_record(D, ("p",), 2.0)
    >>> hidden_record(d) is d, hidden_record([(d.__call__,)]) is d, hidden_record(2.0)
    (True, True, None)
    >>> hidden_record(new_record(D, ("p",), 3)) is None  # an int carries no gradient
    True
    """
    t = type(value)
    if t in _PLAIN or _depth > 4:
        return None
    if t is types.MethodType:
        receiver = value.__self__
        if _named_tuple(receiver) and _carries(tuple(receiver), 1):
            return receiver  # (a named tuple's method, called by the library)
        return hidden_record(receiver, _depth + 1)
    if t is functools.partial:
        return _first_hidden((value.func, *value.args, *value.keywords.values()), _depth)
    if t is list or t is tuple:
        return _first_hidden(value, _depth)
    if t is dict:
        return _first_hidden(value.values(), _depth)
    if is_plain_record(value) and _holds_values(value):
        return value
    if _user_dataclass(value) and _carries(_dataclass_values(value), 1):
        return value  # (a dataclass: no float tree a solver's args take either)
    if _depth == 0 and _named_tuple(value) and _carries(tuple(value), 1):
        # a named tuple handed over itself is called (one in args= is data, which the
        # solvers' rules differentiate: rules/_args_trees.py)
        return value if type(vars(t).get("__call__")) is types.FunctionType else None
    return None


def _user_dataclass(value) -> bool:
    t = type(value)
    return hasattr(t, "__dataclass_fields__") and not is_library_module_name(
        getattr(t, "__module__", None) or "builtins"
    )


def _dataclass_values(value) -> tuple:
    return tuple(getattr(value, n, None) for n in type(value).__dataclass_fields__)


def _named_tuple(value) -> bool:
    t = type(value)
    return (
        isinstance(value, tuple)
        and t is not tuple
        and hasattr(t, "_fields")
        and not is_library_module_name(getattr(t, "__module__", None) or "builtins")
    )


def _first_hidden(values, depth, skip_closures=False):
    for v in values:
        t = type(v)
        if t in _PLAIN or (skip_closures and t.__module__ == CLOSURE_RECORDS):
            continue  # (a float, a function: most of what a solver is given, at once)
        if (t is tuple or t is list) and all(type(item) in _PLAIN for item in v):
            continue  # (args=(p,) of arrays and floats, at once)
        found = hidden_record(v, depth + 1)
        if found is not None:
            return found
    return None


def _all_plain(values) -> bool:
    """Whether every one of ``values`` is of a :data:`_PLAIN` type or a tuple or list of
    such (no object to look into: :func:`refuse_hidden_records`' usual case, in loops, as
    a generator's frame per call would cost more than the test)."""
    for v in values:
        t = type(v)
        if t in _PLAIN:
            continue
        if t is not tuple and t is not list:
            return False
        for item in v:
            if type(item) not in _PLAIN:
                return False
    return True


def _holds_values(record) -> bool:
    """Whether a field of ``record`` holds a differentiable value (in a container, in a
    nested record)."""
    return any(_field_holds(record, name) for name in layout(type(record)) or ())


def refuse_hidden_records(callee: str, args, kwargs, how: str = "args") -> None:
    """Refuse a call of the library function ``callee`` (its rule differentiates through
    ``how``, its parameters, only) that is handed a user object holding differentiated
    values (:func:`hidden_record`) in ``args`` or ``kwargs``: the gradient through its
    fields would be lost (a silently wrong gradient). Nothing happens otherwise."""
    # (a closure record handed over itself, called by the library, refuses with its own
    # message: closure_cells.called_natively)
    if _all_plain(args) and (not kwargs or _all_plain(kwargs.values())):
        return  # (floats, arrays, functions, tuples of them: what solvers are given)
    found = _first_hidden(args, -1, True)
    if found is None and kwargs:
        found = _first_hidden(kwargs.values(), -1, True)
    if found is None:
        return
    cls = type(found).__name__
    fields = _fields_holding(found)
    raise NotDifferentiableError(
        f"{callee} was handed a {cls} object (itself, a bound method of it or inside a "
        f"container) whose fields ({', '.join(fields)}) hold values the gradient flows "
        f"through: {callee} calls it as library code, and its rule differentiates through "
        f"{how} only, so the gradient through the object's fields would be lost.\n"
        f"Fix: pass the values the object is made from as parameters and build the {cls} "
        f"inside the function {callee} calls, e.g. `quad(lambda t, p: {cls}(p)(t), lo, "
        f"hi, args=(p,))` (SciPy's solvers: `args=`; np.piecewise and np.apply_along_axis "
        "take extra arguments after the function's), or call the method in the "
        "differentiated function."
    )


def takes_callables(rule) -> bool:
    """Whether ``rule`` is that of a library function that calls functions it is handed
    (SciPy's solvers, ``np.piecewise``: ``extra["args_receivers"]``; ``np.vectorize``)."""
    return bool(rule.extra.get("args_receivers") or rule.extra.get("takes_callables"))


def refusing_hidden_records(rrule, name: str):
    """``rrule`` (the rule of the library function ``name``, which takes callables)
    refusing a call handed a user object that holds differentiated values
    (:func:`refuse_hidden_records`): for calls found at run time. The code pullback
    generates calls ``unguarded`` and refuses in its reverse sweep, where it knows which
    arguments carry a gradient (transform/reverse_calls.py)."""

    @functools.wraps(rrule)
    def objects_refused_rrule(*args, **kwargs):
        refuse_hidden_records(name, args, kwargs)
        return rrule(*args, **kwargs)

    # what generated code calls: it guards the active arguments (reverse_calls.py)
    objects_refused_rrule.unguarded = rrule
    return objects_refused_rrule


def _fields_holding(found) -> list:
    """The names of the fields of ``found`` (a record, a dataclass, a named tuple) that
    hold differentiable values."""
    t = type(found)
    if is_plain_record(found):
        return [n for n in layout(t) or () if _field_holds(found, n)]
    names = t.__dataclass_fields__ if hasattr(t, "__dataclass_fields__") else t._fields
    return [n for n in names if _carries(getattr(found, n, None), 1)]


def _field_holds(record, name) -> bool:
    return _carries(record.__dict__.get(name), 0)


def _carries(v, depth: int) -> bool:
    if is_differentiable_value(v):
        return True
    if depth > 4:
        return False
    t = type(v)
    if t is list or t is tuple:
        return any(_carries(item, depth + 1) for item in v)
    if t is dict:
        return any(_carries(item, depth + 1) for item in v.values())
    return is_plain_record(v) and any(
        _carries(v.__dict__.get(n), depth + 1) for n in layout(t) or ()
    )


FAMILY = "called_objects"


def register(reg) -> None:
    """The guard carries no gradient (it returns nothing or refuses)."""
    reg.non_differentiable(refuse_hidden_records, family=FAMILY, trusted=True)
