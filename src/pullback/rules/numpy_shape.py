"""Shape and layout: reshape, ravel, squeeze, expand_dims, transpose, swapaxes, moveaxis,
broadcast_to, atleast_Nd, repeat, tile, roll, flip, rot90, pad, astype,
``numpy.lib.stride_tricks.sliding_window_view``.

These only move, copy or sum elements, so each pullback applies the adjoint movement:
the inverse permutation, a reshape back, or a sum over the copies (``repeat``, ``tile``,
``broadcast_to``, the overlapping windows of ``sliding_window_view``, ``pad`` with
``edge``/``reflect``/``symmetric``/``wrap``).
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedCallError
from ._util import (
    NO_TANGENT,
    ZERO,
    Registrar,
    as_array,
    bind,
    densify,
    dy_parts,
    finalize,
    segment_sum,
    zeros_for,
)
from .transformable import ravel_pullback as ravel_pullback_fn

FAMILY = "numpy_shape"


def _rest(args):
    return (NO_TANGENT,) * len(args)


def _memory_order(x, order):
    """The order ('C' or 'F') in which ``order`` reads the elements of ``x``."""
    if order in ("C", None):
        return "C"
    if order == "F":
        return "F"
    xa = as_array(x)
    return "F" if xa.flags.f_contiguous and not xa.flags.c_contiguous else "C"


def _reshape_in(g, shape, order):
    # no order= for C order: Dask's reshape has no such parameter
    return np.reshape(g, shape) if order == "C" else np.reshape(g, shape, order=order)


def _reshape_rrule(a, *args, **kwargs):
    y = np.reshape(a, *args, **kwargs)
    given = bind(args, kwargs, ("shape", "order"), (None, "C"), name="np.reshape", known=("copy",))[
        "order"
    ]
    order = _memory_order(a, given)
    shape = np.shape(a)

    def reshape_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,)) + _rest(args)
        g = _reshape_in(densify(dy), shape, order)
        return (finalize(g, a),) + _rest(args)

    return y, reshape_pullback


def _ravel_rrule(a, *args, **kwargs):
    y = np.ravel(a, *args, **kwargs)
    given = bind(args, kwargs, ("order",), ("C",), name="np.ravel")["order"]
    order = _memory_order(a, given)
    shape = np.shape(a)

    def ravel_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,)) + _rest(args)
        if given in ("A", "K"):
            # the axes by their strides (a view neither C- nor F-ordered reads in neither
            # order): the pullback function's reading, transformable.ravel_pullback
            g = ravel_pullback_fn(densify(dy), a, given)[0]
        else:
            g = _reshape_in(densify(dy), shape, order)
        return (finalize(g, a),) + _rest(args)

    return y, ravel_pullback


def _same_elements_rule(fn):
    """A rule for functions that only change the shape (squeeze, expand_dims, ...)."""

    def shape_rrule(x, *args, **kwargs):
        y = fn(x, *args, **kwargs)
        shape = np.shape(x)

        def shape_pullback(dy):
            if dy is ZERO:
                return zeros_for((x,)) + _rest(args)
            return (finalize(np.reshape(densify(dy), shape), x),) + _rest(args)

        shape_pullback.__name__ = f"{fn.__name__}_pullback"
        return y, shape_pullback

    shape_rrule.__name__ = f"{fn.__name__}_rrule"
    return shape_rrule


def _atleast_rule(fn):
    """atleast_1d/2d/3d: one array in, one out; several in, a tuple out."""

    def atleast_rrule(*arys):
        y = fn(*arys)
        shapes = [np.shape(a) for a in arys]

        def atleast_pullback(dy):
            if len(arys) == 1:
                if dy is ZERO:
                    return zeros_for(arys)
                return (finalize(np.reshape(densify(dy), shapes[0]), arys[0]),)
            parts = dy_parts(dy, len(arys))
            return tuple(
                ZERO if g is ZERO else finalize(np.reshape(densify(g), s), a)
                for g, s, a in zip(parts, shapes, arys, strict=True)
            )

        return y, atleast_pullback

    atleast_rrule.__name__ = f"{fn.__name__}_rrule"
    return atleast_rrule


def _transpose_rrule(a, *args, **kwargs):
    y = np.transpose(a, *args, **kwargs)
    axes = bind(args, kwargs, ("axes",), (None,), name="np.transpose")["axes"]

    def transpose_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,)) + _rest(args)
        inverse = None if axes is None else tuple(np.argsort([ax % np.ndim(a) for ax in axes]))
        return (finalize(np.transpose(densify(dy), inverse), a),) + _rest(args)

    return y, transpose_pullback


def _swapaxes_rrule(a, axis1, axis2):
    y = np.swapaxes(a, axis1, axis2)

    def swapaxes_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,)) + _rest((0, 0))
        return finalize(np.swapaxes(densify(dy), axis1, axis2), a), NO_TANGENT, NO_TANGENT

    return y, swapaxes_pullback


def _moveaxis_rrule(a, source, destination):
    y = np.moveaxis(a, source, destination)

    def moveaxis_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,)) + _rest((0, 0))
        return finalize(np.moveaxis(densify(dy), destination, source), a), NO_TANGENT, NO_TANGENT

    return y, moveaxis_pullback


def _rollaxis_rrule(a, axis, *args, **kwargs):
    y = np.rollaxis(a, axis, *args, **kwargs)
    start = bind(args, kwargs, ("start",), (0,), name="np.rollaxis")["start"]
    n = np.ndim(a)
    axis_n = axis % n
    start_n = start + n if start < 0 else start
    order = list(range(n))
    order.remove(axis_n)
    order.insert(start_n - 1 if axis_n < start_n else start_n, axis_n)

    def rollaxis_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,)) + _rest((axis,) + args)
        g = np.transpose(densify(dy), np.argsort(order))
        return (finalize(g, a),) + _rest((axis,) + args)

    return y, rollaxis_pullback


def _matrix_transpose_rule(fn):
    def matrix_transpose_rrule(x, /):
        y = fn(x)

        def matrix_transpose_pullback(dy):
            if dy is ZERO:
                return zeros_for((x,))
            return (finalize(np.swapaxes(densify(dy), -1, -2), x),)

        return y, matrix_transpose_pullback

    return matrix_transpose_rrule


def _broadcast_to_rrule(array, shape, **kwargs):
    y = np.broadcast_to(array, shape, **kwargs)

    def broadcast_to_pullback(dy):
        if dy is ZERO:
            return zeros_for((array,)) + (NO_TANGENT,)
        return finalize(densify(dy), array), NO_TANGENT

    return y, broadcast_to_pullback


def _sliding_window_view_rrule(x, window_shape, *args, **kwargs):
    """Each window is a view of ``x``: an element's cotangent is the sum over every window
    position that reads it, summed through the windows of the element indices (the same
    ``window_shape``/``axis``), so every form of the call is covered."""
    window = np.lib.stride_tricks.sliding_window_view
    y = window(x, window_shape, *args, **kwargs)
    xa = as_array(x)

    def sliding_window_view_pullback(dy):
        rest = (NO_TANGENT,) * (1 + len(args))
        if dy is ZERO:
            return zeros_for((x,)) + rest
        # the element indices, windowed as x was ("writeable"/"subok" do not move them)
        index = np.arange(xa.size).reshape(xa.shape)
        axis = args[0] if args else kwargs.get("axis")
        where = window(index, window_shape, axis=axis).ravel()
        g = np.asarray(densify(dy)).ravel()
        total = np.bincount(where, weights=g.real, minlength=xa.size)
        if np.iscomplexobj(g):
            total = total + 1j * np.bincount(where, weights=g.imag, minlength=xa.size)
        return (finalize(total.reshape(xa.shape), x),) + rest

    return y, sliding_window_view_pullback


def _broadcast_arrays_rrule(*args, **kwargs):
    y = np.broadcast_arrays(*args, **kwargs)

    def broadcast_arrays_pullback(dy):
        parts = dy_parts(dy, len(args))
        return tuple(
            ZERO if g is ZERO else finalize(densify(g), a) for g, a in zip(parts, args, strict=True)
        )

    return y, broadcast_arrays_pullback


def _repeat_rrule(a, repeats, *args, **kwargs):
    y = np.repeat(a, repeats, *args, **kwargs)
    axis = bind(args, kwargs, ("axis",), (None,), name="np.repeat")["axis"]
    shape = np.shape(a)
    rest = (NO_TANGENT,) * (1 + len(args))

    def repeat_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,)) + rest
        g = as_array(densify(dy))
        if axis is None:
            g = np.ravel(g)
            ax = 0
            n = int(np.prod(shape))
        else:
            ax = axis % len(shape)
            n = shape[ax]
        g = np.moveaxis(g, ax, 0)
        reps = np.broadcast_to(as_array(repeats), (n,))
        ids = np.repeat(np.arange(n), reps)
        dx = np.moveaxis(segment_sum(g, ids, n), 0, ax)
        if axis is None:
            dx = np.reshape(dx, shape)
        return (finalize(dx, a),) + rest

    return y, repeat_pullback


def _tile_rrule(A, reps):
    y = np.tile(A, reps)
    reps_t = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    shape = np.shape(A)
    nd = max(len(shape), len(reps_t))
    full_shape = (1,) * (nd - len(shape)) + shape
    full_reps = (1,) * (nd - len(reps_t)) + reps_t

    def tile_pullback(dy):
        if dy is ZERO:
            return zeros_for((A,)) + (NO_TANGENT,)
        g = as_array(densify(dy))
        inter = [m for pair in zip(full_reps, full_shape, strict=True) for m in pair]
        g = np.reshape(g, inter)  # (r0, a0, r1, a1, ...)
        g = np.sum(g, axis=tuple(range(0, 2 * nd, 2)))
        return finalize(np.reshape(g, shape), A), NO_TANGENT

    return y, tile_pullback


def _roll_rrule(a, shift, *args, **kwargs):
    y = np.roll(a, shift, *args, **kwargs)
    axis = bind(args, kwargs, ("axis",), (None,), name="np.roll")["axis"]
    back = -shift if np.ndim(shift) == 0 else tuple(-s for s in shift)
    rest = (NO_TANGENT,) * (1 + len(args))

    def roll_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,)) + rest
        return (finalize(np.roll(densify(dy), back, axis), a),) + rest

    return y, roll_pullback


def _flip_rrule(m, *args, **kwargs):
    y = np.flip(m, *args, **kwargs)
    axis = bind(args, kwargs, ("axis",), (None,), name="np.flip")["axis"]

    def flip_pullback(dy):
        if dy is ZERO:
            return zeros_for((m,)) + _rest(args)
        return (finalize(np.flip(densify(dy), axis), m),) + _rest(args)

    return y, flip_pullback


def _flip_fixed_rule(fn):
    def flip_rrule(m):
        y = fn(m)

        def flip_pullback(dy):
            if dy is ZERO:
                return zeros_for((m,))
            return (finalize(fn(densify(dy)), m),)

        return y, flip_pullback

    flip_rrule.__name__ = f"{fn.__name__}_rrule"
    return flip_rrule


def _rot90_rrule(m, *args, **kwargs):
    y = np.rot90(m, *args, **kwargs)
    p = bind(args, kwargs, ("k", "axes"), (1, (0, 1)), name="np.rot90")

    def rot90_pullback(dy):
        if dy is ZERO:
            return zeros_for((m,)) + _rest(args)
        return (finalize(np.rot90(densify(dy), -p["k"], p["axes"]), m),) + _rest(args)

    return y, rot90_pullback


# np.pad's per-mode options: passed on to np.pad itself in the pullback.
_PAD_OPTIONS = ("constant_values", "end_values", "stat_length", "reflect_type")
_LINEAR_PAD_MODES = ("edge", "reflect", "symmetric", "wrap", "mean", "linear_ramp")


def _pad_rrule(array, pad_width, *args, **kwargs):
    y = np.pad(array, pad_width, *args, **kwargs)
    mode = bind(args, kwargs, ("mode",), ("constant",), name="np.pad", known=_PAD_OPTIONS)["mode"]
    shape = np.shape(array)
    if mode not in ("constant", "empty") + _LINEAR_PAD_MODES:
        raise UnsupportedCallError(
            f"pullback: np.pad(mode={mode!r}) has no rule.\n"
            "Fix: use one of the modes that have one "
            "(constant, empty, edge, reflect, symmetric, wrap, mean, linear_ramp), or build the "
            "padding with np.concatenate."
        )
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.intp), (len(shape), 2))
    copying = mode in ("edge", "wrap") or (
        mode in ("reflect", "symmetric") and kwargs.get("reflect_type", "even") == "even"
    )
    rest = (NO_TANGENT,) * (1 + len(args))

    def pad_pullback(dy):
        if dy is ZERO:
            return zeros_for((array,)) + rest
        g = as_array(densify(dy))
        if mode in ("constant", "empty"):
            index = tuple(
                slice(int(lo), int(lo) + n) for (lo, _), n in zip(widths, shape, strict=True)
            )
            return (finalize(g[index], array),) + rest
        if copying:
            # Pad the positions instead of the values: each output element names its source.
            size = int(np.prod(shape))
            src = np.pad(np.reshape(np.arange(size), shape), pad_width, mode)
            dx = segment_sum(np.ravel(g), np.ravel(src), size)
            return (finalize(np.reshape(dx, shape), array),) + rest
        # Other linear modes: np.pad acts on each axis by a matrix (pad of the identity,
        # minus the pad of zeros to drop constant end values); apply the transposes.
        options = {key: v for key, v in kwargs.items() if key != "mode"}
        for k, n in enumerate(shape):
            lo, hi = (int(w) for w in widths[k])
            eye = np.eye(n)
            zero = np.zeros((n, n))
            m = np.pad(eye, ((lo, hi), (0, 0)), mode, **options) - np.pad(
                zero, ((lo, hi), (0, 0)), mode, **options
            )
            g = np.moveaxis(np.tensordot(m, g, axes=([0], [k])), 0, k)
        return (finalize(g, array),) + rest

    return y, pad_pullback


def _astype_rule(fn):
    def astype_rrule(x, dtype, *args, **kwargs):
        y = fn(x, dtype, *args, **kwargs)
        out_float = np.result_type(y).kind in "fc"
        rest = (NO_TANGENT,) * (1 + len(args))

        def astype_pullback(dy):
            if dy is ZERO or not out_float:
                return zeros_for((x,)) + rest
            # float -> float: cast back (finalize keeps x's dtype); real -> complex:
            # the real part; complex -> real: the cotangent of the real part.
            return (finalize(densify(dy), x),) + rest

        return y, astype_pullback

    return astype_rrule


def _view_rrule(x, *args, **kwargs):
    """``x.view()``: the same elements seen through another array object, so the
    cotangent passes through. ``x.view(other_dtype)`` reads the same bytes as other
    numbers (float64 as int64, complex as pairs of floats) and ``x.view(SubClass)``
    changes what operations mean: neither has a derivative pullback can give."""
    y = x.view(*args, **kwargs)
    if y.dtype != x.dtype or type(y) is not type(x):
        raise UnsupportedCallError(
            f"pullback: x.view({', '.join(map(repr, args))}) reinterprets the array "
            f"({x.dtype} {type(x).__name__} as {y.dtype} {type(y).__name__}) and has no "
            "derivative.\nFix: convert the values with x.astype(dtype) instead."
        )
    rest = (NO_TANGENT,) * len(args)

    def view_pullback(dy):
        if dy is ZERO:
            return zeros_for((x,)) + rest
        return (finalize(densify(dy), x),) + rest

    return y, view_pullback


def register(reg):
    r = Registrar(reg, FAMILY)
    r.rule(np.reshape, _reshape_rrule)
    r.rule(np.ravel, _ravel_rrule)
    for fn in (np.squeeze, np.expand_dims):
        r.rule(fn, _same_elements_rule(fn))
    for fn in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
        r.rule(fn, _atleast_rule(fn))
    r.rule(np.transpose, _transpose_rrule)
    if hasattr(np, "permute_dims") and np.permute_dims is not np.transpose:
        r.rule(np.permute_dims, _transpose_rrule)
    r.rule(np.swapaxes, _swapaxes_rrule)
    r.rule(np.moveaxis, _moveaxis_rrule)
    r.rule(np.rollaxis, _rollaxis_rrule)
    if hasattr(np, "matrix_transpose"):
        r.rule(np.matrix_transpose, _matrix_transpose_rule(np.matrix_transpose))
    if hasattr(np.linalg, "matrix_transpose"):
        r.rule(np.linalg.matrix_transpose, _matrix_transpose_rule(np.linalg.matrix_transpose))
    r.rule(np.broadcast_to, _broadcast_to_rrule)
    r.rule(np.broadcast_arrays, _broadcast_arrays_rrule)
    r.rule(
        np.lib.stride_tricks.sliding_window_view,
        _sliding_window_view_rrule,
        name="numpy.lib.stride_tricks.sliding_window_view",
    )
    r.rule(np.repeat, _repeat_rrule)
    r.rule(np.tile, _tile_rrule)
    r.rule(np.roll, _roll_rrule)
    r.rule(np.flip, _flip_rrule)
    r.rule(np.flipud, _flip_fixed_rule(np.flipud))
    r.rule(np.fliplr, _flip_fixed_rule(np.fliplr))
    r.rule(np.rot90, _rot90_rrule)
    r.rule(np.pad, _pad_rrule, notes="modes constant, empty, edge, reflect, symmetric, wrap")
    r.rule(np.ndarray.astype, _astype_rule(np.ndarray.astype), name="numpy.ndarray.astype")
    if hasattr(np, "astype"):
        r.rule(np.astype, _astype_rule(np.astype))
    r.rule(np.ndarray.view, _view_rrule, name="numpy.ndarray.view", notes="same dtype and type")
    # Their pullbacks as transformable functions (second derivatives).
    from .numpy_shape_pullbacks import register_shape

    register_shape(reg)
