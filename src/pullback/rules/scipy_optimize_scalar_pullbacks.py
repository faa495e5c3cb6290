"""Transformable pullbacks of the scalar minimisers ``scipy.optimize.minimize_scalar``,
``fminbound``, ``brent`` and ``golden`` (the rules are in scipy_optimize_scalar.py): the
minimiser ``x*(p)`` of ``f(x, *p)`` and the minimum ``f(x*, p)``, never the iterations.

* Inside the bounds (or without bounds), ``f_x(x*, p) = 0`` and the implicit function
  theorem gives ``dx*/dp = -f_xp / f_xx`` (scipy_optimize_pullbacks.implicit_cotangent on
  ``G = f_x``, pullback's reverse mode of ``f``); the bounds get no gradient.
* On an active bound ``c`` (the objective still decreases towards it: the minimiser
  without the bound lies beyond it), ``x* = c``: ``dx*/dp = 0`` and ``dx*/dc = 1``.
* The minimum follows the envelope theorem in both cases: ``d f(x*, p)/dp = f_p`` at
  ``x*``, and ``d f(x*, p)/dc = f_x(x*)`` for an active bound ``c``.

Which case holds is decided from ``f_x`` and ``f_xx`` at the returned point
(:func:`scalar_regime`): the Newton step to the unconstrained minimiser lands beyond the
bound (active), inside it (interior), or within the solver's tolerance of it, where the
minimiser has a kink and no derivative (refused), as is ``f_xx = 0`` inside, and a solver
that reports no convergence. Written in the differentiable subset, so second derivatives
run through the solution (the solver's rule gives ``dx*/dp`` when these are differentiated).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.optimize as so  # this module is imported once scipy.optimize is

from ..errors import UnsupportedCallError
from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO
from ._calculus_util import require_success
from ._user_vjp import user_vjp
from .scipy_optimize_pullbacks import (
    implicit_cotangent,
    objective_gradient,
    partial_cotangent,
    plus_cotangents,
)

INTERIOR, LOWER, UPPER = "interior", "lower", "upper"


@transformable
def scalar_cotangents(xbar, fbar, fun, x, args, regime):
    """``(cotangent of args, of the lower bound, of the upper bound)`` for the cotangents
    ``xbar`` of the minimiser ``x`` and ``fbar`` of the minimum ``fun(x, *args)``, in the
    ``regime`` :func:`scalar_regime` decided."""
    G = objective_gradient(fun, None, args)[0]
    cargs = NO_TANGENT
    if fbar is not ZERO:
        cargs = partial_cotangent(fbar, fun, x, args)
    if regime == INTERIOR:
        if xbar is not ZERO:
            cargs = plus_cotangents(cargs, implicit_cotangent(xbar, G, x, args), args)
        return cargs, ZERO, ZERO
    # x* is the bound: it moves with the bound alone, and the minimum with it by f_x
    cbound = bound_cotangent(xbar, fbar, G, x, args)
    if regime == LOWER:
        return cargs, cbound, ZERO
    return cargs, ZERO, cbound


@transformable
def bound_cotangent(xbar, fbar, G, x, args):
    """The cotangent of an active bound: ``xbar`` (``x* = c``) plus ``fbar f_x(x*)``."""
    out = 0.0
    if xbar is not ZERO:
        out = out + xbar
    if fbar is not ZERO:
        params = args if isinstance(args, tuple) else (args,)
        out = out + fbar * G(x, *params)
    return out


@transformable
def minimize_scalar_pullback(
    dy, fun, bracket=None, bounds=None, args=(), method=None, tol=None, options=None
):
    if dy is ZERO:
        return (NO_TANGENT,) * 7
    sol = so.minimize_scalar(fun, bracket, bounds, args, method, tol, options)
    require_success(sol, "scipy.optimize.minimize_scalar")
    x = sol.x
    lower, upper, xtol = scalar_bounds(bounds, method, options)
    regime = scalar_regime(fun, x, args, lower, upper, xtol, "scipy.optimize.minimize_scalar")
    xbar = ZERO
    if "x" in dy:
        xbar = dy["x"]
    fbar = ZERO
    if "fun" in dy:
        fbar = dy["fun"]
    cargs, clo, chi = scalar_cotangents(xbar, fbar, fun, x, args, regime)
    cbounds = NO_TANGENT
    if regime != INTERIOR:
        cbounds = (clo, chi)
    return (NO_TANGENT, NO_TANGENT, cbounds, cargs, NO_TANGENT, NO_TANGENT, NO_TANGENT)


@transformable
def fminbound_pullback(dy, func, x1, x2, args=(), xtol=1e-05, maxfun=500, full_output=0, disp=1):
    if dy is ZERO:
        return (NO_TANGENT,) * 8
    require_success(fminbound_status(func, x1, x2, args, xtol, maxfun), "scipy.optimize.fminbound")
    x = so.fminbound(func, x1, x2, args, xtol, maxfun, 0, 0)
    regime = scalar_regime(func, x, args, x1, x2, xtol, "scipy.optimize.fminbound")
    cargs, clo, chi = scalar_cotangents(dy, ZERO, func, x, args, regime)
    return (NO_TANGENT, clo, chi, cargs) + (NO_TANGENT,) * 4


@transformable
def brent_pullback(dy, func, args=(), brack=None, tol=1.48e-08, full_output=0, maxiter=500):
    return bracketed_pullback(dy, so.brent, func, args, brack, tol, maxiter)


@transformable
def golden_pullback(
    dy, func, args=(), brack=None, tol=1.4901161193847656e-08, full_output=0, maxiter=5000
):
    return bracketed_pullback(dy, so.golden, func, args, brack, tol, maxiter)


@transformable
def bracketed_pullback(dy, solver, func, args, brack, tol, maxiter):
    """The pullback of ``brent`` or ``golden`` (``solver``; same parameters, no bounds)."""
    if dy is ZERO:
        return (NO_TANGENT,) * 6
    name = solver_name(solver)
    require_success(bracketed_status(solver, func, args, brack, tol, maxiter), name)
    x = solver(func, args, brack, tol, 0, maxiter)
    regime = scalar_regime(func, x, args, None, None, tol, name)
    cargs = scalar_cotangents(dy, ZERO, func, x, args, regime)[0]
    return (NO_TANGENT, cargs) + (NO_TANGENT,) * 4


# -- non-differentiable helpers --------------------------------------------------------
def solver_name(solver):
    """``scipy.optimize.<name>`` of a solver, for messages."""
    return f"scipy.optimize.{solver.__name__}"


def scalar_bounds(bounds, method, options):
    """``(lower, upper, xtol)`` of a ``minimize_scalar`` call: its bounds (``None`` for the
    bracketing methods) and the tolerance on ``x`` the bounded method stops at."""
    if method is None:
        method = "brent" if bounds is None else "bounded"
    if not isinstance(method, str) or method.lower() not in ("brent", "bounded", "golden"):
        raise UnsupportedCallError(
            f"pullback: scipy.optimize.minimize_scalar(method={method!r}) is not differentiated "
            "(the methods are 'brent', 'golden' and 'bounded').\n"
            "Fix: use one of those methods."
        )
    if method.lower() != "bounded":
        return None, None, 0.0
    xatol = (options or {}).get("xatol", 1e-5)
    return bounds[0], bounds[1], xatol


def scalar_regime(fun, x, args, lower, upper, xtol, name):
    """``INTERIOR``, ``LOWER`` or ``UPPER``: where the minimiser ``x`` of ``fun(x, *args)``
    on ``[lower, upper]`` (``None``: no bound) lies, from the Newton step ``-f_x / f_xx``
    to the unconstrained minimiser (pullback's first and second derivatives of ``fun``).
    Within ``xtol`` of a bound, where SciPy's answer does not tell which holds, and where
    ``f_xx <= 0`` inside, the minimiser has no derivative: refused."""
    params = args if isinstance(args, tuple) else (args,)
    G = objective_gradient(fun, None, params)[0]
    g, back = user_vjp(G, (x,) + params, (0,))
    g = float(np.real(g))
    h = float(np.real(back(1.0)[0]))
    if lower is None and upper is None:
        if not h > 0.0:
            _refuse_flat(name, h)
        return _stationary(name, x, g, h, xtol)
    margin = 2.0 * (xtol + math.sqrt(np.finfo(float).eps) * abs(float(x)))
    near_lo = lower is not None and x - float(lower) <= margin and g > 0.0
    near_hi = upper is not None and float(upper) - x <= margin and g < 0.0
    if not h > 0.0:
        if near_lo or near_hi:  # a concave piece: the objective falls onto the bound
            return LOWER if near_lo else UPPER
        _refuse_flat(name, h)
    newton = x - g / h
    for bound, side, beyond in ((lower, LOWER, -1.0), (upper, UPPER, 1.0)):
        if bound is None:
            continue
        past = beyond * (newton - float(bound))  # > 0: the unconstrained minimiser is beyond
        if past > margin and (near_lo if side == LOWER else near_hi):
            return side
        if abs(past) <= margin:
            raise UnsupportedCallError(
                f"pullback: {name}: the minimum lies on the {side} bound {float(bound)!r} "
                "within the solver's tolerance, where the objective's slope is 0: the "
                "minimiser has a kink there (it follows the bound on one side, the "
                "stationary point on the other) and no derivative.\n"
                "Fix: move the bound away from the minimum, or tighten xtol to tell them apart."
            )
    return _stationary(name, x, g, h, xtol)


def _stationary(name, x, g, h, xtol):
    """``INTERIOR`` where ``x`` is a stationary point of the objective to within the
    solver's tolerance (the Newton step ``-g / h`` to it is that small), else refused: at
    a kink (``np.interp`` between grid points, ``abs``) the slope is not 0 at the
    minimum, and neither the implicit function theorem nor the envelope theorem holds
    (the minimiser follows the kink on one side and not on the other)."""
    scale = max(1.0, abs(float(x)))
    allowed = 100.0 * (xtol + math.sqrt(np.finfo(float).eps)) * scale
    if abs(g / h) <= allowed:
        return INTERIOR
    raise UnsupportedCallError(
        f"pullback: {name}: the objective's slope at the minimum {float(x)!r} is {g:g}, not "
        "0 within the solver's tolerance: the objective is not smooth there (a kink, such "
        "as np.interp between its grid points or abs), so the minimiser has no derivative.\n"
        "Fix: make the objective smooth near the minimum: for np.interp on a grid, a "
        "smooth fit of the same values (np.polyval(np.polyfit(grid, w, 3), c)), or "
        "another smooth approximation of the kink."
    )


def _refuse_flat(name, h):
    raise UnsupportedCallError(
        f"pullback: {name}: the objective's second derivative at the minimum is {h:g}, not "
        "positive, so the minimiser does not move smoothly with the parameters.\n"
        "Fix: make the minimum strict (add a small quadratic term), or bound it."
    )


def fminbound_status(func, x1, x2, args, xtol, maxfun):
    """``{"success", "message"}`` of ``fminbound(func, x1, x2, args, xtol, maxfun)``."""
    _, _, ierr, _ = so.fminbound(func, x1, x2, args, xtol, maxfun, True, 0)
    return {"success": ierr == 0, "message": f"ierr={ierr}, {maxfun} evaluations reached"}


def bracketed_status(solver, func, args, brack, tol, maxiter):
    """``{"success", "message"}`` of ``brent`` or ``golden``: the same solve under
    ``minimize_scalar``, whose result says whether it converged (their records do not)."""
    options = {"maxiter": maxiter}
    sol = so.minimize_scalar(func, brack, None, args, solver.__name__, tol, options)
    return {"success": sol.success, "message": sol.message}


NON_DIFFERENTIABLE = (solver_name, scalar_bounds, scalar_regime, fminbound_status, bracketed_status)


def register(reg, family):
    """The helpers' entries: the non-differentiable ones."""
    reg.non_differentiable(*NON_DIFFERENTIABLE, family=family, trusted=True)
