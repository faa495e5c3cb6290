"""Other NumPy functions: full, full_like, linspace, meshgrid, bincount, diff, gradient,
interp, convolve, correlate, polyval, trapezoid, cov and corrcoef (numpy_misc_covariance.py),
ediff1d and unwrap (numpy_misc_sequences.py).

Choices where a function is not differentiable:

* ``interp`` at a knot: the slope of the segment to the right (of the last segment at
  the last knot); outside ``[xp[0], xp[-1]]`` the value is constant in ``x``.
* ``gradient`` with coordinate arrays: their cotangent is computed by complex-step
  probing of ``np.gradient`` itself (exact to rounding, but not itself differentiable).
* ``cov``/``corrcoef`` with ``fweights``/``aweights`` have no rule.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedCallError
from . import numpy_misc_gradient, numpy_misc_pullbacks, numpy_misc_sequences
from ._util import (
    NO_TANGENT,
    ZERO,
    Registrar,
    bind,
    conj,
    densify,
    differentiable,
    dy_parts,
    finalize,
    finalize_like,
    segment_sum,
    zeros_for,
)
from .family_domains import DOMAINS
from .numpy_misc_covariance import corrcoef_rrule, cov_rrule
from .numpy_misc_gradient import band_transpose, gradient_band

FAMILY = "numpy_misc"
# Registered on the first lookup of one of its functions (family_domains.py).
DOMAIN = DOMAINS["numpy_misc"]


def _rest(args):
    return (NO_TANGENT,) * len(args)


def _float_output(y):
    return np.result_type(y).kind in "fc"


def _full_rrule(shape, fill_value, *args, **kwargs):
    y = np.full(shape, fill_value, *args, **kwargs)

    def full_pullback(dy):
        if dy is ZERO or not _float_output(y):
            return (NO_TANGENT,) + zeros_for((fill_value,)) + _rest(args)
        return (NO_TANGENT, finalize(densify(dy), fill_value)) + _rest(args)

    return y, full_pullback


def _full_like_rrule(a, fill_value, *args, **kwargs):
    y = np.full_like(a, fill_value, *args, **kwargs)

    def full_like_pullback(dy):
        # The values of a do not matter, only its shape and dtype.
        a_cot = ZERO if differentiable(a) else NO_TANGENT
        if dy is ZERO or not _float_output(y):
            return (a_cot,) + zeros_for((fill_value,)) + _rest(args)
        return (a_cot, finalize(densify(dy), fill_value)) + _rest(args)

    return y, full_like_pullback


def _linspace_rrule(start, stop, *args, **kwargs):
    y = np.linspace(start, stop, *args, **kwargs)
    p = bind(
        args,
        kwargs,
        ("num", "endpoint", "retstep", "dtype", "axis"),
        (50, True, False, None, 0),
        name="np.linspace",
        known=("device",),
    )
    num, axis = int(p["num"]), p["axis"]
    div = (num - 1) if p["endpoint"] else num
    t = np.arange(num) / div if div > 0 else np.zeros(num)
    samples = y[0] if p["retstep"] else y

    def linspace_pullback(dy):
        d_samples, d_step = dy_parts(dy, 2) if p["retstep"] else (dy, ZERO)
        if not _float_output(samples) or (d_samples is ZERO and d_step is ZERO):
            return zeros_for((start, stop)) + _rest(args)
        d_start = ZERO
        d_stop = ZERO
        if d_samples is not ZERO:
            g = np.moveaxis(np.asarray(densify(d_samples)), axis, 0)
            d_start = np.tensordot(1.0 - t, g, axes=1)
            d_stop = np.tensordot(t, g, axes=1)
        if d_step is not ZERO and div > 0:
            s = np.asarray(densify(d_step)) / div
            d_start = d_start - s
            d_stop = d_stop + s
        return (finalize(d_start, start), finalize(d_stop, stop)) + _rest(args)

    return y, linspace_pullback


def _meshgrid_rrule(*xi, **kwargs):
    y = np.meshgrid(*xi, **kwargs)
    n = len(xi)
    xy = kwargs.get("indexing", "xy") == "xy" and n >= 2

    def meshgrid_pullback(dy):
        parts = dy_parts(dy, n)
        out = []
        for k, (g, x) in enumerate(zip(parts, xi, strict=True)):
            if g is ZERO:
                out.append(ZERO if differentiable(x) else NO_TANGENT)
                continue
            g = np.asarray(densify(g))
            keep = (1 - k if k < 2 else k) if xy else k
            others = tuple(d for d in range(g.ndim) if d != keep)
            out.append(finalize_like(np.sum(g, axis=others), x))
        return tuple(out)

    return y, meshgrid_pullback


def _bincount_rrule(x, *args, **kwargs):
    y = np.bincount(x, *args, **kwargs)
    weights = bind(args, kwargs, ("weights", "minlength"), (None, 0), name="np.bincount")["weights"]

    def bincount_pullback(dy):
        rest = list(_rest(args))
        if args and args[0] is not None:
            rest[0] = ZERO if dy is ZERO else finalize(np.take(densify(dy), x), weights)
        return (NO_TANGENT,) + tuple(rest)

    return y, bincount_pullback


# -- diff and gradient ---------------------------------------------------------------------
def _diff_transpose(g, axis):
    """The adjoint of ``np.diff`` along ``axis``: ``-diff(pad(g, 1))``."""
    g = np.asarray(g)
    zshape = list(g.shape)
    zshape[axis] = 1
    z = np.zeros(zshape, dtype=g.dtype)
    return -np.diff(np.concatenate([z, g, z], axis=axis), axis=axis)


def _diff_rrule(a, *args, **kwargs):
    y = np.diff(a, *args, **kwargs)
    p = bind(args, kwargs, ("n", "axis", "prepend", "append"), (1, -1, None, None), name="np.diff")
    n, axis = p["n"], p["axis"]
    nd = max(np.ndim(a), 1)
    ax = axis % nd
    shape = np.shape(a)

    def edge_len(v):
        if v is None:
            return 0
        return np.shape(v)[ax] if np.ndim(v) == nd else 1

    n_pre, n_app = edge_len(p["prepend"]), edge_len(p["append"])
    # prepend=/append= by keyword (np.diff(u, prepend=u[0])): their cotangents follow the
    # positional ones in a dict (rule.extra["keyword_cotangents"])
    passed = [k for k in ("prepend", "append") if kwargs.get(k) is not None]

    def diff_pullback(dy):
        if dy is ZERO:
            zeros = zeros_for((a,) + args)
            return zeros + ({k: zeros_for((kwargs[k],))[0] for k in passed},) if passed else zeros
        g = np.asarray(densify(dy))
        for _ in range(n):
            g = _diff_transpose(g, ax)
        total = g.shape[ax]
        index = [slice(None)] * g.ndim
        index[ax] = slice(n_pre, total - n_app)
        out = [finalize(g[tuple(index)], a)]
        for k, value in enumerate(args):
            if k == 2 and value is not None:  # prepend
                index[ax] = slice(0, n_pre)
                out.append(finalize(g[tuple(index)], value))
            elif k == 3 and value is not None:  # append
                index[ax] = slice(total - n_app, total)
                out.append(finalize(g[tuple(index)], value))
            else:
                out.append(NO_TANGENT)
        if len(shape) == 0:
            out[0] = NO_TANGENT
        if not passed:
            return tuple(out)
        keyword = {}
        if "prepend" in passed:
            index[ax] = slice(0, n_pre)
            keyword["prepend"] = finalize(g[tuple(index)], kwargs["prepend"])
        if "append" in passed:
            index[ax] = slice(total - n_app, total)
            keyword["append"] = finalize(g[tuple(index)], kwargs["append"])
        return (*out, keyword)

    return y, diff_pullback


def _coordinate_cotangent(f, coords, g, axis, edge_order):
    """Cotangent of the coordinates of ``gradient(f, coords, axis=axis)`` by complex steps."""
    n = coords.shape[0]
    eps = 1e-30 * max(1.0, float(np.max(np.abs(coords))))
    fc = np.asarray(f) + 0j
    others = tuple(d for d in range(np.ndim(f)) if d != axis)
    total = np.zeros(n)
    i = np.arange(n)
    for r in range(5):
        bump = (i % 5 == r) * (1j * eps)
        sens = np.imag(np.gradient(fc, coords + bump, axis=axis, edge_order=edge_order)) / eps
        contrib = np.sum(np.real(conj(g) * sens) if np.iscomplexobj(g) else g * sens, axis=others)
        # contrib[i] belongs to the coordinate j = i + d (|d| <= 2) with j = r (mod 5).
        d = np.mod(r - i + 2, 5) - 2
        total = total + segment_sum(contrib, np.clip(i + d, 0, n - 1), n)
    return total


def _gradient_rrule(f, *varargs, **kwargs):
    y = np.gradient(f, *varargs, **kwargs)
    nd = np.ndim(f)
    axis = kwargs.get("axis")
    axes = (
        tuple(range(nd))
        if axis is None
        else tuple(a % nd for a in ((axis,) if np.ndim(axis) == 0 else axis))
    )
    edge_order = kwargs.get("edge_order", 1)
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacing = [varargs[0]] * len(axes)
    else:
        spacing = list(varargs)
    single = len(axes) == 1

    def gradient_pullback(dy):
        parts = (dy,) if single else dy_parts(dy, len(axes))
        if all(g is ZERO for g in parts):
            return zeros_for((f,) + varargs)
        df = ZERO
        dspace = [ZERO] * len(axes)
        outputs = (y,) if single else y
        for k, (g, ax) in enumerate(zip(parts, axes, strict=True)):
            if g is ZERO:
                continue
            g = np.asarray(densify(g))
            band = gradient_band(np.shape(f)[ax], spacing[k], edge_order)
            df = df + band_transpose(g, band, ax)
            if np.ndim(spacing[k]) == 0:
                # y = gradient_unit(f) / h:  dh = -<y, g> / h
                dspace[k] = -np.sum(np.real(conj(outputs[k]) * g)) / spacing[k]
            else:
                coords = np.asarray(spacing[k], dtype=np.float64)
                dspace[k] = _coordinate_cotangent(f, coords, g, ax, edge_order)
        out = [finalize(df, f) if df is not ZERO else ZERO]
        if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
            total = ZERO
            for d in dspace:
                total = total + d
            out.append(finalize(total, varargs[0]) if total is not ZERO else ZERO)
        else:
            for d, v in zip(dspace, varargs, strict=False):
                if not differentiable(v):
                    out.append(NO_TANGENT)
                else:
                    out.append(ZERO if d is ZERO else finalize(d, v))
        return tuple(out)

    return y, gradient_pullback


# -- interpolation and polynomials ------------------------------------------------------------
def _interp_rrule(x, xp, fp, *args, **kwargs):
    y = np.interp(x, xp, fp, *args, **kwargs)
    p = bind(args, kwargs, ("left", "right", "period"), (None, None, None), name="np.interp")
    if p["period"] is not None:
        raise UnsupportedCallError(
            "pullback: interp(period=...) has no rule.\nFix: wrap the points yourself and "
            "call np.interp without period=: np.interp(np.mod(x, period), "
            "np.concatenate([xp[-1:] - period, xp, xp[:1] + period]), "
            "np.concatenate([fp[-1:], fp, fp[:1]])) for xp sorted within [0, period)."
        )
    xa = np.asarray(x)
    xpa = np.asarray(xp)
    fpa = np.asarray(fp)
    n = xpa.shape[0]

    def interp_pullback(dy):
        if dy is ZERO:
            out = zeros_for((x, xp, fp) + args)
            passed = [n for n in ("left", "right") if kwargs.get(n) is not None]
            return out + ({n: zeros_for((kwargs[n],))[0] for n in passed},) if passed else out
        g = np.asarray(densify(dy))
        below = xa < xpa[0]
        above = xa > xpa[-1]
        inside = ~(below | above)
        zero = np.zeros_like(g)
        if n >= 2:
            j = np.clip(np.searchsorted(xpa, xa, side="right") - 1, 0, n - 2)
            width = xpa[j + 1] - xpa[j]
            slope = (fpa[j + 1] - fpa[j]) / width
            t = (xa - xpa[j]) / width
            gi = np.where(inside, g, zero)
            dx = gi * conj(slope)
            dfp = segment_sum(np.ravel(gi * (1.0 - t)), np.ravel(j), n) + segment_sum(
                np.ravel(gi * t), np.ravel(j + 1), n
            )
            dxp = segment_sum(np.ravel(gi * conj(slope * (t - 1.0))), np.ravel(j), n) + (
                segment_sum(np.ravel(gi * conj(-slope * t)), np.ravel(j + 1), n)
            )
        else:
            dx = zero
            dfp = np.zeros(n, dtype=np.result_type(g, np.float64))
            dxp = np.zeros(n)
        g_below = np.sum(np.where(below, g, zero))
        g_above = np.sum(np.where(above, g, zero))
        onehot_first = np.arange(n) == 0
        onehot_last = np.arange(n) == n - 1
        if p["left"] is None:
            dfp = dfp + onehot_first * g_below
        if p["right"] is None:
            dfp = dfp + onehot_last * g_above
        out = [finalize(dx, x), finalize(dxp, xp), finalize(dfp, fp)]
        for k, v in enumerate(args):
            if k == 0 and v is not None:
                out.append(finalize(g_below, v))
            elif k == 1 and v is not None:
                out.append(finalize(g_above, v))
            else:
                out.append(NO_TANGENT)
        # left=/right= by keyword: theirs in a dict after the positional cotangents
        ends = {"left": g_below, "right": g_above}
        passed = {n: finalize(ends[n], kwargs[n]) for n in ends if kwargs.get(n) is not None}
        return tuple(out) + (passed,) if passed else tuple(out)

    return y, interp_pullback


def _polyval_rrule(p, x):
    y = np.polyval(p, x)
    pa = np.asarray(p)
    n = pa.shape[0]

    def polyval_pullback(dy):
        if dy is ZERO:
            return zeros_for((p, x))
        g = np.asarray(densify(dy))
        xa = np.asarray(x)
        powers = np.arange(n - 1, -1, -1)
        vander = xa[..., None] ** powers  # x.shape + (n,)
        if pa.ndim == 1:
            dp = np.sum(np.reshape(g, g.shape + (1,)) * conj(vander), axis=tuple(range(g.ndim)))
        else:  # coefficient rows broadcast against x: each row summed to its own shape
            dp = np.stack([finalize(g * conj(vander[..., k]), pa[k]) for k in range(n)])
        if n > 1:
            # the derivative's coefficients, scaled row by row (over p's trailing axes too)
            scale = np.reshape(np.arange(n - 1, 0, -1), (n - 1,) + (1,) * (pa.ndim - 1))
            dpoly = pa[:-1] * scale
            dx = g * conj(np.polyval(dpoly, xa))
        else:
            dx = np.zeros_like(g)
        return finalize(dp, p), finalize(dx, x)

    return y, polyval_pullback


def _trapezoid_rrule(y, *args, **kwargs):
    out = np.trapezoid(y, *args, **kwargs)
    p = bind(args, kwargs, ("x", "dx", "axis"), (None, 1.0, -1), name="np.trapezoid")
    x, dx, axis = p["x"], p["dx"], p["axis"]
    ya = np.asarray(y)
    ax = axis % ya.ndim
    yl = np.moveaxis(ya, ax, -1)
    n = yl.shape[-1]
    if x is None:
        dvec = np.full(max(n - 1, 0), dx, dtype=np.result_type(dx, np.float64))
        x_full = False
    else:
        xa = np.asarray(x)
        x_full = xa.ndim != 1
        dvec = np.diff(np.moveaxis(xa, ax, -1) if x_full else xa, axis=-1)

    def trapezoid_pullback(dI):
        if dI is ZERO:
            return zeros_for((y,) + args)
        g = np.asarray(densify(dI))[..., None]
        zero_d = np.zeros(dvec.shape[:-1] + (1,), dtype=dvec.dtype)
        w = np.concatenate([zero_d, dvec], axis=-1) + np.concatenate([dvec, zero_d], axis=-1)
        d_y = np.moveaxis(g * (w / 2.0), -1, ax)
        mids = (yl[..., :-1] + yl[..., 1:]) / 2.0
        rest = list(_rest(args))
        if x is not None and len(args) >= 1:
            zero_m = np.zeros(mids.shape[:-1] + (1,), dtype=mids.dtype)
            dmid = np.concatenate([zero_m, mids], axis=-1) - np.concatenate([mids, zero_m], axis=-1)
            d_x = g * conj(dmid)
            if x_full:
                rest[0] = finalize(np.moveaxis(d_x, -1, ax), x)
            else:
                rest[0] = finalize(np.sum(d_x, axis=tuple(range(d_x.ndim - 1))), x)
        if x is None and len(args) >= 2:
            rest[1] = finalize(np.sum(g[..., 0] * conj(np.sum(mids, axis=-1))), args[1])
        return (finalize(d_y, y),) + tuple(rest)

    return out, trapezoid_pullback


# -- convolution ----------------------------------------------------------------------------
def _conv_offset(n, m, mode, kind):
    k = min(n, m)
    if mode == "full":
        return 0
    if mode == "valid":
        return k - 1
    if kind == "correlate" and n < m:
        return (k - 1) - (k - 1) // 2
    return (k - 1) // 2


def _embed_full(g, length, offset):
    g = np.asarray(densify(g))
    before = np.zeros(offset, dtype=g.dtype)
    after = np.zeros(length - offset - g.shape[0], dtype=g.dtype)
    return np.concatenate([before, g, after])


def _convolve_rrule(a, v, *args, **kwargs):
    y = np.convolve(a, v, *args, **kwargs)
    mode = bind(args, kwargs, ("mode",), ("full",), name="np.convolve")["mode"]
    n, m = np.size(a), np.size(v)

    def convolve_pullback(dy):
        if dy is ZERO:
            return zeros_for((a, v)) + _rest(args)
        g = _embed_full(dy, n + m - 1, _conv_offset(n, m, mode, "convolve"))
        # full[k] = sum_i a[i] v[k - i]; np.correlate conjugates its second argument.
        da = np.correlate(g, np.asarray(v), "valid")
        dv = np.correlate(g, np.asarray(a), "valid")
        return (finalize(da, a), finalize(dv, v)) + _rest(args)

    return y, convolve_pullback


def _correlate_rrule(a, v, *args, **kwargs):
    y = np.correlate(a, v, *args, **kwargs)
    mode = bind(args, kwargs, ("mode",), ("valid",), name="np.correlate")["mode"]
    n, m = np.size(a), np.size(v)

    def correlate_pullback(dy):
        if dy is ZERO:
            return zeros_for((a, v)) + _rest(args)
        g = _embed_full(dy, n + m - 1, _conv_offset(n, m, mode, "correlate"))
        # correlate(a, v) = convolve(a, w) with w = conj(v[::-1]).
        w = conj(np.flip(np.asarray(v)))
        da = np.correlate(g, w, "valid")
        dw = np.correlate(g, np.asarray(a), "valid")
        dv = conj(np.flip(dw))
        return (finalize(da, a), finalize(dv, v)) + _rest(args)

    return y, correlate_pullback


def register(reg):
    r = Registrar(reg, FAMILY)
    r.rule(np.full, _full_rrule)
    r.rule(np.full_like, _full_like_rrule)
    r.rule(np.linspace, _linspace_rrule)
    r.rule(np.meshgrid, _meshgrid_rrule)
    # np.bincount(keys, weights=w) with differentiated weights: moved into place
    # (transform/keyword_positions.py)
    r.rule(np.bincount, _bincount_rrule).extra["positional_names"] = ("x", "weights", "minlength")
    r.rule(np.diff, _diff_rrule).extra["keyword_cotangents"] = ("prepend", "append")
    r.rule(np.gradient, _gradient_rrule)
    r.rule(np.interp, _interp_rrule, notes="at a knot: the slope to the right").extra[
        "keyword_cotangents"
    ] = ("left", "right")
    r.rule(np.polyval, _polyval_rrule)
    if hasattr(np, "trapezoid"):
        r.rule(np.trapezoid, _trapezoid_rrule)
    if hasattr(np, "trapz"):
        r.rule(np.trapz, _trapezoid_rrule)
    r.rule(np.convolve, _convolve_rrule)
    r.rule(np.correlate, _correlate_rrule)
    r.rule(np.cov, cov_rrule, notes="fweights: no cotangent (integers)").extra[
        "keyword_cotangents"
    ] = ("aweights",)
    r.rule(np.corrcoef, corrcoef_rrule)
    # the pullbacks second derivatives run through
    numpy_misc_pullbacks.register(reg)
    numpy_misc_gradient.register(reg, FAMILY)
    numpy_misc_sequences.register(r, reg)
