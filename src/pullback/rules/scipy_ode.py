"""scipy.integrate.odeint and solve_ivp: gradients of an ODE solution by the adjoint method
(:mod:`scipy_ode_adjoint`: the backward solve of ``a' = -a^T df/dy``, ``g' = -a^T df/dp``
from each output time to the one before, or, for ``solve_ivp``'s forward interpolants, the
linear adjoint on the forward steps, :mod:`scipy_ode_dense`).

What carries a gradient: ``y0``, the time points (``t`` of odeint; ``t_span[0]`` and
``t_eval`` of solve_ivp, or ``t_span[1]`` for the last point when there is no ``t_eval``)
and the float values in ``args``. ``solve_ivp`` returns an ``OdeResult``: read ``sol.y`` or
``sol["y"]`` (``sol.t`` is the given ``t_eval``, or the solver's own steps, a constant).
Values the right-hand side reads from globals or closures are constants. Second
derivatives run through the pullback functions of ``scipy_ode_pullbacks`` (the adjoint
sweep written again in the differentiable subset). Events,
``dense_output``, complex states and odeint's ``full_output``/``Dfun`` are refused.
"""

from __future__ import annotations

import numpy as np

from . import scipy_ode_adjoint as adjoint
from . import scipy_ode_pullbacks
from ._calculus_util import bound_call, call_cotangents, register_solver, result_cotangent
from ._util import ZERO, Registrar, finalize

FAMILY = "scipy_ode"
REQUIRES = "scipy.integrate"

ODEINT_KEYWORDS = ("y0", "t", "args")
IVP_KEYWORDS = ("t_span", "y0", "t_eval", "args")


# -- odeint ----------------------------------------------------------------------------------
def _odeint_rrule(*args, **kwargs):
    import scipy.integrate as si

    p = bound_call(si.odeint, args, kwargs)
    adjoint.refuse_odeint(p)
    out = si.odeint(*args, **kwargs)

    def odeint_pullback(dy):
        if dy is ZERO:
            return call_cotangents(si.odeint, args, kwargs, {}, ODEINT_KEYWORDS)
        dy0, dt, dargs = adjoint.odeint_cotangent_values(p, out, dy)
        cots = {"y0": dy0, "t": dt, "args": dargs}
        return call_cotangents(si.odeint, args, kwargs, cots, ODEINT_KEYWORDS)

    return out, odeint_pullback


# -- solve_ivp -------------------------------------------------------------------------------
def _solve_ivp_rrule(*args, **kwargs):
    import scipy.integrate as si

    p = bound_call(si.solve_ivp, args, kwargs)
    adjoint.refuse_solve_ivp(p)
    sol, dense = adjoint.solve_ivp_forward(p, args, kwargs)

    def solve_ivp_pullback(dy):
        dys = result_cotangent(dy, "y")
        dts = result_cotangent(dy, "t")
        cots = adjoint.solve_ivp_cotangent_values(p, sol, dense, dys)
        if p["t_eval"] is not None and dts is not ZERO:  # sol.t is t_eval itself
            cots["t_eval"] = cots.get("t_eval", 0.0) + np.asarray(dts, dtype=np.float64)
        if "t_eval" in cots:
            cots["t_eval"] = finalize(cots["t_eval"], p["t_eval"])
        return call_cotangents(si.solve_ivp, args, kwargs, cots, IVP_KEYWORDS)

    return sol, solve_ivp_pullback


def register(reg):
    try:
        import scipy.integrate as si
    except ImportError:  # pragma: no cover - scipy is optional
        return
    r = Registrar(reg, FAMILY)
    register_solver(
        r,
        si.odeint,
        _odeint_rrule,
        keywords=ODEINT_KEYWORDS,
        notes="y0, t and args by the adjoint method",
        keep_closure=True,
        receivers=("func", "Dfun"),
    )
    register_solver(
        r,
        si.solve_ivp,
        _solve_ivp_rrule,
        keywords=IVP_KEYWORDS,
        attributes=("y", "t", "success", "status", "message", "nfev", "njev", "nlu"),
        notes="y0, t_span, t_eval and args by the adjoint method; the result's .y",
        keep_closure=True,
        receivers=("fun", "jac", "events"),
    )
    scipy_ode_pullbacks.register(reg, FAMILY)
