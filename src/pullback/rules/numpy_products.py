"""Products: dot, vdot, matmul, inner, outer, tensordot, einsum, kron, cross, trace,
vecdot and linalg.multi_dot (plus the numpy.linalg array-API spellings).

For a product ``y = a * b`` (bilinear, no conjugation) the cotangents are
``da = dy * conj(b)`` and ``db = conj(a) * dy`` contracted appropriately; for real values
``conj`` is the identity and costs nothing.
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
    conj,
    densify,
    differentiable,
    finalize,
    finalize_like,
    refuse_integer_dtype,
    refuse_out,
    zeros_for,
)
from .numpy_products_pullbacks import (
    parse_einsum,
    register_pullbacks,
    require_3_vectors,
    sublist_text,
)

FAMILY = "numpy_products"


def _t(x):
    return np.swapaxes(x, -1, -2)


def _matmul_grads(dy, a, b):
    """Cotangents of ``a @ b`` (NumPy matmul semantics, with broadcasting)."""
    a = as_array(a)
    b = as_array(b)
    dy = as_array(densify(dy))
    ca = conj(a)
    cb = conj(b)
    if a.ndim == 1 and b.ndim == 1:
        return dy * cb, ca * dy
    if a.ndim == 1:
        # y[..., m] = sum_k a[k] b[..., k, m]
        da = np.matmul(cb, dy[..., None])[..., 0]
        db = ca[:, None] * dy[..., None, :]
        return da, db
    if b.ndim == 1:
        # y[..., n] = sum_k a[..., n, k] b[k]
        da = dy[..., :, None] * cb
        db = np.matmul(_t(ca), dy[..., None])[..., 0]
        return da, db
    return np.matmul(dy, _t(cb)), np.matmul(_t(ca), dy)


# matmul's ufunc options that only choose the output's type; axes=/axis= (other axes
# multiplied) and where= have no rule: bind refuses them.
_MATMUL_KNOWN = ("dtype", "casting", "order", "subok")


def _matmul_rrule(a, b, **kwargs):
    y = np.matmul(a, b, **kwargs)
    p = bind((), kwargs, ("out",), (None,), name="np.matmul", known=_MATMUL_KNOWN)
    refuse_out("np.matmul", p)

    def matmul_pullback(dy):
        if dy is ZERO:
            return zeros_for((a, b))
        da, db = _matmul_grads(dy, a, b)
        return finalize(da, a), finalize(db, b)

    return y, matmul_pullback


def _tensordot_axes(a_ndim, b_ndim, axes):
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        return list(range(a_ndim - n, a_ndim)), list(range(n))
    ia, ib = axes
    ia = [ia] if isinstance(ia, (int, np.integer)) else list(ia)
    ib = [ib] if isinstance(ib, (int, np.integer)) else list(ib)
    return [i % a_ndim for i in ia], [i % b_ndim for i in ib]


def _tensordot_grads(dy, a, b, ia, ib):
    """Cotangents of ``tensordot(a, b, (ia, ib))``."""
    a = as_array(a)
    b = as_array(b)
    g = as_array(densify(dy))
    fa = [i for i in range(a.ndim) if i not in ia]
    fb = [i for i in range(b.ndim) if i not in ib]
    nfa = len(fa)
    # da: contract g's b-free axes with conj(b)'s free axes; what remains is
    # fa + (b's contracted axes in increasing order), which match a's axes ia[ib.index(j)].
    da = np.tensordot(g, conj(b), axes=(list(range(nfa, g.ndim)), fb))
    da_axes = fa + [ia[ib.index(j)] for j in sorted(ib)]
    da = np.transpose(da, tuple(np.argsort(da_axes).tolist()))
    db = np.tensordot(conj(a), g, axes=(fa, list(range(nfa))))
    db_axes = [ib[ia.index(i)] for i in sorted(ia)] + fb
    db = np.transpose(db, tuple(np.argsort(db_axes).tolist()))
    return da, db


def _tensordot_rrule(a, b, *args, **kwargs):
    y = np.tensordot(a, b, *args, **kwargs)
    axes = args[0] if args else kwargs.get("axes", 2)
    ia, ib = _tensordot_axes(np.ndim(a), np.ndim(b), axes)
    rest = (NO_TANGENT,) * len(args)  # ``axes`` when given by position

    def tensordot_pullback(dy):
        if dy is ZERO:
            return zeros_for((a, b)) + rest
        da, db = _tensordot_grads(dy, a, b, ia, ib)
        return (finalize(da, a), finalize(db, b)) + rest

    return y, tensordot_pullback


def _linalg_tensordot_rrule(x1, x2, /, *, axes=2):
    y = np.linalg.tensordot(x1, x2, axes=axes)
    ia, ib = _tensordot_axes(np.ndim(x1), np.ndim(x2), axes)

    def tensordot_pullback(dy):
        if dy is ZERO:
            return zeros_for((x1, x2))
        da, db = _tensordot_grads(dy, x1, x2, ia, ib)
        return finalize(da, x1), finalize(db, x2)

    return y, tensordot_pullback


def _dot_rrule(a, b, **kwargs):
    y = np.dot(a, b, **kwargs)

    def dot_pullback(dy):
        if dy is ZERO:
            return zeros_for((a, b))
        na, nb = np.ndim(a), np.ndim(b)
        if na == 0 or nb == 0:
            g = densify(dy)
            return finalize(g * conj(b), a), finalize(conj(a) * g, b)
        # dot sums over the last axis of a and the second-to-last of b (the last if 1-d).
        da, db = _tensordot_grads(dy, a, b, [na - 1], [max(nb - 2, 0)])
        return finalize(da, a), finalize(db, b)

    return y, dot_pullback


def _inner_rrule(a, b):
    y = np.inner(a, b)

    def inner_pullback(dy):
        if dy is ZERO:
            return zeros_for((a, b))
        na, nb = np.ndim(a), np.ndim(b)
        if na == 0 or nb == 0:
            g = densify(dy)
            return finalize(g * conj(b), a), finalize(conj(a) * g, b)
        da, db = _tensordot_grads(dy, a, b, [na - 1], [nb - 1])
        return finalize(da, a), finalize(db, b)

    return y, inner_pullback


def _vdot_rrule(a, b):
    y = np.vdot(a, b)

    def vdot_pullback(dy):
        if dy is ZERO:
            return zeros_for((a, b))
        g = densify(dy)
        # y = sum(conj(a) * b): da = b * conj(dy), db = a * dy.
        da = np.ravel(b) * conj(g)
        db = np.ravel(a) * g
        return finalize_like(da, a), finalize_like(db, b)

    return y, vdot_pullback


def _outer_rrule(a, b, **kwargs):
    y = np.outer(a, b, **kwargs)

    def outer_pullback(dy):
        if dy is ZERO:
            return zeros_for((a, b))
        g = as_array(densify(dy))
        da = np.matmul(g, conj(np.ravel(b)))
        db = np.matmul(conj(np.ravel(a)), g)
        return finalize_like(da, a), finalize_like(db, b)

    return y, outer_pullback


def _linalg_outer_rrule(x1, x2, /):
    y = np.linalg.outer(x1, x2)
    _, back = _outer_rrule(x1, x2)
    return y, back


# -- einsum --------------------------------------------------------------------------------
def _einsum_rrule(*args, **kwargs):
    if isinstance(args[0], str):
        return _einsum_string_rrule(args[0], *args[1:], **kwargs)
    # The interleaved form einsum(op0, sublist0, op1, sublist1, ..., [sublistout]).
    y = np.einsum(*args, **kwargs)
    operands = args[0 : len(args) - len(args) % 2 : 2]
    subscripts = ",".join(sublist_text(s) for s in args[1::2][: len(operands)])
    if len(args) % 2:
        subscripts += "->" + sublist_text(args[-1])
    _, back = _einsum_string_rrule(subscripts, *operands, **kwargs)

    def einsum_interleaved_pullback(dy):
        cots = back(dy)[1:]
        out = [NO_TANGENT] * len(args)
        out[0 : 2 * len(operands) : 2] = cots
        return tuple(out)

    return y, einsum_interleaved_pullback


def _einsum_string_rrule(subscripts, *operands, **kwargs):
    y = np.einsum(subscripts, *operands, **kwargs)
    shapes = [np.shape(o) for o in operands]
    ins, out, spare = parse_einsum(subscripts, shapes)
    sizes = {}
    for sub, shape in zip(ins, shapes, strict=True):
        for c, n in zip(sub, shape, strict=True):
            # a size-1 axis broadcasts against any other size (0 included)
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]
    opt = {k: v for k, v in kwargs.items() if k == "optimize"}

    def einsum_pullback(dy):
        if dy is ZERO:
            return (NO_TANGENT,) + zeros_for(operands)
        g = as_array(densify(dy))
        # Operands broadcast on ellipsis axes of size 1: use their broadcast forms.
        full = [
            np.broadcast_to(o, tuple(sizes[c] for c in sub))
            for o, sub in zip(operands, ins, strict=True)
        ]
        cots = [NO_TANGENT]
        for k, (o, sub) in enumerate(zip(operands, ins, strict=True)):
            if not _is_float(o):
                cots.append(NO_TANGENT)
                continue
            # Target: sub with repeated letters renamed; each repeat becomes an identity.
            fresh = iter(spare)
            target = ""
            eyes = []
            seen = set()
            for c in sub:
                if c in seen:
                    c2 = next(fresh)
                    eyes.append((c + c2, np.eye(sizes[c], dtype=g.dtype)))
                    target += c2
                else:
                    seen.add(c)
                    target += c
            terms = [out] + [s for j, s in enumerate(ins) if j != k] + [e for e, _ in eyes]
            vals = [g] + [conj(full[j]) for j in range(len(ins)) if j != k] + [m for _, m in eyes]
            available = set("".join(terms))
            kept = "".join(c for c in target if c in available)
            grad = np.einsum(",".join(terms) + "->" + kept, *vals, **opt)
            # Letters only this operand has were summed in y: broadcast back along them.
            if kept != target:
                grad = np.reshape(grad, [sizes[c] if c in kept else 1 for c in target])
                grad = np.broadcast_to(grad, [sizes[c] for c in target])
            cots.append(finalize(grad, o))
        return tuple(cots)

    return y, einsum_pullback


def _is_float(x):
    from ..tangents import is_differentiable_value

    return is_differentiable_value(x) or (
        isinstance(x, (list, tuple)) and as_array(x).dtype.kind in "fc"
    )


# -- kron, cross, trace, vecdot, multi_dot -------------------------------------------------
def _kron_rrule(a, b):
    y = np.kron(a, b)
    nd = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (nd - np.ndim(a)) + np.shape(a)
    sb = (1,) * (nd - np.ndim(b)) + np.shape(b)

    def kron_pullback(dy):
        if dy is ZERO:
            return zeros_for((a, b))
        g = as_array(densify(dy))
        inter = [n for pair in zip(sa, sb, strict=True) for n in pair]
        g = np.reshape(g, inter)  # axes (a0, b0, a1, b1, ...)
        a_axes = tuple(range(0, 2 * nd, 2))
        b_axes = tuple(range(1, 2 * nd, 2))
        ae = np.reshape(conj(as_array(a)), [n for s in sa for n in (s, 1)])
        be = np.reshape(conj(as_array(b)), [n for s in sb for n in (1, s)])
        da = np.sum(g * be, axis=b_axes)
        db = np.sum(g * ae, axis=a_axes)
        return finalize_like(da, a), finalize_like(db, b)

    return y, kron_pullback


def _cross_rrule(a, b, *args, **kwargs):
    y = np.cross(a, b, *args, **kwargs)
    p = bind(args, kwargs, ("axisa", "axisb", "axisc", "axis"), (-1, -1, -1, None), name="np.cross")
    if p["axis"] is not None:
        p["axisa"] = p["axisb"] = p["axisc"] = p["axis"]
    require_3_vectors(np.shape(a), np.shape(b), p["axisa"], p["axisb"])

    def cross_pullback(dy):
        if dy is ZERO:
            return zeros_for((a, b)) + (NO_TANGENT,) * len(args)
        g = np.moveaxis(as_array(densify(dy)), p["axisc"], -1)
        am = np.moveaxis(as_array(a), p["axisa"], -1)
        bm = np.moveaxis(as_array(b), p["axisb"], -1)
        # <(da x b), g> = <da, b x g>;  <(a x db), g> = <db, g x a>.
        out = []
        for moved, grad, ax in (
            (am, np.cross(conj(bm), g), p["axisa"]),
            (bm, np.cross(g, conj(am)), p["axisb"]),
        ):
            grad = finalize(grad, moved)
            out.append(NO_TANGENT if grad is NO_TANGENT else np.moveaxis(grad, -1, ax))
        return tuple(out) + (NO_TANGENT,) * len(args)

    return y, cross_pullback


def _linalg_cross_rrule(x1, x2, /, *, axis=-1):
    y = np.linalg.cross(x1, x2, axis=axis)
    _, back = _cross_rrule(x1, x2, axis=axis)
    return y, back


def _trace_grad(dy, shape, offset, axis1, axis2):
    nd = len(shape)
    a1, a2 = axis1 % nd, axis2 % nd
    n1, n2 = shape[a1], shape[a2]
    mask = np.eye(n1, n2, k=offset)
    g = as_array(densify(dy))
    full = g[..., None, None] * mask  # rest + (n1, n2)
    return np.moveaxis(full, (-2, -1), (a1, a2))


def _trace_rrule(a, *args, **kwargs):
    y = np.trace(a, *args, **kwargs)
    p = bind(
        args,
        kwargs,
        ("offset", "axis1", "axis2", "dtype", "out"),
        (0, 0, 1, None, None),
        name="np.trace",
    )
    refuse_out("np.trace", p)
    if differentiable(a):
        refuse_integer_dtype("np.trace", p)
    shape = np.shape(a)

    def trace_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,)) + (NO_TANGENT,) * len(args)
        g = _trace_grad(dy, shape, p["offset"], p["axis1"], p["axis2"])
        return (finalize(g, a),) + (NO_TANGENT,) * len(args)

    return y, trace_pullback


def _linalg_trace_rrule(x, /, *, offset=0, dtype=None):
    y = np.linalg.trace(x, offset=offset, dtype=dtype)
    shape = np.shape(x)

    def trace_pullback(dy):
        if dy is ZERO:
            return zeros_for((x,))
        return (finalize(_trace_grad(dy, shape, offset, -2, -1), x),)

    return y, trace_pullback


def _vecdot_rule(fn):
    def vecdot_rrule(x1, x2, /, **kwargs):
        y = fn(x1, x2, **kwargs)
        axis = kwargs.get("axis", -1)
        if "axes" in kwargs:
            raise UnsupportedCallError(
                "pullback: vecdot(..., axes=...) has no rule.\nFix: pass axis= (the axis "
                "both arguments are summed over)."
            )

        def vecdot_pullback(dy):
            if dy is ZERO:
                return zeros_for((x1, x2))
            g = np.expand_dims(as_array(densify(dy)), axis)
            # y = sum(conj(x1) * x2): dx1 = x2 * conj(dy), dx2 = x1 * dy.
            return finalize(as_array(x2) * conj(g), x1), finalize(as_array(x1) * g, x2)

        return y, vecdot_pullback

    return vecdot_rrule


def _multi_dot_rrule(arrays, **kwargs):
    y = np.linalg.multi_dot(arrays, **kwargs)
    mats = [as_array(m) for m in arrays]
    first_vec = mats[0].ndim == 1
    last_vec = mats[-1].ndim == 1
    if first_vec:
        mats[0] = mats[0][None, :]
    if last_vec:
        mats[-1] = mats[-1][:, None]

    def multi_dot_pullback(dy):
        if dy is ZERO:
            return (ZERO,)
        g = as_array(densify(dy))
        g = np.reshape(g, (mats[0].shape[0], mats[-1].shape[1]))
        n = len(mats)
        # prefix[i] = M0 ... M(i-1), suffix[i] = M(i+1) ... M(n-1)
        prefix = [None] * n
        suffix = [None] * n
        acc = None
        for i in range(n):
            prefix[i] = acc
            acc = mats[i] if acc is None else acc @ mats[i]
        acc = None
        for i in range(n - 1, -1, -1):
            suffix[i] = acc
            acc = mats[i] if acc is None else mats[i] @ acc
        out = []
        for i in range(n):
            d = g
            if suffix[i] is not None:
                d = d @ _t(conj(suffix[i]))
            if prefix[i] is not None:
                d = _t(conj(prefix[i])) @ d
            out.append(finalize_like(d, arrays[i]))
        return (type(arrays)(out) if isinstance(arrays, (list, tuple)) else out,)

    return y, multi_dot_pullback


def register(reg):
    r = Registrar(reg, FAMILY)
    r.rule(np.matmul, _matmul_rrule)
    r.rule(np.dot, _dot_rrule)
    r.rule(np.vdot, _vdot_rrule)
    r.rule(np.inner, _inner_rrule)
    r.rule(np.outer, _outer_rrule)
    r.rule(np.tensordot, _tensordot_rrule)
    r.rule(np.einsum, _einsum_rrule)
    r.rule(np.kron, _kron_rrule)
    r.rule(np.cross, _cross_rrule, notes="3-vectors only")
    r.rule(np.trace, _trace_rrule)
    r.rule(np.linalg.multi_dot, _multi_dot_rrule)
    if hasattr(np, "vecdot"):
        r.rule(np.vecdot, _vecdot_rule(np.vecdot))
    la = np.linalg
    if hasattr(la, "vecdot"):
        r.rule(la.vecdot, _vecdot_rule(la.vecdot))
    if hasattr(la, "matmul") and la.matmul is not np.matmul:
        r.rule(la.matmul, _matmul_rrule_for(la.matmul))
    if hasattr(la, "outer"):
        r.rule(la.outer, _linalg_outer_rrule)
    if hasattr(la, "tensordot"):
        r.rule(la.tensordot, _linalg_tensordot_rrule)
    if hasattr(la, "trace"):
        r.rule(la.trace, _linalg_trace_rrule)
    if hasattr(la, "cross"):
        r.rule(la.cross, _linalg_cross_rrule, notes="3-vectors only")
    # Their pullbacks as transformable functions (second derivatives).
    register_pullbacks(reg, FAMILY)


def _matmul_rrule_for(fn):
    def matmul_rrule(x1, x2, /):
        y = fn(x1, x2)
        _, back = _matmul_rrule(x1, x2)
        return y, back

    return matmul_rrule
