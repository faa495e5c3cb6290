"""Rules for the functions of an array-API namespace (``array_api_strict``).

A function written against the standard (``xp.sum(xp.tanh(x) * x)``) calls the
namespace's own functions, not NumPy's: these rules differentiate them. Every pullback
computes with the namespace of its arguments (``backends.namespace``), so the same table
serves any standard namespace; it is registered for ``array_api_strict`` (deferred until
that module is imported: pullback never imports it).

Covered: the elementwise functions below, ``add``/``subtract``/``multiply``/``divide``/
``pow``/``maximum``/``minimum``, ``sum``/``mean``/``max``/``min`` with ``axis``/
``keepdims``, ``matmul``, ``matrix_transpose``, ``reshape``, ``where``, ``concat``,
``stack``, ``expand_dims``, ``squeeze``, ``permute_dims``, ``astype``, and the creation
and query functions (no tangent). Other standard functions have no rule yet (refused before
running, PB301).
"""

from __future__ import annotations

import math

from ..backends import namespace
from ._util import NO_TANGENT, ZERO, Registrar, densify, unbroadcast, zeros_for

FAMILY = "array_api"
REQUIRES = "array_api_strict"

# d y / d x for elementwise functions, from the namespace, the output and the input.
_UNARY = {
    "sin": lambda xp, y, x: xp.cos(x),
    "cos": lambda xp, y, x: -xp.sin(x),
    "tan": lambda xp, y, x: 1.0 + y * y,
    "exp": lambda xp, y, x: y,
    "expm1": lambda xp, y, x: y + 1.0,
    "log": lambda xp, y, x: 1.0 / x,
    "log1p": lambda xp, y, x: 1.0 / (1.0 + x),
    "sqrt": lambda xp, y, x: 0.5 / y,
    "tanh": lambda xp, y, x: 1.0 - y * y,
    "sinh": lambda xp, y, x: xp.cosh(x),
    "cosh": lambda xp, y, x: xp.sinh(x),
    "negative": lambda xp, y, x: -xp.ones_like(x),
    "positive": lambda xp, y, x: xp.ones_like(x),
    "abs": lambda xp, y, x: xp.sign(x),
    "square": lambda xp, y, x: 2.0 * x,
    "atan": lambda xp, y, x: 1.0 / (1.0 + x * x),
}

# (d/da, d/db) for elementwise functions of two arrays.
_BINARY = {
    "add": (lambda xp, y, a, b: 1.0, lambda xp, y, a, b: 1.0),
    "subtract": (lambda xp, y, a, b: 1.0, lambda xp, y, a, b: -1.0),
    "multiply": (lambda xp, y, a, b: b, lambda xp, y, a, b: a),
    "divide": (lambda xp, y, a, b: 1.0 / b, lambda xp, y, a, b: -y / b),
    "pow": (
        lambda xp, y, a, b: b * a ** (b - 1.0),
        lambda xp, y, a, b: y * xp.log(xp.where(a > 0, a, xp.ones_like(a))),
    ),
    "maximum": (
        lambda xp, y, a, b: xp.astype(a >= b, y.dtype),
        lambda xp, y, a, b: xp.astype(a < b, y.dtype),
    ),
    "minimum": (
        lambda xp, y, a, b: xp.astype(a <= b, y.dtype),
        lambda xp, y, a, b: xp.astype(a > b, y.dtype),
    ),
}

_NO_TANGENT = (
    "asarray zeros ones zeros_like ones_like empty full full_like arange linspace eye "
    "isdtype result_type sign floor ceil round trunc equal not_equal less "
    "less_equal greater greater_equal isnan isinf isfinite argmax argmin"
).split()


def _is_array(x) -> bool:
    return hasattr(type(x), "__array_namespace__")


def _xp(*values):
    for v in values:
        if _is_array(v):
            return namespace(v)
    return None


def _cotangent(dy, partial, x):
    """``dy * partial`` summed to the shape of ``x``; none for a Python number that is
    not a float (ints and bools carry no tangent)."""
    if not _is_array(x) and not isinstance(x, float):
        return NO_TANGENT
    if _is_array(x) and not namespace(x).isdtype(x.dtype, "real floating"):
        return NO_TANGENT
    return unbroadcast(dy * partial, x)


def _name(rrule, fn, suffix):
    """Give a rule made by a factory its function's name (errors and listings show it)."""
    rrule.__name__ = rrule.__qualname__ = f"{fn.__name__}_{suffix}"


def _unary_rule(fn, derivative):
    def array_api_unary_rrule(x):
        y = fn(x)

        def array_api_unary_pullback(dy):
            if dy is ZERO:
                return (ZERO,)
            return (_cotangent(densify(dy), derivative(namespace(x), y, x), x),)

        return y, array_api_unary_pullback

    _name(array_api_unary_rrule, fn, "rrule")
    return array_api_unary_rrule


def _binary_rule(fn, derivatives):
    da_, db_ = derivatives

    def array_api_binary_rrule(a, b):
        y = fn(a, b)

        def array_api_binary_pullback(dy):
            if dy is ZERO:
                return zeros_for((a, b))
            dy = densify(dy)
            xp = _xp(a, b)
            return (
                _cotangent(dy, da_(xp, y, a, b), a),
                _cotangent(dy, db_(xp, y, a, b), b),
            )

        return y, array_api_binary_pullback

    _name(array_api_binary_rrule, fn, "rrule")
    return array_api_binary_rrule


def _expand(dy, x, axis, keepdims):
    """The cotangent of a reduction of ``x`` over ``axis`` broadcast back to ``x``."""
    xp = namespace(x)
    if axis is None:
        axes = tuple(range(x.ndim))
    else:
        axes = tuple(sorted(a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis)))
    if not _is_array(dy):
        dy = xp.asarray(dy, dtype=x.dtype)
    if not keepdims:
        for a in axes:
            dy = xp.expand_dims(dy, axis=a)
    return xp.broadcast_to(dy, x.shape), axes


def _sum_rrule(fn):
    def array_api_sum_rrule(x, /, *, axis=None, dtype=None, keepdims=False):
        y = fn(x, axis=axis, dtype=dtype, keepdims=keepdims)

        def array_api_sum_pullback(dy):
            if dy is ZERO:
                return (ZERO,)
            return (_expand(densify(dy), x, axis, keepdims)[0],)

        return y, array_api_sum_pullback

    return array_api_sum_rrule


def _mean_rrule(fn):
    def array_api_mean_rrule(x, /, *, axis=None, keepdims=False):
        y = fn(x, axis=axis, keepdims=keepdims)

        def array_api_mean_pullback(dy):
            if dy is ZERO:
                return (ZERO,)
            g, axes = _expand(densify(dy), x, axis, keepdims)
            return (g / max(math.prod(x.shape[a] for a in axes), 1),)

        return y, array_api_mean_pullback

    return array_api_mean_rrule


def _matmul_rrule(fn):
    def array_api_matmul_rrule(a, b, /):
        y = fn(a, b)

        def array_api_matmul_pullback(dy):
            if dy is ZERO:
                return zeros_for((a, b))
            dy = densify(dy)
            xp = namespace(a)
            if a.ndim == 1 and b.ndim == 1:
                return unbroadcast(dy * b, a), unbroadcast(dy * a, b)
            if a.ndim == 1:  # (n,) @ (n, m): dy is (m,)
                return dy @ xp.matrix_transpose(b), xp.expand_dims(a, axis=1) * dy
            if b.ndim == 1:  # (k, n) @ (n,): dy is (k,)
                return xp.expand_dims(dy, axis=1) * b, dy @ a
            return (
                unbroadcast(dy @ xp.matrix_transpose(b), a),
                unbroadcast(xp.matrix_transpose(a) @ dy, b),
            )

        return y, array_api_matmul_pullback

    return array_api_matmul_rrule


def _matrix_transpose_rrule(fn):
    def array_api_matrix_transpose_rrule(x, /):
        def array_api_matrix_transpose_pullback(dy):
            return (ZERO,) if dy is ZERO else (fn(densify(dy)),)

        return fn(x), array_api_matrix_transpose_pullback

    return array_api_matrix_transpose_rrule


def _reshape_rrule(fn):
    def array_api_reshape_rrule(x, /, shape, *, copy=None):
        def array_api_reshape_pullback(dy):
            return (ZERO, NO_TANGENT) if dy is ZERO else (fn(densify(dy), x.shape), NO_TANGENT)

        return fn(x, shape, copy=copy), array_api_reshape_pullback

    return array_api_reshape_rrule


def _where_rrule(fn):
    def array_api_where_rrule(condition, x1, x2, /):
        y = fn(condition, x1, x2)

        def array_api_where_pullback(dy):
            if dy is ZERO:
                return zeros_for((condition, x1, x2))
            dy = densify(dy)
            zero = namespace(dy).zeros_like(dy)
            return (
                NO_TANGENT,
                _cotangent(fn(condition, dy, zero), 1.0, x1),
                _cotangent(fn(condition, zero, dy), 1.0, x2),
            )

        return y, array_api_where_pullback

    return array_api_where_rrule


def _extremum_rrule(fn):
    def array_api_extremum_rrule(x, /, *, axis=None, keepdims=False):
        y = fn(x, axis=axis, keepdims=keepdims)

        def array_api_extremum_pullback(dy):
            if dy is ZERO:
                return (ZERO,)
            xp = namespace(x)
            g, _ = _expand(densify(dy), x, axis, keepdims)
            at, _ = _expand(y, x, axis, keepdims)
            # ties share the cotangent equally (what NumPy's rules do)
            mask = xp.astype(x == at, x.dtype)
            count, _ = _expand(xp.sum(mask, axis=axis, keepdims=True), x, axis, True)
            return (g * mask / count,)

        return y, array_api_extremum_pullback

    return array_api_extremum_rrule


def _join_rrule(fn, stacked):
    def array_api_join_rrule(arrays, /, *, axis=0):
        container = list if type(arrays) is list else tuple  # the cotangent's structure
        arrays = tuple(arrays)
        y = fn(arrays, axis=axis)

        def array_api_join_pullback(dy):
            if dy is ZERO:
                return (ZERO,)
            dy = densify(dy)
            ax = axis % dy.ndim
            parts, start = [], 0
            for a in arrays:
                n = 1 if stacked else a.shape[ax]
                index = (slice(None),) * ax + (start if stacked else slice(start, start + n),)
                parts.append(_cotangent(dy[index + (...,)], 1.0, a))
                start += n
            return (container(parts),)

        return y, array_api_join_pullback

    return array_api_join_rrule


def _expand_dims_rrule(fn):
    def array_api_expand_dims_rrule(x, /, *, axis=0):
        def array_api_expand_dims_pullback(dy):
            if dy is ZERO:
                return (ZERO,)
            return (namespace(x).squeeze(densify(dy), axis=axis),)

        return fn(x, axis=axis), array_api_expand_dims_pullback

    return array_api_expand_dims_rrule


def _squeeze_rrule(fn):
    def array_api_squeeze_rrule(x, /, axis):
        def array_api_squeeze_pullback(dy):
            if dy is ZERO:
                return (ZERO, NO_TANGENT)
            return namespace(x).reshape(densify(dy), x.shape), NO_TANGENT

        return fn(x, axis), array_api_squeeze_pullback

    return array_api_squeeze_rrule


def _permute_dims_rrule(fn):
    def array_api_permute_dims_rrule(x, /, axes):
        inverse = tuple(sorted(range(len(axes)), key=lambda k: axes[k]))

        def array_api_permute_dims_pullback(dy):
            if dy is ZERO:
                return (ZERO, NO_TANGENT)
            return fn(densify(dy), inverse), NO_TANGENT

        return fn(x, axes), array_api_permute_dims_pullback

    return array_api_permute_dims_rrule


def _astype_rrule(fn):
    def array_api_astype_rrule(x, dtype, /, *, copy=True, device=None):
        y = fn(x, dtype, copy=copy) if device is None else fn(x, dtype, copy=copy, device=device)

        def array_api_astype_pullback(dy):
            if dy is ZERO or not _is_array(x):
                return (ZERO, NO_TANGENT)
            xp = namespace(x)
            if not xp.isdtype(x.dtype, "real floating"):
                return (NO_TANGENT, NO_TANGENT)  # an integer or bool input has no tangent
            return fn(densify(dy), x.dtype), NO_TANGENT

        return y, array_api_astype_pullback

    return array_api_astype_rrule


_STRUCTURAL = {
    "max": _extremum_rrule,
    "min": _extremum_rrule,
    "concat": lambda fn: _join_rrule(fn, stacked=False),
    "stack": lambda fn: _join_rrule(fn, stacked=True),
    "expand_dims": _expand_dims_rrule,
    "squeeze": _squeeze_rrule,
    "permute_dims": _permute_dims_rrule,
    "astype": _astype_rrule,
    "sum": _sum_rrule,
    "mean": _mean_rrule,
    "matmul": _matmul_rrule,
    "matrix_transpose": _matrix_transpose_rrule,
    "reshape": _reshape_rrule,
    "where": _where_rrule,
}


def register_namespace(reg, xp, family=FAMILY):
    """Register the rules of this module for the functions of the namespace ``xp``."""
    r = Registrar(reg, family)
    prefix = getattr(xp, "__name__", "xp")
    for name, derivative in _UNARY.items():
        r.rule(getattr(xp, name), _unary_rule(getattr(xp, name), derivative), f"{prefix}.{name}")
    for name, derivatives in _BINARY.items():
        fn = getattr(xp, name)
        r.rule(fn, _binary_rule(fn, derivatives), f"{prefix}.{name}")
    for name, make in _STRUCTURAL.items():
        fn = getattr(xp, name)
        r.rule(fn, make(fn), f"{prefix}.{name}")
    fns = [getattr(xp, name) for name in _NO_TANGENT if hasattr(xp, name)]
    r.nondiff(*fns, names=[f"{prefix}.{f.__name__}" for f in fns])


def register(reg):
    try:
        import array_api_strict
    except ImportError:
        return
    register_namespace(reg, array_api_strict)
