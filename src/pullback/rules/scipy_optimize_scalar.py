"""scipy.optimize's scalar minimisers: ``minimize_scalar`` (methods ``brent``, ``golden``,
``bounded``), ``fminbound``, ``brent`` and ``golden``.

The derivative of the minimiser ``x*`` and of the minimum ``f(x*, p)`` with respect to the
parameters in ``args`` (and to the bounds of ``bounded``/``fminbound``) at the optimum, by
the implicit function theorem on ``f_x = 0`` inside the bounds and by ``x* = c`` on an
active bound ``c``; the minimum by the envelope theorem. The bracket (``bracket=``,
``brack=``) gets no gradient, nor do ``nit`` and ``nfev``. See
scipy_optimize_scalar_pullbacks.py for the mathematics and what is refused.

>>> import numpy as np, scipy.optimize as so, pullback
>>> def argmin(p):  # minimiser of (x - p)^2 + x^4: 2 (x - p) + 4 x^3 = 0
...     return so.minimize_scalar(lambda x, q: (x - q) ** 2 + x**4, args=(p,)).x
>>> x = argmin(0.5)
>>> bool(np.isclose(pullback.grad(argmin)(0.5), 2 / (2 + 12 * x**2)))
True
"""

from __future__ import annotations

from ..tangents import NO_TANGENT, ZERO
from ._calculus_util import (
    bound_call,
    call_cotangents,
    refuse_options,
    register_solver,
    require_success,
    result_cotangent,
)
from ._util import Registrar, finalize

FAMILY = "scipy_optimize"
REQUIRES = "scipy.optimize"

_RESULT = ("x", "fun", "success", "status", "message", "nit", "nfev")
_FULL_OUTPUT = {"full_output": "its extra outputs are a record; call minimize_scalar"}


def _fit(c, args):
    """The cotangent ``c`` of a solver's ``args`` in their dtypes (a float32 parameter gets
    a float32 cotangent; trees of floats keep theirs)."""
    if c is NO_TANGENT:
        return c
    if not isinstance(args, tuple):
        return _fit((c,), (args,))[0]
    return tuple(
        ci if isinstance(ai, dict) else finalize(ci, ai) for ci, ai in zip(c, args, strict=True)
    )


def _minimize_scalar_rrule(*args, **kwargs):
    import scipy.optimize as so

    from . import scipy_optimize_scalar_pullbacks as pbs  # here: it imports scipy.optimize

    name = "scipy.optimize.minimize_scalar"
    p = bound_call(so.minimize_scalar, args, kwargs)
    lower, upper, xtol = pbs.scalar_bounds(p["bounds"], p["method"], p["options"])
    sol = so.minimize_scalar(*args, **kwargs)
    require_success(sol, name)
    fun, fargs = p["fun"], p["args"]
    regime = pbs.scalar_regime(fun, sol.x, fargs, lower, upper, xtol, name)

    def minimize_scalar_pullback(dy):
        xbar, fbar = result_cotangent(dy, "x"), result_cotangent(dy, "fun")
        cargs, clo, chi = pbs.scalar_cotangents(xbar, fbar, fun, sol.x, fargs, regime)
        cots = {"args": _fit(cargs, fargs)}
        if regime != pbs.INTERIOR:
            cots["bounds"] = _fit((clo, chi), tuple(p["bounds"]))
        return call_cotangents(so.minimize_scalar, args, kwargs, cots, ("args", "bounds"))

    return sol, minimize_scalar_pullback


def _fminbound_rrule(*args, **kwargs):
    import scipy.optimize as so

    from . import scipy_optimize_scalar_pullbacks as pbs

    name = "scipy.optimize.fminbound"
    p = bound_call(so.fminbound, args, kwargs)
    refuse_options(name, p, _FULL_OUTPUT)
    func, fargs = p["func"], p["args"]
    x, _, ierr, _ = so.fminbound(*args, **dict(kwargs, full_output=True))
    require_success({"success": ierr == 0, "message": f"ierr={ierr}"}, name)
    regime = pbs.scalar_regime(func, x, fargs, p["x1"], p["x2"], p["xtol"], name)

    def fminbound_pullback(dy):
        cargs, clo, chi = pbs.scalar_cotangents(dy, ZERO, func, x, fargs, regime)
        cots = {"args": _fit(cargs, fargs)}
        cots["x1"], cots["x2"] = _fit((clo, chi), (p["x1"], p["x2"]))
        return call_cotangents(so.fminbound, args, kwargs, cots, ("args", "x1", "x2"))

    return x, fminbound_pullback


def _bracketed_rrule(solver):
    """The rule of ``brent`` or ``golden`` (same parameters): no bounds, always inside."""
    name = f"scipy.optimize.{solver.__name__}"

    def rrule(*args, **kwargs):
        from . import scipy_optimize_scalar_pullbacks as pbs

        p = bound_call(solver, args, kwargs)
        refuse_options(name, p, _FULL_OUTPUT)
        func, fargs = p["func"], p["args"]
        x = solver(*args, **kwargs)
        status = pbs.bracketed_status(solver, func, fargs, p["brack"], p["tol"], p["maxiter"])
        require_success(status, name)
        regime = pbs.scalar_regime(func, x, fargs, None, None, p["tol"], name)

        def bracketed_pullback(dy):
            cargs = pbs.scalar_cotangents(dy, ZERO, func, x, fargs, regime)[0]
            return call_cotangents(solver, args, kwargs, {"args": _fit(cargs, fargs)})

        return x, bracketed_pullback

    rrule.__name__ = f"_{solver.__name__}_rrule"
    return rrule


def register(reg):
    try:
        import scipy.optimize as so
    except ImportError:  # pragma: no cover - scipy is optional
        return
    from . import scipy_optimize_pullbacks as base
    from . import scipy_optimize_scalar_pullbacks as pbs

    r = Registrar(reg, FAMILY)
    ift = "args by the implicit function theorem; an active bound moves x"
    register_solver(
        r,
        so.minimize_scalar,
        _minimize_scalar_rrule,
        keywords=("args", "bounds"),
        attributes=_RESULT,
        notes=f".x and .fun; {ift}",
        receivers=("fun",),
    )
    register_solver(
        r,
        so.fminbound,
        _fminbound_rrule,
        keywords=("args", "x1", "x2"),
        notes=ift,
        receivers=("func",),
    )
    for solver in (so.brent, so.golden):
        register_solver(r, solver, _bracketed_rrule(solver), notes=ift, receivers=("func",))
    for solver, pullback_fn in (
        (so.minimize_scalar, pbs.minimize_scalar_pullback),
        (so.fminbound, pbs.fminbound_pullback),
        (so.brent, pbs.brent_pullback),
        (so.golden, pbs.golden_pullback),
    ):
        if base.same_defaults(pullback_fn, solver):  # else first order only
            reg.set_pullback_function(solver, pullback_fn)
    pbs.register(reg, FAMILY)
