"""Reductions and scans: sum, prod, mean, average, var, std, max/min, ptp, median,
percentile/quantile, cumsum/cumprod and the nan-ignoring versions.

Every rule takes its optional parameters positionally or by name, as NumPy does, and
returns ``NO_TANGENT`` for the positional ones (``axis``, ``dtype``, ``ddof``...).
``out=`` is not supported (a rule never writes into its arguments).

Choices where the function is not differentiable:

* ``max``/``min``/``amax``/``amin``/``nanmax``/``nanmin``/``ptp``: the cotangent is split
  equally among the elements equal to the extreme (an ``initial=`` equal to it included).
* ``median``/``percentile``/``quantile``: ties are broken by a stable sort, so the
  cotangent of a tied order statistic goes to one of the tied elements.
* ``std`` of constant data (a length-1 axis included): 0, the subgradient of least norm
  (the derivative of ``sqrt`` at 0 is infinite; JAX and autograd give NaN there).
* ``nan*`` functions give NaN elements a zero cotangent, and every ``where=`` gives the
  elements it masks a zero cotangent.
"""

from __future__ import annotations

import numpy as np

from ._util import (
    NO_TANGENT,
    ZERO,
    Registrar,
    as_array,
    axes_last,
    bind,
    conj,
    densify,
    differentiable,
    dy_parts,
    expand_reduced,
    finalize,
    normalize_axis,
    refuse_integer_dtype,
    refuse_out,
)

FAMILY = "numpy_reductions"

_SUM_PARAMS = ("axis", "dtype", "out", "keepdims")
_SUM_DEFAULTS = (None, None, None, False)
# sum, prod, nansum, nanprod: (a, axis, dtype, out, keepdims, initial, where).
_FULL_SUM_PARAMS = _SUM_PARAMS + ("initial", "where")
_FULL_SUM_DEFAULTS = _SUM_DEFAULTS + (None, True)
_EXTREME = ("axis", "out", "keepdims")
_EXTREME_DEFAULTS = (None, None, False)
_EXTREME_FULL = _EXTREME + ("initial", "where")
_EXTREME_FULL_DEFAULTS = _EXTREME_DEFAULTS + (None, True)


def _no_out(name, p, x):
    """Refuse out= and, for float data, an integer dtype= (which rounds them first)."""
    refuse_out(name, p)
    if differentiable(x):
        refuse_integer_dtype(f"np.{name}", p)


def _count(shape, axis):
    n = 1
    for a in normalize_axis(axis, len(shape)):
        n *= shape[a]
    return n


def _rest(args):
    return (NO_TANGENT,) * len(args)


def _with_initial(args, cot_x, dy, factor):
    """The cotangents of a sum or product's arguments: ``cot_x`` for the data, and for an
    ``initial`` given positionally as a float (``args[4]``), ``sum(dy * conj(factor))``
    (``factor``: d y / d initial, 1 for a sum and the product of the data for a product);
    the other options get ``NO_TANGENT``."""
    rest = list(_rest(args))
    if len(args) > 4 and differentiable(args[4]):
        d = densify(dy) if factor is None else densify(dy) * conj(factor)
        rest[4] = finalize(d, args[4])
    return (cot_x,) + tuple(rest)


def _sum_rrule(x, *args, **kwargs):
    y = np.sum(x, *args, **kwargs)
    p = bind(args, kwargs, _FULL_SUM_PARAMS, _FULL_SUM_DEFAULTS, name="np.sum")
    _no_out("sum", p, x)
    shape = np.shape(x)
    where = p["where"]

    def sum_pullback(dy):
        if dy is ZERO:
            return (ZERO,) + _rest(args)
        g = expand_reduced(dy, shape, p["axis"], p["keepdims"])
        if where is not True:
            g = np.where(where, g, np.zeros_like(g))
        return _with_initial(args, finalize(g, x), dy, None)

    return y, sum_pullback


def _mean_rrule(x, *args, **kwargs):
    y = np.mean(x, *args, **kwargs)
    p = bind(args, kwargs, _SUM_PARAMS, _SUM_DEFAULTS, name="np.mean", known=("where",))
    _no_out("mean", p, x)
    shape = np.shape(x)
    where = kwargs.get("where", True)
    if where is True:
        count = _count(shape, p["axis"])
    else:
        count = np.sum(np.broadcast_to(where, shape), axis=p["axis"], keepdims=True)

    def mean_pullback(dy):
        if dy is ZERO:
            return (ZERO,) + _rest(args)
        g = expand_reduced(dy, shape, p["axis"], p["keepdims"]) / count
        if where is not True:
            g = np.where(where, g, np.zeros_like(g))
        return (finalize(g, x),) + _rest(args)

    return y, mean_pullback


def _others_product(xa, axes):
    """For each element, the product of the other elements along ``axes`` (exact with 0s)."""
    moved, lead, flat, last = axes_last(xa, axes)
    if flat.shape[-1] == 0 or flat.size == 0:
        return np.zeros_like(xa)
    ones = np.ones(lead + (1,), dtype=flat.dtype)
    left = np.concatenate([ones, np.cumprod(flat, axis=-1)[..., :-1]], axis=-1)
    rev = np.flip(flat, axis=-1)
    right = np.flip(np.concatenate([ones, np.cumprod(rev, axis=-1)[..., :-1]], axis=-1), axis=-1)
    others = np.reshape(left * right, moved.shape)
    return np.moveaxis(others, last, axes)


def _prod_rrule(x, *args, **kwargs):
    y = np.prod(x, *args, **kwargs)
    p = bind(args, kwargs, _FULL_SUM_PARAMS, _FULL_SUM_DEFAULTS, name="np.prod")
    _no_out("prod", p, x)
    shape = np.shape(x)
    initial, where = p["initial"], p["where"]

    def prod_pullback(dy):
        if dy is ZERO:
            return (ZERO,) + _rest(args)
        xa = as_array(x)
        kept = xa if where is True else np.where(where, xa, np.ones_like(xa))  # masked: 1
        others = _others_product(kept, normalize_axis(p["axis"], xa.ndim))
        if initial is not None:
            others = others * initial
        g = expand_reduced(dy, shape, p["axis"], p["keepdims"]) * conj(others)
        if where is not True:
            g = np.where(where, g, np.zeros_like(g))
        data = np.prod(kept, axis=p["axis"], keepdims=p["keepdims"])  # d y / d initial
        return _with_initial(args, finalize(g, x), dy, data)

    return y, prod_pullback


def _extreme_weights(x, y, axis, keepdims, valid=None, initial=None):
    """1/k on the k elements equal to the reduced extreme, 0 elsewhere, and the share of an
    ``initial`` equal to the extreme (it counts as one of the k), shaped like a reduction
    with keepdims."""
    shape = np.shape(x)
    yk = expand_reduced(y, shape, axis, keepdims)
    mask = as_array(x) == yk
    if valid is not None:
        mask = mask & valid
    counts = np.sum(mask, axis=axis, keepdims=True)
    won = 0.0
    if initial is not None:
        won = np.asarray(np.reshape(y, np.shape(counts)) == initial, dtype=np.float64)
    total = np.maximum(counts + won, 1)
    return mask / total, won / total


def _extreme_rule(reducer, nan):
    """max/min/amax/amin (and nanmax/nanmin, ``nan``: NaNs left out): ties, ``initial``
    included, share the cotangent equally; the elements ``where=`` masks get none."""
    name = reducer.__name__

    def extreme_rrule(x, *args, **kwargs):
        y = reducer(x, *args, **kwargs)
        p = bind(args, kwargs, _EXTREME_FULL, _EXTREME_FULL_DEFAULTS, name=f"np.{name}")
        _no_out(name, p, x)
        shape = np.shape(x)

        def extreme_pullback(dy):
            if dy is ZERO:
                return (ZERO,) + _rest(args)
            valid = np.broadcast_to(p["where"], shape)
            if nan:
                valid = valid & ~np.isnan(x)
            w, w_initial = _extreme_weights(x, y, p["axis"], p["keepdims"], valid, p["initial"])
            g = expand_reduced(dy, shape, p["axis"], p["keepdims"]) * w
            rest = list(_rest(args))
            if len(args) > 3 and differentiable(args[3]):  # initial, given positionally
                d = np.reshape(as_array(densify(dy)), np.shape(w_initial)) * w_initial
                rest[3] = finalize(d, args[3])
            return (finalize(g, x),) + tuple(rest)

        extreme_pullback.__name__ = f"{name}_pullback"
        return y, extreme_pullback

    extreme_rrule.__name__ = f"{name}_rrule"
    return extreme_rrule


def _ptp_rrule(x, *args, **kwargs):
    y = np.ptp(x, *args, **kwargs)
    p = bind(args, kwargs, _EXTREME, _EXTREME_DEFAULTS, name="np.ptp")
    _no_out("ptp", p, x)
    shape = np.shape(x)
    axis = p["axis"]
    hi = np.max(x, axis=axis, keepdims=True)
    lo = np.min(x, axis=axis, keepdims=True)

    def ptp_pullback(dy):
        if dy is ZERO:
            return (ZERO,) + _rest(args)
        w = _extreme_weights(x, hi, axis, True)[0] - _extreme_weights(x, lo, axis, True)[0]
        g = expand_reduced(dy, shape, axis, p["keepdims"]) * w
        return (finalize(g, x),) + _rest(args)

    return y, ptp_pullback


_VAR_PARAMS = ("axis", "dtype", "out", "ddof", "keepdims")
# std is not differentiable at constant data (a length-1 axis included): there JAX and
# autograd give NaN (sqrt' = inf times 0). pullback gives 0, the subgradient of least norm
# (std is a scaled norm of x - mean), which central differences also give.
_STD_NOTE = "constant data (e.g. a length-1 axis) -> subgradient 0"
_VAR_DEFAULTS = (None, None, None, 0, False)
_VAR_KNOWN = ("where", "mean", "correction")  # read by the rule itself


def _moments(fn, nan):
    """Rules for var/std (``nan``: ignoring NaNs)."""
    name = fn.__name__
    is_std = name.endswith("std")

    def moment_rrule(x, *args, **kwargs):
        y = fn(x, *args, **kwargs)
        p = bind(args, kwargs, _VAR_PARAMS, _VAR_DEFAULTS, name=f"np.{name}", known=_VAR_KNOWN)
        _no_out(name, p, x)
        ddof = kwargs.get("correction", p["ddof"])
        axis = p["axis"]
        shape = np.shape(x)
        where = kwargs.get("where", True)
        given_mean = kwargs.get("mean")  # a constant: PB502 refuses a differentiated one

        def moment_pullback(dy):
            if dy is ZERO:
                return (ZERO,) + _rest(args)
            xa = as_array(x)
            if xa.size == 0:  # nothing to differentiate (and no count to divide by)
                return (finalize(np.zeros(shape, xa.dtype), x),) + _rest(args)
            if nan or where is not True:
                valid = np.broadcast_to(where, shape)
                if nan:
                    valid = valid & ~np.isnan(xa)
                n = np.sum(valid, axis=axis, keepdims=True)
                xz = np.where(valid, xa, np.zeros_like(xa))
                m = np.sum(xz, axis=axis, keepdims=True) / n if given_mean is None else given_mean
                centered = np.where(valid, xa - m, 0.0)
            else:
                n = _count(shape, axis)
                m = np.mean(xa, axis=axis, keepdims=True) if given_mean is None else given_mean
                centered = xa - m
            g = expand_reduced(dy, shape, axis, p["keepdims"])
            # d var = 2 Re(conj(x - mean) dx) / (n - ddof); the mean's variation cancels.
            factor = 2.0 / np.float64(n - ddof)  # n == ddof: NaN, as the primal
            rest = _rest(args)
            if len(args) > 3 and not isinstance(ddof, (int, np.integer)):
                # A float ddof given by position: var = S / (n - ddof) moves by
                # var / (n - ddof) per unit of it, std by half of std / (n - ddof).
                # (dy * y in the output's shape; a count per output element in n's)
                spread = dy * y if np.ndim(n) == 0 else np.reshape(dy * y, np.shape(n))
                d_ddof = np.sum(spread * (0.5 if is_std else 1.0) / (n - ddof))
                rest = rest[:3] + (d_ddof,) + rest[4:]
            if is_std:
                s = expand_reduced(y, shape, axis, p["keepdims"])
                # std = sqrt(var): divide by 2 std; constant data (std 0) gets 0.
                factor = np.where(s == 0, 0.0, factor / (2.0 * np.where(s == 0, 1.0, s)))
            return (finalize(g * factor * centered, x),) + rest

        return y, moment_pullback

    moment_rrule.__name__ = f"{name}_rrule"
    return moment_rrule


def _average_rrule(a, *args, **kwargs):
    y = np.average(a, *args, **kwargs)
    p = bind(
        args,
        kwargs,
        ("axis", "weights", "returned"),
        (None, None, False),
        name="np.average",
        known=("keepdims",),
    )
    axis, w, returned = p["axis"], p["weights"], p["returned"]
    keepdims = kwargs.get("keepdims", False) is True
    shape = np.shape(a)
    avg = y[0] if returned else y
    w_positional = len(args) >= 2 and w is not None and differentiable(w)
    # weights= by keyword: its cotangent in a dict after the positional ones
    # (rule.extra["keyword_cotangents"]: np.average(xs, weights=ws) with ws varied)
    w_keyword = "weights" in kwargs and w is not None and differentiable(w)
    if w is None:
        count = _count(shape, axis)
    else:
        wa = as_array(w)
        if wa.shape != shape:  # 1-d weights along one axis
            bshape = [1] * len(shape)
            bshape[axis % len(shape)] = wa.shape[0]
            wb = np.reshape(wa, bshape)
        else:
            wb = wa
        scl = np.sum(np.broadcast_to(wb, shape), axis=axis, keepdims=True)

    def average_pullback(dy):
        d_avg, d_scl = dy_parts(dy, 2) if returned else (dy, ZERO)
        rest = list(_rest(args))
        da = ZERO
        dwb = ZERO
        if d_avg is not ZERO:
            if w is None:
                da = finalize(expand_reduced(d_avg, shape, axis, keepdims) / count, a)
            else:
                g = expand_reduced(d_avg, shape, axis, keepdims) / scl
                da = finalize(g * conj(wb), a)
                centered = as_array(a) - expand_reduced(avg, shape, axis, keepdims)
                dwb = g * conj(centered)  # d avg / d w_j = (a_j - avg) / sum(w)
        if d_scl is not ZERO and w is not None:
            dwb = dwb + expand_reduced(d_scl, shape, axis, keepdims)
        dw = ZERO
        if (w_positional or w_keyword) and dwb is not ZERO:
            dw = finalize(_sum_to_weights(dwb, wa, shape, axis), w)
        if w_positional:
            rest[1] = dw
        if not differentiable(a):
            da = NO_TANGENT
        if w_keyword:
            return (da,) + tuple(rest) + ({"weights": dw},)
        return (da,) + tuple(rest)

    return y, average_pullback


def _sum_to_weights(dwb, wa, shape, axis):
    dwb = np.broadcast_to(dwb, shape)
    if wa.shape == tuple(shape):
        return dwb
    ax = axis % len(shape)
    others = tuple(k for k in range(len(shape)) if k != ax)
    return np.sum(dwb, axis=others)


# -- scans ---------------------------------------------------------------------------------
def _reverse_cumsum(g, axis):
    return np.flip(np.cumsum(np.flip(g, axis=axis), axis=axis), axis=axis)


def _cumulative_sum_rrule(fn, skip_nan):
    """The rule of cumsum (and of nancumsum, whose NaNs count as 0 and get no gradient)."""
    name = fn.__name__

    def cumulative_sum_rrule(x, *args, **kwargs):
        y = fn(x, *args, **kwargs)
        p = bind(args, kwargs, ("axis", "dtype", "out"), (None, None, None), name=f"np.{name}")
        _no_out(name, p, x)
        shape = np.shape(x)

        def cumulative_sum_pullback(dy):
            if dy is ZERO:
                return (ZERO,) + _rest(args)
            g = as_array(densify(dy))
            if p["axis"] is None:
                g = np.reshape(_reverse_cumsum(g, 0), shape)
            else:
                g = _reverse_cumsum(g, p["axis"])
            if skip_nan:
                g = np.where(np.isnan(x), np.zeros_like(g), g)
            return (finalize(g, x),) + _rest(args)

        cumulative_sum_pullback.__name__ = f"{name}_pullback"
        return y, cumulative_sum_pullback

    cumulative_sum_rrule.__name__ = f"{name}_rrule"
    return cumulative_sum_rrule


_cumsum_rrule = _cumulative_sum_rrule(np.cumsum, skip_nan=False)
_nancumsum_rrule = _cumulative_sum_rrule(np.nancumsum, skip_nan=True)


def _cumprod_grad(x, y, g, axis):
    """The cotangent of cumprod along ``axis`` (x, y, g have the same shape)."""
    if np.all(x != 0):
        return _reverse_cumsum(g * conj(y), axis) / conj(x)
    # With zeros: dx_i = sum_{j >= i} g_j * prod_{k <= j, k != i} x_k, built from
    # L_i = prod_{k < i} x_k and C_ij = prod_{i < k <= j} x_k.
    xm = np.moveaxis(x, axis, -1)
    gm = np.moveaxis(g, axis, -1)
    n = xm.shape[-1]
    ones = np.ones(xm.shape[:-1] + (1,), dtype=xm.dtype)
    left = np.concatenate([ones, np.cumprod(xm, axis=-1)[..., :-1]], axis=-1)
    i = np.arange(n)[:, None]
    k = np.arange(n)[None, :]
    xs = np.where(k > i, xm[..., None, :], np.ones_like(xm[..., None, :]))  # (..., i, k)
    c = np.cumprod(xs, axis=-1)  # C_ij
    c = np.where(k >= i, c, np.zeros_like(c))
    dx = conj(left) * np.sum(conj(c) * gm[..., None, :], axis=-1)
    return np.moveaxis(dx, -1, axis)


def _cumprod_rrule(x, *args, **kwargs):
    y = np.cumprod(x, *args, **kwargs)
    p = bind(args, kwargs, ("axis", "dtype", "out"), (None, None, None), name="np.cumprod")
    _no_out("cumprod", p, x)
    shape = np.shape(x)

    def cumprod_pullback(dy):
        if dy is ZERO:
            return (ZERO,) + _rest(args)
        g = as_array(densify(dy))
        xa = as_array(x)
        if p["axis"] is None:
            gx = np.reshape(_cumprod_grad(np.ravel(xa), y, g, 0), shape)
        else:
            gx = _cumprod_grad(xa, y, g, p["axis"] % max(xa.ndim, 1))
        return (finalize(gx, x),) + _rest(args)

    return y, cumprod_pullback


def _cumulative_rrule(fn, base):
    """numpy 2's cumulative_sum/cumulative_prod (keyword-only options, include_initial)."""
    name = fn.__name__

    def cumulative_rrule(x, **kwargs):
        y = fn(x, **kwargs)
        axis = kwargs.get("axis")
        if axis is None and np.ndim(x) > 1:
            raise ValueError("axis is required for arrays of more than one dimension")
        axis = 0 if axis is None else axis
        include = kwargs.get("include_initial", False)
        xa = as_array(x)

        def cumulative_pullback(dy):
            if dy is ZERO:
                return (ZERO,)
            g = as_array(densify(dy))
            if include:  # drop the initial element's cotangent (it is constant)
                g = np.take(g, np.arange(1, g.shape[axis]), axis=axis)
            if base == "sum":
                gx = _reverse_cumsum(g, axis)
            else:
                ys = np.cumprod(xa, axis=axis)
                gx = _cumprod_grad(xa, ys, g, axis % max(xa.ndim, 1))
            return (finalize(gx, x),)

        return y, cumulative_pullback

    cumulative_rrule.__name__ = f"{name}_rrule"
    return cumulative_rrule


# -- nan versions --------------------------------------------------------------------------
def _nan_reduction_rrule(fn, weights):
    """The rule of a nan-reduction: NaNs and the elements ``where=`` masks are left out,
    and get no gradient (``initial=`` is a constant term or factor).

    ``weights(x, p, skip)`` gives the derivative of the reduction with respect to each
    element (before the cotangent is spread back over the reduced axes).
    """
    name = fn.__name__

    def nan_reduction_rrule(x, *args, **kwargs):
        y = fn(x, *args, **kwargs)
        p = bind(args, kwargs, _FULL_SUM_PARAMS, _FULL_SUM_DEFAULTS, name=f"np.{name}")
        _no_out(name, p, x)
        shape = np.shape(x)

        def nan_reduction_pullback(dy):
            if dy is ZERO:
                return (ZERO,) + _rest(args)
            skip = np.isnan(x) | np.logical_not(p["where"])
            g = expand_reduced(dy, shape, p["axis"], p["keepdims"]) * weights(x, p, skip)
            g = np.where(skip, np.zeros_like(g), g)
            data = None  # d y / d initial: 1 for nansum, the product of the data for nanprod
            if name == "nanprod" and len(args) > 4:
                data = fn(x, p["axis"], keepdims=p["keepdims"], where=p["where"])
            return _with_initial(args, finalize(g, x), dy, data)

        nan_reduction_pullback.__name__ = f"{name}_pullback"
        return y, nan_reduction_pullback

    nan_reduction_rrule.__name__ = f"{name}_rrule"
    return nan_reduction_rrule


def _nansum_weights(x, p, skip):
    return 1.0


def _nanmean_weights(x, p, skip):
    return 1.0 / np.sum(~skip, axis=p["axis"], keepdims=True)


def _nanprod_weights(x, p, skip):
    xa = as_array(x)
    filled = np.where(skip, np.ones_like(xa), xa)
    others = _others_product(filled, normalize_axis(p["axis"], xa.ndim))
    if p["initial"] is not None:
        others = others * p["initial"]
    return conj(others)


_nansum_rrule = _nan_reduction_rrule(np.nansum, _nansum_weights)
_nanmean_rrule = _nan_reduction_rrule(np.nanmean, _nanmean_weights)
_nanprod_rrule = _nan_reduction_rrule(np.nanprod, _nanprod_weights)


def register(reg):
    r = Registrar(reg, FAMILY)
    r.rule(np.sum, _sum_rrule)
    r.rule(np.mean, _mean_rrule)
    r.rule(np.prod, _prod_rrule, notes="exact where x has zeros")
    r.rule(np.average, _average_rrule).extra["keyword_cotangents"] = ("weights",)
    r.rule(np.var, _moments(np.var, nan=False))
    r.rule(np.std, _moments(np.std, nan=False), notes=_STD_NOTE)
    r.rule(np.nanvar, _moments(np.nanvar, nan=True))
    r.rule(np.nanstd, _moments(np.nanstd, nan=True), notes=_STD_NOTE)
    for fn in (np.max, np.min, np.amax, np.amin):
        r.rule(fn, _extreme_rule(fn, nan=False), notes="ties split the cotangent equally")
    for fn in (np.nanmax, np.nanmin):
        r.rule(fn, _extreme_rule(fn, nan=True), notes="ties split the cotangent equally")
    r.rule(np.ptp, _ptp_rrule, notes="ties split the cotangent equally")
    r.rule(np.cumsum, _cumsum_rrule)
    r.rule(np.cumprod, _cumprod_rrule, notes="exact where x has zeros")
    r.rule(np.nancumsum, _nancumsum_rrule)
    r.rule(np.nansum, _nansum_rrule)
    r.rule(np.nanmean, _nanmean_rrule)
    r.rule(np.nanprod, _nanprod_rrule)
    if hasattr(np, "cumulative_sum"):
        r.rule(np.cumulative_sum, _cumulative_rrule(np.cumulative_sum, "sum"))
        r.rule(np.cumulative_prod, _cumulative_rrule(np.cumulative_prod, "prod"))
    # Their pullbacks as transformable functions (second derivatives); the order statistics
    # (median, quantile, percentile and their nan forms) register their rules there too.
    from .numpy_order_stats_pullbacks import register as register_order_stats
    from .numpy_reductions_pullbacks import register_pullbacks

    register_pullbacks(reg)
    register_order_stats(reg, r)
