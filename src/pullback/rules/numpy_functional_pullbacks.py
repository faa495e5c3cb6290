"""Transformable pullbacks of ``np.apply_along_axis``, ``np.piecewise`` and calls of
``np.vectorize`` objects (see
numpy_functional.py for the rules): written in the differentiable subset, they call the
user function's vjp through :func:`~.user_function_calls.user_function_vjp`, so that a
gradient through these rules can be differentiated again (Hessians of code that applies
a user function along an axis or piece by piece).
"""

from __future__ import annotations

import math

import numpy as np

from ..list_operands import dense_operand
from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO, add, densify, unbroadcast
from ._elementwise import elementwise_in_arrays
from ._util import differentiable
from .user_function_calls import has_tangent, user_function_vjp


@transformable
def dense_like(c, x):
    """The cotangent ``c`` of ``x`` as an array (zeros for ``ZERO`` or ``NO_TANGENT``)."""
    if c is ZERO or c is NO_TANGENT or c is None:
        return np.zeros(np.shape(x), np.result_type(dense_operand(x), 1.0))
    return np.reshape(densify(c), np.shape(x))


@transformable
def summed_cotangents(rows, k, args):
    """The cotangents of ``args`` summed over the calls (entry ``k + j`` of each row for
    ``args[j]``); ``NO_TANGENT`` for an argument without floats."""
    out = []
    for j in range(len(args)):
        total = ZERO
        for row in rows:
            c = row[k + j]
            if c is not ZERO and c is not NO_TANGENT and c is not None:
                total = add(total, densify(c))
        if np.asarray(args[j]).dtype.kind in "fc":
            out.append(total if total is ZERO else unbroadcast(total, args[j]))
        else:
            out.append(NO_TANGENT)
    return tuple(out)


@transformable
def apply_along_axis_pullback(dy, func1d, axis, arr, *args):
    ax = axis % np.ndim(arr)
    moved = np.moveaxis(arr, ax, -1)
    g = densify(dy)
    # y's axes: arr's axes before `axis`, the result's axes, arr's axes after.
    res_nd = np.ndim(g) - (np.ndim(arr) - 1)
    g = np.moveaxis(g, tuple(range(ax, ax + res_nd)), tuple(range(np.ndim(g) - res_nd, np.ndim(g))))
    outer = np.shape(moved)[:-1]
    n = math.prod(outer)
    slices = np.reshape(moved, (n, np.shape(moved)[-1]))
    gs = np.reshape(g, (n,) + np.shape(g)[len(outer) :])
    rows = [user_function_vjp(gs[k], func1d, slices[k], *args) for k in range(n)]
    parts = [dense_like(row[0], slices[k]) for k, row in enumerate(rows)]
    if n == 0:
        garr = np.zeros(np.shape(moved), np.result_type(dense_operand(arr), 1.0))
    else:
        garr = np.reshape(np.stack(parts), np.shape(moved))
    return (NO_TANGENT, NO_TANGENT, np.moveaxis(garr, -1, ax)) + summed_cotangents(rows, 1, args)


@transformable
def vectorize_pullback(dy, vec, *args):
    excluded = excluded_positions(vec, len(args))
    shape = np.broadcast_shapes(*[np.shape(a) for k, a in enumerate(args) if k not in excluded])
    modes = one_call_modes(vec, args)
    if modes is not None:
        return vectorize_one_call_pullback(dy, vec, modes, shape, *args)
    n = math.prod(shape)
    g = np.reshape(np.broadcast_to(densify(dy), shape), (n,))
    flat = [
        None if k in excluded else np.reshape(np.broadcast_to(a, shape), (n,))
        for k, a in enumerate(args)
    ]
    # integers and booleans as Python's (see element_of), floats as NumPy scalars
    ints = [v is not None and np.asarray(v).dtype.kind in "biu" for v in flat]
    rows = [
        user_function_vjp(
            g[k],
            vec.pyfunc,
            *[
                a if v is None else element_of(v[k]) if i else v[k]
                for a, v, i in zip(args, flat, ints, strict=True)
            ],
        )
        for k in range(n)
    ]
    out = []
    for j in range(len(args)):
        if np.asarray(args[j]).dtype.kind not in "fc":
            out.append(NO_TANGENT)
        elif flat[j] is None:  # passed to every call as it is: the calls' cotangents summed
            out.append(summed_cotangents(rows, j, (args[j],))[0])
        else:
            parts = [dense_like(row[j], flat[j][k]) for k, row in enumerate(rows)]
            full = np.reshape(np.stack(parts), shape) if n else np.zeros(shape, g.dtype)
            out.append(unbroadcast(full, args[j]))
    return (NO_TANGENT,) + tuple(out)


@transformable
def vectorize_one_call_pullback(dy, vec, modes, shape, *args):
    """``vectorize_pullback`` for a function proved elementwise (:func:`one_call_modes`):
    one vjp of the function over the arrays instead of one per element."""
    passed = [
        np.asarray(a) if m == ARRAY else element_of(a) if m == ELEMENT else a
        for a, m in zip(args, modes, strict=True)
    ]
    g = np.broadcast_to(densify(dy), shape)
    row = user_function_vjp(unbroadcast(g, call_output(vec.pyfunc, passed)), vec.pyfunc, *passed)
    out = []
    for j in range(len(args)):
        if np.asarray(args[j]).dtype.kind not in "fc":
            out.append(NO_TANGENT)
        elif modes[j] == ARRAY:
            out.append(unbroadcast(dense_like(row[j], passed[j]), args[j]))
        else:  # passed as it is to the one call: its cotangent is already the sum
            out.append(summed_cotangents([row], j, (args[j],))[0])
    return (NO_TANGENT,) + tuple(out)


# They index and rebuild the array slice by slice (or element by element): on Dask the
# rule's closure pullback runs instead, or the call is refused by name; never a zero.
apply_along_axis_pullback.__pullback_numpy_only__ = True
vectorize_pullback.__pullback_numpy_only__ = True
vectorize_one_call_pullback.__pullback_numpy_only__ = True


@transformable
def piecewise_pullback(dy, x, condlist, funclist, *args):
    xa = np.asarray(x)
    conds = piecewise_conditions(x, condlist, len(funclist))
    owner = piecewise_owner(conds, np.shape(xa))
    g = np.broadcast_to(densify(dy), np.shape(xa))
    gx = np.zeros(np.shape(xa), np.result_type(g, xa, np.float16))
    rows = []
    for k in range(len(conds)):
        f = funclist[k]
        c = conds[k]
        if callable(f) and np.any(c):
            mine = np.where(owner[c] == k, g[c], np.zeros_like(g[c]))
            # a function may return one value for the whole piece
            row = user_function_vjp(
                unbroadcast(mine, piece_output(f, xa[c], args)), f, xa[c], *args
            )
            part = np.zeros(np.shape(xa), gx.dtype)
            part[c] = dense_like(row[0], xa[c])
            gx = gx + part
            rows.append(row)
    if has_tangent(x):
        cx = unbroadcast(gx, x)
    else:
        cx = NO_TANGENT
    return (cx, NO_TANGENT, constants_cotangent(g, owner, funclist)) + summed_cotangents(
        rows, 1, args
    )


@transformable
def constants_cotangent(g, owner, funclist):
    """The cotangent of ``funclist``: a constant in it is the value of the elements it
    owns, and gets their cotangents; ``NO_TANGENT`` when it holds no float constant."""
    positions = float_constants(funclist)
    if not positions:
        return NO_TANGENT
    parts = [
        np.sum(np.where(owner == k, g, np.zeros_like(g))) if k in positions else NO_TANGENT
        for k in range(len(funclist))
    ]
    if isinstance(funclist, tuple):
        return tuple(parts)
    return parts


# -- non-differentiable helpers (no gradient flows through which element is where) -------
def piecewise_conditions(x, condlist, n_funcs):
    """NumPy's reading of ``condlist``: a list of boolean arrays shaped like ``x``, with
    the "otherwise" condition appended when there is one function more than conditions."""
    xa = np.asarray(x)
    if np.isscalar(condlist) or (not isinstance(condlist[0], (list, np.ndarray)) and xa.ndim != 0):
        condlist = [condlist]
    conds = [np.broadcast_to(np.asarray(c, dtype=bool), xa.shape) for c in condlist]
    if len(conds) == n_funcs - 1:
        conds.append(~np.any(conds, axis=0) if conds else np.ones(xa.shape, bool))
    return conds


def piecewise_owner(conds, shape):
    """Which function owns each element (-1: none): a later condition overrides."""
    owner = np.full(shape, -1)
    for k, c in enumerate(conds):
        owner[c] = k
    return owner


def piece_output(f, xc, args):
    """``f(xc, *args)`` (its shape is what the cotangent of the piece must have)."""
    return f(xc, *args)


def float_constants(funclist):
    """The positions of the float constants in a list or tuple ``funclist``."""
    if type(funclist) not in (list, tuple):
        return ()
    return tuple(k for k, f in enumerate(funclist) if not callable(f) and differentiable(f))


def excluded_positions(vec, n_args):
    """The positions among ``n_args`` positional arguments that the np.vectorize object
    ``vec`` passes to its function as they are (``excluded=``), or None when it excludes
    a keyword (which the rules do not pass on)."""
    if any(not isinstance(k, int) for k in vec.excluded):
        return None
    return frozenset(k for k in vec.excluded if 0 <= k < n_args)  # as NumPy: no negatives


# How one call over all elements gets each argument of a np.vectorize object
# (:func:`one_call_modes`).
ARRAY = "array"  # a float argument NumPy maps over, as an array
ELEMENT = "element"  # a 0-d argument without floats, as the element each call gets
AS_IS = "as is"  # an excluded argument, as every call gets it


def one_call_modes(vec, args):
    """How ONE call of ``vec.pyfunc`` over all elements gets each of ``args`` (``ARRAY``,
    ``ELEMENT`` or ``AS_IS``), or None when the per-element calls must stay: a signature,
    an excluded keyword, an array without floats NumPy maps over, no float array at all,
    or a function not proved elementwise in its arrays (rules/_elementwise.py: only then
    does one reverse pass over the arrays give each element's cotangents)."""
    excluded = excluded_positions(vec, len(args))
    if vec.signature is not None or excluded is None:
        return None
    modes, values = [], []
    for k, a in enumerate(args):
        v = np.asarray(a)
        if k in excluded:
            modes.append(AS_IS)
            values.append(a)
        elif v.dtype.kind == "f":
            modes.append(ARRAY)
            values.append(v)
        elif v.ndim == 0 and v.dtype.kind in "biu":
            modes.append(ELEMENT)
            values.append(v.item())
        else:
            return None
    varying = tuple(k for k, m in enumerate(modes) if m == ARRAY)
    if not varying or not elementwise_in_arrays(vec.pyfunc, values, varying):
        return None
    return tuple(modes)


def element_of(a):
    """The one element of a 0-d argument, as a Python scalar: what np.vectorize passes (it
    calls the function on the items of object arrays). It matters for integers and
    booleans: NumPy's ``True + True`` is ``True`` and its integers wrap around at 2**63,
    Python's do not."""
    return np.asarray(a).item()


def call_output(f, args):
    """``f(*args)`` (its shape is what the cotangent of the one call must have)."""
    return f(*args)


NON_DIFFERENTIABLE = (
    one_call_modes,
    element_of,
    call_output,
    excluded_positions,
    piecewise_conditions,
    piecewise_owner,
    piece_output,
    float_constants,
)
