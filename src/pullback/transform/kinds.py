"""Step 5c: what kind of value each SSA name holds, given the kinds of the arguments.

A *kind* is ``SCALAR`` (shape ``()``: Python and NumPy scalars, 0-d arrays), ``("array",
ndim)``, or ``None`` (not known: containers, objects, results of calls this pass does not
model). Adjoints are specialized on the kinds of their arguments, so that

* ``unbroadcast`` is left out where the operand provably has the result's shape, and
* cotangents of names that are provably scalars or arrays accumulate with ``+`` (NumPy's
  and Dask's; an array-API argument of another namespace is ``(ARRAY_API, kind)``, and its
  adjoint accumulates with the zero-aware ``add``: see :func:`adds_with_plus`).

>>> kind_of(1.0), kind_of(np.zeros((2, 3))), kind_of([1.0])
('scalar', ('array', 2), None)
"""

from __future__ import annotations

import builtins
import math

import gast
import numpy as np

from .. import arrays_inplace, arrays_inplace_calls, arrays_ufunc_at
from ..backends import holds_dask, is_dask, is_real_array_api
from ..registry import SCALAR as SCALAR_RULE
from ..runtime import as_sequence
from .with_blocks import WithBlock

SCALAR = "scalar"
# A real array (or scalar) whose rank is not known: it adds with "+", but its shape must
# still be undone by unbroadcast.
UNKNOWN_RANK = ("array", None)
# The kind of an argument that is an array of another array-API namespace: (ARRAY_API,
# its kind as if it were NumPy's). Only arguments have it: inside one adjoint the kinds
# are NumPy's, and FOREIGN_ARRAYS (a key no variable can have) records that some argument
# was such an array.
ARRAY_API = "array-api"
FOREIGN_ARRAYS = "<array-api>"
# The same for a Dask argument: LAZY_ARRAYS records it. Such an adjoint calls the closure
# pullback of a rule whose plain pullback function is marked NumPy-only (see
# calls_pullback_function): the closure dispatches on the backend or is refused by name
# under the compute guard, where the function would scatter with an integer index or give
# a wrong value (Dask's cholesky is upper-triangular).
DASK_KIND = "dask"
LAZY_ARRAYS = "<dask>"
_MARKS = {ARRAY_API: FOREIGN_ARRAYS, DASK_KIND: LAZY_ARRAYS}
# A key of the kinds dict (no variable has it) and a pseudo-keyword of a kinds key (no
# parameter has it): the parameters a caller guarantees to hold float arrays of one shape
# and dtype, each after some leading axes: a frozenset of ``(name, axes)`` (in a kinds key
# ``(position, axes)``). ``p`` with ``axes`` 1 is read as ``p[i]`` (i an int) at that
# shape. Internal callers that make the arrays themselves give it (quad's node pass, whose
# ``x`` and spread parameters are one float64 vector shape): shape_proof then gives such
# operands one shape key, and their adjoints need no ``unbroadcast``.
ONE_SHAPE = "<one-shape>"
# A tuple or list display of real values (what np.stack and np.concatenate take). It is
# not itself a number or an array: is_real() is False for it.
REAL_SEQUENCE = ("sequence",)


def is_real(kind) -> bool:
    """Whether a kind proves a real number or array (so "+" adds and no conjugation)."""
    return kind == SCALAR or (isinstance(kind, tuple) and kind[0] == "array")


_SCALAR_CALLS = {builtins.len, builtins.float, builtins.int}
# The normalizer's helpers for writes into local arrays (issue 11) return their first
# argument (or a copy of it): its kind.
_KIND_OF_FIRST = {
    arrays_inplace.array_set,
    arrays_inplace.array_set_copy,
    arrays_inplace.array_add_set,
    arrays_inplace.array_add_set_copy,
    arrays_inplace.array_sub_set,
    arrays_inplace.array_sub_set_copy,
    arrays_inplace.array_fresh,
    arrays_inplace.array_named_read,
}
_FILLED = {np.zeros, np.ones, np.empty}
_REDUCTIONS = {np.sum, np.mean, np.prod, np.max, np.min, np.std, np.var}
# In-place calls on a local array (issue 11) keep a real array's dtype and rank.
_WRITES = {
    arrays_inplace_calls.array_fill,
    arrays_inplace_calls.array_iadd,
    arrays_inplace_calls.array_fill_copy,
    arrays_inplace_calls.array_add_at,
    arrays_inplace_calls.array_add_at_copy,
    arrays_inplace_calls.array_sort,
    arrays_inplace_calls.array_copyto,
    arrays_inplace_calls.array_copyto_copy,
    arrays_ufunc_at.array_ufunc_at_copy,
}
# Constructors of float arrays (with no dtype given): (the most positional arguments).
_FLOAT_CONSTRUCTORS = {np.zeros: 1, np.ones: 1, np.empty: 1, np.eye: 3, np.identity: 1}
_LIKE = {np.zeros_like, np.ones_like, np.empty_like}
# NumPy functions that give a real array (of the first argument's rank for _SAME_RANK)
# when their array arguments are real.
_SAME_RANK = {
    np.transpose,
    np.swapaxes,
    np.moveaxis,
    np.flip,
    np.roll,
    np.clip,
    np.cumsum,
    np.cumprod,
    np.sort,
}
_OF_SEQUENCES = {np.stack, np.concatenate, np.hstack, np.vstack, np.column_stack}
_SEVERAL_ARRAYS = {
    np.dot,
    np.matmul,
    np.outer,
    np.inner,
    np.where,
    np.maximum,
    np.minimum,
    np.clip,
    np.linalg.solve,
}
_REAL_ARRAY_FUNCTIONS = _SAME_RANK | {
    np.linalg.inv,
    np.linalg.det,
    np.linalg.solve,
    np.linalg.norm,
    np.reshape,
    np.ravel,
    np.squeeze,
    np.expand_dims,
    np.broadcast_to,
    np.atleast_1d,
    np.atleast_2d,
    np.tile,
    np.repeat,
    np.diff,
    np.sum,
    np.mean,
    np.prod,
    np.max,
    np.min,
    np.amax,
    np.amin,
    np.std,
    np.var,
    np.dot,
    np.matmul,
    np.outer,
    np.inner,
    np.trace,
    np.where,
    np.maximum,
    np.minimum,
}


def kind_of(value):
    """The kind of a run-time value (real values only: a complex value has no kind)."""
    t = type(value)
    if t is float or t is int:
        return SCALAR
    if t is np.ndarray:
        if value.dtype.kind not in "fiub":  # a bool array is real too
            return None  # complex (or object) values take the general path
        return SCALAR if value.ndim == 0 else ("array", value.ndim)
    if isinstance(value, np.generic):
        return SCALAR if value.dtype.kind in "fiu" else None
    if is_dask(value) and value.dtype.kind in "fiub":
        # A Dask array has a known rank, and NumPy's functions and operators run on it; its
        # kind says it is Dask's, so its adjoint calls each rule's checked closure pullback.
        return (DASK_KIND, SCALAR if value.ndim == 0 else ("array", value.ndim))
    if (t is tuple or t is list or t is dict or is_dask(value)) and holds_dask(value):
        # A complex Dask array or a container holding Dask arrays: no kind, but the
        # adjoint must still know that an argument is lazy (calls_pullback_function).
        return (DASK_KIND, None)
    if is_real_array_api(value):
        # Its arithmetic is NumPy's, but its operators refuse pullback's symbolic zero
        # (``array + ZERO``): the kind says so, and the adjoint accumulates with add().
        return (ARRAY_API, SCALAR if value.ndim == 0 else ("array", value.ndim))
    return None


def adds_with_plus(kinds: dict, name: str) -> bool:
    """Whether cotangents of ``name`` may accumulate with a plain ``+``: its kind is real
    and every array is NumPy's (or Dask's), whose operators hand ``x + ZERO`` to ZERO.
    An array of another namespace (array_api_strict) refuses an operand that is not its
    own array or a Python scalar, so those adjoints call the zero-aware ``add``."""
    return is_real(kinds.get(name)) and not kinds.get(FOREIGN_ARRAYS, False)


def join(a, b):
    if a == UNBOUND:
        return b
    if b == UNBOUND:
        return a
    return a if a == b else None


# The kind of a name SSA binds to None where a try statement starts (ssa.bind_before): its
# value reaches no operation (the join copies that read it are taken only where the name is
# unbound in Python), so it constrains no join; a name left with it has no kind.
UNBOUND = "<unbound>"


def _broadcast(a, b):
    if not is_real(a) or not is_real(b):
        return None
    if a == SCALAR:
        return b
    if b == SCALAR:
        return a
    if a[1] is None or b[1] is None:
        return UNKNOWN_RANK
    return ("array", max(a[1], b[1]))


def infer(tree, param_kinds: dict, registry) -> dict:
    """Kinds of the names of a normalized SSA function (a fixed point over loops)."""
    kinds: dict = {}
    marks = set()
    for name, kind in param_kinds.items():
        if isinstance(kind, tuple) and kind[0] in _MARKS:
            marks.add(_MARKS[kind[0]])
            kind = kind[1]
        kinds[name] = kind
    for _ in range(20):
        before = dict(kinds)
        sizes = _shape_sizes(kinds)
        _block(tree.body, kinds, registry)
        if kinds == before and _shape_sizes(kinds) == sizes:
            break
    for name in [n for n, k in kinds.items() if k == UNBOUND]:
        kinds[name] = None
    for mark in marks:
        kinds[mark] = True
    return kinds


def calls_pullback_function(kinds: dict, fn) -> bool:
    """Whether an adjoint specialized on ``kinds`` may call the plain pullback function
    ``fn`` of a rule directly: not one marked ``__pullback_numpy_only__`` when an argument
    is a Dask array (LAZY_ARRAYS)."""
    return not (kinds.get(LAZY_ARRAYS, False) and getattr(fn, "__pullback_numpy_only__", False))


# Names that hold ``a.shape`` of an array (a key no variable can have): ``n = a.shape[0]``
# is then an integer, so ``np.zeros(n)`` is a real vector. A name assigned anything else
# anywhere (NOT_SHAPES) is never one.
SHAPES = "<shapes>"
NOT_SHAPES = "<not-shapes>"


def _note_shape(name, v, kinds):
    base = v.value if isinstance(v, gast.Attribute) and v.attr == "shape" else None
    key = SHAPES if isinstance(base, gast.Name) and is_real(kinds.get(base.id)) else NOT_SHAPES
    # sets that only grow, added to in place (a copy per name was quadratic in the length
    # of the function); infer() compares their sizes to see them change
    kinds.setdefault(key, set()).add(name)


def _shape_sizes(kinds) -> tuple:
    return len(kinds.get(SHAPES, ())), len(kinds.get(NOT_SHAPES, ()))


def _block(stmts, kinds, registry):
    for s in stmts:
        if isinstance(s, gast.Assign):
            name = s.targets[0].id
            if getattr(s, "pb_unbound", False):  # bound to None before a try (UNBOUND)
                kinds.setdefault(name, UNBOUND)
                continue
            _note_shape(name, s.value, kinds)
            k = _value_kind(s.value, kinds, registry)
            kinds[name] = join(kinds[name], k) if name in kinds else k
        elif isinstance(s, gast.If):
            _block(s.body, kinds, registry)
            _block(s.orelse, kinds, registry)
        elif isinstance(s, WithBlock):
            _block(s.body, kinds, registry)
        elif isinstance(s, (gast.For, gast.While)):
            if isinstance(s, gast.For):
                kinds[s.target.id] = SCALAR  # loops are over range() after normalization
            _block(s.body, kinds, registry)


def _atom(node, kinds):
    if isinstance(node, gast.Constant):
        v = node.value
        return SCALAR if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    if isinstance(node, gast.Name):
        return kinds.get(node.id)
    return None


def _value_kind(v, kinds, registry):
    if isinstance(v, (gast.Name, gast.Constant)):
        return _atom(v, kinds)
    if isinstance(v, gast.BinOp):
        if isinstance(v.op, gast.MatMult):
            return _matmul(_atom(v.left, kinds), _atom(v.right, kinds))
        return _broadcast(_atom(v.left, kinds), _atom(v.right, kinds))
    if isinstance(v, gast.UnaryOp):
        if isinstance(v.op, (gast.USub, gast.UAdd)):
            k = _atom(v.operand, kinds)
            return k if is_real(k) else None
        return None
    if isinstance(v, (gast.Tuple, gast.List)):
        if v.elts and all(is_real(_atom(e, kinds)) for e in v.elts):
            return REAL_SEQUENCE
        return None
    if isinstance(v, gast.Subscript):
        if (
            isinstance(v.value, gast.Name)
            and v.value.id in kinds.get(SHAPES, ())
            and v.value.id not in kinds.get(NOT_SHAPES, ())
            and _atom(v.slice, kinds) == SCALAR
        ):
            return SCALAR  # a.shape[k]: an int
        base = _atom(v.value, kinds)
        if not is_real(base) or base == SCALAR:
            return None
        # Reading a real array gives a real array; work out its rank where we can.
        if base[1] is None:
            return UNKNOWN_RANK
        index = v.slice.elts if isinstance(v.slice, gast.Tuple) else [v.slice]
        rank = base[1]
        for i in index:
            if isinstance(i, gast.Slice):
                continue
            if isinstance(i, gast.Constant) and i.value is None:
                rank += 1
            elif isinstance(i, gast.Constant) and type(i.value) is int:
                rank -= 1
            elif isinstance(i, gast.Name) and kinds.get(i.id) == SCALAR:
                rank -= 1  # an integer position (bools have no kind)
            else:
                return UNKNOWN_RANK  # Ellipsis, integer or boolean arrays
        if rank == 0:
            return SCALAR
        return ("array", rank) if rank > 0 else None
    if isinstance(v, gast.Call):
        callee = getattr(v, "pb_callee", None)
        if (
            callee is not None
            and callee.kind == "method"
            and callee.name == "copy"
            and not v.args
            and not v.keywords
            and isinstance(v.func, gast.Attribute)
        ):
            return _atom(v.func.value, kinds)  # x.copy(): x's kind (x = x.copy(); x[0] = ...)
        if callee is not None and callee.obj is as_sequence and v.args:
            # a loop over an array reads the array itself (runtime.as_sequence)
            first = _atom(v.args[0], kinds)
            return first if is_real(first) and first != SCALAR else None
        if callee is None or callee.kind != "object":
            return None
        fn = callee.obj
        if _member(fn, _KIND_OF_FIRST) and v.args:
            return _atom(v.args[0], kinds)
        if _member(fn, _FILLED) and len(v.args) == 1 and not v.keywords:
            # float64 without a dtype; a scalar length gives a vector
            return ("array", 1) if _atom(v.args[0], kinds) == SCALAR else UNKNOWN_RANK
        if _member(fn, _SCALAR_CALLS) or getattr(math, getattr(fn, "__name__", ""), None) is fn:
            return SCALAR
        if fn is np.float64 and len(v.args) == 1 and _atom(v.args[0], kinds) == SCALAR:
            return SCALAR  # np.float64(1.0): a float64 scalar (of an array, an array)
        rule = registry.lookup(fn)
        if rule is not None and rule.kind == SCALAR_RULE and not v.keywords:
            out = SCALAR
            for a in v.args:
                out = _broadcast(out, _atom(a, kinds))
            return out
        if _member(fn, _REDUCTIONS) and len(v.args) == 1 and not v.keywords:
            return SCALAR
        if not any(k.arg == "dtype" for k in v.keywords):
            if len(v.args) <= _FLOAT_CONSTRUCTORS.get(fn, -1):  # np.zeros(n): float64
                return UNKNOWN_RANK
            if _member(fn, _LIKE) and len(v.args) == 1:
                first = _atom(v.args[0], kinds)
                return first if is_real(first) and first != SCALAR else None
        if _member(fn, _WRITES) and v.args:
            first = _atom(v.args[0], kinds)
            return first if is_real(first) and first != SCALAR else None
        if rule is not None and rule.family == "array_api":
            # The array-API rules give real arrays for real arrays (rank not tracked).
            args = v.args[1:] if rule.name.endswith(".where") else v.args  # skip a condition
            arrays = [_atom(a, kinds) for a in args if isinstance(a, gast.Name)]
            real = all(is_real(k) or k == REAL_SEQUENCE for k in arrays)  # shapes: tuples
            return UNKNOWN_RANK if real else None
        if _member(fn, _OF_SEQUENCES) and v.args and _atom(v.args[0], kinds) == REAL_SEQUENCE:
            return UNKNOWN_RANK
        if _member(fn, _REAL_ARRAY_FUNCTIONS) and v.args:
            first = _atom(v.args[0], kinds)
            if not is_real(first):
                return None
            # Later arguments are shapes or axes, except for the functions of several arrays.
            rest = v.args[1:] if _member(fn, _SEVERAL_ARRAYS) else []
            others = [_atom(a, kinds) for a in rest if isinstance(a, gast.Name)]
            if all(is_real(k) for k in others):
                if _member(fn, _SAME_RANK) and first != SCALAR:
                    return first
                return UNKNOWN_RANK
        return None
    return None


def _matmul(a, b):
    if not is_real(a) or not is_real(b) or a == SCALAR or b == SCALAR:
        return None
    n, m = a[1], b[1]
    if n is None or m is None:
        return UNKNOWN_RANK
    if n == 1 and m == 1:
        return SCALAR
    if n == 1 or m == 1:
        return ("array", max(n, m) - 1)
    return ("array", max(n, m))


def _member(fn, table) -> bool:
    try:
        return fn in table
    except TypeError:
        return False
