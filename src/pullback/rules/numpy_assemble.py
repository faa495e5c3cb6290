"""Assembling and splitting arrays: array/asarray (from nested lists of active values),
copy, concatenate, stack, hstack/vstack/dstack/column_stack, append, insert, select, choose, block,
split/array_split/hsplit/vsplit/dsplit and unstack.

A list or tuple argument gets a list or tuple of cotangents (one per element, ``ZERO``
for none); a list output takes a list (or tuple) of cotangents in which any entry may be
``ZERO``.
"""

from __future__ import annotations

import numpy as np

from ..list_operands import dense_operand
from ._util import (
    NO_TANGENT,
    ZERO,
    Registrar,
    bind,
    choice_picks,
    cotangents_from_labels,
    densify,
    differentiable,
    dy_parts,
    finalize,
    position_labels,
    refuse_out,
    zeros_for,
)

FAMILY = "numpy_assemble"

_SEQ = (list, tuple)


def _rest(args):
    return (NO_TANGENT,) * len(args)


def _seq_like(values, like):
    """``values`` as a list or tuple, as ``like`` is; as one array when ``like`` is an
    array (a sequence of arrays given as a single array: its items are its rows)."""
    if isinstance(like, np.ndarray):
        if not differentiable(like):
            return NO_TANGENT
        if not values:
            return finalize(np.zeros_like(like), like)
        rows = [np.zeros(like.shape[1:], like.dtype) if v is ZERO else v for v in values]
        return finalize(np.reshape(np.stack(rows), like.shape), like)
    return type(like)(values) if type(like) in _SEQ else list(values)


def _nested_ndim(obj) -> int:
    if type(obj) in _SEQ:
        return 1 + (_nested_ndim(obj[0]) if len(obj) else 0)
    return np.ndim(obj)


def _nested_cotangent(g, obj):
    """The cotangent of a nested list of arrays/scalars that NumPy stacked into ``g``."""
    if type(obj) in _SEQ:
        if not differentiable(obj):
            return NO_TANGENT
        return type(obj)(_nested_cotangent(g[k], v) for k, v in enumerate(obj))
    return finalize(g, obj)


def _array_rule(fn):
    """array/asarray/asanyarray/ascontiguousarray/asfortranarray/copy."""

    def array_rrule(obj, *args, **kwargs):
        y = fn(obj, *args, **kwargs)
        float_out = np.result_type(y).kind in "fc"
        # ndmin (and ascontiguousarray of a scalar) add leading axes of length 1.
        extra = np.ndim(y) - _nested_ndim(obj)

        def array_pullback(dy):
            if dy is ZERO or not float_out:
                return zeros_for((obj,)) + _rest(args)
            g = np.asarray(densify(dy))
            if extra > 0:
                g = np.reshape(g, g.shape[extra:])
            return (_nested_cotangent(g, obj),) + _rest(args)

        array_pullback.__name__ = f"{fn.__name__}_pullback"
        return y, array_pullback

    array_rrule.__name__ = f"{fn.__name__}_rrule"
    return array_rrule


def _split_along(g, sizes, axis):
    cuts = np.cumsum(sizes)[:-1]
    return np.split(g, cuts, axis=axis)


def _joined_rule(fn, promote, axis_of):
    """A rule for functions that promote their inputs and concatenate them along an axis:
    ``promote(a)`` gives the array concatenated, ``axis_of(promoted list, kwargs)`` the
    axis (``None``: flattened)."""

    def joined_rrule(arrays, *args, **kwargs):
        y = fn(arrays, *args, **kwargs)
        promoted = [promote(a) for a in arrays]
        axis = axis_of(promoted, args, kwargs)

        def joined_pullback(dy):
            if dy is ZERO:
                return zeros_for((arrays,)) + _rest(args)
            g = np.asarray(densify(dy))
            if axis is None:
                pieces = _split_along(np.ravel(g), [np.size(p) for p in promoted], 0)
            else:
                ax = axis % g.ndim
                pieces = _split_along(g, [np.shape(p)[ax] for p in promoted], ax)
            # promote only added axes of length 1: reshape each piece back.
            out = [
                finalize(np.reshape(piece, np.shape(a)), a)
                for piece, a in zip(pieces, arrays, strict=True)
            ]
            return (_seq_like(out, arrays),) + _rest(args)

        joined_pullback.__name__ = f"{fn.__name__}_pullback"
        return y, joined_pullback

    joined_rrule.__name__ = f"{fn.__name__}_rrule"
    return joined_rrule


def _concat_axis(promoted, args, kwargs):
    p = bind(
        args, kwargs, ("axis", "out"), (0, None), name="np.concatenate", known=("dtype", "casting")
    )
    refuse_out("np.concatenate", p)
    return p["axis"]


def _hstack_axis(promoted, args, kwargs):
    return 0 if promoted and np.ndim(promoted[0]) == 1 else 1


def _column(a):
    """What column_stack makes of an item: 0-d -> (1, 1), (n,) -> (n, 1)."""
    a = np.asarray(a)
    return np.reshape(a, (-1, 1)) if a.ndim < 2 else a


def _stack_rrule(arrays, *args, **kwargs):
    y = np.stack(arrays, *args, **kwargs)
    p = bind(args, kwargs, ("axis", "out"), (0, None), name="np.stack", known=("dtype", "casting"))
    refuse_out("np.stack", p)
    axis = p["axis"]

    def stack_pullback(dy):
        if dy is ZERO:
            return zeros_for((arrays,)) + _rest(args)
        g = np.asarray(densify(dy))
        ax = axis % g.ndim
        out = [finalize(np.take(g, k, axis=ax), a) for k, a in enumerate(arrays)]
        return (_seq_like(out, arrays),) + _rest(args)

    return y, stack_pullback


def _append_rrule(arr, values, *args, **kwargs):
    y = np.append(arr, values, *args, **kwargs)
    axis = bind(args, kwargs, ("axis",), (None,), name="np.append")["axis"]

    def append_pullback(dy):
        if dy is ZERO:
            return zeros_for((arr, values)) + _rest(args)
        g = np.asarray(densify(dy))
        if axis is None:
            da, dv = _split_along(g, [np.size(arr), np.size(values)], 0)
            return (
                finalize(np.reshape(da, np.shape(arr)), arr),
                finalize(np.reshape(dv, np.shape(values)), values),
            ) + _rest(args)
        ax = axis % g.ndim
        da, dv = _split_along(g, [np.shape(arr)[ax], np.shape(values)[ax]], ax)
        return (finalize(da, arr), finalize(dv, values)) + _rest(args)

    return y, append_pullback


def _insert_rrule(arr, obj, values, *args, **kwargs):
    y = np.insert(arr, obj, values, *args, **kwargs)
    rest = (NO_TANGENT,) * len(args)
    # np.insert only moves and copies elements: run it on position labels to learn where
    # each element of arr and of (broadcast) values went.
    n = int(np.size(arr))
    ids = None
    if np.result_type(y).kind in "fc" and differentiable((arr, values)):
        labels_arr = position_labels(np.asarray(arr), 1)
        ids = np.insert(labels_arr, obj, position_labels(values, 1 + n), *args, **kwargs)

    def insert_pullback(dy):
        if dy is ZERO or ids is None:
            return zeros_for((arr,)) + (NO_TANGENT,) + zeros_for((values,)) + rest
        da, dv = cotangents_from_labels(ids, dy, [(1, arr), (1 + n, values)])
        return (da, NO_TANGENT, dv) + rest

    return y, insert_pullback


def _select_rrule(condlist, choicelist, *args, **kwargs):
    y = np.select(condlist, choicelist, *args, **kwargs)
    default = bind(args, kwargs, ("default",), (0,), name="np.select")["default"]

    keyword = "default" in kwargs  # its cotangent in a dict after the positional ones

    def select_pullback(dy):
        if dy is ZERO:
            out = (NO_TANGENT,) + zeros_for((choicelist,) + args)
            return out + ({"default": zeros_for((default,))[0]},) if keyword else out
        g = np.asarray(densify(dy))
        zero = np.zeros_like(g)
        taken = np.zeros(g.shape, dtype=bool)
        out = []
        for cond, choice in zip(condlist, choicelist, strict=True):
            pick = np.broadcast_to(cond, g.shape) & ~taken
            out.append(finalize(np.where(pick, g, zero), choice))
            taken = taken | pick
        rest = list(_rest(args))
        if args:
            rest[0] = finalize(np.where(taken, zero, g), default)
        cots = (NO_TANGENT, _seq_like(out, choicelist)) + tuple(rest)
        if keyword:
            return cots + ({"default": finalize(np.where(taken, zero, g), default)},)
        return cots

    return y, select_pullback


def _choose_rrule(a, choices, *args, **kwargs):
    """``np.choose(a, choices)``: each element is the one of its choice ``a`` names, so a
    choice's cotangent is the incoming cotangent where it was picked (summed over what it
    was broadcast across), zero elsewhere; the integer ``a`` gets none."""
    p = bind(args, kwargs, ("out", "mode"), (None, "raise"), name="np.choose")
    refuse_out("numpy.choose", p)
    y = np.choose(a, choices, *args, **kwargs)
    rest = _rest(args)

    def choose_pullback(dy):
        if dy is ZERO:
            return (NO_TANGENT,) + zeros_for((choices,)) + rest
        g = np.asarray(densify(dy))
        picks = np.broadcast_to(choice_picks(a, len(choices), p["mode"]), g.shape)
        zero = np.zeros_like(g)
        out = [finalize(np.where(picks == k, g, zero), c) for k, c in enumerate(choices)]
        return (NO_TANGENT, _seq_like(out, choices)) + rest

    return y, choose_pullback


def _block_rrule(arrays):
    y = np.block(arrays)

    def depth(x):
        return 1 + depth(x[0]) if type(x) is list else 0

    total = depth(arrays)
    nd = max(np.ndim(y), total)

    def shape_of(x, level):
        if type(x) is not list:
            return (1,) * (nd - np.ndim(x)) + np.shape(x)
        shapes = [shape_of(v, level + 1) for v in x]
        ax = nd - (total - level)
        first = list(shapes[0])
        first[ax] = sum(s[ax] for s in shapes)
        return tuple(first)

    def split(g, x, level):
        if type(x) is not list:
            return finalize(np.reshape(g, np.shape(x)), x)
        ax = nd - (total - level)
        sizes = [shape_of(v, level + 1)[ax] for v in x]
        pieces = _split_along(g, sizes, ax)
        return [split(p, v, level + 1) for p, v in zip(pieces, x, strict=True)]

    def block_pullback(dy):
        if dy is ZERO:
            return zeros_for((arrays,))
        g = np.asarray(densify(dy))
        g = np.reshape(g, (1,) * (nd - g.ndim) + g.shape)
        return (split(g, arrays, 0),)

    return y, block_pullback


def _split_rule(fn, axis_of):
    """split/array_split/hsplit/vsplit/dsplit: a list of pieces out."""

    def split_rrule(ary, indices_or_sections, *args, **kwargs):
        y = fn(ary, indices_or_sections, *args, **kwargs)
        axis = axis_of(ary, args, kwargs)
        shapes = [np.shape(piece) for piece in y]
        dtype = np.result_type(dense_operand(ary))  # (a list: np.asarray of it)

        def split_pullback(dy):
            rest = (NO_TANGENT,) * (1 + len(args))
            parts = dy_parts(dy, len(shapes))
            if all(p is ZERO for p in parts):
                return zeros_for((ary,)) + rest
            full = [
                np.zeros(s, dtype=dtype) if p is ZERO else np.asarray(densify(p))
                for p, s in zip(parts, shapes, strict=True)
            ]
            g = np.concatenate(full, axis=axis)
            return (finalize(g, ary),) + rest

        return y, split_pullback

    split_rrule.__name__ = f"{fn.__name__}_rrule"
    return split_rrule


def _split_axis(name):
    """The ``axis`` of a call of ``np.<name>`` (split, array_split)."""

    def split_axis(ary, args, kwargs):
        return bind(args, kwargs, ("axis",), (0,), name=f"np.{name}")["axis"]

    return split_axis


def _unstack_rrule(x, /, *, axis=0):
    y = np.unstack(x, axis=axis)
    shapes = [np.shape(p) for p in y]
    dtype = np.result_type(dense_operand(x))

    def unstack_pullback(dy):
        parts = dy_parts(dy, len(shapes))
        if all(p is ZERO for p in parts):
            return zeros_for((x,))
        full = [
            np.zeros(s, dtype=dtype) if p is ZERO else np.asarray(densify(p))
            for p, s in zip(parts, shapes, strict=True)
        ]
        return (finalize(np.stack(full, axis=axis), x),)

    return y, unstack_pullback


def register(reg):
    r = Registrar(reg, FAMILY)
    for fn in (
        np.array,
        np.asarray,
        np.asanyarray,
        np.ascontiguousarray,
        np.asfortranarray,
        np.copy,
    ):
        r.rule(fn, _array_rule(fn))
    r.rule(np.concatenate, _joined_rule(np.concatenate, np.asarray, _concat_axis))
    if hasattr(np, "concat") and np.concat is not np.concatenate:
        r.rule(np.concat, _joined_rule(np.concat, np.asarray, _concat_axis))
    r.rule(np.stack, _stack_rrule)
    r.rule(np.hstack, _joined_rule(np.hstack, np.atleast_1d, _hstack_axis))
    r.rule(np.vstack, _joined_rule(np.vstack, np.atleast_2d, lambda p, a, k: 0))
    if hasattr(np, "row_stack") and np.row_stack is not np.vstack:
        r.rule(np.row_stack, _joined_rule(np.row_stack, np.atleast_2d, lambda p, a, k: 0))
    r.rule(np.dstack, _joined_rule(np.dstack, np.atleast_3d, lambda p, a, k: 2))
    r.rule(np.column_stack, _joined_rule(np.column_stack, _column, lambda p, a, k: 1))
    r.rule(np.append, _append_rrule)
    r.rule(np.select, _select_rrule).extra["keyword_cotangents"] = ("default",)
    r.rule(np.choose, _choose_rrule, notes="modes raise, wrap, clip")
    r.rule(np.ndarray.choose, _choose_rrule, name="numpy.ndarray.choose")
    r.rule(np.insert, _insert_rrule, notes="values broadcast: their cotangent is summed")
    r.rule(np.block, _block_rrule)
    r.rule(np.split, _split_rule(np.split, _split_axis("split")))
    r.rule(np.array_split, _split_rule(np.array_split, _split_axis("array_split")))
    r.rule(np.hsplit, _split_rule(np.hsplit, lambda a, args, kw: 0 if np.ndim(a) == 1 else 1))
    r.rule(np.vsplit, _split_rule(np.vsplit, lambda a, args, kw: 0))
    r.rule(np.dsplit, _split_rule(np.dsplit, lambda a, args, kw: 2))
    if hasattr(np, "unstack"):
        r.rule(np.unstack, _unstack_rrule)
    # the pullbacks second derivatives run through
    from .numpy_assemble_pullbacks import register as register_pullbacks

    register_pullbacks(reg)
