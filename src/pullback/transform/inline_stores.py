"""The forward sweep's fast paths for three calls that need no call per loop step: an
in-place store into a NumPy array (``array_set`` and its ``+=``/``-=`` forms), a store
into a list (``list_set``) and ``np.sum`` of a NumPy array, each written as the Python
statement it runs, behind a test (or a kind) that proves it is the same.

Apart from reverse_calls.py because these are not adjoints: they only make the forward
sweep's primal statements cheaper, and the call they replace stays as the other branch
(or, for a derivative of the gradient, as the line's ``alt``).
"""

from __future__ import annotations

import gast
import numpy as np

from .. import arrays_inplace, containers_inplace
from .kinds import FOREIGN_ARRAYS, LAZY_ARRAYS
from .sweep_common import src

# The in-place stores inline_store writes as Python statements, with their operators.
_STORES = {
    arrays_inplace.array_set: "=",
    arrays_inplace.array_add_set: "+=",
    arrays_inplace.array_sub_set: "-=",
}


class InlineStores:
    """:class:`~.reverse.ReverseBuilder`: the inline forms of stores and sums in the
    forward sweep (used by :meth:`~.reverse_calls.CallAdjoints.fwd_assign`)."""

    def inline_store(self, v):
        """``a; a[index] = value`` for ``array_set(a, index, value)`` (it writes in place and
        returns ``a``; ``+=`` and ``-=`` for ``array_add_set`` and ``array_sub_set``) where
        ``a`` is provably a NumPy array (its kind, of a known rank, and no Dask or other
        array-API argument): the store without a call per loop step. None otherwise."""
        if not (
            isinstance(v, gast.Call)
            and isinstance(v.func, gast.Name)
            and _STORES.get(self.ns.get(v.func.id)) is not None
            and len(v.args) == 3
            and not v.keywords
            and isinstance(v.args[0], gast.Name)
            and all(isinstance(a, (gast.Name, gast.Constant)) for a in v.args[1:])
        ):
            return None
        kind = self.kinds.get(v.args[0].id)
        known = isinstance(kind, tuple) and kind[0] == "array" and isinstance(kind[1], int)
        if not known or any(self.kinds.get(mark) for mark in (FOREIGN_ARRAYS, LAZY_ARRAYS)):
            return None
        a, index, value = (src(x) for x in v.args)
        return f"{a}; {a}[{index}] {_STORES[self.ns.get(v.func.id)]} {value}"

    def inline_sum(self, v):
        """``np.add.reduce(x, None)`` for ``np.sum(x)`` of a NumPy array (the call is the
        other branch): what ``np.sum`` runs for an ``ndarray`` (``_wrapreduction`` calls
        ``np.add.reduce(x, None, None, None)``), the same sum, without its microseconds of
        dispatch, which a small array's gradient pays in its forward sweep. ``x`` of a
        known-rank kind, no Dask or other array-API argument; None for any other call."""
        callee = getattr(v, "pb_callee", None)
        if not (
            isinstance(v, gast.Call)
            and callee is not None
            and callee.kind == "object"
            and callee.obj is np.sum
            and len(v.args) == 1
            and not v.keywords
            and isinstance(v.args[0], gast.Name)
        ):
            return None
        kind = self.kinds.get(v.args[0].id)
        known = isinstance(kind, tuple) and kind[0] == "array" and isinstance(kind[1], int)
        if not known or any(self.kinds.get(mark) for mark in (FOREIGN_ARRAYS, LAZY_ARRAYS)):
            return None
        x = v.args[0].id
        reduce, ndarray = self.bind("add_reduce", np.add.reduce), self.bind("ndarray", np.ndarray)
        return f"{reduce}({x}, None) if {x}.__class__ is {ndarray} else {src(v)}"

    def inline_list_store(self, t, v):
        """``t = xs; xs[p] = v`` for ``t = list_set(xs, p, v)`` behind the test that ``xs``
        is a list (what list_set tests first; the call is the other branch). None for any
        other statement."""
        if not (
            isinstance(v, gast.Call)
            and isinstance(v.func, gast.Name)
            and self.ns.get(v.func.id) is containers_inplace.list_set
            and len(v.args) == 3
            and not v.keywords
            and isinstance(v.args[0], gast.Name)
            and all(isinstance(a, (gast.Name, gast.Constant)) for a in v.args[1:])
        ):
            return None
        xs, p, value = (src(a) for a in v.args)
        return f"if type({xs}) is list: {t} = {xs}; {xs}[{p}] = {value}\nelse: {t} = {src(v)}"
