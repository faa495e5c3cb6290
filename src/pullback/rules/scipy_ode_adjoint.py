"""The adjoint method of scipy.integrate.odeint and solve_ivp: the cotangents of an ODE
solution's inputs, which the rules (scipy_ode.py) and the pullback functions of second
derivatives (scipy_ode_pullbacks.py) both compute with it.

For ``y' = f(t, y, p)`` from ``y(t0) = y0``, observed at ``t_1 < ... < t_M`` with output
cotangents ``dy_k``, the pullback solves backwards, with the caller's solver and
tolerances, the augmented system

    y' = f,    a' = -a^T df/dy,    g' = -a^T df/dp

from each output time to the one before, starting from the stored forward state there and
adding ``dy_k`` to the adjoint ``a`` at ``t_k``. At ``t0``: the cotangent of ``y0`` is
``a(t0)``, of the parameters ``g(t0)``, of the time ``t0`` ``-a(t0) . f(t0, y0)``; an output
time ``t_k`` gets ``dy_k . f(t_k, y_k)``. Memory does not grow with the number of solver
steps. The products ``a^T df/dy`` and ``a^T df/dp`` come from pullback's own reverse mode of
the user's right-hand side, once per evaluation.

``solve_ivp`` (methods RK45, RK23, Radau, BDF, LSODA, whose interpolants cost nothing)
first tries a faster way to the same numbers, :mod:`scipy_ode_dense`: with the forward
solve's interpolants the adjoint equation is linear, and it is solved on the forward steps
from Jacobians evaluated in a few batched reverse passes (a right-hand side written with
NumPy broadcasting allows that; it is checked). Where the forward kept no interpolants
(DOP853, whose interpolants cost more right-hand sides, and ``odeint``), the pullback solves
the forward problem once more with them (:func:`dense_again`; for odeint with
``solve_ivp``'s LSODA, :func:`odeint_trajectory`). The augmented system above is the way
for the other right-hand sides.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedCallError
from ._calculus_util import ArgsPack, refuse_options, require_success, user_vjp_of
from ._util import ZERO, finalize, finalize_like
from .scipy_ode_dense import Jacobians, linear_adjoint

_ODEINT_REFUSED = {
    "full_output": "its extra outputs describe the solver, not the solution",
    "Dfun": "pullback differentiates the right-hand side itself",
    "col_deriv": "pullback differentiates the right-hand side itself",
}
_IVP_REFUSED = {
    "events": "event times move with the parameters",
    "dense_output": "the interpolant sol.sol carries no gradient; use t_eval",
    "vectorized": "the adjoint calls the right-hand side one state at a time",
}
# (not jac: the user's Jacobian is that of f, not of the augmented system)
_IVP_PASSED = ("rtol", "atol", "max_step", "first_step", "min_step")


class RightHandSide:
    """The user's ``f`` with ``(t, y)`` order, its vjp and the augmented adjoint system."""

    def __init__(self, fn, args, tfirst, n):
        self.fn = fn
        self.pack = ArgsPack(args)
        self.args = self.pack.args
        self.tfirst = tfirst
        self.n = n
        y_at = 1 if tfirst else 0
        self.vjp = user_vjp_of(fn, (y_at,) + tuple(2 + k for k in self.pack.index))

    def call_args(self, t, y):
        return ((t, y) if self.tfirst else (y, t)) + self.args

    def __call__(self, t, y):
        return np.ravel(np.asarray(self.fn(*self.call_args(t, y)), dtype=np.float64))

    def augmented(self, t, s):
        """``(y', a', g')`` of the backward system at ``(t, s)``, ``s = (y, a, g)``."""
        n = self.n
        y, a = s[:n], s[n : 2 * n]
        f, back = self.vjp(self.call_args(t, y))
        cots = back(a)
        ay = np.ravel(np.asarray(cots[0], dtype=np.float64))
        return np.concatenate((np.ravel(f), -ay, -self.pack.flatten(cots[1:])))


def adjoint_sweep(rhs, integrate, ts, ys, dys):
    """Pull the output cotangents back to the start.

    ``ts[0]`` is the initial time and ``ys[0]`` the initial state; the outputs are the
    states ``ys[k]`` at ``ts[k]`` (``k >= 1``) with cotangents ``dys[k - 1]``.
    ``integrate(rhs, s, t_from, t_to)`` solves the augmented system from ``s``.
    Returns ``(a(t0), parameter cotangent, time cotangents of ts[1:], of ts[0])``.
    """
    n = rhs.n
    a = np.zeros(n)
    g = np.zeros(rhs.pack.size)
    t_cots = np.zeros(len(ts) - 1)
    for k in range(len(ts) - 1, 0, -1):
        d = dys[k - 1]
        if d is not ZERO:
            d = np.ravel(np.asarray(d, dtype=np.float64))
            a = a + d
            t_cots[k - 1] = d @ rhs(ts[k], ys[k])
        if ts[k] != ts[k - 1] and (a.any() or g.any()):
            s = integrate(rhs.augmented, np.concatenate((ys[k], a, g)), ts[k], ts[k - 1])
            a, g = s[n : 2 * n], s[2 * n :]
    t0_cot = -(a @ rhs(ts[0], ys[0]))
    return a, g, t_cots, t0_cot


def _real_state(name, y0):
    if np.iscomplexobj(y0):
        raise UnsupportedCallError(
            f"pullback: {name} with a complex state is not differentiated.\n"
            "Fix: write the system for the real and imaginary parts."
        )


def refuse_odeint(p):
    """Refuse what odeint's rule does not differentiate (``p``: the bound call)."""
    refuse_options("scipy.integrate.odeint", p, _ODEINT_REFUSED)
    _real_state("scipy.integrate.odeint", p["y0"])


def odeint_cotangent_values(p, out, dy):
    """``(dy0, dt, dargs)`` of the call ``p`` (bound parameters) whose solution is ``out``
    for its cotangent ``dy``, by the adjoint method."""
    import scipy.integrate as si

    y0, t = p["y0"], p["t"]
    y0v = np.ravel(np.asarray(y0, dtype=np.float64))
    rhs = RightHandSide(p["func"], p["args"], p["tfirst"], y0v.size)
    ts = np.asarray(t, dtype=np.float64)
    solver_opts = {k: p[k] for k in ("rtol", "atol", "mxstep", "hmax") if p[k] is not None}

    def integrate(f, s, t_from, t_to):
        sol = si.odeint(f, s, [t_from, t_to], tfirst=True, **solver_opts)
        return sol[-1]

    dy = np.asarray(dy, dtype=np.float64)
    ys = np.asarray(out, dtype=np.float64)
    swept = None
    dense = odeint_trajectory(p, rhs, ts, y0v)
    if dense is not None:
        rtol = _ODEINT_TOL if p["rtol"] is None else float(np.max(p["rtol"]))
        swept = linear_adjoint(rhs, dense, dense.ts, ts, ys, list(dy[1:]), rtol)
    if swept is None:  # a right-hand side for one state at a time
        swept = adjoint_sweep(rhs, integrate, ts, ys, list(dy[1:]))
    a, g, t_cots, t0_cot = swept
    dt = np.concatenate(([t0_cot], t_cots))
    return finalize_like(a + dy[0], y0), finalize(dt, t), rhs.pack.cotangent(g)


_ODEINT_TOL = 1.49012e-8  # odeint's default rtol and atol


def odeint_trajectory(p, rhs, ts, y0v):
    """Interpolants of the solution of the odeint call ``p`` for the linear adjoint
    (:mod:`scipy_ode_dense`), or ``None``. odeint keeps none, so ``solve_ivp``'s LSODA (the
    same method, switching between stiff and non-stiff steps as odeint does) solves the
    forward problem once more to the caller's tolerances: the adjoint reads ``y(t)`` only
    where it evaluates Jacobians, where the tolerances bound its error as they bound that
    of the augmented backward solve (the other way, which solves ``y`` again backwards
    with one reverse pass of the right-hand side per stage)."""
    if ts.size < 2 or ts[0] == ts[-1]:
        return None
    opts = {
        "rtol": _ODEINT_TOL if p["rtol"] is None else p["rtol"],
        "atol": _ODEINT_TOL if p["atol"] is None else p["atol"],
    }
    if p["hmax"]:
        opts["max_step"] = p["hmax"]
    return dense_again(rhs, (ts[0], ts[-1]), y0v, "LSODA", opts)


def dense_again(rhs, t_span, y0v, method, opts):
    """The interpolants of ``solve_ivp(rhs, t_span, y0v, method, **opts)`` solved once more
    with ``dense_output=True``, for the linear adjoint; ``None`` if that fails, or for a
    right-hand side that does not evaluate column by column (checked first, on two
    columns: the linear adjoint needs that, and the solve would be wasted)."""
    import scipy.integrate as si

    y2 = np.stack((y0v, y0v), axis=1)
    if Jacobians(rhs)(np.full(2, float(t_span[0])), y2) is None:
        return None
    try:
        sol = si.solve_ivp(rhs, t_span, y0v, method, dense_output=True, **opts)
    except Exception:  # options solve_ivp takes otherwise: the augmented system
        return None
    return sol.sol if sol.success else None


def _free_interpolants(method) -> bool:
    """Whether ``dense_output=True`` changes nothing but ``.sol`` for this method: its
    interpolants come from what each step computes anyway (DOP853's take 3 more
    right-hand sides per step, and an unknown solver class may differ)."""
    import scipy.integrate as si

    free = ("RK45", "RK23", "Radau", "BDF", "LSODA")
    return method in free or method in tuple(getattr(si, m) for m in free)


def refuse_solve_ivp(p):
    """Refuse what solve_ivp's rule does not differentiate (``p``: the bound call)."""
    refuse_options("scipy.integrate.solve_ivp", p, _IVP_REFUSED)
    _real_state("scipy.integrate.solve_ivp", p["y0"])


def solve_ivp_forward(p, args=None, kwargs=None):
    """``(sol, interpolants or None)``: the call ``p`` (or ``*args, **kwargs``), keeping
    the interpolants where they cost nothing (see :mod:`scipy_ode_dense`)."""
    import scipy.integrate as si

    dense = None
    if _free_interpolants(p["method"]):
        # The same solve, keeping its interpolants (the values at t_eval come from them
        # anyway): the adjoint then needs no backward solve of y (scipy_ode_dense).
        sol = si.solve_ivp(**dict(p, dense_output=True))
        dense, sol.sol = sol.sol, None
    elif args is None:
        sol = si.solve_ivp(**p)
    else:
        sol = si.solve_ivp(*args, **kwargs)
    require_success(sol, "scipy.integrate.solve_ivp", "reach the end of t_span")
    return sol, dense


def solve_ivp_cotangent_values(p, sol, dense, dys) -> dict:
    """``{parameter: cotangent}`` (``t_span``, ``y0``, ``t_eval``, ``args``) of the call
    ``p`` whose result is ``sol`` for the cotangent ``dys`` of ``sol.y`` (``t_eval``'s
    unfinalized), by the adjoint method."""
    import scipy.integrate as si

    if dys is ZERO:
        return {}
    t_span, y0, t_eval = p["t_span"], p["y0"], p["t_eval"]
    y0v = np.ravel(np.asarray(y0, dtype=np.float64))
    rhs = RightHandSide(p["fun"], p["args"], True, y0v.size)
    opts = {k: p[k] for k in _IVP_PASSED if k in p}
    last_step = {}

    def integrate(f, s, t_from, t_to):
        step = dict(opts)
        h = last_step.get("h")
        if "first_step" not in opts and h is not None and h < abs(t_to - t_from):
            # The step the previous segment ended with: no initial-step search (extra
            # right-hand sides) at each of the many short segments between output times.
            step["first_step"] = h
        back = si.solve_ivp(f, (t_from, t_to), s, method=p["method"], **step)
        require_success(back, "the adjoint solve of scipy.integrate.solve_ivp")
        if back.t.size > 2:
            last_step["h"] = abs(back.t[-2] - back.t[-3]) if back.t.size > 3 else None
        return back.y[:, -1]

    t0, t1 = (float(v) for v in t_span)
    dys = np.asarray(dys, dtype=np.float64)
    ts = np.concatenate(([t0], sol.t))
    ys = np.concatenate((y0v[None, :], sol.y.T))
    swept = None
    if dense is None and t0 != t1:
        # DOP853's interpolants cost three right-hand sides a step: solved once more for
        # them (the same solve), still cheaper than the augmented system backwards
        dense = dense_again(rhs, (t0, t1), y0v, p["method"], opts)
    if dense is not None:
        rtol = float(np.max(p.get("rtol", 1e-3)))
        swept = linear_adjoint(rhs, dense, dense.ts, ts, ys, list(dys.T), rtol)
    if swept is None:  # a right-hand side for one state at a time
        swept = adjoint_sweep(rhs, integrate, ts, ys, list(dys.T))
    a, g, t_cots, t0_cot = swept
    cots = {"y0": finalize_like(a, y0), "args": rhs.pack.cotangent(g)}
    if t_eval is None:  # the solver's own steps: only the ends move with t_span
        dspan = np.array([t0_cot + t_cots[0], t_cots[-1]])
    else:
        dspan = np.array([t0_cot, 0.0])
        cots["t_eval"] = t_cots
    cots["t_span"] = finalize(dspan, t_span)
    return cots
