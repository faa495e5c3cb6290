"""The signature of a nested function being lifted, and how a call of it binds.

A lifted nested function is called with its arguments in parameter order, defaults filled
in where the call leaves them out (a default that is not a constant is kept in a variable
of the enclosing function, evaluated once where the ``def`` ran, as Python does).

>>> import gast
>>> definition = gast.parse("def f(a, b=2.0, *, c=1.0): pass").body[0]
>>> call = gast.parse("f(1.0, c=3.0)").body[0].value
>>> [gast.unparse(n) for n in NestedSignature(definition).bind(call, "f")]
['1.0', '2.0', '3.0']
"""

from __future__ import annotations

import copy

import gast

from ..tree_walk import walk
from . import nodes as N


class NestedSignature:
    """A nested function's parameters and where its defaults are kept."""

    def __init__(self, d):
        args = d.args
        self.positional = [a.id for a in args.posonlyargs + args.args]
        self.keyword_only = [a.id for a in args.kwonlyargs]
        self.posonly = {a.id for a in args.posonlyargs}
        self.starred = args.vararg is not None or args.kwarg is not None
        self.defaults = {}  # param -> the default's node in the def (a constant or not)
        tail = self.positional[len(self.positional) - len(args.defaults) :]
        for p, value in zip(tail, args.defaults, strict=True):
            self.defaults[p] = value
        for p, value in zip(self.keyword_only, args.kw_defaults, strict=True):
            if value is not None:
                self.defaults[p] = value
        self.variables = {
            p: f"_pb_default_{d.name}_{p}"
            for p, v in self.defaults.items()
            if not isinstance(v, gast.Constant)
        }

    def bind(self, call, name) -> list:
        """The argument nodes of ``call`` in parameter order (defaults filled in)."""
        params = self.positional + self.keyword_only
        if len(call.args) > len(self.positional):
            raise CallMismatch(f"{name}() takes {len(self.positional)} positional arguments")
        bound = dict(zip(self.positional, call.args, strict=False))
        for kw in call.keywords:
            if kw.arg not in params or kw.arg in bound or kw.arg in self.posonly:
                raise CallMismatch(f"{name}() got an unexpected argument '{kw.arg}'")
            bound[kw.arg] = kw.value
        out = []
        for p in params:
            if p in bound:
                out.append(bound[p])
            elif p in self.variables:
                out.append(N.located(N.load(self.variables[p]), call))
            elif p in self.defaults:
                out.append(copy.deepcopy(self.defaults[p]))
            else:
                raise CallMismatch(f"{name}() is missing the argument '{p}'")
        return out


class CallMismatch(Exception):
    """A call of a nested function that Python itself would refuse (a TypeError)."""


def bound_at_run_time(tree, name, sig) -> bool:
    """Whether a call of the nested function ``name`` in ``tree`` can only be bound when it
    runs: ``f(*xs)`` or ``f(**opts)``, or a call Python itself refuses (its TypeError must
    come when the call runs, as in Python). Such a function keeps the form of its calls,
    what it captures passed first (as one with ``*args`` in its own signature does)."""
    for sub in walk(tree):
        if not (isinstance(sub, gast.Call) and isinstance(sub.func, gast.Name)):
            continue
        if sub.func.id != name:
            continue
        if any(isinstance(a, gast.Starred) for a in sub.args):
            return True
        if any(k.arg is None for k in sub.keywords):
            return True
        try:
            sig.bind(sub, name)
        except CallMismatch:
            return True
    return False

