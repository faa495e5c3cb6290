"""Nested values, random directions and inner products for the finite-difference checks.

The pieces :func:`~pullback.testing.check_rrule` and :func:`~pullback.testing.check_grads`
share: walking nested tuples/lists/dicts of arrays, upcasting to float64 for the
reference, random cotangents and directions, the real inner product, and a fourth-order
central difference.

>>> import numpy as np
>>> pair(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
11.0
"""

from __future__ import annotations

import copy
import math

import numpy as np

from ..records_dataclasses import fields_of, is_dataclass_value, rebuilt
from ..tangents import NO_TANGENT, ZERO, is_differentiable_value

#: ``(rtol, atol)`` for cotangents, by the lowest precision among inputs and outputs.
TOLERANCES = {
    "float64": (1e-6, 1e-9),
    "float32": (1e-4, 1e-5),
}
#: Relative tolerance for comparing a rule's primal output with the function's own.
PRIMAL_RTOL = {"float64": 1e-10, "float32": 1e-5}

SEQUENCES = (list, tuple)


# -- nested values: tuples, lists, dicts of scalars and arrays ---------------------------
def is_container(x) -> bool:
    """Tuples, lists, dicts and dataclass instances (whose fields are its items, by
    position: records_dataclasses.py)."""
    return isinstance(x, (list, tuple, dict)) or is_dataclass_value(x)


def items(x):
    if isinstance(x, dict):
        return list(x.items())
    return list(enumerate(fields_of(x)))  # (a dataclass: its fields in order)


def length(x) -> int:
    """The number of items of a container (a dataclass's fields)."""
    return len(fields_of(x))


def rebuild(x, values):
    if isinstance(x, dict):
        return dict(zip(x.keys(), values, strict=True))
    if is_dataclass_value(x):
        return rebuilt(x, list(values))
    if type(x) in SEQUENCES:
        return type(x)(values)
    if isinstance(x, tuple):  # a namedtuple
        return type(x)(*values)
    return list(values)


def leaves(x, path=()):
    """``(path, leaf)`` for every differentiable leaf of a nested value."""
    if is_container(x):
        out = []
        for k, v in items(x):
            out.extend(leaves(v, path + (k,)))
        return out
    if is_differentiable_value(x):
        return [(path, x)]
    return []


def map_leaves(x, f, path=()):
    """``x`` with every differentiable leaf replaced by ``f(path, leaf)``."""
    if is_container(x):
        return rebuild(x, [map_leaves(v, f, path + (k,)) for k, v in items(x)])
    if is_differentiable_value(x):
        return f(path, x)
    return x


def at_path(x, path):
    for k in path:
        if x is ZERO or x is NO_TANGENT or x is None:
            return ZERO
        x = fields_of(x)[k] if not isinstance(x, dict) else x.get(k, ZERO)
    return x


def path_text(path) -> str:
    return "".join(f"[{k!r}]" for k in path)


def precision_of(*values) -> str:
    for v in values:
        for _, leaf in leaves(v):
            dt = np.result_type(leaf) if not isinstance(leaf, (float, complex)) else None
            if dt is not None and dt.itemsize <= (4 if dt.kind == "f" else 8):
                return "float32"
    return "float64"


def upcast(x):
    """``x`` with float32/complex64 leaves promoted (for the finite differences)."""

    def up(_, leaf):
        if isinstance(leaf, np.ndarray):
            if leaf.dtype == np.float32 or leaf.dtype == np.float16:
                return leaf.astype(np.float64)
            if leaf.dtype == np.complex64:
                return leaf.astype(np.complex128)
            return leaf
        if isinstance(leaf, (np.float32, np.float16)):
            return np.float64(leaf)
        if isinstance(leaf, np.complex64):
            return np.complex128(leaf)
        return leaf

    return map_leaves(x, up)


def upcast_dtype(v):
    """A float32/complex64 dtype argument promoted (finite differences run in float64)."""
    try:
        dt = np.dtype(v) if isinstance(v, (type, np.dtype)) else None
    except TypeError:
        return v
    if dt == np.float32 or dt == np.float16:
        return np.float64
    if dt == np.complex64:
        return np.complex128
    return v


def readonly(x):
    """A deep copy of ``x`` whose arrays cannot be written."""

    def ro(v):
        if isinstance(v, np.ndarray):
            c = v.copy(order="K")  # keep the memory layout (ravel(order="K") reads it)
            c.setflags(write=False)
            return c
        if is_container(v):
            return rebuild(v, [ro(item) for _, item in items(v)])
        return copy.copy(v)

    return ro(x)


def same(a, b) -> bool:
    """Exact equality of two nested values (NaNs equal), for the mutation checks."""
    if is_container(a) or is_container(b):
        if type(a) is not type(b) or length(a) != length(b):
            return False
        return all(same(x, y) for (_, x), (_, y) in zip(items(a), items(b), strict=True))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a = np.asarray(a)
        b = np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.dtype.kind in "fc":
            return bool(np.array_equal(a, b, equal_nan=True))
        return bool(np.array_equal(a, b))
    try:
        return bool(a == b) or (a != a and b != b)
    except (TypeError, ValueError):
        return a is b


def random_like(x, rng):
    """A random value with the structure, shapes and dtypes of ``x``.

    Leaves without a tangent become ``ZERO``; arrays are read-only.
    """

    def rnd(_, leaf):
        shape = np.shape(leaf)
        dt = np.result_type(leaf)
        if dt.kind == "c":
            v = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) / math.sqrt(2)
        else:
            v = rng.standard_normal(shape)
        if isinstance(leaf, np.ndarray):
            v = np.asarray(v, dtype=dt)
            v.setflags(write=False)
            return v
        if isinstance(leaf, np.generic):
            return dt.type(v)
        return complex(v) if isinstance(leaf, complex) else float(v)

    def walk(v):
        if is_container(v):
            # A cotangent of a tuple output is a plain tuple (never a namedtuple).
            parts = [walk(item) for _, item in items(v)]
            if isinstance(v, dict):
                return dict(zip(v.keys(), parts, strict=True))
            return list(parts) if isinstance(v, list) else tuple(parts)
        if is_differentiable_value(v):
            return rnd((), v)
        return ZERO

    return walk(x)


def direction(x, rng):
    """A random direction for every differentiable leaf of ``x`` (entries in [-1, 1])."""

    def rnd(_, leaf):
        shape = np.shape(leaf)
        v = rng.standard_normal(shape)
        if np.iscomplexobj(leaf):
            v = v + 1j * rng.standard_normal(shape)
        m = np.max(np.abs(v)) if np.size(v) else 1.0
        v = v / (m if m > 0 else 1.0)
        if isinstance(leaf, np.ndarray):
            return np.asarray(v)
        return complex(v) if np.iscomplexobj(v) else float(v)

    return map_leaves(x, rnd)


def pair(a, b) -> float:
    """``Re(sum(conj(a) * b))`` summed over matching differentiable leaves, in float64."""
    if a is ZERO or b is ZERO or a is NO_TANGENT or b is NO_TANGENT or a is None:
        return 0.0
    if is_container(a):
        return sum(pair(x, at_path(b, (k,))) for k, x in items(a))
    if not is_differentiable_value(a) or not (
        is_differentiable_value(b) or isinstance(b, np.ndarray)
    ):
        return 0.0
    a = np.asarray(a)
    b = np.asarray(b)
    if a.dtype.kind == "c" or b.dtype.kind == "c":
        return float(np.real(np.vdot(a.astype(np.complex128), b.astype(np.complex128))))
    return float(np.vdot(a.astype(np.float64), b.astype(np.float64)))


def abs_pair(a, b) -> float:
    """``sum(|a| * |b|)`` over matching leaves: the size of the terms of ``pair``."""
    if a is ZERO or b is ZERO or a is NO_TANGENT or b is NO_TANGENT or a is None:
        return 0.0
    if is_container(a):
        return sum(abs_pair(x, at_path(b, (k,))) for k, x in items(a))
    a = np.asarray(a)
    b = np.asarray(b)
    if a.dtype.kind not in "fc" or b.dtype.kind not in "fcb":
        return 0.0
    return float(np.sum(np.abs(a.astype(np.complex128)) * np.abs(b.astype(np.complex128))))


def fd_directional(L, h):
    """The derivative at 0 of ``t -> L(t)`` by the fourth-order central difference."""
    return (8.0 * (L(h) - L(-h)) - (L(2 * h) - L(-2 * h))) / (12.0 * h)


def shift_arg(args, i, direction, t):
    """``args`` with argument ``i`` moved by ``t * direction``."""

    def shift(p, leaf):
        moved = leaf + t * at_path(direction, p)
        if isinstance(leaf, np.ndarray):  # keep the memory layout (for order="K"/"A")
            out = np.empty_like(leaf, dtype=moved.dtype)
            out[...] = moved
            return out
        return moved

    args = list(args)
    args[i] = map_leaves(args[i], shift)
    return args
