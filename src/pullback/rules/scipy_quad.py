"""scipy.integrate.quad: the derivative of an integral, by mathematics rather than by
differentiating the quadrature.

For ``I = quad(f, a, b, args=(theta, ...))[0]``:

* the limits by the fundamental theorem of calculus: ``dI/db = f(b)``, ``dI/da = -f(a)``
  (zero for an infinite limit);
* the parameters in ``args`` by differentiating under the integral sign:
  ``dI/dtheta = integral of df/dtheta(x) over [a, b]``, where ``df/dtheta`` is the reverse
  mode of the user's integrand by pullback itself (one vjp per evaluation), integrated with
  ``quad`` again (``quad_vec`` for several parameters) at the caller's tolerances.

``quad`` returns ``(value, abserr)``: only the value carries a gradient. Weighted and
``full_output`` calls are refused. Values the integrand reads from globals or closures are
constants: pass what should be differentiated through ``args``.
"""

from __future__ import annotations

import math

import numpy as np

from ._calculus_util import (
    ArgsPack,
    UserVJP,
    bound_call,
    call_cotangents,
    refuse_options,
    register_solver,
)
from ._util import NO_TANGENT, ZERO, Registrar, dy_parts, finalize

FAMILY = "scipy_quad"
REQUIRES = "scipy.integrate"

QUAD_KEYWORDS = ("a", "b", "args")
_REFUSED = {
    "full_output": "its extra outputs describe the quadrature, not the integral",
    "weight": "the weight function's own parameters would need a rule",
}


def _limit_cotangent(g, f, limit, args, sign):
    """``sign * g * f(limit)`` (the fundamental theorem), zero at an infinite limit."""
    if not (isinstance(limit, (float, np.floating)) or np.ndim(limit) == 0) or not np.isfinite(
        limit
    ):
        return 0.0
    return sign * g * float(f(limit, *args))


def parameter_integral(f, a, b, pack, p):
    """``integral of d f(x, *args) / d args`` over ``[a, b]`` as a flat vector."""
    import scipy.integrate as si

    vjp = UserVJP(f, tuple(1 + k for k in pack.index))

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


def _quad_rrule(*args, **kwargs):
    import scipy.integrate as si

    p = bound_call(si.quad, args, kwargs)
    func, a, b = p["func"], p["a"], p["b"]
    refuse_options("scipy.integrate.quad", p, _REFUSED)
    out = si.quad(*args, **kwargs)
    pack = ArgsPack(p["args"])

    def quad_pullback(dy):
        g = dy_parts(dy, 2)[0]
        if g is ZERO:
            return call_cotangents(si.quad, args, kwargs, {}, QUAD_KEYWORDS)
        g = float(np.sum(g))
        cots = {
            "a": finalize(_limit_cotangent(g, func, a, pack.args, -1.0), a),
            "b": finalize(_limit_cotangent(g, func, b, pack.args, 1.0), b),
            "args": NO_TANGENT,
        }
        if pack.size:
            lo, hi = float(a), float(b)
            if math.isfinite(lo) or math.isfinite(hi) or lo != hi:
                cots["args"] = pack.cotangent(g * parameter_integral(func, lo, hi, pack, p))
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
    )
