"""Whether a user's integrand provably maps an array of ``x`` elementwise: the proof behind
quad's one-reverse-pass gradient (``scipy_quad.node_parameter_integral``).

quad calls an integrand ``f(x, *args)`` with one float ``x`` at a time. The fast gradient
instead calls it once on the array of all Gauss-Kronrod nodes, with each float parameter
spread into an array of the same length, and pulls back a cotangent of ones: that gives
``d f(x_i, *args) / d args`` at every node at once *only if* element ``i`` of the result
depends on element ``i`` of the inputs alone and equals the scalar call there. Agreeing
values at the nodes would not prove it (a reduction can cancel in the value and not in
the derivative), so this module proves it from the source instead, and the caller falls
back to one vjp per node whenever the proof fails.

The proof is a whitelist over the function's source (read and matched against its code by
:func:`~pullback.source.load_source`). The function must be a plain function (or lambda)
whose positional parameters are exactly ``x`` and the ``args``, without ``*``/``**`` or
keyword-only parameters, and whose body is straight-line code: simple assignments
``name = expr`` (each name read only after its assignment) and a final ``return expr``.
Every expression is built from

* the parameters and earlier locals (arrays over the nodes, or the scalars passed as is),
* number constants and free names (globals, closure cells, builtins) whose values are
  real scalars *at this call*,
* ``+ - * / // % **``, unary ``-``/``+`` and one comparison, which NumPy applies
  elementwise with scalar broadcasting and Python applies to the scalars,
* calls, with positional arguments only, of a free name chain (``np.exp``) that resolves
  *at this call* to a NumPy ufunc without a core signature taking that many inputs
  (elementwise by definition), or to ``np.where`` with three arguments.

Anything else — a branch, a subscript, a method or attribute of a local, a call of another
Python function or of ``math.*``, an augmented assignment (in place on an array, a
rebinding on a float) — is not proved, and the caller takes the per-node path. The
structural part of the proof depends on the code only and is kept per function (for the
code object it was made from); the free names are checked on every call, because globals
and cells may be rebound between calls.
"""

from __future__ import annotations

import types
import weakref

import gast
import numpy as np

from ..resolve import dotted_parts
from ..source import load_source, locate_free_name

__all__ = ["elementwise_in_x"]

_OPERATORS = (
    gast.Add,
    gast.Sub,
    gast.Mult,
    gast.Div,
    gast.FloorDiv,
    gast.Mod,
    gast.Pow,
)
_COMPARISONS = (gast.Lt, gast.LtE, gast.Gt, gast.GtE, gast.Eq, gast.NotEq)

# fn -> (code object the plan was made from, plan or None); dies with the function.
_PLANS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _NotProved(Exception):
    pass


class _Prover:
    """Walks the body once, collecting the free names whose values the proof needs:
    ``(chain, arity)`` — ``arity`` the number of arguments of a call, ``None`` for a value
    that must be a real scalar."""

    def __init__(self, params):
        self.bound = set(params)
        self.free: list = []

    def statement(self, stmt, last: bool):
        if isinstance(stmt, gast.Return) and last and stmt.value is not None:
            self.expr(stmt.value)
        elif isinstance(stmt, gast.Assign) and not last:
            if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], gast.Name):
                raise _NotProved
            self.expr(stmt.value)
            self.bound.add(stmt.targets[0].id)
        else:
            raise _NotProved

    def expr(self, node):
        if isinstance(node, gast.Constant):
            value = node.value
            if type(value) not in (int, float, bool):
                raise _NotProved
        elif isinstance(node, gast.Name):
            if node.id not in self.bound:
                self.free.append(((node.id,), None))
        elif isinstance(node, gast.BinOp) and isinstance(node.op, _OPERATORS):
            self.expr(node.left)
            self.expr(node.right)
        elif isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
            self.expr(node.operand)
        elif (
            isinstance(node, gast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], _COMPARISONS)
        ):
            self.expr(node.left)
            self.expr(node.comparators[0])
        elif isinstance(node, gast.Call) and not node.keywords:
            chain = dotted_parts(node.func)  # np.exp: ["np", "exp"]
            if chain is None or chain[0] in self.bound:
                raise _NotProved
            for arg in node.args:
                if isinstance(arg, gast.Starred):
                    raise _NotProved
                self.expr(arg)
            self.free.append((tuple(chain), len(node.args)))
        else:
            raise _NotProved


def _plan(fn, nargs: int):
    """The free names the proof checks at each call, as ``(where, attributes, arity)``
    (``where`` the index of a closure cell or the name of a global or builtin), or
    ``None`` when the structure of ``fn`` is not provably elementwise for ``1 + nargs``
    positional arguments."""
    code = fn.__code__
    if (
        code.co_argcount != 1 + nargs
        or code.co_posonlyargcount
        or code.co_kwonlyargcount
        or code.co_flags & (0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200)
    ):  # *args, **kwargs, generator, coroutine, async generator
        return None
    try:
        tree = load_source(fn).tree
    except Exception:  # no source: nothing to prove it from
        return None
    body = list(tree.body)
    if (
        body
        and isinstance(body[0], gast.Expr)
        and isinstance(body[0].value, gast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]  # the docstring
    prover = _Prover(a.id for a in tree.args.args)
    try:
        if not body:
            raise _NotProved
        for k, stmt in enumerate(body):
            prover.statement(stmt, k == len(body) - 1)
    except _NotProved:
        return None
    cells = code.co_freevars
    return tuple(
        (cells.index(chain[0]) if chain[0] in cells else chain[0], chain[1:], arity)
        for chain, arity in dict.fromkeys(prover.free)
    )


def _resolve(fn, where, attributes):
    """The value a free name chain has in ``fn`` now (as Python looks it up)."""
    if type(where) is int:
        try:
            value = fn.__closure__[where].cell_contents
        except ValueError:  # an empty cell
            raise _NotProved from None
    else:
        found, value = locate_free_name(fn, where)
        if found is None:
            raise _NotProved
    for attr in attributes:
        try:
            value = getattr(value, attr)
        except AttributeError:
            raise _NotProved from None
    return value


def _real_scalar(value) -> bool:
    return type(value) in (float, int, bool) or isinstance(
        value, (np.floating, np.integer, np.bool_)
    )


def _elementwise_function(value, arity: int) -> bool:
    if isinstance(value, np.ufunc):
        return value.signature is None and value.nout == 1 and value.nin == arity
    return value is np.where and arity == 3


def elementwise_in_x(fn, args) -> bool:
    """Whether ``fn(x, *args)`` provably computes, on an array ``x`` (and float entries of
    ``args`` spread into arrays like it), element by element what it computes on each
    scalar ``x`` (see the module docstring). ``args``: the values of this call, each a real
    scalar (an array or another object among them is not proved)."""
    if not isinstance(fn, types.FunctionType):
        return False
    for a in args:
        if not _real_scalar(a):
            return False
    code = fn.__code__
    entry = _PLANS.get(fn)
    if entry is None or entry[0] is not code or entry[1] != len(args):
        entry = (code, len(args), _plan(fn, len(args)))
        _PLANS[fn] = entry
    plan = entry[2]
    if plan is None:
        return False
    try:
        for where, attributes, arity in plan:
            value = _resolve(fn, where, attributes)
            if arity is None:
                if not _real_scalar(value):
                    return False
            elif not _elementwise_function(value, arity):
                return False
    except _NotProved:
        return False
    return True
