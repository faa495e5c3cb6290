"""scipy.integrate.quad: the derivative of an integral, by mathematics rather than by
differentiating the quadrature.

For ``I = quad(f, a, b, args=(theta, ...))[0]``:

* the limits by the fundamental theorem of calculus: ``dI/db = f(b)``, ``dI/da = -f(a)``
  (zero for an infinite limit);
* the parameters in ``args`` by differentiating under the integral sign:
  ``dI/dtheta = integral of df/dtheta(x) over [a, b]``, where ``df/dtheta`` is the reverse
  mode of the user's integrand by pullback itself.

The parameter integral is computed, where it can be, on the subintervals ``quad`` itself
ended with (finite limits): one reverse pass of the integrand over all their 21-point
Gauss-Kronrod nodes at once (the scalar parameters spread over the nodes, so each node gets
its own derivative), with the Kronrod-minus-Gauss estimate of each subinterval's error
and bisection until the caller's ``epsabs``/``epsrel`` hold. That needs an integrand that
evaluates elementwise on an array of ``x`` (NumPy arithmetic does); it is checked, because
the same nodes must reproduce the integral ``quad`` returned on each subinterval. Any other
integrand, an infinite limit or an array parameter take the general path: one vjp per
evaluation, integrated with ``quad`` again (``quad_vec`` for several parameters).

Second derivatives: ``scipy_quad_pullbacks.quad_pullback`` is the rule's pullback as a
transformable function (the same numbers, then the Leibniz rule differentiated again).

``quad`` returns ``(value, abserr)``: only the value carries a gradient. Weighted and
``full_output`` calls are refused. Values the integrand reads from globals or closures are
constants: pass what should be differentiated through ``args``.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from ._calculus_util import (
    ArgsPack,
    bound_call,
    call_cotangents,
    refuse_options,
    register_solver,
    user_vjp_of,
)
from ._kronrod import gauss_kronrod21
from ._util import NO_TANGENT, ZERO, Registrar, dy_parts, finalize

FAMILY = "scipy_quad"
REQUIRES = "scipy.integrate"

QUAD_KEYWORDS = ("a", "b", "args")
_REFUSED = {
    "full_output": "its extra outputs describe the quadrature, not the integral",
    "weight": "the weight function's own parameters would need a rule",
}


def _finite(limit) -> bool:
    if type(limit) is float:
        return math.isfinite(limit)
    return (isinstance(limit, (float, np.floating)) or np.ndim(limit) == 0) and bool(
        np.isfinite(limit)
    )


def _fit(g, limit):
    """:func:`finalize` of a limit's cotangent (what it gives for a Python float, without
    its checks: a small integral's gradient costs microseconds)."""
    return np.float64(g) if type(limit) is float else finalize(g, limit)


def _limit_cotangent(g, f, limit, args, sign, value=None):
    """``sign * g * f(limit)`` (the fundamental theorem), zero at an infinite limit
    (``value``: ``f(limit)`` where it is known already)."""
    if not _finite(limit):
        return 0.0
    return sign * g * float(f(limit, *args) if value is None else value)


def parameter_integral(f, a, b, pack, p):
    """``integral of d f(x, *args) / d args`` over ``[a, b]`` as a flat vector."""
    import scipy.integrate as si

    vjp = user_vjp_of(f, tuple(1 + k for k in pack.index))

    def integrand(x):
        _, back = vjp((x,) + pack.args)
        return pack.flatten(back(1.0))

    opts = {"limit": p["limit"]}
    if p.get("points") is not None:
        opts["points"] = p["points"]
    tol = {"epsabs": p["epsabs"], "epsrel": p["epsrel"]}
    if pack.size == 1:
        return np.array([si.quad(lambda x: integrand(x)[0], a, b, **tol, **opts)[0]])
    opts.pop("limit")  # quad_vec has its own subdivision limit
    return si.quad_vec(integrand, a, b, **tol, **opts)[0]


def _is_double(v) -> bool:
    return not (isinstance(v, (np.floating, np.ndarray)) and v.dtype.itemsize < 8)


def _node_derivatives(vjp, pack, xs):
    """``f(xs)`` and ``d f(xs) / d args`` as the columns of one ``(len(xs), 1 + pack.size)``
    array, by one reverse pass with every scalar float parameter spread over the nodes, or
    ``None`` when the integrand does not evaluate elementwise on the array ``xs``."""
    m = xs.size
    args = list(pack.args)
    for k in pack.index:
        args[k] = np.full(m, args[k], dtype=np.float64)
    try:
        y, back = vjp((xs,) + tuple(args))
        if np.shape(y) != (m,) or np.iscomplexobj(y):
            return None
        cots = back(np.ones(m))
        out = np.empty((m, 1 + len(cots)))
        out[:, 0] = y
        for j, c in enumerate(cots):
            if np.iscomplexobj(c):
                return None
            out[:, 1 + j] = c  # (a constant cotangent broadcasts over the nodes)
    except Exception:  # an integrand written for scalars only (math.exp, `if x > 0`, ...)
        return None
    return out


_TINY = np.finfo(float).tiny


@functools.lru_cache(maxsize=1)
def _weights():
    """The Kronrod and Gauss weights of the 21 nodes as the rows of one ``(2, 21)`` array."""
    _, wk, wg = gauss_kronrod21()
    return np.stack((wk, wg))


def _rule_sums(derivs, lo, hi):
    """Per subinterval: the Kronrod sums and the Kronrod-minus-Gauss error estimates of
    node values ``(L * 21, P)`` on the subintervals ``[lo_i, hi_i]`` (one product for both
    rules)."""
    d = np.reshape(derivs, (lo.size, 21, -1))
    sums = np.matmul(_weights(), d) * ((hi - lo) / 2)[:, None, None]  # (L, 2, P)
    k21 = sums[:, 0]
    return k21, np.abs(k21 - sums[:, 1])


def _nodes(lo, hi):
    x, _, _ = gauss_kronrod21()
    return np.ravel((lo + hi)[:, None] / 2 + ((hi - lo) / 2)[:, None] * x)


def node_parameter_integral(func, a, b, pack, p, info):
    """``(integral of d f / d args over [a, b] as a flat vector, f(a), f(b))`` on the
    subintervals of quad's ``info`` (see the module docstring), or ``None`` where this way
    does not apply."""
    if not pack.scalars:
        return None
    last = int(info.get("last", 0))
    if last < 1:
        return None
    lo, hi = info["alist"][:last].astype(np.float64), info["blist"][:last].astype(np.float64)
    vjp = user_vjp_of(func, tuple(1 + k for k in pack.index))
    xs = _nodes(lo, hi)
    found = _node_derivatives(vjp, pack, np.concatenate((xs, [float(a), float(b)])))
    if found is None:
        return None
    # The integrand must give quad's own numbers: each subinterval's Kronrod sum of the
    # values is the rlist entry quad computed there, one scalar call per node.
    sums, err = _rule_sums(found[:-2], lo, hi)
    expected = info["rlist"][:last]
    size = np.abs(expected)
    # (quad ran on the caller's values: float32 parameters give float32 integrand values)
    rtol = 1e-9 if all(_is_double(v) for v in pack.given + (a, b)) else 1e-4
    if (np.abs(sums[:, 0] - expected) > rtol * (size + (1e-3 * size.mean() + _TINY))).any():
        return None
    total = _adaptive_sum(vjp, pack, p, lo, hi, sums[:, 1:], err[:, 1:])
    if total is None:
        return None
    sign = -1.0 if b < a else 1.0  # quad's subintervals run from min(a, b) to max(a, b)
    return sign * total, found[-2, 0], found[-1, 0]


def _adaptive_sum(vjp, pack, p, lo, hi, k21, err):
    """From the Kronrod sums ``k21`` and error estimates ``err`` on ``[lo_i, hi_i]``,
    bisect the subintervals whose estimated error is more than their share of the
    tolerance until ``epsabs``/``epsrel`` hold for every parameter (``None`` past quad's
    subdivision limit, or for an integrand that stops evaluating elementwise)."""
    width = hi[-1] - lo[0] if lo.size == 1 else np.sum(hi - lo)
    while True:
        total = k21.sum(axis=0)
        tol = np.maximum(p["epsabs"], p["epsrel"] * np.abs(total))
        if (err.sum(axis=0) <= tol).all():
            return total
        if lo.size >= p["limit"]:
            return None
        share = tol[None, :] * ((hi - lo) / width)[:, None]
        split = np.any(err > share, axis=1)
        if not split.any():
            split = np.max(err / tol, axis=1) >= np.max(err / tol)
        mid = (lo[split] + hi[split]) / 2
        new_lo = np.concatenate((lo[split], mid))
        new_hi = np.concatenate((mid, hi[split]))
        found = _node_derivatives(vjp, pack, _nodes(new_lo, new_hi))
        if found is None:
            return None
        nk, ne = _rule_sums(found[:, 1:], new_lo, new_hi)
        keep = ~split
        lo, hi = np.concatenate((lo[keep], new_lo)), np.concatenate((hi[keep], new_hi))
        k21, err = np.concatenate((k21[keep], nk)), np.concatenate((err[keep], ne))


def with_subintervals(p) -> bool:
    """Whether the call can run with ``full_output=1`` for its subintervals: finite limits,
    a real integrand without weight."""
    return (
        p.get("weight") is None
        and not p.get("complex_func", False)
        and _finite(p["a"])
        and _finite(p["b"])
        and callable(p["func"])
    )


def _quad_call(args, kwargs, p):
    """``(quad's result, its info dict or None)``: the same call, with ``full_output=1``
    where the subintervals can serve the gradient (its warning is given as quad gives it)."""
    import scipy.integrate as si

    if not with_subintervals(p):
        return si.quad(*args, **kwargs), None
    return subintervals(p)


def subintervals(p, warn=True):
    """``(quad's (value, abserr), its info dict)`` of the call ``p`` (bound parameters) run
    with ``full_output=1``, warning as quad itself does (unless ``warn`` is false: a call
    made again, whose warning was given)."""
    import scipy.integrate as si

    out = si.quad(**dict(p, full_output=1))
    if warn and len(out) > 3:  # quad gives the message instead of warning under full_output
        warnings.warn(out[3], si.IntegrationWarning, stacklevel=5)
    return out[:2], out[2]


def quad_cotangent_values(g, func, a, b, pack, p, info):
    """``(da, db, dargs)`` of ``quad(func, a, b, args)`` for the cotangent ``g`` (a float) of
    its value: the limits by the fundamental theorem, ``args`` under the integral sign
    (``info``: quad's full output where its subintervals can serve, else ``None``)."""
    fa = fb = None
    dargs = NO_TANGENT
    if pack.size:
        lo, hi = float(a), float(b)
        if math.isfinite(lo) or math.isfinite(hi) or lo != hi:
            fast = None
            if info is not None and lo != hi:
                fast = node_parameter_integral(func, lo, hi, pack, p, info)
            if fast is not None:
                integral, fa, fb = fast
            else:
                integral = parameter_integral(func, lo, hi, pack, p)
            dargs = pack.cotangent(g * integral)
    da = _fit(_limit_cotangent(g, func, a, pack.args, -1.0, fa), a)
    db = _fit(_limit_cotangent(g, func, b, pack.args, 1.0, fb), b)
    return da, db, dargs


def _quad_rrule(*args, **kwargs):
    import scipy.integrate as si

    p = bound_call(si.quad, args, kwargs)
    refuse_options("scipy.integrate.quad", p, _REFUSED)
    out, info = _quad_call(args, kwargs, p)
    pack = ArgsPack(p["args"])

    def quad_pullback(dy):
        g = dy_parts(dy, 2)[0]
        if g is ZERO:
            return call_cotangents(si.quad, args, kwargs, {}, QUAD_KEYWORDS)
        g = float(g) if type(g) is float else float(np.sum(g))
        da, db, dargs = quad_cotangent_values(g, p["func"], p["a"], p["b"], pack, p, info)
        cots = {"a": da, "b": db, "args": dargs}
        return call_cotangents(si.quad, args, kwargs, cots, QUAD_KEYWORDS)

    return out, quad_pullback


def register(reg):
    try:
        import scipy.integrate as si
    except ImportError:  # pragma: no cover - scipy is optional
        return
    r = Registrar(reg, FAMILY)
    register_solver(
        r,
        si.quad,
        _quad_rrule,
        keywords=QUAD_KEYWORDS,
        notes="limits (fundamental theorem) and args (under the integral sign); value only",
        keep_closure=True,
    )
    from . import scipy_quad_pullbacks

    scipy_quad_pullbacks.register(reg, FAMILY)
