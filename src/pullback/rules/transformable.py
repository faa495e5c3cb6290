"""Pullbacks written as plain functions in the differentiable subset.

Generated adjoints call these directly (no closure per call), and because pullback can
transform them like user code, derivatives run through them again: Hessians and grad of
grad of code that uses these functions. Each one must agree with its rule's pullback
(tests/test_second_order_rules.py checks that).
"""

from __future__ import annotations

import inspect
import math
import operator

import numpy as np

from ..list_operands import dense_operand
from ..registry import default_registry, transformable
from ..runtime import matmul_lhs_cotangent, matmul_rhs_cotangent
from ..sparse_values import refuse_sparse_reduction
from ..tangents import NO_TANGENT, ZERO, broadcast_cotangent, densify, unbroadcast
from ._util import differentiable, finalize, zeros_for

FAMILY = "transformable"

# Numbers whose sum is themselves, with a float cotangent (a complex one is conjugated)
_SCALAR_TYPES = frozenset({float, int, np.float64, np.float32})


@transformable
def sum_pullback(dy, x, axis=None, dtype=None, keepdims=False):
    t = type(dy)
    if axis is None and (t is float or t is np.float64) and type(x) in _SCALAR_TYPES:
        # the sum of a number is the number: its cotangent as it is (np.broadcast_to to a
        # 0-d view cost three times the gradient of np.sum(c * k) with floats c and k)
        return dy, NO_TANGENT
    if axis is None and type(x) is np.ndarray and x.ndim == 1 and x.size <= 65536:
        if t is float or t is np.float64 or t is np.float32:
            # A small vector filled: np.broadcast_to (and np.full) cost microseconds, and
            # products that read a stride-0 view are slower. A large one stays a view, and
            # so does a matrix (matmul's cotangents sum rows where they see a view: see
            # runtime._broadcast_scalar).
            g = np.empty(x.shape, t)
            g[...] = dy
            return g, NO_TANGENT
    refuse_sparse_reduction("sum", x)
    if axis is None:
        # np.broadcast_to, or under a stack of cotangents (pullback.batched) the stack
        # broadcast behind its batch axes: a Hessian's row that reads a sum (np.sum(x) * x)
        return broadcast_cotangent(dy, np.shape(x)), NO_TANGENT
    g = dy
    if not keepdims:
        g = np.expand_dims(g, axis)
    return np.broadcast_to(g, np.shape(x)), NO_TANGENT


@transformable
def mean_pullback(dy, x, axis=None, dtype=None, keepdims=False):
    refuse_sparse_reduction("mean", x)
    # The count of averaged elements; a zero-size x (count 0) gets an empty cotangent.
    # (Sizes come from shapes: np.size would compute a Dask array.)
    g = dy / np.maximum(math.prod(np.shape(x)) / np.maximum(math.prod(np.shape(dy)), 1), 1)
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
    return np.broadcast_to(g, np.shape(x)), NO_TANGENT


@transformable
def transpose_pullback(dy, x, axes=None):
    if axes is None:
        return np.transpose(dy), NO_TANGENT
    return np.transpose(dy, tuple(np.argsort(np.mod(axes, np.ndim(x))))), NO_TANGENT


@transformable
def reshape_pullback(dy, x, shape=None, order="C"):
    if order == "C":  # no order= for backends whose reshape has none (Dask)
        return np.reshape(dy, np.shape(x)), NO_TANGENT
    return np.reshape(dy, np.shape(x), order=order), NO_TANGENT


@transformable
def matmul_pullback(dy, a, b):
    return matmul_lhs_cotangent(dy, a, b), matmul_rhs_cotangent(dy, a, b)


@transformable
def _reduced(dy, axis, keepdims):
    """The cotangent of a reduction with its reduced axes back (size 1)."""
    if axis is not None and not keepdims:
        return np.expand_dims(dy, axis)
    return dy


@transformable
def extreme_pullback(dy, x, m, axis, keepdims, initial, where):
    """The cotangents of ``x`` and ``initial`` of a max or min ``m`` (with keepdims): ties
    share the cotangent equally (as the rules do), an ``initial`` equal to ``m`` counting
    as one of them; the elements ``where`` masks get none."""
    mask = (x == m) & where
    won = False if initial is None else m == initial
    count = np.maximum(np.sum(mask, axis=axis, keepdims=True) + won, 1)
    g = _reduced(dy, axis, keepdims)
    d_initial = NO_TANGENT if initial is None else unbroadcast(g * won / count, initial)
    return g * mask / count, d_initial


@transformable
def extreme_reduction_pullback(dy, reduce, x, axis, keepdims, initial, where):
    """The cotangents ``(x, initial)`` of ``reduce(x, axis=axis, initial=initial,
    where=where)`` for a max or min ``reduce`` (np.max, np.min, np.nanmax, np.nanmin: the
    reducer is a value, so they share this pullback, to second order too)."""
    # ``initial`` by position (out None): ``reduce`` is a value, and a call found at run
    # time gives cotangents to its positional arguments only, so a keyword ``initial``
    # would lose its gradient. Without it, keywords: an array library's own max (Dask's,
    # reached through __array_function__) orders its parameters otherwise, and ``axis`` and
    # ``keepdims`` carry no derivative, so they are never refused as keywords.
    if initial is None:
        m = reduce(x, axis=axis, keepdims=True)
    else:
        m = reduce(x, axis, None, True, initial, where)
    dx, d_initial = extreme_pullback(dy, x, m, axis, keepdims, initial, where)
    return unbroadcast(dx, x), d_initial


@transformable
def max_pullback(dy, x, axis=None, out=None, keepdims=False, initial=None, where=True):
    dx, d_initial = extreme_reduction_pullback(dy, np.max, x, axis, keepdims, initial, where)
    return dx, NO_TANGENT, NO_TANGENT, NO_TANGENT, d_initial


@transformable
def min_pullback(dy, x, axis=None, out=None, keepdims=False, initial=None, where=True):
    dx, d_initial = extreme_reduction_pullback(dy, np.min, x, axis, keepdims, initial, where)
    return dx, NO_TANGENT, NO_TANGENT, NO_TANGENT, d_initial


@transformable
def var_pullback(dy, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    d_ddof = ddof_cotangent(dy, x, axis, ddof, keepdims, np.var)
    if math.prod(np.shape(x)) == 0:
        dx = np.zeros(np.shape(x), np.result_type(dense_operand(x), 1.0))
        return (dx, NO_TANGENT, NO_TANGENT, NO_TANGENT, d_ddof, NO_TANGENT)
    m = np.mean(x, axis=axis, keepdims=True)
    n = math.prod(np.shape(x)) / math.prod(np.shape(m))
    dx = _reduced(dy, axis, keepdims) * 2.0 * (x - m) / (n - ddof)
    return (dx, NO_TANGENT, NO_TANGENT, NO_TANGENT, d_ddof, NO_TANGENT)


@transformable
def std_pullback(dy, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    d_ddof = ddof_cotangent(dy, x, axis, ddof, keepdims, np.std)
    if math.prod(np.shape(x)) == 0:
        dx = np.zeros(np.shape(x), np.result_type(dense_operand(x), 1.0))
        return (dx, NO_TANGENT, NO_TANGENT, NO_TANGENT, d_ddof, NO_TANGENT)
    m = np.mean(x, axis=axis, keepdims=True)
    n = math.prod(np.shape(x)) / math.prod(np.shape(m))
    # std written out (ddof in arithmetic, not a keyword): at second order a ddof that
    # varies per loop iteration comes back as a differentiated value, which a keyword of
    # np.std would have refused, and by position np.std's parameters are NumPy's order, not
    # Dask's (reached through __array_function__)
    s = np.sqrt(np.sum(np.abs(x - m) ** 2, axis=axis, keepdims=True) / (n - ddof))
    # Constant data (std 0, e.g. a length-1 axis): std is not differentiable there; its
    # subgradient 0 is taken (x - m is 0 there, so only the division needs guarding).
    dx = _reduced(dy, axis, keepdims) * (x - m) / ((n - ddof) * np.where(s == 0, 1.0, s))
    return (dx, NO_TANGENT, NO_TANGENT, NO_TANGENT, d_ddof, NO_TANGENT)


@transformable
def ddof_cotangent(dy, x, axis, ddof, keepdims, moment):
    """The cotangent of a float ``ddof`` of ``moment`` (np.var, np.std, np.nanvar,
    np.nanstd: a value, so they share it): var = S / (n - ddof) moves by var / (n - ddof)
    per unit of ddof, std by half of std / (n - ddof). An integer ddof has none.

    ``moment`` gets ddof by position: at second order a ddof that varies per loop
    iteration comes back from the first derivative's tape with the differentiated values,
    and a call found at run time gives its keywords no cotangent (PB502)."""
    if isinstance(ddof, (int, np.integer)):
        return NO_TANGENT
    y = moment(x, axis, None, None, ddof, True)
    if moment is np.nanvar or moment is np.nanstd:
        n = np.sum(~np.isnan(x), axis=axis, keepdims=True)
    else:
        n = math.prod(np.shape(x)) / math.prod(np.shape(y))
    half = 0.5 if moment is np.std or moment is np.nanstd else 1.0
    return np.sum(_reduced(dy, axis, keepdims) * y * half / (n - ddof))


@transformable
def cumsum_pullback(dy, x, axis=None, dtype=None, out=None):
    if axis is None:
        flat = np.flip(np.cumsum(np.flip(np.ravel(dy))))
        return np.reshape(flat, np.shape(x)), NO_TANGENT
    return np.flip(np.cumsum(np.flip(dy, axis), axis), axis), NO_TANGENT


@transformable
def ravel_pullback(dy, x, order="C"):
    if order == "C":  # no order= for backends whose reshape has none (Dask)
        return np.reshape(dy, np.shape(x)), NO_TANGENT
    if order == "F":
        return np.reshape(dy, np.shape(x), order=order), NO_TANGENT
    # "A" and "K" follow the memory layout: F for a Fortran-ordered x ("A"); the axes by
    # their strides, largest first, negative ones not reversed ("K")
    perm = ravel_k_axes(x, order)
    moved = tuple(np.shape(x)[k] for k in perm)
    return np.transpose(np.reshape(dy, moved), tuple(np.argsort(perm))), NO_TANGENT


def ravel_k_axes(x, order):
    """The axes of ``x`` in the order ``np.ravel(x, order)`` reads them for ``order`` "A"
    (all reversed for a Fortran-ordered x) and "K" (by their strides' sizes, largest
    first; axes of length 1 and ties keep their places)."""
    strides = getattr(x, "strides", None)
    if strides is None:  # no memory layout (not an ndarray): NumPy reads it as C
        return tuple(range(np.ndim(x)))
    if order == "A":
        if np.isfortran(x):
            return tuple(range(np.ndim(x) - 1, -1, -1))
        return tuple(range(np.ndim(x)))
    keys = [0 if n == 1 else -abs(st) for n, st in zip(np.shape(x), strides, strict=True)]
    return tuple(sorted(range(len(keys)), key=lambda k: keys[k]))


# Integer bookkeeping of the layout: transformed code (a second derivative) calls it as it is.
ravel_k_axes.__pullback_opaque__ = True


@transformable
def squeeze_pullback(dy, x, axis=None):
    return np.reshape(dy, np.shape(x)), NO_TANGENT


@transformable
def expand_dims_pullback(dy, x, axis):
    return np.reshape(dy, np.shape(x)), NO_TANGENT


@transformable
def atleast_pullback(dy, x):
    return (np.reshape(dy, np.shape(x)),)


@transformable
def swapaxes_pullback(dy, x, axis1, axis2):
    return np.swapaxes(dy, axis1, axis2), NO_TANGENT, NO_TANGENT


@transformable
def moveaxis_pullback(dy, x, source, destination):
    return np.moveaxis(dy, destination, source), NO_TANGENT, NO_TANGENT


@transformable
def broadcast_to_pullback(dy, x, shape, subok=False):
    return unbroadcast(dy, x), NO_TANGENT


@transformable
def dot_pullback(dy, a, b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(dy * b, a), unbroadcast(a * dy, b)
    if np.ndim(b) <= 2:
        return matmul_lhs_cotangent(dy, a, b), matmul_rhs_cotangent(dy, a, b)
    # b with more axes: dot sums a's last axis against b's second to last, a matrix product
    # of a's rows against b with that axis moved first and the others flattened
    k = np.shape(a)[-1]
    a2 = np.reshape(a, (-1, k))
    bm = np.moveaxis(b, -2, 0)
    b2 = np.reshape(bm, (k, -1))
    g2 = np.reshape(dy, (np.shape(a2)[0], np.shape(b2)[1]))
    da = np.reshape(matmul_lhs_cotangent(g2, a2, b2), np.shape(a))
    db = np.moveaxis(np.reshape(matmul_rhs_cotangent(g2, a2, b2), np.shape(bm)), 0, -2)
    return da, db


def by_rule(fn, dy, *args, **kwargs):
    """The rule's own pullback, for the cases a transformable pullback leaves to it (first
    derivatives only: a second derivative through it is refused)."""
    return default_registry().lookup(fn).rrule(*args, **kwargs)[1](dy)


# The check lets a call of by_rule through (it is reached only in some cases); reaching it
# while differentiating again is refused then.
by_rule.__pullback_opaque__ = True
by_rule.__pullback_refuse__ = (
    "this call form of the rule has no transformable pullback (only its closure), so it "
    "cannot be differentiated again"
)


@transformable
def outer_pullback(dy, a, b):
    # (conjugates: the cotangents of complex vectors)
    da = np.reshape(np.dot(dy, np.conj(np.ravel(b))), np.shape(a))
    db = np.reshape(np.dot(np.conj(np.ravel(a)), dy), np.shape(b))
    return real_like(da, a), real_like(db, b)


@transformable
def where_pullback(dy, condition, x=None, y=None):
    if x is None:  # np.where(condition): indices, no gradient
        return (NO_TANGENT,)
    zero = np.zeros_like(dy)
    return (
        NO_TANGENT,
        unbroadcast(np.where(condition, dy, zero), x),
        unbroadcast(np.where(condition, zero, dy), y),
    )


@transformable
def concatenate_pullback(dy, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    if axis is None:  # the arrays flattened and joined
        parts = ()
        start = 0
        for a in arrays:
            stop = start + math.prod(np.shape(a))
            parts = parts + (np.reshape(dy[start:stop], np.shape(a)),)
            start = stop
        return parts, NO_TANGENT
    lead = (slice(None),) * (axis % np.ndim(dy))
    parts = ()
    start = 0
    for a in arrays:
        stop = start + np.shape(a)[axis]
        parts = parts + (dy[lead + (slice(start, stop),)],)
        start = stop
    return parts, NO_TANGENT


@transformable
def stack_pullback(dy, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    lead = (slice(None),) * (axis % np.ndim(dy))
    parts = ()
    for k in range(len(arrays)):
        parts = parts + (dy[lead + (k,)],)
    return parts, NO_TANGENT


@transformable
def inv_pullback(dy, a):
    # d inv(a) = -inv(a) da inv(a); the cotangent takes the conjugate transpose (complex a)
    ai = np.conj(np.swapaxes(np.linalg.inv(a), -1, -2))
    return (-(ai @ dy @ ai),)


@transformable
def det_pullback(dy, a):
    # d det(a) = det(a) tr(inv(a) da)
    y = np.conj(np.linalg.det(a))
    scale = np.reshape(dy * y, np.shape(y) + (1, 1))
    return (scale * np.conj(np.swapaxes(np.linalg.inv(a), -1, -2)),)


@transformable
def solve_pullback(dy, a, b):
    x = np.linalg.solve(a, b)
    # (conjugate transposes: the cotangents of complex a and b)
    ah = np.conj(np.swapaxes(a, -1, -2))
    if np.ndim(a) == 2 and np.ndim(b) <= 2:
        db = np.linalg.solve(ah, dy)
        if np.ndim(b) == 1:
            return real_like(-np.outer(db, np.conj(x)), a), real_like(db, b)
        return real_like(-(db @ np.conj(np.swapaxes(x, -1, -2))), a), real_like(db, b)
    # stacks of systems (b a vector only where it is 1-D; each broadcast against the other,
    # so a matrix against a stack gets the stack's sum)
    if np.ndim(b) == 1:
        db = np.linalg.solve(ah, np.expand_dims(dy, -1))[..., 0]
        da = -(np.expand_dims(db, -1) * np.expand_dims(np.conj(x), -2))
    else:
        db = np.linalg.solve(ah, dy)
        da = -(db @ np.conj(np.swapaxes(x, -1, -2)))
    return real_like(unbroadcast(da, a), a), real_like(unbroadcast(db, b), b)


@transformable
def real_like(g, x):
    """``g``, real when ``x`` is: the cotangent of a real argument of a complex result."""
    if np.iscomplexobj(g) and not np.iscomplexobj(x):
        return np.real(g)
    return g


@transformable
def _abs_extreme_ord(ord, x):
    """Whether ``norm(x, ord)`` of a real vector or matrix is a largest or smallest sum of
    absolute values: ord 1, inf, -inf (and -1 of a matrix)."""
    if np.iscomplexobj(x) or isinstance(ord, str) or ord is None:
        return False
    if np.ndim(x) == 1:
        return ord == 1 or ord == np.inf or ord == -np.inf
    if np.ndim(x) == 2:
        return ord == 1 or ord == -1 or ord == np.inf or ord == -np.inf
    return False


@transformable
def _abs_extreme_norm_pullback(dy, x, ord):
    """The cotangent of ``norm(x, ord)`` for :func:`_abs_extreme_ord`: ``sign(x)`` on the
    entries (vector) or columns/rows (matrix) that give the norm; ties split the cotangent
    equally, as the rule does (linalg_norms)."""
    if np.ndim(x) == 1:
        if ord == 1:
            return dy * np.sign(x)
        sums = np.abs(x)
        pick = sums == (np.max(sums) if ord > 0 else np.min(sums))
        return dy * np.sign(x) * pick / np.sum(pick)
    axis = 0 if ord == 1 or ord == -1 else 1  # 1: column sums (over rows); inf: row sums
    sums = np.sum(np.abs(x), axis=axis, keepdims=True)
    pick = sums == (np.max(sums) if ord > 0 else np.min(sums))
    return dy * np.sign(x) * pick / np.sum(pick)


@transformable
def p_norm_cotangent(dy, x, axes, keepdims, ord):
    """The cotangent of the vector ``ord``-norm of ``x`` over ``axes`` (a tuple)."""
    g = densify(dy)
    if not keepdims:
        g = np.expand_dims(g, axes)
    if ord == 0:
        # the count of nonzero entries: piecewise constant, so its derivative is 0 wherever
        # it has one (and a second derivative too)
        return np.zeros(np.shape(x), np.result_type(dense_operand(x), 1.0))
    ax = np.abs(x)
    # x / |x| (0 at 0): the sign of a real x, differentiated again also when x is complex
    unit = x / np.where(ax == 0, 1.0, ax)
    if ord == np.inf or ord == -np.inf:
        # the largest (smallest) |x|: its sign there; ties share the cotangent equally
        if ord > 0:
            pick = ax == np.max(ax, axis=axes, keepdims=True)
        else:
            pick = ax == np.min(ax, axis=axes, keepdims=True)
        return g * unit * pick / np.sum(pick, axis=axes, keepdims=True)
    if ord == 2:
        y = np.sqrt(np.sum(np.real(x * np.conj(x)), axis=axes, keepdims=True))
        safe = np.where(y == 0, 1.0, y)  # the gradient at 0 is taken as 0
        return np.where(y == 0, 0.0, g / safe) * x
    # y = (sum |x|^p)^(1/p): dy/dx = |x|^(p-1) sign(x) / y^(p-1) (x / |x| when complex)
    y = np.sum(ax**ord, axis=axes, keepdims=True) ** (1.0 / ord)
    safe = np.where(y == 0, 1.0, y)
    return np.where(y == 0, 0.0, g / safe ** (ord - 1)) * ax ** (ord - 1) * unit


@transformable
def matrix_abs_norm_cotangent(dy, x, keepdims, ord):
    """The cotangent of the matrix norm ``ord`` 1, -1 (largest, smallest column sum of
    ``|x|``), inf, -inf (row sum) over the last two axes: ``x / |x|`` on the columns or
    rows that give it; ties share the cotangent equally."""
    g = densify(dy)
    if not keepdims:
        g = np.expand_dims(g, (-2, -1))
    over = -2 if ord == 1 or ord == -1 else -1  # a column sum runs over the rows
    other = -1 if over == -2 else -2
    ax = np.abs(x)
    sums = np.sum(ax, axis=over, keepdims=True)
    if ord > 0:
        pick = sums == np.max(sums, axis=other, keepdims=True)
    else:
        pick = sums == np.min(sums, axis=other, keepdims=True)
    return g * (x / np.where(ax == 0, 1.0, ax)) * pick / np.sum(pick, axis=other, keepdims=True)


@transformable
def norm_pullback(dy, x, *rest, **options):
    # rest: ord, axis, keepdims given by position (each gets NO_TANGENT back)
    ord = rest[0] if len(rest) > 0 else options.get("ord", None)
    axis = rest[1] if len(rest) > 1 else options.get("axis", None)
    keepdims = rest[2] if len(rest) > 2 else options.get("keepdims", False)
    tail = (NO_TANGENT,) * len(rest)
    if ord is None and axis is not None and np.ndim(axis) == 0:
        # the 2-norm along one axis (rows' lengths): dy * x / y, y kept as an axis of 1
        y = np.linalg.norm(x, None, axis, True)
        safe = np.where(y == 0, 1.0, y)  # the gradient at 0 is taken as 0
        return (np.where(y == 0, 0.0, np.reshape(dy, np.shape(y)) / safe) * x,) + tail
    if axis is None and not keepdims and _abs_extreme_ord(ord, x):
        return (_abs_extreme_norm_pullback(dy, x, ord),) + tail
    matrix_abs = ord == 1 or ord == -1 or ord == np.inf or ord == -np.inf
    if axis is None and np.ndim(x) == 2 and not isinstance(ord, str) and matrix_abs:
        # (complex, or kept as 1s): the largest or smallest column or row sum
        return (matrix_abs_norm_cotangent(np.reshape(dy, ()), x, False, ord),) + tail
    vector = (axis is None and np.ndim(x) == 1) or (axis is not None and np.ndim(axis) == 0)
    if vector and not isinstance(ord, str):
        axes = (0,) if axis is None else (axis,)
        return (p_norm_cotangent(dy, x, axes, keepdims, 2 if ord is None else ord),) + tail
    if ord == "fro" or (ord is None and (axis is not None or keepdims)):
        axes = tuple(range(np.ndim(x))) if axis is None else axis
        return (p_norm_cotangent(dy, x, axes, keepdims, 2),) + tail
    if ord is not None or axis is not None or keepdims:
        # the nuclear and spectral norms (ord "nuc", 2, -2 of a matrix: singular values),
        # and the largest column or row sums over chosen axes: first derivatives only
        return by_rule(np.linalg.norm, dy, x, *rest, **options)
    y = np.linalg.norm(x)
    safe = np.where(y == 0, 1.0, y)  # the gradient at 0 is taken as 0
    return (np.where(y == 0, 0.0, dy / safe) * x,) + tail


def rule_from_pullback(fn, pullback_fn, keywords=()):
    """A rule for ``fn`` whose closure pullback is ``pullback_fn(dy, *args, **kwargs)``
    (cotangents fitted to the arguments; none for integer ones), so the closure and the
    second-order path agree exactly. ``pullback_fn`` returns one cotangent per parameter;
    those of the differentiated ``keywords`` given by keyword follow the positional ones
    in a dict (``rule.extra["keyword_cotangents"]``)."""
    places = list(inspect.signature(pullback_fn).parameters)[1:]

    def fitted(c, a):
        if not differentiable(a):
            return NO_TANGENT
        return finalize(c, a)  # (a Refused stays one, with the user's line)

    def rule_rrule(*args, **kwargs):
        y = fn(*args, **kwargs)
        passed = [k for k in keywords if kwargs.get(k) is not None]

        def rule_pullback(dy):
            if dy is ZERO:
                cots = zeros_for(args)
                return cots + ({k: zeros_for((kwargs[k],))[0] for k in passed},) if passed else cots
            cots = pullback_fn(dy, *args, **kwargs)
            out = tuple(fitted(c, a) for c, a in zip(cots, args, strict=False))
            if not passed:
                return out
            return out + ({k: fitted(cots[places.index(k)], kwargs[k]) for k in passed},)

        rule_pullback.__name__ = f"{fn.__name__}_pullback"
        return y, rule_pullback

    rule_rrule.__name__ = f"{fn.__name__}_rrule"
    return rule_rrule


def set_pullbacks(reg, pairs) -> None:
    """Give each ``(fn, pullback_fn)`` of ``pairs`` to fn's rule (``fn`` ``None`` or without
    a rule: skipped, for functions some NumPy versions lack)."""
    for fn, pullback_fn in pairs:
        if fn is not None and reg.lookup(fn) is not None:
            reg.set_pullback_function(fn, pullback_fn)


def register(reg):
    # a check in sum_pullback and mean_pullback (run as it is when they are differentiated)
    reg.non_differentiable(refuse_sparse_reduction, family=FAMILY, trusted=True)
    set_pullbacks(
        reg,
        (
            (np.sum, sum_pullback),
            (np.mean, mean_pullback),
            (np.max, max_pullback),
            (np.min, min_pullback),
            (np.amax, max_pullback),
            (np.amin, min_pullback),
            (np.var, var_pullback),
            (np.std, std_pullback),
            (np.cumsum, cumsum_pullback),
            (np.transpose, transpose_pullback),
            (np.reshape, reshape_pullback),
            (np.ravel, ravel_pullback),
            (np.squeeze, squeeze_pullback),
            (np.expand_dims, expand_dims_pullback),
            (np.atleast_1d, atleast_pullback),
            (np.atleast_2d, atleast_pullback),
            (np.swapaxes, swapaxes_pullback),
            (np.moveaxis, moveaxis_pullback),
            (np.broadcast_to, broadcast_to_pullback),
            (np.matmul, matmul_pullback),
            (operator.matmul, matmul_pullback),
            (np.dot, dot_pullback),
            (np.outer, outer_pullback),
            (np.where, where_pullback),
            (np.concatenate, concatenate_pullback),
            (np.stack, stack_pullback),
        ),
    )
    # np.linalg's (inv_pullback, det_pullback, solve_pullback, norm_pullback) are given by
    # the linalg family when it registers: it waits for the first lookup of a function of
    # its own (family_domains.py), which a lookup from here would make at every start.
