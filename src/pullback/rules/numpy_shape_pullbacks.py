"""Transformable pullbacks of the shape family (numpy_shape.py) and of the elementwise
rules of numpy_ufuncs.py that are not scalar rules: written in the differentiable subset,
so that second derivatives run through them (see transformable.py).

Each moves the cotangent back the way its function moved the values: the same NumPy call
with the inverse arguments, so its own pullback is the forward movement again.
"""

from __future__ import annotations

import math

import numpy as np

from ..list_operands import dense_operand
from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO, densify, unbroadcast
from .numpy_assemble_pullbacks import gather_labelled
from .transformable import set_pullbacks


@transformable
def rollaxis_pullback(dy, a, axis, start=0):
    n = np.ndim(a)
    axis_n = axis % n
    start_n = start + n if start < 0 else start
    order = []
    for k in range(n):
        if k != axis_n:
            order = order + [k]
    at = start_n - 1 if axis_n < start_n else start_n
    order = order[:at] + [axis_n] + order[at:]
    # a tuple of axes: Dask's transpose takes no array of them
    g = np.transpose(densify(dy), tuple(np.argsort(order)))
    return unbroadcast(g, a), NO_TANGENT, NO_TANGENT


@transformable
def atleast_3d_pullback(dy, x):
    return (unbroadcast(np.reshape(densify(dy), np.shape(x)), x),)


@transformable
def matrix_transpose_pullback(dy, x):
    return (unbroadcast(np.swapaxes(densify(dy), -1, -2), x),)


@transformable
def broadcast_arrays_pullback(dy, a, b, c=None, d=None):
    # Up to four arrays (a parameter list, not *args: the subset has no star-parameters).
    out = (unbroadcast(densify(dy[0]), a), unbroadcast(densify(dy[1]), b))
    if c is not None:
        out = out + (unbroadcast(densify(dy[2]), c),)
    if d is not None:
        out = out + (unbroadcast(densify(dy[3]), d),)
    return out


@transformable
def repeat_pullback(dy, a, repeats, axis=None):
    g = densify(dy)
    shape = np.shape(a)
    if axis is None:
        g = np.ravel(g)
        n = math.prod(shape)
        ax = 0
    else:
        ax = axis % len(shape)
        n = shape[ax]
    if np.ndim(repeats) == 0:
        # (n * r, ...) -> (n, r, ...): sum the copies of each element.
        moved = np.moveaxis(g, ax, 0)
        split = np.reshape(moved, (n, repeats) + np.shape(moved)[1:])
        dx = np.moveaxis(np.sum(split, axis=1), 0, ax)
    else:
        # Each output position belongs to one source element: a 0/1 matrix sums them.
        owner = np.repeat(np.arange(n), repeats)
        m = (np.arange(n)[:, None] == owner[None, :]) * 1.0
        dx = np.moveaxis(np.tensordot(m, np.moveaxis(g, ax, 0), axes=1), 0, ax)
    return unbroadcast(np.reshape(dx, shape), a), NO_TANGENT, NO_TANGENT


@transformable
def tile_pullback(dy, A, reps):
    reps_t = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    shape = np.shape(A)
    nd = max(len(shape), len(reps_t))
    full_shape = (1,) * (nd - len(shape)) + shape
    full_reps = (1,) * (nd - len(reps_t)) + reps_t
    inter = ()
    for k in range(nd):
        inter = inter + (full_reps[k], full_shape[k])
    g = np.reshape(densify(dy), inter)  # (r0, a0, r1, a1, ...)
    g = np.sum(g, axis=tuple(range(0, 2 * nd, 2)))
    return unbroadcast(np.reshape(g, shape), A), NO_TANGENT


@transformable
def roll_pullback(dy, a, shift, axis=None):
    return unbroadcast(np.roll(densify(dy), np.negative(shift), axis), a), NO_TANGENT, NO_TANGENT


@transformable
def flip_pullback(dy, m, axis=None):
    return unbroadcast(np.flip(densify(dy), axis), m), NO_TANGENT


@transformable
def flipud_pullback(dy, m):
    return (unbroadcast(np.flipud(densify(dy)), m),)


@transformable
def fliplr_pullback(dy, m):
    return (unbroadcast(np.fliplr(densify(dy)), m),)


@transformable
def rot90_pullback(dy, m, k=1, axes=(0, 1)):
    return unbroadcast(np.rot90(densify(dy), -k, axes), m), NO_TANGENT, NO_TANGENT


@transformable
def pad_pullback(dy, array, pad_width, mode="constant", constant_values=0, reflect_type="even"):
    shape = np.shape(array)
    widths = np.broadcast_to(np.asarray(pad_width), (len(shape), 2))
    if mode != "constant" and mode != "empty":
        # The other modes (edge, reflect, symmetric, wrap, mean, linear_ramp to 0; reflect
        # and symmetric also odd) are linear and act on each axis by a constant matrix,
        # np.pad of the identity: apply the transposes (matrix products, which pullback
        # differentiates again).
        g = densify(dy)
        for k in range(len(shape)):
            lo, hi = int(widths[k, 0]), int(widths[k, 1])
            eye = np.eye(shape[k], dtype=np.result_type(g))
            if mode == "reflect" or mode == "symmetric":
                m = np.pad(eye, ((lo, hi), (0, 0)), mode, reflect_type=reflect_type)
            else:
                m = np.pad(eye, ((lo, hi), (0, 0)), mode)
            g = np.moveaxis(np.moveaxis(g, k, -1) @ m, -1, k)
        return unbroadcast(g, array), NO_TANGENT, NO_TANGENT
    index = ()
    for k in range(len(shape)):
        lo = int(widths[k, 0])
        index = index + (slice(lo, lo + shape[k]),)
    return unbroadcast(densify(dy)[index], array), NO_TANGENT, NO_TANGENT


@transformable
def astype_pullback(dy, x, dtype, order="K", casting="unsafe", subok=True, copy=True):
    if np.result_type(dtype).kind not in "fc":
        return np.zeros(np.shape(x), np.result_type(dense_operand(x), 1.0)), NO_TANGENT
    return unbroadcast(densify(dy), x), NO_TANGENT


@transformable
def np_astype_pullback(dy, x, dtype, copy=True, device=None):
    if np.result_type(dtype).kind not in "fc":
        return np.zeros(np.shape(x), np.result_type(dense_operand(x), 1.0)), NO_TANGENT
    return unbroadcast(densify(dy), x), NO_TANGENT


def window_labels(shape, window_shape, axis):
    """The flat position of the element each entry of ``sliding_window_view`` of an array
    of ``shape`` reads (the windows of the positions, raveled). Non-differentiable: the
    windows only choose."""
    index = np.arange(math.prod(shape)).reshape(shape)
    return np.lib.stride_tricks.sliding_window_view(index, window_shape, axis=axis).ravel()


@transformable
def sliding_window_view_pullback(dy, x, window_shape, *rest, **options):
    # an element's cotangent: the sum over every window entry that reads it
    axis = rest[0] if rest else options.get("axis", None)
    keys = window_labels(np.shape(x), window_shape, axis)
    total = gather_labelled(dy, keys, np.size(x))
    return (unbroadcast(np.reshape(total, np.shape(x)), x), NO_TANGENT) + (NO_TANGENT,) * len(rest)


@transformable
def view_pullback(dy, x, *args, **kwargs):
    # a view with x's dtype and type: the same elements, the cotangent passes through
    return (unbroadcast(densify(dy), x),) + (NO_TANGENT,) * len(args)


# -- numpy_ufuncs: the elementwise functions that are rules ------------------------------
@transformable
def clip_pullback(dy, a, a_min=None, a_max=None, min=None, max=None):  # noqa: A002
    # min=/max= are the keywords of x.clip and of np.clip since NumPy 2.1
    if a_min is None:
        a_min = min
    if a_max is None:
        a_max = max
    g = densify(dy)
    zero = np.zeros_like(g)
    below = np.less(a, a_min) if a_min is not None else np.zeros(np.shape(a), bool)
    above = np.greater(a, a_max) if a_max is not None else np.zeros(np.shape(a), bool)
    if a_min is not None and a_max is not None:
        below = below & ~above  # when a_min > a_max NumPy returns a_max
    inside = ~(below | above)
    da = unbroadcast(np.where(inside, g, zero), a)
    dlo = unbroadcast(np.where(below, g, zero), a_min) if a_min is not None else NO_TANGENT
    dhi = unbroadcast(np.where(above, g, zero), a_max) if a_max is not None else NO_TANGENT
    return da, dlo, dhi


@transformable
def nan_to_num_pullback(dy, x, copy=True, nan=0.0, posinf=None, neginf=None):
    g = densify(dy)
    return (
        unbroadcast(np.where(np.isfinite(x), g, np.zeros_like(g)), x),
        NO_TANGENT,
        NO_TANGENT,
        NO_TANGENT,
        NO_TANGENT,
    )


@transformable
def real_pullback(dy, x):
    return (unbroadcast(densify(dy), x),)


@transformable
def imag_pullback(dy, x):
    g = densify(dy)
    if not np.iscomplexobj(x):
        return (unbroadcast(np.zeros_like(g), x),)
    return (unbroadcast(1j * np.real(g), x),)


@transformable
def conjugate_pullback(dy, x):
    return (unbroadcast(np.conj(densify(dy)), x),)


@transformable
def angle_pullback(dy, z, deg=False):
    g = np.real(densify(dy))
    if deg:
        g = g * (180.0 / np.pi)
    if not np.iscomplexobj(z):
        return unbroadcast(np.zeros_like(g), z), NO_TANGENT
    r2 = np.real(z) ** 2 + np.imag(z) ** 2
    safe = np.where(r2 == 0, 1.0, r2)
    return unbroadcast(np.where(r2 == 0, 0.0, 1j * z / safe) * g, z), NO_TANGENT


def register_shape(reg):
    pairs = [
        (np.atleast_3d, atleast_3d_pullback),
        (np.rollaxis, rollaxis_pullback),
        (np.broadcast_arrays, broadcast_arrays_pullback),
        (np.repeat, repeat_pullback),
        (np.tile, tile_pullback),
        (np.roll, roll_pullback),
        (np.flip, flip_pullback),
        (np.flipud, flipud_pullback),
        (np.fliplr, fliplr_pullback),
        (np.rot90, rot90_pullback),
        (np.pad, pad_pullback),
        (np.ndarray.astype, astype_pullback),
        (np.ndarray.view, view_pullback),
        (np.lib.stride_tricks.sliding_window_view, sliding_window_view_pullback),
        (getattr(np, "astype", None), np_astype_pullback),
        (getattr(np, "matrix_transpose", None), matrix_transpose_pullback),
        (getattr(np.linalg, "matrix_transpose", None), matrix_transpose_pullback),
    ]
    set_pullbacks(reg, pairs)
    reg.non_differentiable(window_labels, family="numpy_shape", trusted=True)


@transformable
def np_modf_pullback(dy, x):
    # modf(x) = (x - trunc(x), trunc(x)): the fraction moves with x, the integer part not
    d_frac = dy[0]
    if d_frac is ZERO or d_frac is NO_TANGENT:
        return (ZERO,)
    return (unbroadcast(densify(d_frac) + 0.0 * x, x),)


@transformable
def np_frexp_pullback(dy, x):
    # frexp(x) = (x * 2**-e, e) with e piecewise constant: d mantissa / dx = 2**-e
    d_mantissa = dy[0]
    if d_mantissa is ZERO or d_mantissa is NO_TANGENT:
        return (ZERO,)
    return (unbroadcast(densify(d_mantissa) * np.ldexp(1.0, -np.frexp(x)[1]), x),)


def register_ufuncs(reg):
    set_pullbacks(
        reg,
        [
            (np.clip, clip_pullback),
            (np.nan_to_num, nan_to_num_pullback),
            (np.real, real_pullback),
            (np.imag, imag_pullback),
            (np.conjugate, conjugate_pullback),
            (np.angle, angle_pullback),
            (np.modf, np_modf_pullback),
            (np.frexp, np_frexp_pullback),
        ],
    )
