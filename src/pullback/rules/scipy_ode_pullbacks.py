"""Transformable pullbacks of ``scipy.integrate.odeint`` and ``solve_ivp`` (the rules are in
scipy_ode.py, the adjoint method both call in scipy_ode_adjoint.py): second derivatives of
an ODE solution through the adjoint method itself.

Each pullback function has the solver's own parameters and hands the numbers to a
primitive (:func:`odeint_cotangents`, :func:`solve_ivp_cotangents`) that computes them as the
first-order rule does (plus the forward solve made again: the pullback function gets the
solver's arguments, not its result; a first derivative calls the rule's closure instead,
which keeps the forward's solution, ``register_solver(keep_closure=True)``). The
derivatives of those primitives are those of a *reference* computation of the same
cotangents in the differentiable subset:

1. the forward solution at the output times, by the same solver call (its rule gives the
   solution's derivatives when the reference is differentiated);
2. the adjoint sweep from the last output time to the first: at each output ``t_k`` the
   adjoint ``a`` takes the output's cotangent (and ``t_k`` the cotangent
   ``dy_k . f(t_k, y_k)``), then the augmented system :func:`augmented` —
   ``y' = f, a' = -a^T df/dy, g' = -a^T df/dp`` — is solved back to ``t_{k-1}`` by the
   same solver with the caller's tolerances, from the forward state ``y_k``.

Differentiating the reference differentiates those solves: their own rules run the
adjoint method on the augmented system, whose right-hand side pullback differentiates
through :func:`~.user_function_calls.user_function_vjp` (the user's second derivatives).
The comparison of a second derivative with finite differences is therefore as accurate as
the solver's tolerances make the adjoint solves. The references stay in what a second
derivative of the solvers takes (solve_ivp's segments read at ``t_eval=[end]``, not at the
solver's last step), so differentiating them again gives third derivatives.

Second derivatives are refused (``HigherOrderError``) where they would not be exact:
``solve_ivp`` without ``t_eval`` (the outputs are at the solver's own steps, which jump with
the parameters) and options other than ``rtol``/``atol``/``max_step``.
"""

from __future__ import annotations

import numpy as np
import scipy.integrate as si  # this module is imported once scipy.integrate is

from ..errors import HigherOrderError
from ..list_operands import dense_operand
from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO
from . import scipy_ode_adjoint as adjoint
from ._calculus_util import (
    bound_call,
    dense_entry,
    entry_cotangent,
    entry_size,
    has_floats,
    reference_form,
    reference_shape,
    register_arg_helpers,
    register_with_reference,
    same_parameters,
)
from .numpy_functional_pullbacks import dense_like
from .scipy_quad_pullbacks import register_user_call, user_call, user_call_pullback
from .user_function_calls import user_function_vjp


# -- odeint -------------------------------------------------------------------------------
@transformable
def odeint_pullback(
    dy,
    func,
    y0,
    t,
    args=(),
    Dfun=None,
    col_deriv=0,
    full_output=0,
    ml=None,
    mu=None,
    rtol=None,
    atol=None,
    tcrit=None,
    h0=0.0,
    hmax=0.0,
    hmin=0.0,
    ixpr=0,
    mxstep=0,
    mxhnil=0,
    mxordn=12,
    mxords=5,
    printmessg=0,
    tfirst=False,
):
    # odeint's own parameters (checked against its signature when registered); one
    # cotangent per parameter, so that y0=, t= and args= given by keyword find theirs
    refuse_odeint_call(func, y0, t, full_output, Dfun, col_deriv)
    if dy is ZERO:
        return (NO_TANGENT,) * 22
    params = args  # (a non-differentiable helper would cut the gradient through it)
    if args is None:
        params = ()
    elif not isinstance(args, tuple):
        params = (args,)
    else:  # a plain tuple (args=P(c, k), a named tuple, is spread as its fields)
        params = tuple([args[i] for i in range(len(args))])
    wide = widened(params)
    cots = odeint_cotangents(dy, func, y0, t, wide, tfirst, rtol, atol, mxstep, hmax)
    dargs = args_cotangent(cots[2], params, args)
    dy0 = like_input(cots[0], y0)
    return (NO_TANGENT, dy0, like_input(cots[1], t), dargs) + (NO_TANGENT,) * 18


def odeint_cotangents(dy, func, y0, t, params, tfirst, rtol, atol, mxstep, hmax):
    """``(dy0, dt, dparams)`` of ``odeint(func, y0, t, params, ...)`` for the cotangent
    ``dy`` of its solution, as the first-order rule computes them (the solve made again;
    ``dparams`` a tuple like ``params``, 0.0 for an entry without floats)."""
    kwargs = {"rtol": rtol, "atol": atol, "mxstep": mxstep, "hmax": hmax, "tfirst": tfirst}
    p = bound_call(si.odeint, (func, y0, t, params), kwargs)
    out = si.odeint(func, y0, t, params, **kwargs)
    dy0, dt, dargs = adjoint.odeint_cotangent_values(p, out, dy)
    return as_array(dy0), as_array(dt), reference_form(dargs, params)


@transformable
def odeint_cotangents_reference(dy, func, y0, t, params, tfirst, rtol, atol, mxstep, hmax):
    """What :func:`odeint_cotangents` computes, in the differentiable subset (no
    star-call, no list: it is differentiated again)."""
    # the solver's options and the function are constants (no gradient flows through them)
    opts = solver_options(rtol, atol, mxstep, hmax, tfirst)
    fn = constant(func)
    ys = si.odeint(
        func,
        y0,
        t,
        params,
        rtol=opts["rtol"],
        atol=opts["atol"],
        mxstep=opts["mxstep"],
        hmax=opts["hmax"],
        tfirst=opts["tfirst"],
    )
    n, m, basis, a, g, dt = sweep_start(y0, t, params)
    for k in range(m - 1, 0, -1):
        a = a + dy[k]
        dt = dt + basis[k] * np.dot(dy[k], rhs_value(fn, t[k], ys[k], opts["tfirst"], params))
        if t[k] != t[k - 1]:
            s0 = np.concatenate((ys[k], a, g))
            grid = np.stack((t[k], t[k - 1]))
            seg = si.odeint(
                augmented,
                s0,
                grid,
                (fn, n, opts["tfirst"]) + params,
                rtol=opts["rtol"],
                atol=opts["atol"],
                mxstep=opts["mxstep"],
                hmax=opts["hmax"],
                tfirst=True,
            )
            a = seg[1, n : 2 * n]
            g = seg[1, 2 * n :]
    dt = dt - basis[0] * np.dot(a, rhs_value(fn, t[0], ys[0], opts["tfirst"], params))
    return a + dy[0], dt, unflatten(g, params)


@transformable
def odeint_cotangents_pullback(c, dy, func, y0, t, params, tfirst, rtol, atol, mxstep, hmax):
    return user_function_vjp(
        c, odeint_cotangents_reference, dy, func, y0, t, params, tfirst, rtol, atol, mxstep, hmax
    )


# -- solve_ivp ----------------------------------------------------------------------------
@transformable
def solve_ivp_pullback(
    dy,
    fun,
    t_span,
    y0,
    method="RK45",
    t_eval=None,
    dense_output=False,
    events=None,
    vectorized=False,
    args=None,
    **options,
):
    # solve_ivp's own parameters; the cotangent of the result is a dict of its
    # attributes' (.y, and .t where it is t_eval)
    refuse_solve_ivp_call(fun, t_span, y0, method, t_eval, dense_output, events, vectorized)
    if dy is ZERO:
        return (NO_TANGENT,) * 9
    params = args
    if args is None:
        params = ()
    elif not isinstance(args, tuple):
        params = (args,)
    else:  # a plain tuple (args=P(c, k), a named tuple, is spread as its fields)
        params = tuple([args[i] for i in range(len(args))])
    dspan = NO_TANGENT
    dy0 = NO_TANGENT
    dt_eval = NO_TANGENT
    dargs = NO_TANGENT
    if "y" in dy and dy["y"] is not ZERO:
        tol = solver_tolerances(options)
        cots = solve_ivp_cotangents(dy["y"], fun, t_span, y0, method, t_eval, params, tol)
        dspan = span_cotangent(cots[0], t_span)
        dy0 = like_input(cots[1], y0)
        if t_eval is not None:
            dt_eval = like_input(cots[2], t_eval)
        dargs = args_cotangent(cots[3], params, args)
    if t_eval is not None and "t" in dy and dy["t"] is not ZERO:  # sol.t is t_eval
        if dt_eval is NO_TANGENT:
            dt_eval = dy["t"]
        else:
            dt_eval = dt_eval + dy["t"]
    return (NO_TANGENT, dspan, dy0, NO_TANGENT, dt_eval, NO_TANGENT, NO_TANGENT, NO_TANGENT, dargs)


def solve_ivp_cotangents(dys, fun, t_span, y0, method, t_eval, params, tol):
    """``((dt0, dt1), dy0, dt_eval, dparams)`` of ``solve_ivp(fun, t_span, y0, method,
    t_eval, args=params, **tol)`` for the cotangent ``dys`` of ``sol.y``, as the
    first-order rule computes them (0.0 for ``dt_eval`` without ``t_eval``, and in
    ``dparams`` for an entry without floats)."""
    given = {"method": method, "t_eval": t_eval, "args": params, **dict(tol)}
    p = bound_call(si.solve_ivp, (fun, t_span, y0), given)
    sol, dense = adjoint.solve_ivp_forward(p)
    cots = adjoint.solve_ivp_cotangent_values(p, sol, dense, dys)
    dt_eval = as_array(cots["t_eval"]) if t_eval is not None else 0.0
    dargs = reference_form(cots["args"], params)
    dspan = cots["t_span"]
    return (dspan[0], dspan[1]), as_array(cots["y0"]), dt_eval, dargs


@transformable
def solve_ivp_cotangents_reference(dys, fun, t_span, y0, method, t_eval, params, tol):
    """What :func:`solve_ivp_cotangents` computes, in the differentiable subset."""
    refuse_own_steps(t_eval)
    opts = solver_options(tol)
    fn = constant(fun)
    rtol = opts["rtol"]
    atol = opts["atol"]
    max_step = opts["max_step"]
    sol = si.solve_ivp(
        fun, t_span, y0, method, t_eval, args=params, rtol=rtol, atol=atol, max_step=max_step
    )
    ys = sol.y
    n, m, basis, a, g, dt = sweep_start(y0, t_eval, params)
    for k in range(m - 1, -1, -1):
        a = a + dys[:, k]
        dt = dt + basis[k] * np.dot(dys[:, k], rhs_value(fn, t_eval[k], ys[:, k], True, params))
        t_before = t_span[0]
        if k > 0:
            t_before = t_eval[k - 1]
        if t_eval[k] != t_before:
            s0 = np.concatenate((ys[:, k], a, g))
            # read at t_eval=[t_before] (the end of the segment), not at the solver's last
            # step: the same value, and one that solve_ivp's second derivative takes
            seg = si.solve_ivp(
                augmented,
                np.stack((t_eval[k], t_before)),
                s0,
                method,
                np.stack((t_before,)),
                args=(fn, n, True) + params,
                rtol=rtol,
                atol=atol,
                max_step=max_step,
            )
            a = seg.y[n : 2 * n, 0]
            g = seg.y[2 * n :, 0]
    # the right-hand side at the start sees y0 as solve_ivp hands it on (an array, where
    # the caller gave a list or tuple: `-k * y` of a list is no vector)
    dt0 = -np.dot(a, rhs_value(fn, t_span[0], dense_operand(y0), True, params))
    return (dt0, 0.0 * dt0), a, dt, unflatten(g, params)


@transformable
def solve_ivp_cotangents_pullback(c, dys, fun, t_span, y0, method, t_eval, params, tol):
    return user_function_vjp(
        c, solve_ivp_cotangents_reference, dys, fun, t_span, y0, method, t_eval, params, tol
    )


# -- the augmented system and its pieces (differentiable) ------------------------------------
@transformable
def sweep_start(y0, times, params):
    """``(n, m, basis, a, g, dt)`` at the start of an adjoint sweep over ``m`` output times:
    the state's size, the basis of the time cotangents, and zero adjoint, parameter and
    time cotangents."""
    n = np.size(y0)
    m = np.size(times)
    return n, m, np.eye(m), np.zeros(n), np.zeros(parameter_size(params)), np.zeros(m)


@transformable
def augmented(t, s, func, n, tfirst, *params):
    """``(y', a', g')`` of the backward system at ``(t, s)``, ``s = (y, a, g)``: the
    right-hand side of the adjoint solves, for odeint (``tfirst=True``) and solve_ivp."""
    y = s[:n]
    a = s[n : 2 * n]
    if tfirst:
        raw = user_call(func, t, (y,) + params)
    else:
        raw = user_call(func, y, (t,) + params)
    # the adjoint in the form of the right-hand side's result (a list or tuple: its
    # items), so that differentiated again its cotangent comes back as that form's and
    # reaches `a` as an array (a list added into the array was an object-dtype sum)
    a_out = a
    if isinstance(raw, (list, tuple)):
        a_out = like_input(a, raw)
    # the vjp by user_call's pullback (no star-call: this function is differentiated again)
    if tfirst:
        cots = user_call_pullback(a_out, func, t, (y,) + params)
        ay = cots[2][0]
    else:
        cots = user_call_pullback(a_out, func, y, (t,) + params)
        ay = cots[1]
    f = np.ravel(np.asarray(raw, dtype=np.float64))
    gp = flat_cotangent(cots[2][1:], params)
    return np.concatenate((f, -np.ravel(dense_like(ay, y)), -gp))


@transformable
def rhs_value(func, t, y, tfirst, params):
    """``func(t, y, *params)`` (or ``func(y, t, ...)``) as a flat float vector."""
    if tfirst:
        f = user_call(func, t, (y,) + params)
    else:
        f = user_call(func, y, (t,) + params)
    return np.ravel(np.asarray(f, dtype=np.float64))


@transformable
def flat_cotangent(cots, params):
    """The cotangents of the float entries of ``params`` as one vector."""
    out = np.zeros(0)
    for k in range(len(params)):
        if has_floats(params[k]):
            out = np.concatenate((out, np.ravel(dense_entry(cots[k], params[k]))))
    return out


@transformable
def unflatten(g, params):
    """A tuple like ``params`` from the flat vector ``g`` (0.0 for entries without floats)."""
    out = ()
    start = 0
    for k in range(len(params)):
        if has_floats(params[k]):
            size = entry_size(params[k])
            out = out + (np.reshape(g[start : start + size], reference_shape(params[k])),)
            start = start + size
        else:
            out = out + (0.0,)
    return out


@transformable
def widened(params):
    """``params`` with its float32 arrays and scalars as float64: the adjoint system of a
    second derivative solves with the caller's tolerances, which float32 cotangents of
    the parameters (rounded at each right-hand side evaluation) make it miss (odeint:
    "excess work done", an asymmetric Hessian). The cast's pullback gives float32 back."""
    out = ()
    for k in range(len(params)):
        p = params[k]
        if isinstance(p, (np.ndarray, np.floating)) and p.dtype == np.float32:
            out = out + (np.asarray(p, dtype=np.float64),)
        else:
            out = out + (p,)
    return out


@transformable
def like_input(d, x):
    """The cotangent ``d`` (an array) of a state or times given as a list or tuple ``x``
    in that form (an array in the array's dtype)."""
    if isinstance(x, list):
        return [d[k] for k in range(len(x))]
    if isinstance(x, tuple):
        return tuple([d[k] for k in range(len(x))])
    if isinstance(x, np.ndarray) and x.dtype == np.float32:
        # (np.asarray, not d.astype: a method found at run time has no third derivative)
        return np.asarray(d, dtype=np.float32)
    return d


@transformable
def span_cotangent(d, t_span):
    """The cotangent of ``t_span`` (a tuple, list or array) from the pair ``d``."""
    if isinstance(t_span, tuple):
        return d
    if isinstance(t_span, list):
        return [d[0], d[1]]
    return np.stack(d)


@transformable
def args_cotangent(dparams, params, args):
    """The cotangent of the solver's ``args`` from the primitive's tuple ``dparams``."""
    if not has_floats(params):
        return NO_TANGENT
    out = ()
    for k in range(len(params)):
        out = out + (entry_cotangent(dparams[k], params[k]),)
    if isinstance(args, tuple):
        return out
    return out[0]  # SciPy accepts a single non-tuple value


# -- non-differentiable helpers --------------------------------------------------------
def as_array(c):
    """A cotangent the first-order rule gave in its argument's form, as a float64 array
    (the form the reference computation gives: the pullback function puts it back)."""
    return np.asarray(c, dtype=np.float64)


def parameter_size(params) -> int:
    """The number of floats among ``params``."""
    return sum(entry_size(p) for p in params if has_floats(p))


_TOLERANCES = (("rtol", 1e-3), ("atol", 1e-6), ("max_step", np.inf))


def solver_tolerances(options):
    """solve_ivp's ``rtol``, ``atol``, ``max_step`` as ``((name, value), ...)``; other
    options (``first_step``, ``min_step``, ...) stay with the first derivatives."""
    return tuple((name, options.get(name, default)) for name, default in _TOLERANCES)


def solver_options(*given):
    """The solver's options as keywords (constants: no gradient flows through them):
    odeint's ``rtol, atol, mxstep, hmax, tfirst`` or solve_ivp's ``((name, value), ...)``."""
    if len(given) == 1:
        return dict(given[0])
    return dict(zip(("rtol", "atol", "mxstep", "hmax", "tfirst"), given, strict=True))


def constant(value):
    """``value``, through which no gradient flows (a function passed on to a solver)."""
    return value


def refuse_odeint_call(func, y0, t, full_output, Dfun, col_deriv):
    """odeint's refusals, as its rule gives them (the forward call ran plainly)."""
    adjoint.refuse_odeint(
        {"func": func, "y0": y0, "full_output": full_output, "Dfun": Dfun, "col_deriv": col_deriv}
    )


def refuse_solve_ivp_call(fun, t_span, y0, method, t_eval, dense_output, events, vectorized):
    """solve_ivp's refusals, as its rule gives them."""
    given = {"fun": fun, "y0": y0, "dense_output": dense_output, "events": events}
    adjoint.refuse_solve_ivp(dict(given, vectorized=vectorized))


def refuse_own_steps(t_eval):
    """A second derivative of a solution at the solver's own steps is not exact."""
    if t_eval is None:
        raise HigherOrderError(
            "pullback: a second derivative through scipy.integrate.solve_ivp without t_eval "
            "is not taken: the solution is read at the solver's own steps, whose times jump "
            "with the parameters.\n"
            "Fix: pass t_eval= (the times where the solution is read)."
        )


NON_DIFFERENTIABLE = (
    as_array,
    parameter_size,
    solver_tolerances,
    solver_options,
    constant,
    refuse_odeint_call,
    refuse_solve_ivp_call,
    refuse_own_steps,
)


def register(reg, family):
    """The pullback functions of odeint and solve_ivp and the primitives they call."""
    reg.non_differentiable(*NON_DIFFERENTIABLE, family=family, trusted=True)
    register_arg_helpers(reg)
    register_user_call(reg)
    for fast, pullback_fn, what in (
        (odeint_cotangents, odeint_cotangents_pullback, "odeint"),
        (solve_ivp_cotangents, solve_ivp_cotangents_pullback, "solve_ivp"),
    ):
        notes = f"{what}'s cotangents; derivatives by the adjoint system solved again"
        register_with_reference(reg, family, fast, pullback_fn, notes=notes)
    for solver, pullback_fn in ((si.odeint, odeint_pullback), (si.solve_ivp, solve_ivp_pullback)):
        if same_parameters(pullback_fn, solver):  # else first order only
            reg.set_pullback_function(solver, pullback_fn)
