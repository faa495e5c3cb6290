"""Run-time helpers of the rewrites of local list and dict changes (issue 11, PB106).

:mod:`pullback.transform.list_mutation` writes each change of a local list or dict as a
rebinding built from slices, concatenation and displays, whose rules the sweeps already
have; two helpers here compute the integers and keys those rebindings need (they carry
no derivative: registered as non-differentiable). ``list.copy`` gets its rule here too:
``rows = rows.copy()`` makes an argument's list the function's own.

>>> keys_without({"a": 1.0, "b": 2.0}, "a", True)
['b']
>>> keys_without({"b": 2.0}, "a", False)
['b']
>>> list_index([1.0, 2.0, 3.0], 2.0)
1
"""

from __future__ import annotations

import types

import numpy as np

from . import containers_inplace, containers_slices
from .containers_inplace import expect_kind  # (generated code calls it from here)
from .errors import UnsupportedCallError
from .registry import transformable
from .tangents import NO_TANGENT, ZERO

FAMILY = "containers_mutation"


def keys_without(d, key, strict):
    """The keys of ``d`` other than ``key``, in order; a ``KeyError`` when ``strict`` and
    ``key`` is missing (as ``del d[key]`` and ``d.pop(key)`` raise)."""
    if strict and key not in d:
        raise KeyError(key)
    return [k for k in d if k != key]


def immutable_item(item):
    """Refuse, when it runs, ``l[i] op= v`` (or ``d[k] op= v``) on an item that ``op=``
    changes in place (an array, a list): Python changes that object, which other names
    may hold, and the rewrite ``l[i] = l[i] op v`` would not."""
    if type(item) in _IMMUTABLE or isinstance(item, (np.generic, tuple, str)):
        return
    raise UnsupportedCallError(
        f"an augmented store into a list or dict item that is a {type(item).__name__}: "
        f"Python changes that {type(item).__name__} itself in place, and other names may "
        "hold it, which pullback does not follow. Fix: write the new value out, "
        "`l[i] = l[i] + v`, which makes a new object (see docs/limitations.md#PB106)."
    )


_IMMUTABLE = frozenset({float, int, complex, bool})


def immutable_value(value, name: str, op: str, where: str):
    """Refuse, when it runs, ``name op= v`` that the check let through because ``name``
    came from an element read (``s = x[i]``), a number (``t = 0.0``), a call's result
    (``loss, cache = f(x)``) or a parameter whose argument the check could not tell an
    array (check/param_rebinding.py):
    right where ``op=`` would change ``value`` in place (a row of a matrix is a view: the
    change would reach ``x``; a clock ``t`` that became an array may be held by a list)
    instead of rebinding ``name`` as it does for a float or NumPy scalar."""
    if type(value) in _IMMUTABLE or isinstance(value, (np.generic, tuple, str)):
        return
    if not hasattr(type(value), _IN_PLACE.get(op, "__iadd__")):
        return  # no in-place form: Python rebinds (a Dask array, say)
    raise UnsupportedCallError(
        f"{where}: '{name} {op}= ...' ran on a {type(value).__name__}, which `{op}=` "
        f"changes in place: the check let it through because '{name}' starts as a number, "
        f"an element read, a min/max of values, an argument or a call's result (which "
        f"`{op}=` rebinds on numbers), but here it is a "
        f"{type(value).__name__} that another name or array may also refer to (a row of an "
        f"array is a view of it), so the change would reach it. "
        f"Fix: write `{name} = {name} {op} ...` "
        "(a new value), or read a copy (`x[i].copy()`), where the change should stay "
        f"in '{name}'; where it should reach the array, write into the array itself "
        f"(`x[i] {op}= ...` for `{name} = x[i]`) (see docs/limitations.md#PB105)."
    )


def store_free(holder, name: str, value) -> None:
    """``name = value`` for a name declared ``global`` (``holder``: the module's globals)
    or ``nonlocal`` (``holder``: its closure cell), as the function itself would bind it."""
    if isinstance(holder, types.CellType):
        holder.cell_contents = value
    else:
        holder[name] = value


def store_item(container, key, value, where: str):
    """``obj.attr[key] = value`` with the container an object holds: a dict or list gets
    the value, as in the primal (the transformation refuses it, PB107, where the function
    may read a differentiated value back). An array there is the caller's data, which a
    differentiated function may not write into: refused before the write."""
    if isinstance(container, (dict, list)):
        container[key] = value
        return
    raise UnsupportedCallError(
        f"{where}: PB101 an item assignment into a {type(container).__name__} held by an "
        "object: a differentiated function may write only into arrays nothing else can "
        "reach, and this one may be reached another way (it came from outside, or the object "
        "is not one the function made and keeps to one name, or a name, view or other "
        "attribute may hold the array: pullback writes in place into an object's array only "
        "when every store of it is a new array, `np.zeros(n)` or `x.copy()`, and every read "
        "makes a new value at once).\n"
        "Fix: copy it into a local array first and store that back "
        "(`w = obj.w.copy(); w[i] = v; obj.w = w`), or use or return the local array "
        "(see docs/limitations.md#PB101)."
    )


_IN_PLACE = {
    "+": "__iadd__",
    "-": "__isub__",
    "*": "__imul__",
    "/": "__itruediv__",
    "//": "__ifloordiv__",
    "%": "__imod__",
    "**": "__ipow__",
    "@": "__imatmul__",
    "&": "__iand__",
    "|": "__ior__",
    "^": "__ixor__",
    "<<": "__ilshift__",
    ">>": "__irshift__",
}


def list_index(xs, value):
    """``xs.index(value)``: where ``xs.remove(value)`` removes (a ``ValueError`` if absent)."""
    for k, item in enumerate(xs):
        if item is value or bool(item == value):
            return k
    raise ValueError("list.remove(x): x not in list")


@transformable
def list_copy_pullback(dy, xs):
    """``xs.copy()`` is the identity on values: the cotangent, as a new list."""
    return (list(dy),)


def _list_copy_rrule(xs):
    def list_copy_closure(dy):
        if dy is ZERO or dy is NO_TANGENT:
            return (ZERO,)
        return list_copy_pullback(dy, xs)

    return xs.copy(), list_copy_closure


def register(reg):
    containers_inplace.register(reg)  # the in-place changes, in this family too
    containers_slices.register(reg)  # slice stores and deletes
    # `arg.copy()` of a list: a copy that makes an argument's list the function's own.
    # (A dict is copied with `dict(d)`, whose rule the builtins family has.)
    reg.register(list.copy, _list_copy_rrule, family=FAMILY, trusted=True)
    reg.set_pullback_function(list.copy, list_copy_pullback)
    reg.non_differentiable(keys_without, family=FAMILY, trusted=True)
    reg.non_differentiable(list_index, family=FAMILY, trusted=True)
    reg.non_differentiable(expect_kind, family=FAMILY, trusted=True)
    reg.non_differentiable(
        immutable_item, immutable_value, store_item, store_free, family=FAMILY, trusted=True
    )
