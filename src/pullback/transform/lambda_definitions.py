"""Lambdas as nested definitions: ``name = lambda ...`` (and ``return lambda ...``, and a
lambda stored in a container a user function is given) becomes the equivalent ``def``, so
that lambda lifting (:mod:`.closures`) treats it as any nested function.

>>> import gast
>>> tree = gast.parse("def f(x):\\n    g = lambda t: t * x\\n    return apply(g, x)").body[0]
>>> lambdas_as_definitions(tree)
>>> [type(s).__name__ for s in tree.body]
['FunctionDef', 'Return']
"""

from __future__ import annotations

import gast

from ..lambdas import inlinable_functions
from ..source_lambdas import lambda_as_def
from ..tree_walk import walk
from . import nodes as N
from .closure_values import stored_lambdas


def lambdas_as_definitions(tree, user_call=None) -> None:
    """``name = lambda ...`` in ``tree``'s own scope, for a lambda that is not inlined (it
    is passed on, say), becomes the equivalent ``def name(...): return ...`` (in place), so
    that it is lifted like any nested function. Its ``_pb_lambda`` remembers its spelling."""
    if not any(isinstance(n, gast.Lambda) for n in walk(tree)):
        return  # the common case: nothing to do, cheaply
    inlined = inlinable_functions(tree)

    def as_def(name, lam, where):
        d = lambda_as_def(name, lam)
        d._pb_lambda = lam
        return N.located(d, where)

    def visit(stmts):
        out = []
        for s in stmts:
            if not isinstance(s, _STATEMENT_SCOPES):
                for name, lam in stored_lambdas(s, tree, user_call):
                    out.append(as_def(name, lam, s))
            if (
                isinstance(s, gast.Assign)
                and len(s.targets) == 1
                and isinstance(s.targets[0], gast.Name)
                and isinstance(s.value, gast.Lambda)
                and s.targets[0].id not in inlined
            ):
                out.append(as_def(s.targets[0].id, s.value, s))
                continue
            if isinstance(s, gast.Return) and isinstance(s.value, gast.Lambda):
                # `return lambda ...` (a factory): a def of its own, then returned
                name = f"_pb_lambda_{s.lineno}_{s.value.col_offset}"
                out.append(as_def(name, s.value, s))
                out.append(N.located(gast.Return(value=N.located(N.load(name), s.value)), s))
                continue
            if not isinstance(s, _STATEMENT_SCOPES):
                for field in ("body", "orelse", "finalbody"):
                    if getattr(s, field, None):
                        setattr(s, field, visit(getattr(s, field)))
            out.append(s)
        return out

    tree.body = visit(tree.body)


_STATEMENT_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)
