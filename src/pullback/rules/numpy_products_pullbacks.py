"""Transformable pullbacks of the products (numpy_products.py): written in the
differentiable subset so that second derivatives run through them (see transformable.py).

Products are multilinear: each cotangent is a product of the output cotangent with the
other operands, so these pullbacks are products again. The axis bookkeeping (which axes
a contraction leaves, in which order) is integer work done by small helpers registered as
non-differentiable. The einsum subscripts are read here (:func:`parse_einsum`) for the
rules too: numpy_products imports this module, never the other way.

>>> ins, out, spare = parse_einsum("...ij,jk", [(2, 3, 4), (4, 5)])
>>> ins, out, spare[:2]
(['aij', 'jk'], 'aik', ['b', 'c'])
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedCallError
from ..registry import transformable
from ..tangents import NO_TANGENT, densify, unbroadcast
from ._util import EINSUM_LETTERS
from .transformable import matmul_pullback, outer_pullback, set_pullbacks


# -- integer bookkeeping (non-differentiable helpers) -------------------------------------
def tensordot_plan(a_ndim, b_ndim, axes):
    """For ``tensordot(a, b, axes)``: the contraction and transpositions that give the two
    cotangents, ``(g_axes_a, fb, perm_a, fa, g_axes_b, perm_b)``."""
    if isinstance(axes, (int, np.integer)):
        ia, ib = list(range(a_ndim - int(axes), a_ndim)), list(range(int(axes)))
    else:
        ia, ib = axes
        ia = [ia] if isinstance(ia, (int, np.integer)) else list(ia)
        ib = [ib] if isinstance(ib, (int, np.integer)) else list(ib)
        ia, ib = [i % a_ndim for i in ia], [i % b_ndim for i in ib]
    fa = [i for i in range(a_ndim) if i not in ia]
    fb = [i for i in range(b_ndim) if i not in ib]
    nfa = len(fa)
    g_ndim = nfa + len(fb)
    perm_a = tuple(np.argsort(fa + [ia[ib.index(j)] for j in sorted(ib)]))
    perm_b = tuple(np.argsort([ib[ia.index(i)] for i in sorted(ia)] + fb))
    return list(range(nfa, g_ndim)), fb, perm_a, fa, list(range(nfa)), perm_b


def parse_einsum(subscripts, shapes):
    """Explicit subscripts (ellipses spelled out with unused letters) and the output."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
    else:
        ins, out = subscripts, None
    ins = ins.split(",")
    if len(ins) != len(shapes):
        raise ValueError("einsum: the number of subscripts and operands differ")
    used = set("".join(ins)) | set(out or "")
    spare = [c for c in EINSUM_LETTERS if c not in used]
    n_ell = 0
    for sub, shape in zip(ins, shapes, strict=True):
        if "..." in sub:
            n_ell = max(n_ell, len(shape) - (len(sub) - 3))
    ell = "".join(spare[:n_ell])
    explicit = []
    for sub, shape in zip(ins, shapes, strict=True):
        if "..." in sub:
            k = len(shape) - (len(sub) - 3)
            sub = sub.replace("...", ell[n_ell - k :] if k else "")
        explicit.append(sub)
    if out is None:
        counts = {}
        for sub in explicit:
            for c in sub:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return explicit, out, spare[n_ell:]


def einsum_plan(subscripts, shapes, k):
    """For operand ``k`` of ``einsum(subscripts, *operands)``: ``(spec, others, eyes,
    kept_shape, full_shape)`` — the einsum that gives its cotangent from ``dy``, the
    conjugated other operands (by position) and identity matrices of sizes ``eyes``,
    then reshaped to ``kept_shape`` and broadcast to ``full_shape`` (``None``: as is)."""
    ins, out, spare = parse_einsum(subscripts, shapes)
    sizes = {}
    for sub, shape in zip(ins, shapes, strict=True):
        for c, n in zip(sub, shape, strict=True):
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]
    fresh = iter(spare)
    target = ""
    eyes = []
    eye_terms = []
    for c in ins[k]:
        if c in target:  # a repeated letter: an identity ties the two axes
            c2 = next(fresh)
            sizes[c2] = sizes[c]
            eye_terms.append(c + c2)
            eyes.append(sizes[c])
            target += c2
        else:
            target += c
    others = [j for j in range(len(ins)) if j != k]
    terms = [out] + [ins[j] for j in others] + eye_terms
    kept = "".join(c for c in target if c in set("".join(terms)))
    spec = ",".join(terms) + "->" + kept
    full = tuple(sizes[c] for c in target)
    if kept == target and full == tuple(shapes[k]):
        return spec, others, eyes, None, None
    return spec, others, eyes, tuple(sizes[c] if c in kept else 1 for c in target), full


def kron_plan(a_shape, b_shape):
    """For ``kron(a, b)``: ``(inter, a_axes, b_axes, a_spread, b_spread)``."""
    nd = max(len(a_shape), len(b_shape))
    sa = (1,) * (nd - len(a_shape)) + tuple(a_shape)
    sb = (1,) * (nd - len(b_shape)) + tuple(b_shape)
    inter = tuple(n for pair in zip(sa, sb, strict=True) for n in pair)
    a_spread = tuple(n for s in sa for n in (s, 1))
    b_spread = tuple(n for s in sb for n in (1, s))
    return inter, tuple(range(0, 2 * nd, 2)), tuple(range(1, 2 * nd, 2)), a_spread, b_spread


def sublist_text(sublist):
    """An einsum sublist (ints, ``Ellipsis``) as subscript letters."""
    out = ""
    for k in sublist:
        if k is Ellipsis:
            out += "..."
        elif isinstance(k, (int, np.integer)) and 0 <= k < len(EINSUM_LETTERS):
            out += EINSUM_LETTERS[k]
        else:
            raise UnsupportedCallError(
                f"pullback: einsum sublist entry {k!r} is neither an int in [0, 52) nor "
                "Ellipsis; fix: use the subscripts string form"
            )
    return out


def interleaved_subscripts(first, b, c, last):
    """The subscripts string of ``einsum``'s interleaved form, seen through the parameters
    of :func:`einsum_pullback` ``(subscripts, a, b, c, optimize)``: the call
    ``einsum(op0, first[, op1, c][, out])`` puts ``op0`` in ``subscripts`` and its sublist
    ``first`` in ``a``; one operand with an output sublist puts that sublist in ``b``; two
    operands put ``op1`` in ``b``, its sublist in ``c``, and an output sublist in
    ``optimize`` (``last``, a list or tuple then)."""
    if c is None:
        text = sublist_text(first)
        if b is not None:
            text += "->" + sublist_text(b)
        return text
    text = sublist_text(first) + "," + sublist_text(c)
    if isinstance(last, (list, tuple)):
        text += "->" + sublist_text(last)
    return text


def is_optimize_option(value):
    """Whether ``value`` is one of einsum's ``optimize`` settings (a bool, a strategy name
    or an ``["einsum_path", ...]`` path), not an operand passed by position."""
    if isinstance(value, (bool, str)):
        return True
    return isinstance(value, list) and len(value) > 0 and value[0] == "einsum_path"


def require_3_vectors(a_shape, b_shape, axisa, axisb):
    """Refuse ``np.cross`` of 2-vectors (deprecated by NumPy): its rule is for 3-vectors."""
    if a_shape[axisa] != 3 or b_shape[axisb] != 3:
        raise UnsupportedCallError(
            "pullback: np.cross has a rule for 3-vectors only (NumPy deprecates 2-vectors).\n"
            "Fix: write the cross product of 2-vectors out, a[..., 0] * b[..., 1] - "
            "a[..., 1] * b[..., 0], or pad them to 3-vectors with a zero."
        )


HELPERS = (
    tensordot_plan,
    einsum_plan,
    kron_plan,
    interleaved_subscripts,
    is_optimize_option,
    require_3_vectors,
)


# -- pullbacks ----------------------------------------------------------------------------
@transformable
def tensordot_grads(dy, a, b, axes):
    """The cotangents of ``tensordot(a, b, axes)``."""
    ga, fb, perm_a, fa, gb, perm_b = tensordot_plan(np.ndim(a), np.ndim(b), axes)
    g = densify(dy)
    da = np.transpose(np.tensordot(g, np.conj(b), axes=(ga, fb)), perm_a)
    db = np.transpose(np.tensordot(np.conj(a), g, axes=(fa, gb)), perm_b)
    return unbroadcast(da, a), unbroadcast(db, b)


@transformable
def tensordot_pullback(dy, a, b, axes=2):
    da, db = tensordot_grads(dy, a, b, axes)
    return da, db, NO_TANGENT


@transformable
def inner_pullback(dy, a, b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        g = densify(dy)
        return unbroadcast(g * np.conj(b), a), unbroadcast(np.conj(a) * g, b)
    return tensordot_grads(dy, a, b, ([np.ndim(a) - 1], [np.ndim(b) - 1]))


@transformable
def vdot_pullback(dy, a, b):
    g = densify(dy)
    # y = sum(conj(a) * b): da = b * conj(dy), db = a * dy.
    # through one axis: Dask reshapes only by merging or splitting axes; raveled first,
    # as a list (np.vdot(xs, ys) of lists built by appends) does not multiply by a number
    da = np.reshape(np.ravel(b) * np.conj(g), np.shape(a))
    db = np.reshape(np.ravel(a) * g, np.shape(b))
    return unbroadcast(da, a), unbroadcast(db, b)


@transformable
def vecdot_pullback(dy, x1, x2, axis=-1):
    g = np.expand_dims(densify(dy), axis)
    return unbroadcast(x2 * np.conj(g), x1), unbroadcast(x1 * g, x2)


@transformable
def einsum_of(spec, values):
    """``np.einsum(spec, *values)`` for up to five values (calls with *args are outside
    the differentiable subset)."""
    n = len(values)
    if n == 1:
        return np.einsum(spec, values[0])
    if n == 2:
        return np.einsum(spec, values[0], values[1])
    if n == 3:
        return np.einsum(spec, values[0], values[1], values[2])
    if n == 4:
        return np.einsum(spec, values[0], values[1], values[2], values[3])
    return np.einsum(spec, values[0], values[1], values[2], values[3], values[4])


@transformable
def einsum_pullback(dy, subscripts, a, b=None, c=None, optimize=False):
    # Up to four operands (parameters, not *operands: the subset has no star-parameters);
    # a call with more does not bind, and takes the rule's own pullback.
    if not isinstance(subscripts, str):
        # the interleaved form einsum(op0, sublist0[, op1, sublist1][, out]): the same
        # pullback on its subscripts string, the cotangents put back in the call's places
        text = interleaved_subscripts(a, b, c, optimize)
        if c is None:
            d0 = einsum_pullback(dy, text, subscripts)[1]
            if b is None:
                return d0, NO_TANGENT
            return d0, NO_TANGENT, NO_TANGENT
        both = einsum_pullback(dy, text, subscripts, b)
        if isinstance(optimize, (list, tuple)):
            return both[1], NO_TANGENT, both[2], NO_TANGENT, NO_TANGENT
        return both[1], NO_TANGENT, both[2], NO_TANGENT
    ops = [a]
    if b is not None:
        ops = ops + [b]
    if c is not None:
        ops = ops + [c]
    if not is_optimize_option(optimize):
        # einsum(subscripts, a, b, c, d): the fourth operand came in optimize's place
        ops = ops + [optimize]
    shapes = []
    for o in ops:
        shapes = shapes + [np.shape(o)]
    g = densify(dy)
    out = (NO_TANGENT,)
    for k in range(len(ops)):
        spec, others, eyes, kept, full = einsum_plan(subscripts, shapes, k)
        values = [g]
        for j in others:
            values = values + [np.conj(ops[j])]
        for n in eyes:
            values = values + [np.eye(n)]
        grad = einsum_of(spec, values)
        if kept is not None:
            grad = np.broadcast_to(np.reshape(grad, kept), full)
        out = out + (unbroadcast(grad, ops[k]),)
    return out


@transformable
def kron_pullback(dy, a, b):
    inter, a_axes, b_axes, a_spread, b_spread = kron_plan(np.shape(a), np.shape(b))
    g = np.reshape(densify(dy), inter)  # axes (a0, b0, a1, b1, ...)
    da = np.sum(g * np.reshape(np.conj(b), b_spread), axis=b_axes)
    db = np.sum(g * np.reshape(np.conj(a), a_spread), axis=a_axes)
    return unbroadcast(np.reshape(da, np.shape(a)), a), unbroadcast(np.reshape(db, np.shape(b)), b)


@transformable
def cross_pullback(dy, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axis
        axisb = axis
        axisc = axis
    require_3_vectors(np.shape(a), np.shape(b), axisa, axisb)
    g = np.moveaxis(densify(dy), axisc, -1)
    am = np.moveaxis(a, axisa, -1)
    bm = np.moveaxis(b, axisb, -1)
    # <(da x b), g> = <da, b x g>;  <(a x db), g> = <db, g x a>.
    da = np.moveaxis(unbroadcast(np.cross(np.conj(bm), g), am), -1, axisa)
    db = np.moveaxis(unbroadcast(np.cross(g, np.conj(am)), bm), -1, axisb)
    return da, db, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT


@transformable
def linalg_cross_pullback(dy, x1, x2, axis=-1):
    da, db, _, _, _, _ = cross_pullback(dy, x1, x2, -1, -1, -1, axis)
    return da, db


@transformable
def trace_grad(dy, shape, offset, axis1, axis2):
    nd = len(shape)
    a1 = axis1 % nd
    a2 = axis2 % nd
    # expand_dims takes a Python-float cotangent too (a second sweep can give one)
    full = np.expand_dims(densify(dy), (-2, -1)) * np.eye(shape[a1], shape[a2], k=offset)
    return np.moveaxis(full, (-2, -1), (a1, a2))


@transformable
def trace_pullback(dy, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    g = trace_grad(dy, np.shape(a), offset, axis1, axis2)
    return (unbroadcast(g, a),) + (NO_TANGENT,) * 5


@transformable
def linalg_trace_pullback(dy, x, offset=0, dtype=None):
    return (unbroadcast(trace_grad(dy, np.shape(x), offset, -2, -1), x),)


@transformable
def multi_dot_pullback(dy, arrays, out=None):
    n = len(arrays)
    mats = []
    for k in range(n):
        m = arrays[k]
        if k == 0 and np.ndim(m) == 1:
            m = m[None, :]
        if k == n - 1 and np.ndim(m) == 1:
            m = m[:, None]
        mats = mats + [m]
    g = np.reshape(densify(dy), (np.shape(mats[0])[0], np.shape(mats[n - 1])[1]))
    # prefix[i] = M0 ... M(i-1), suffix[i] = M(i+1) ... M(n-1)
    prefix = [None]
    for i in range(1, n):
        prefix = prefix + [mats[0] if i == 1 else prefix[i - 1] @ mats[i - 1]]
    suffix = [None]
    for i in range(1, n):
        suffix = [mats[n - 1] if i == 1 else mats[n - i] @ suffix[0]] + suffix
    cots = []
    for i in range(n):
        d = g
        if suffix[i] is not None:
            d = d @ np.swapaxes(np.conj(suffix[i]), -1, -2)
        if prefix[i] is not None:
            d = np.swapaxes(np.conj(prefix[i]), -1, -2) @ d
        cots = cots + [unbroadcast(np.reshape(d, np.shape(arrays[i])), arrays[i])]
    if isinstance(arrays, tuple):
        return (tuple(cots),)
    return (cots,)


@transformable
def linalg_matmul_pullback(dy, x1, x2):
    return matmul_pullback(dy, x1, x2)


@transformable
def linalg_outer_pullback(dy, x1, x2):
    return outer_pullback(dy, x1, x2)


@transformable
def linalg_tensordot_pullback(dy, x1, x2, axes=2):
    return tensordot_grads(dy, x1, x2, axes)


def register_pullbacks(reg, family):
    for helper in HELPERS:
        reg.non_differentiable(
            helper, family=family, trusted=True, notes="axis bookkeeping of a pullback"
        )
    la = np.linalg
    pairs = [
        (np.vdot, vdot_pullback),
        (np.inner, inner_pullback),
        (np.tensordot, tensordot_pullback),
        (np.einsum, einsum_pullback),
        (np.kron, kron_pullback),
        (np.cross, cross_pullback),
        (np.trace, trace_pullback),
        (la.multi_dot, multi_dot_pullback),
        (getattr(np, "vecdot", None), vecdot_pullback),
        (getattr(la, "vecdot", None), vecdot_pullback),
        (getattr(la, "matmul", None), linalg_matmul_pullback),
        (getattr(la, "outer", None), linalg_outer_pullback),
        (getattr(la, "tensordot", None), linalg_tensordot_pullback),
        (getattr(la, "trace", None), linalg_trace_pullback),
        (getattr(la, "cross", None), linalg_cross_pullback),
    ]
    set_pullbacks(reg, pairs)
