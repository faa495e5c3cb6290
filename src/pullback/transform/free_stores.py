"""``global``/``nonlocal`` names in the normalizer: read where the code reads them and
written back where it writes them, to the module's globals or the closure's cell, so a
call counter counts once per call exactly as in the primal. The check let through only
names that no differentiated value reaches, bound by ``n = v``/``n op= v``/``n: T = v``
(check/free_writes.py).

A mixin of :class:`pullback.transform.normalize.Normalizer`.

>>> import gast
>>> from pullback.source import load_source
>>> from pullback.transform.normalize import normalize
>>> calls = 0
>>> def f(x):
...     global calls
...     calls += 1
...     return x * calls
>>> code = gast.unparse(normalize(load_source(f)).tree)
>>> "store_free(_pb_globals, 'calls'" in code and "_pb_globals['calls']" in code
True
"""

from __future__ import annotations

import types

import gast

from ..check.free_writes import free_declarations
from ..containers_mutation import store_free
from . import nodes as N


class FreeStores:
    """Reads and writes of the names a function declares ``global`` or ``nonlocal``."""

    def declare_free_names(self) -> None:
        """Called once the normalizer knows its locals: declared names are not locals."""
        self.declared = set(free_declarations(self.fs.tree))
        self.locals -= self.declared

    def stmt_Global(self, s):
        return [], False

    stmt_Nonlocal = stmt_Global

    def _free_holder(self, name: str, where) -> gast.AST:
        """The expression of what holds ``name``: the module's globals or its cell."""
        fn = self.fs.fn
        freevars = fn.__code__.co_freevars
        if name in freevars:
            holder = f"_pb_cell_{name}"
            self.namespace[holder] = fn.__closure__[freevars.index(name)]
        else:
            holder = "_pb_globals"
            self.namespace[holder] = fn.__globals__
        return gast.copy_location(N.load(holder), where)

    def free_read(self, name: str, where) -> gast.AST:
        """``name`` as it is when this line runs."""
        holder = self._free_holder(name, where)
        if isinstance(self.namespace[holder.id], types.CellType):
            node = N.attr(holder.id, "cell_contents")
        else:
            node = N.subscript(holder.id, N.const(name))
        return gast.copy_location(node, where)

    def free_store(self, name: str, value, where) -> gast.AST:
        """The statement that gives ``name`` the value ``value`` where it lives."""
        holder = self._free_holder(name, where)
        call = self.bound_call(store_free, [holder, N.const(name), value], where)
        return N.expr_stmt(call, where)
