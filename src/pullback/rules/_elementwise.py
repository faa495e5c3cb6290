"""Whether a user's integrand provably maps an array of ``x`` elementwise: the proof behind
quad's one-reverse-pass gradient (``_quad_nodes.node_parameter_integral``).

quad calls an integrand ``f(x, *args)`` with one float ``x`` at a time. The fast gradient
instead calls it once on the array of all Gauss-Kronrod nodes, with each float parameter
spread into an array of the same length, and pulls back a cotangent of ones: that gives
``d f(x_i, *args) / d args`` at every node at once *only if* element ``i`` of the result
depends on element ``i`` of the inputs alone and equals the scalar call there. Agreeing
values at the nodes would not prove it (a reduction can cancel in the value and not in
the derivative), so this module proves it from the source instead, and the caller falls
back to one vjp per node whenever the proof fails.

The same proof serves ``np.vectorize(f)(a, b, ...)`` (:func:`elementwise_in_arrays`):
there several parameters vary (the float arrays NumPy maps over, broadcast together;
"``x``" below stands for any of them), and the others are the values passed whole
(excluded arguments, 0-d integers). One reverse pass of ``f`` over the arrays then gives
every element's cotangents at once.

The proof is a whitelist over the function's source (read and matched against its code by
:func:`~pullback.source.load_source`). The function must be a plain function (or lambda)
whose positional parameters are exactly ``x`` and the ``args``, without ``*``/``**`` or
keyword-only parameters, and whose body is straight-line code: simple assignments
``name = expr`` (each name read only after its assignment) and a final ``return expr``.
Every expression is built from

* the parameters and earlier locals (arrays over the nodes, or the scalars passed as is),
* number constants and free names (globals, closure cells, builtins) whose values are
  real scalars *at this call*,
* ``+ - * / // % **`` and unary ``-``/``+``, which NumPy applies elementwise with scalar
  broadcasting and Python applies to the scalars,
* calls, with positional arguments only, of a free name chain (``np.exp``) that resolves
  *at this call* to a NumPy ufunc without a core signature taking that many float64
  inputs to a float64 output (elementwise by definition), or to ``np.where`` with three
  arguments, its condition one comparison and one of its values depending on ``x``
  (booleans and integers must not become arrays: see :class:`_Prover`).

For quad's pass (``arrays=True``) a parameter may also be a float array read only at
constant indices each naming one element (``p[0]``, ``p[1, -2]``) or unpacked whole
(``a, b = p``, ``p`` 1-D of that length), never whole, sliced or rebound: spread to
``p.shape + (nodes,)``, each such read is an array over the nodes, as a spread scalar is.

Anything else — a branch, another subscript, a method or attribute of a local, a call of another
Python function or of ``math.*``, an augmented assignment (in place on an array, a
rebinding on a float) — is not proved, and the caller takes the per-node path. The
structural part of the proof depends on the code only and is kept per function (for the
code object it was made from); the free names are checked on every call, because globals
and cells may be rebound between calls.
"""

from __future__ import annotations

import functools
import types
import weakref

import gast
import numpy as np

from ..resolve import dotted_parts
from ..source import load_source, locate_free_name
from ..tree_walk import walk

__all__ = ["elementwise_in_arrays", "elementwise_in_x"]

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
_WHERE = "where"  # the arity of np.where(comparison, a, b)

# fn -> [the code object, the number of parameters and the varying positions the plan was
# made for, the plan or None, the functions last verified] (see _proved);
# an entry dies with its function.
_PLANS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _NotProved(Exception):
    pass


class _Prover:
    """Walks the body once, collecting the free names whose values the proof needs:
    ``(chain, arity)`` — ``arity`` the number of arguments of a call, ``None`` for a value
    that must be a real scalar.

    Each expression is float-valued; one that depends on ``x`` is a float array on the
    nodes (x is one, NumPy promotes it with any real scalar, and the ufuncs must have a
    float64 loop). Two kinds of array would compute otherwise than Python's scalars, so
    neither may arise: booleans (NumPy's ``True + True`` is ``True``, a logical or, where
    Python's is 2), so a comparison is only allowed as ``np.where``'s condition; and
    integers (which wrap around at 2**63), so one of ``np.where``'s values must depend on
    ``x``."""

    def __init__(self, params, assigned, varying=(0,)):
        params = list(params)
        self.bound = set(params)
        self.assigned = assigned  # the locals: read before assigned is not proved
        # the names that depend on x (the parameters at the positions ``varying``: x for
        # quad, the arrays np.vectorize maps over)
        self.varying = {params[k] for k in varying}
        self.free: list = []
        # a ``**`` on a parameter or a local: Python's float power (the C library's pow)
        # and NumPy's array power (its own loop) may differ in the last bit, so such an
        # integrand computes the same derivative on arrays but not the very same values
        self.powers = False
        # The other parameters: each read whole (a scalar), or only through constant
        # indices and tuple unpacking (an array whose every read is one scalar).
        self.params = [p for k, p in enumerate(params) if k not in varying]
        self.whole: set = set()
        self.reads: dict = {}  # parameter -> [index tuples], [unpacked lengths]

    def _reads(self, name):
        return self.reads.setdefault(name, ([], []))

    def uses(self):
        """Per parameter after ``x``, ``None`` (read whole), ``((), ())`` (not read) or
        ``(indices, lengths)``: the constant index tuples it is read at and the lengths it
        is unpacked to; ``None`` for all when each is read whole. A parameter read both
        ways, or indexed and rebound, is not proved."""
        if not self.reads and self.whole.issuperset(self.params):
            return None
        if self.whole & self.reads.keys() or self.reads.keys() & self.assigned:
            raise _NotProved
        return tuple(
            None
            if n in self.whole
            else (tuple(dict.fromkeys(self.reads[n][0])), tuple(set(self.reads[n][1])))
            if n in self.reads
            else ((), ())
            for n in self.params
        )

    def statement(self, stmt, last: bool):
        if isinstance(stmt, gast.Return) and last and stmt.value is not None:
            self.expr(stmt.value)
        elif isinstance(stmt, gast.Assign) and not last and self.unpacking(stmt):
            pass
        elif isinstance(stmt, gast.Assign) and not last:
            if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], gast.Name):
                raise _NotProved
            name = stmt.targets[0].id
            if self.expr(stmt.value):
                self.varying.add(name)
            else:
                self.varying.discard(name)
            self.bound.add(name)
        else:
            raise _NotProved

    def unpacking(self, stmt) -> bool:
        """``a, b = p``, ``p`` a parameter after ``x``: whether ``stmt`` is that (its
        names then scalars that do not depend on ``x``)."""
        (target,) = stmt.targets if len(stmt.targets) == 1 else (None,)
        value = stmt.value
        if not (
            isinstance(target, gast.Tuple)
            and isinstance(value, gast.Name)
            and value.id in self.params
            and all(isinstance(t, gast.Name) for t in target.elts)
        ):
            return False
        self._reads(value.id)[1].append(len(target.elts))
        for t in target.elts:
            self.varying.discard(t.id)
            self.bound.add(t.id)
        return True

    def subscript(self, node) -> bool:
        """``p[0]``, ``p[1, -2]``: a parameter after ``x`` at a constant index."""
        if not (isinstance(node.value, gast.Name) and node.value.id in self.params):
            raise _NotProved
        index = node.slice
        items = index.elts if isinstance(index, gast.Tuple) else [index]
        self._reads(node.value.id)[0].append(tuple(_constant_int(i) for i in items))
        return False

    def expr(self, node) -> bool:
        """Walk a float-valued expression; whether it depends on ``x``."""
        if isinstance(node, gast.Subscript):
            return self.subscript(node)
        if isinstance(node, gast.Constant):
            if type(node.value) not in (int, float, bool):
                raise _NotProved
            return False
        if isinstance(node, gast.Name):
            if node.id not in self.bound:
                if node.id in self.assigned:
                    raise _NotProved
                self.free.append(((node.id,), None))
            elif node.id in self.params:
                self.whole.add(node.id)
            return node.id in self.varying
        if isinstance(node, gast.Attribute):  # np.pi: a free name chain
            chain = dotted_parts(node)
            if chain is None or chain[0] in self.bound or chain[0] in self.assigned:
                raise _NotProved
            self.free.append((tuple(chain), None))
            return False
        if isinstance(node, gast.BinOp) and isinstance(node.op, _OPERATORS):
            if isinstance(node.op, gast.Pow) and self._reads_bound(node):
                self.powers = True
            return self.expr(node.left) | self.expr(node.right)
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
            return self.expr(node.operand)
        if not isinstance(node, gast.Call) or node.keywords:
            raise _NotProved
        chain = dotted_parts(node.func)  # np.exp: ["np", "exp"]
        if chain is None or chain[0] in self.bound or chain[0] in self.assigned:
            raise _NotProved
        args = node.args
        if any(isinstance(arg, gast.Starred) for arg in args):
            raise _NotProved
        if len(args) == 3:  # np.where(x > 0, a, b), checked at each call
            self.condition(args[0])
            if not self.expr(args[1]) | self.expr(args[2]):
                raise _NotProved
            self.free.append((tuple(chain), _WHERE))
            return True
        varying = False
        for arg in args:
            varying |= self.expr(arg)
        self.free.append((tuple(chain), len(args)))
        return varying

    def _reads_bound(self, node) -> bool:
        """Whether ``node`` reads a parameter or a local (a value the pass may make an
        array), not only constants and free names (scalars in both computations)."""
        return any(isinstance(n, gast.Name) and n.id in self.bound for n in walk(node))

    def condition(self, node):
        """``np.where``'s condition: one comparison of float expressions, or one of them."""
        if isinstance(node, gast.Compare):
            if len(node.ops) != 1 or not isinstance(node.ops[0], _COMPARISONS):
                raise _NotProved
            self.expr(node.left)
            self.expr(node.comparators[0])
        else:
            self.expr(node)


def _constant_int(node) -> int:
    """The value of an index written as an int constant (``-1`` too)."""
    sign = 1
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        node, sign = node.operand, -1
    if not isinstance(node, gast.Constant) or type(node.value) is not int:
        raise _NotProved  # (a bool index adds an axis; a variable one is not constant)
    return sign * node.value


def _plan(fn, nargs: int, varying=(0,)):
    """``(checks, fits)``: the free names the proof checks at each call, as ``(where,
    attributes, arity)`` (``where`` the index of a closure cell or the name of a global
    or builtin), and what the parameters outside ``varying`` must be for the way they are
    read (see :func:`_fits_of`); ``None`` when the structure of ``fn`` is not provably
    elementwise in the positions ``varying`` for ``nargs`` positional arguments."""
    code = fn.__code__
    if (
        code.co_argcount != nargs
        or code.co_posonlyargcount
        or code.co_kwonlyargcount
        or code.co_flags & (0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200)
    ):  # *args, **kwargs, generator, coroutine, async generator
        return None
    try:
        fs = load_source(fn)
    except Exception:  # no source: nothing to prove it from
        return None
    if fs.fn is not fn:  # (a wrapper read through to what it wraps: its names differ)
        return None
    tree = fs.tree
    body = list(tree.body)
    if (
        body
        and isinstance(body[0], gast.Expr)
        and isinstance(body[0].value, gast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]  # the docstring
    assigned = {
        t.id
        for stmt in body
        if isinstance(stmt, gast.Assign)
        for target in stmt.targets
        for t in (target.elts if isinstance(target, gast.Tuple) else [target])
        if isinstance(t, gast.Name)
    }
    prover = _Prover((a.id for a in tree.args.args), assigned, varying)
    try:
        if not body:
            raise _NotProved
        for k, stmt in enumerate(body):
            prover.statement(stmt, k == len(body) - 1)
        uses = prover.uses()
    except _NotProved:
        return None
    cells = code.co_freevars
    checks = tuple(
        (cells.index(chain[0]) if chain[0] in cells else chain[0], chain[1:], arity)
        for chain, arity in dict.fromkeys(prover.free)
    )
    return checks, _fits_of(uses), prover.powers


def _fits_of(uses):
    """What each parameter must be for the reads :meth:`_Prover.uses` found, decided
    once per plan (the checks at each call then compare a shape with a few numbers):
    ``None`` for all when each is read whole (real scalars), else per parameter
    ``_WHOLE`` (a real scalar), ``_UNREAD`` (a real scalar or, with ``arrays``, a float
    array), ``False`` (nothing fits: indices of different ranks, unpackings of different
    lengths) or ``(ndim, least, exact)``: a float array of rank ``ndim`` whose axis ``j``
    has at least ``least[j]`` entries (every constant index names one) and, where it is
    unpacked, the shape ``exact``."""
    if uses is None:
        return None
    fits = []
    for use in uses:
        if use is None:
            fits.append(_WHOLE)
            continue
        indices, lengths = use
        if not indices and not lengths:
            fits.append(_UNREAD)
            continue
        ranks = {len(index) for index in indices} | ({1} if lengths else set())
        if len(ranks) != 1 or len(set(lengths)) > 1:
            fits.append(False)
            continue
        (ndim,) = ranks
        least = [0] * ndim
        for index in indices:
            for j, i in enumerate(index):
                least[j] = max(least[j], i + 1 if i >= 0 else -i)
        exact = (lengths[0],) if lengths else None
        fits.append((ndim, tuple(least), exact))
    return tuple(fits)


def _resolve(fn, where, attributes):
    """The value a free name chain has in ``fn`` now (as Python looks it up)."""
    if type(where) is int:
        try:
            value = fn.__closure__[where].cell_contents
        except ValueError:  # an empty cell
            raise _NotProved from None
    elif where in (g := fn.__globals__):  # (a name that is no cell: the usual global)
        value = g[where]
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


def _elementwise_function(value, arity) -> bool:
    """A ufunc without a core signature that maps ``arity`` float64 inputs to a float64
    output (not a boolean one: see :class:`_Prover`), or ``np.where`` (``arity``
    ``_WHERE``: three arguments)."""
    if arity is _WHERE:
        return value is np.where
    return type(value) is np.ufunc and _elementwise_ufunc(value, arity)


@functools.lru_cache(maxsize=256)
def _elementwise_ufunc(ufunc, arity) -> bool:
    """:func:`_elementwise_function` of a ufunc (what it says never changes: kept, as
    ``ufunc.types`` builds a list of strings at each read)."""
    return (
        ufunc.signature is None
        and ufunc.nout == 1
        and ufunc.nin == arity
        and "d" * arity + "->d" in ufunc.types
    )


def _float64_scalar(value) -> bool:
    """A real scalar that computes in float64 with a Python float as with a float64 array
    (an integer or bool kind, a Python float or np.float64: not a narrower float)."""
    return type(value) in (float, int, bool, np.float64) or isinstance(
        value, (np.integer, np.bool_)
    )


_WHOLE = "whole"  # (see _fits_of)
_UNREAD = "unread"


def _indexed_fit(fits, args, arrays) -> bool:
    """Whether each of ``args`` is what :func:`_fits_of` says it must be: a real scalar
    where it is read whole; with ``arrays``, a float array where every constant index
    names one element and every unpacking of it (1-D) has its length, and a real scalar or
    a float array where it is not read."""
    if len(args) != len(fits):
        return False
    j = 0
    for a in args:  # (indexed, not zipped: a zip per call costs more than these tests)
        fit = fits[j]
        j += 1
        if type(a) is not np.ndarray:  # (tested first: an array is no scalar)
            if (fit is _WHOLE or fit is _UNREAD) and (type(a) is float or _real_scalar(a)):
                continue
            return False
        if not arrays or fit is _WHOLE or fit is False or a.dtype.kind != "f":
            return False
        if fit is _UNREAD:
            continue
        ndim, least, exact = fit
        shape = a.shape
        if len(shape) != ndim or (exact is not None and shape != exact):
            return False
        i = 0
        for low in least:  # (as many as the axes: ndim was tested)
            if shape[i] < low:
                return False
            i += 1
    return True


def elementwise_in_x(fn, args, arrays=False, owner=None, same_types=False) -> bool:
    """Whether ``fn(x, *args)`` provably computes, on an array ``x`` (and float entries of
    ``args`` spread into arrays like it), element by element what it computes on each
    scalar ``x`` (see the module docstring). ``args``: the values of this call, each a real
    scalar (an array or another object among them is not proved) — or, with ``arrays``, a
    float array read only at constant indices that each name one element (``p[0]``,
    ``p[1, -1]``, ``a, b = p``): spread to ``p.shape + x.shape``, each such read is then
    an array over ``x`` like a spread scalar. ``owner``: an object made for ``fn`` alone
    (its :class:`~._calculus_util.UserVJP`) that keeps the proof's structural part in its
    attribute ``proof``, found without a weak dictionary's lookup. ``same_types``: and
    every free scalar name is one whose arithmetic with a Python float and with a float64
    array gives float64 alike (not a float32 scalar: ``np.float32(2) * x`` is a float32
    for a Python float ``x``, a float64 array for an array)."""
    return _proved(fn, args, arrays, 1 + len(args), (0,), owner, same_types)


def elementwise_in_arrays(fn, values, varying) -> bool:
    """Whether ``fn(*values)`` provably computes, on the float arrays ``values[k]`` for
    ``k`` in ``varying`` (broadcast together), element by element what it computes on
    their elements (what np.vectorize does), the other values passed as they are: each a
    real scalar, or a float array read only at constant indices that each name one element
    (``p[0]``: one scalar in both computations, as such an array is not spread). A NumPy
    ufunc with a float64 loop and one output is elementwise by definition (the other
    values then real scalars)."""
    for k in varying:
        v = values[k]
        if type(v) is not np.ndarray or v.dtype.kind != "f":
            return False
    others = tuple(v for k, v in enumerate(values) if k not in varying)
    if type(fn) is np.ufunc:  # elementwise by definition, the others scalars
        return _elementwise_ufunc(fn, len(values)) and all(_real_scalar(v) for v in others)
    return _proved(fn, others, True, len(values), tuple(varying))


def _proved(fn, args, arrays, nargs, varying, owner=None, same_types=False) -> bool:
    """The proof for ``fn`` of ``nargs`` positional parameters, those at ``varying``
    arrays, ``args`` the values of the others (see :func:`elementwise_in_x`; ``owner``
    keeps the entry instead of :data:`_PLANS`).

    The entry is ``[code, (nargs, varying), plan or None, verified]``, ``verified`` the
    functions the plan's calls resolved to when they were last checked: a call resolving
    to the very same object again needs no second look (what ``_elementwise_function``
    says of an object never changes). Every name is resolved again at each call, so a
    rebound global or cell is seen."""
    if not isinstance(fn, types.FunctionType):
        return False
    scalars = True
    for a in args:
        if type(a) is not float and (type(a) is np.ndarray or not _real_scalar(a)):
            if not arrays:
                return False
            scalars = False
            break
    code = fn.__code__
    entry = _PLANS.get(fn) if owner is None else owner.proof
    if entry is None or entry[0] is not code or entry[1] != (nargs, varying):
        found = _plan(fn, nargs, varying)
        entry = [code, (nargs, varying), found, [None] * (0 if found is None else len(found[0]))]
        if owner is None:
            _PLANS[fn] = entry
        else:
            owner.proof = entry
    if entry[2] is None:
        return False
    plan, fits, _ = entry[2]
    verified = entry[3]
    if fits is None:
        if not scalars:
            return False
    elif not _indexed_fit(fits, args, arrays):
        return False
    g = fn.__globals__
    try:
        for j, (where, attributes, arity) in enumerate(plan):
            if type(where) is str and where in g:  # (the usual global, looked up here)
                value = g[where]
                for attr in attributes:
                    value = getattr(value, attr)
            else:
                value = _resolve(fn, where, attributes)
            if arity is None:
                if not _real_scalar(value) or (same_types and not _float64_scalar(value)):
                    return False
            elif value is verified[j]:  # (the function checked last time)
                continue
            elif type(value) is np.ufunc:
                if not _elementwise_ufunc(value, arity):
                    return False
                verified[j] = value
            elif not _elementwise_function(value, arity):
                return False
            else:
                verified[j] = value
    except (_NotProved, AttributeError):
        return False
    return True


def proof_details(fn, owner=None):
    """``(powers, functions)`` of the proof :func:`elementwise_in_x` last made for ``fn``
    (call it first): whether a ``**`` reads a parameter or a local, and the functions its
    calls resolved to at that call (``None`` where a free name is a scalar: read only);
    ``None`` without a plan."""
    entry = _PLANS.get(fn) if owner is None else owner.proof
    if entry is None or entry[2] is None:
        return None
    return entry[2][2], entry[3]
