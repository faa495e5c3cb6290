"""scipy.optimize: the derivative of a solution with respect to the parameters in ``args``,
by the implicit function theorem — never by differentiating the solver's iterations.

At a solution ``x*(p)`` of ``G(x, p) = 0`` the cotangent ``xbar`` of ``x*`` pulls back to
``pbar = -(dG/dp)^T lam`` with ``(dG/dx)^T lam = xbar``. ``dG/dx`` is assembled row by row
and ``(dG/dp)^T lam`` computed with pullback's reverse mode of the user's function:

* ``root``, ``fsolve``, ``brentq``: ``G`` is the residual function itself;
* ``minimize`` (at a converged unconstrained optimum, or one inside its bounds): ``G`` is
  the gradient of the objective — the user's ``jac`` function, the second output of a
  ``jac=True`` objective, or pullback's gradient of it (then ``dG/dx`` is the Hessian, by
  pullback's second derivative);
* ``least_squares`` (linear loss, no active bound): ``G`` is the gradient of
  ``0.5 * sum(r**2)``, ``J^T r`` from a ``jac=`` function or by pullback's reverse mode
  (then ``dG/dx`` by the residuals' second derivative).

The starting point gets no gradient. The optimal value (``.fun`` of ``minimize``, ``.cost``
of ``least_squares``) follows the envelope theorem, ``d f(x*, p)/dp = df/dp``; the residuals
``.fun`` of ``least_squares`` follow the chain rule through ``x*``. A solver that reports
no convergence is refused (``UnsupportedCallError``), as are constraints and active bounds.
"""

from __future__ import annotations

import types

import numpy as np

from ..errors import UnsupportedCallError
from ..registry import ENTRY_POINTS
from ..tangents import NO_TANGENT, ZERO
from ._calculus_util import (
    ArgsPack,
    bound_call,
    call_cotangents,
    refuse_options,
    register_solver,
    require_square,
    require_stationary,
    require_success,
    result_cotangent,
    user_vjp,
)
from ._util import Registrar, densify

FAMILY = "scipy_optimize"
REQUIRES = "scipy.optimize"

KEYWORDS = ("args",)
_RESULT = ("x", "fun", "success", "status", "message", "nit", "nfev", "njev")


class Implicit:
    """``G(x, *args) = 0`` at ``x = x_star``: pulls a cotangent of ``x_star`` back to the
    float values of ``args``. ``output`` says which output of a function returning a pair
    is ``G``: 0 for ``root(..., jac=True)`` (residual, Jacobian), 1 for
    ``minimize(..., jac=True)`` (value, gradient)."""

    def __init__(self, name, G, x_star, args, output=None):
        self.name = name
        self.pack = ArgsPack(args)
        self.G = G
        self.output = output
        self.call_args = (x_star,) + self.pack.args
        self.pwrt = tuple(1 + k for k in self.pack.index)
        self.out_shape = None

    def _dy(self, v):
        v = np.reshape(v, self.out_shape)
        if self.output is None:
            return v
        return (v, ZERO) if self.output == 0 else (ZERO, v)

    def cotangent(self, xbar):
        """The cotangent of ``args`` (a tuple, or ``NO_TANGENT``) for ``xbar``."""
        if not self.pack.size or xbar is ZERO:
            return NO_TANGENT
        xbar = np.ravel(np.asarray(densify(xbar), dtype=np.float64))
        out, back = user_vjp(self.G, self.call_args, (0,) + self.pwrt)
        g_out = out if self.output is None else out[self.output]
        self.out_shape = np.shape(g_out)
        n = xbar.size
        require_square(self.name, g_out, xbar)
        jac = np.empty((n, n))
        for i in range(n):
            e = np.zeros(n)
            e[i] = 1.0
            jac[i] = np.ravel(back(self._dy(e))[0])  # row i: d G_i / dx
        try:
            lam = np.linalg.solve(jac.T, xbar)
        except np.linalg.LinAlgError:
            raise UnsupportedCallError(
                f"pullback: {self.name}: the Jacobian at the solution is singular, so the "
                "solution does not move smoothly with the parameters.\n"
                "Fix: make the problem's solution locally unique (regularize it)."
            ) from None
        require_stationary(self.name, jac, g_out, self.call_args[0])
        return self.pack.cotangent(-self.pack.flatten(back(self._dy(lam))[1:]))


def _sum(a, b):
    if a is NO_TANGENT:
        return b
    if b is NO_TANGENT:
        return a
    return tuple(NO_TANGENT if x is NO_TANGENT else x + y for x, y in zip(a, b, strict=True))


def _direct_param_cotangent(fn, x, args, dy):
    """``(d fn(x, *args) / d args)^T dy`` with ``x`` held fixed (envelope theorem, chain
    rule of the residuals)."""
    pack = ArgsPack(args)
    if not pack.size:
        return NO_TANGENT
    _, back = user_vjp(fn, (x,) + pack.args, tuple(1 + k for k in pack.index))
    return pack.cotangent(pack.flatten(back(dy)))


# -- root finding ------------------------------------------------------------------------------
def _root_rrule(*args, **kwargs):
    import scipy.optimize as so

    p = bound_call(so.root, args, kwargs)
    fun = p["fun"]
    sol = so.root(*args, **kwargs)
    require_success(sol, "scipy.optimize.root")
    implicit = Implicit(
        "scipy.optimize.root", fun, sol.x, p["args"], output=0 if p["jac"] is True else None
    )

    def root_pullback(dy):
        cots = {"args": implicit.cotangent(result_cotangent(dy, "x"))}
        return call_cotangents(so.root, args, kwargs, cots, KEYWORDS)

    return sol, root_pullback


def _fsolve_rrule(*args, **kwargs):
    import scipy.optimize as so

    p = bound_call(so.fsolve, args, kwargs)
    func = p["func"]
    refuse_options("scipy.optimize.fsolve", p, {"full_output": "call scipy.optimize.root"})
    call = dict(kwargs, full_output=True)
    x, _, ier, msg = so.fsolve(*args, **call)
    require_success({"success": ier == 1, "message": msg}, "scipy.optimize.fsolve")
    implicit = Implicit("scipy.optimize.fsolve", func, x, p["args"])

    def fsolve_pullback(dy):
        cots = {"args": implicit.cotangent(dy)}
        return call_cotangents(so.fsolve, args, kwargs, cots, KEYWORDS)

    return x, fsolve_pullback


def _brentq_rrule(*args, **kwargs):
    import scipy.optimize as so

    p = bound_call(so.brentq, args, kwargs)
    f = p["f"]
    refuse_options("scipy.optimize.brentq", p, {"full_output": "its extra output is a record"})
    x, info = so.brentq(*args, **dict(kwargs, full_output=True, disp=False))
    require_success({"success": info.converged, "message": info.flag}, "scipy.optimize.brentq")
    implicit = Implicit("scipy.optimize.brentq", f, x, p["args"])

    def brentq_pullback(dy):
        cots = {"args": implicit.cotangent(dy), "a": ZERO, "b": ZERO}
        return call_cotangents(so.brentq, args, kwargs, cots, KEYWORDS)

    return x, brentq_pullback


# -- optimization ------------------------------------------------------------------------------
def _minimize_rrule(*args, **kwargs):
    import scipy.optimize as so

    from .scipy_optimize_pullbacks import checked_minimum  # it imports scipy.optimize

    p = bound_call(so.minimize, args, kwargs)
    fun = p["fun"]
    checked_minimum(None, p["constraints"], None)  # before solving
    sol = checked_minimum(so.minimize(*args, **kwargs), (), p["bounds"])
    jac = p["jac"]
    pair = jac is True
    G = jac if callable(jac) else (fun if pair else ENTRY_POINTS.grad(fun))
    implicit = Implicit("scipy.optimize.minimize", G, sol.x, p["args"], output=1 if pair else None)

    def minimize_pullback(dy):
        cots = {"args": implicit.cotangent(result_cotangent(dy, "x"))}
        fbar = result_cotangent(dy, "fun")
        if fbar is not ZERO:
            d = (fbar, ZERO) if pair else fbar
            cots["args"] = _sum(cots["args"], _direct_param_cotangent(fun, sol.x, p["args"], d))
        return call_cotangents(so.minimize, args, kwargs, cots, KEYWORDS)

    return sol, minimize_pullback


def _least_squares_rrule(*args, **kwargs):
    import scipy.optimize as so

    from . import scipy_optimize_pullbacks as pbs  # here: it imports scipy.optimize

    p = bound_call(so.least_squares, args, kwargs)
    fun = p["fun"]
    pbs.checked_least_squares(None, p["loss"], p["kwargs"])  # before solving
    sol = pbs.checked_least_squares(so.least_squares(*args, **kwargs), p["loss"], p["kwargs"])
    # G = J^T r: from the jac= function, or by pullback's reverse mode of fun (exact)
    jac = p["jac"] if isinstance(p["jac"], types.FunctionType) else None
    G = pbs.squares_gradient(fun, jac, p["args"])

    def least_squares_pullback(dy):
        d = {k: result_cotangent(dy, k) for k in ("x", "fun", "cost")}
        cots = {"args": pbs.least_squares_cotangents(d, fun, sol.x, p["args"], G)}
        return call_cotangents(so.least_squares, args, kwargs, cots, KEYWORDS)

    return sol, least_squares_pullback


def register(reg):
    try:
        import scipy.optimize as so
    except ImportError:  # pragma: no cover - scipy is optional
        return
    r = Registrar(reg, FAMILY)
    ift = "args by the implicit function theorem"
    register_solver(
        r,
        so.root,
        _root_rrule,
        attributes=_RESULT,
        notes=f"the result's .x; {ift}",
        receivers=("fun", "jac"),
    )
    register_solver(r, so.fsolve, _fsolve_rrule, notes=ift, receivers=("func", "fprime"))
    register_solver(r, so.brentq, _brentq_rrule, notes=ift, receivers=("f",))
    register_solver(
        r,
        so.minimize,
        _minimize_rrule,
        attributes=_RESULT,
        notes=f".x and .fun; {ift}",
        receivers=("fun", "jac", "hess", "hessp"),
    )
    register_solver(
        r,
        so.least_squares,
        _least_squares_rrule,
        attributes=_RESULT + ("cost",),
        notes=f".x, .cost and .fun; {ift}",
        receivers=("fun", "jac"),
    )
    from . import scipy_optimize_pullbacks as pbs

    for solver, pullback_fn in (
        (so.fsolve, pbs.fsolve_pullback),
        (so.brentq, pbs.brentq_pullback),
        (so.root, pbs.root_pullback),
        (so.minimize, pbs.minimize_pullback),
        (so.least_squares, pbs.least_squares_pullback),
    ):
        if pbs.same_defaults(pullback_fn, solver):  # else first order only
            reg.set_pullback_function(solver, pullback_fn)
    pbs.register(reg, FAMILY)
