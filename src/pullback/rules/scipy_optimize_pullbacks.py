"""Transformable pullbacks of ``scipy.optimize.fsolve``, ``brentq``, ``root`` and
``minimize`` (the rules are in scipy_optimize.py; each takes the solver's own
parameters): the implicit function theorem written in the differentiable subset, so
that second derivatives run through a solution.

At ``G(x*, p) = 0`` the cotangent ``xbar`` of ``x*`` pulls back to ``-(dG/dp)^T lam`` with
``(dG/dx)^T lam = xbar``. Here ``x*`` is found again by the solver (its rule gives
``dx*/dp`` when this function is differentiated), ``dG/dx`` is assembled row by row from
the user function's vjp and the products with ``dG/dp`` are one more vjp: all through
:func:`~.user_function_calls.user_function_vjp`, whose rule is the user function's second
derivative. A second derivative therefore needs ``G``'s own second derivative, which
pullback takes by transforming the user's function again. Where ``G`` is itself pullback's
reverse mode (``minimize`` and ``least_squares`` without a ``jac=`` function), it is a
generated function with source that calls ``user_function_vjp``, whose transformable
pullback closes at every order: the user function's third derivative is taken the same way.

These pullbacks run at first order too (the generated reverse sweep calls them instead of
the rules' closures), so they solve again and refuse what the rules refuse (no
convergence, constraints, a solution on a bound).
"""

from __future__ import annotations

import functools
import math
import types

import numpy as np
import scipy.optimize as so  # this module is imported once scipy.optimize is

from ..errors import UnsupportedCallError
from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO, densify
from ._calculus_util import (
    dense_entry,
    entry_cotangent,
    float_tree,
    has_floats,
    refuse_float_tree,
    register_arg_helpers,
    require_square,
    require_stationary,
    require_success,
)
from .user_function_calls import as_python_function, compiled_with_source, user_function_vjp


@transformable
def residual_cotangent(v, shapes, output):
    """The cotangent of ``G``'s output for ``v`` (``output``: which output of a function
    returning a pair is ``G``, ``None`` for a function returning ``G`` alone; ``shapes``:
    the output's shape, or both shapes of a pair, whose other part gets zeros)."""
    if output is None:
        return np.reshape(v, shapes)
    if output == 0:
        return np.reshape(v, shapes[0]), np.zeros(shapes[1])
    return np.zeros(shapes[0]), np.reshape(v, shapes[1])


@transformable
def implicit_cotangent(xbar, G, x, args, output=None):
    """The cotangent of the parameters ``args`` of ``G(x, *args) = 0`` for the cotangent
    ``xbar`` of its solution ``x``: a tuple like ``args`` (a single value when ``args``
    is one, as SciPy allows), ``NO_TANGENT`` where an entry holds no float."""
    params = args if isinstance(args, tuple) else (args,)
    refuse_float_tree(params)
    if xbar is ZERO or not has_floats(params):
        return NO_TANGENT
    n = math.prod(np.shape(x))
    shapes = output_shape(G, x, params, output)
    eye = np.eye(n)
    rows = [
        user_function_vjp(residual_cotangent(eye[i], shapes, output), G, x, *params)[0]
        for i in range(n)
    ]
    jac = np.stack([np.ravel(densify(r)) for r in rows]) if n else np.zeros((0, 0))
    require_stationary_at(jac, G, x, params, output)
    lam = np.linalg.solve(np.transpose(jac), np.ravel(densify(xbar)))
    cots = user_function_vjp(residual_cotangent(lam, shapes, output), G, x, *params)
    out = tuple(
        NO_TANGENT
        if c is NO_TANGENT or c is ZERO or not has_floats(p)
        else entry_cotangent(-dense_entry(c, p), p)
        for c, p in zip(cots[1:], params, strict=True)
    )
    if isinstance(args, tuple):
        return out
    return out[0]


@transformable
def fsolve_pullback(
    dy,
    func,
    x0,
    args=(),
    fprime=None,
    full_output=0,
    col_deriv=0,
    xtol=1.49012e-08,
    maxfev=0,
    band=None,
    epsfcn=None,
    factor=100,
    diag=None,
):
    # fsolve's own parameters (checked against its signature when registered): the
    # solution is found again as the forward call found it, by the solver fsolve runs
    # (root's "hybr" with fsolve's options), whose result says whether it converged; one
    # that did not is refused as fsolve's rule refuses it (the forward sweep ran fsolve)
    options = fsolve_options(col_deriv, xtol, maxfev, band, epsfcn, factor, diag)
    sol = so.root(func, x0, args, "hybr", fprime, None, None, options)
    require_success(sol, "scipy.optimize.fsolve")
    x = sol.x
    return (NO_TANGENT, NO_TANGENT, implicit_cotangent(dy, func, x, args)) + (NO_TANGENT,) * 9


@transformable
def brentq_pullback(
    dy,
    f,
    a,
    b,
    args=(),
    xtol=2e-12,
    rtol=8.881784197001252e-16,
    maxiter=100,
    full_output=False,
    disp=True,
):
    # brentq tells whether it converged only in its record (full_output=True), which its
    # rule does not differentiate: that solve checks, as brentq's rule does, and the solve
    # whose solution moves with args (its rule, when this function is differentiated) is
    # the forward call's own
    require_success(brentq_status(f, a, b, args, xtol, rtol, maxiter), "scipy.optimize.brentq")
    x = so.brentq(f, a, b, args, xtol, rtol, maxiter, False, disp)
    return (NO_TANGENT,) * 3 + (implicit_cotangent(dy, f, x, args),) + (NO_TANGENT,) * 5


@transformable
def root_pullback(
    dy, fun, x0, args=(), method="hybr", jac=None, tol=None, callback=None, options=None
):
    # the cotangent of the result object is a dict of its attributes': only .x moves
    # (.fun is zero at every solution)
    if dy is ZERO or "x" not in dy:
        return (NO_TANGENT,) * 9
    sol = so.root(fun, x0, args, method, jac, tol, callback, options)
    require_success(sol, "scipy.optimize.root")
    output = 0 if jac is True else None
    return (NO_TANGENT, NO_TANGENT, implicit_cotangent(dy["x"], fun, sol.x, args, output)) + (
        NO_TANGENT,
    ) * 6


@transformable
def minimize_pullback(
    dy,
    fun,
    x0,
    args=(),
    method=None,
    jac=None,
    hess=None,
    hessp=None,
    bounds=None,
    constraints=(),
    tol=None,
    callback=None,
    options=None,
):
    # .x by the implicit function theorem on the gradient G of the objective; .fun by the
    # envelope theorem (d fun(x*, p)/dp = the partial derivative in p at x*)
    if dy is ZERO:
        return (NO_TANGENT,) * 12
    sol = so.minimize(
        fun, x0, args, method, jac, hess, hessp, bounds, constraints, tol, callback, options
    )
    # a statement of its own: a non-differentiable call's result carries no derivative
    checked_minimum(sol, constraints, bounds)
    G, output = objective_gradient(fun, jac, args)
    cargs = NO_TANGENT
    if "x" in dy:
        cargs = implicit_cotangent(dy["x"], G, sol.x, args, output)
    if "fun" in dy and dy["fun"] is not ZERO:
        fbar = dy["fun"]
        if jac is True:
            fbar = (fbar, np.zeros(np.shape(sol.x)))  # zeros: no ZERO inside a pair
        cargs = plus_cotangents(cargs, partial_cotangent(fbar, fun, sol.x, args), args)
    return (NO_TANGENT, NO_TANGENT, cargs) + (NO_TANGENT,) * 9


@transformable
def partial_cotangent(ybar, fn, x, args):
    """The cotangent of ``args`` of ``fn(x, *args)`` with ``x`` held fixed."""
    params = args if isinstance(args, tuple) else (args,)
    refuse_float_tree(params)
    if ybar is ZERO or not has_floats(params):
        return NO_TANGENT
    cots = user_function_vjp(ybar, fn, x, *params)
    out = tuple(
        NO_TANGENT
        if c is NO_TANGENT or c is ZERO or not has_floats(p)
        else entry_cotangent(dense_entry(c, p), p)
        for c, p in zip(cots[1:], params, strict=True)
    )
    if isinstance(args, tuple):
        return out
    return out[0]


@transformable
def plus_cotangents(a, b, args):
    """The sum of two cotangents of ``args`` (tuples like it, single values for a single
    value, or ``NO_TANGENT``)."""
    if a is NO_TANGENT:
        return b
    if b is NO_TANGENT:
        return a
    if not isinstance(args, tuple):
        return plus_entry(a, b, args)
    return tuple(
        u if v is NO_TANGENT else (v if u is NO_TANGENT else plus_entry(u, v, x))
        for u, v, x in zip(a, b, args, strict=True)
    )


@transformable
def plus_entry(u, v, x):
    """The sum of two cotangents of one ``args`` entry ``x`` (a float sequence's element
    by element: ``+`` would join them; a tree's leaf by leaf, through its vector)."""
    if float_tree(x):
        return entry_cotangent(dense_entry(u, x) + dense_entry(v, x), x)
    if isinstance(u, list):
        return [u[i] + v[i] for i in range(len(u))]
    if isinstance(u, tuple):
        return tuple([u[i] + v[i] for i in range(len(u))])
    return u + v


@transformable
def least_squares_pullback(
    dy,
    fun,
    x0,
    jac="2-point",
    bounds=(-math.inf, math.inf),
    method="trf",
    ftol=1e-08,
    xtol=1e-08,
    gtol=1e-08,
    x_scale=None,
    loss="linear",
    f_scale=1.0,
    diff_step=None,
    tr_solver=None,
    tr_options=None,
    jac_sparsity=None,
    max_nfev=None,
    verbose=0,
    args=(),
    kwargs=None,
    callback=None,
    workers=None,
):
    # .x by the implicit function theorem on G = J^T r (the gradient of 0.5 |r|^2); .cost
    # and .fun (the residuals at x*) by the chain rule through x* and directly in args
    if dy is ZERO:
        return (NO_TANGENT,) * 21
    checked_least_squares(None, loss, kwargs)  # before solving
    # by keyword: SciPy's wrapper of least_squares takes workers= by keyword only
    sol = so.least_squares(
        fun,
        x0,
        jac,
        bounds,
        method,
        ftol,
        xtol,
        gtol,
        x_scale,
        loss,
        f_scale,
        diff_step,
        tr_solver,
        tr_options,
        jac_sparsity,
        max_nfev,
        0,
        args,
        kwargs,
        callback=callback,
        workers=workers,
    )
    checked_least_squares(sol, loss, kwargs)
    G = squares_gradient(fun, jac if isinstance(jac, types.FunctionType) else None, args)
    cargs = least_squares_cotangents(dy, fun, sol.x, args, G)
    return (NO_TANGENT,) * 17 + (cargs,) + (NO_TANGENT,) * 3


@transformable
def least_squares_cotangents(dy, fun, x, args, G):
    """The cotangent of ``args`` from the cotangent ``dy`` (a dict of the attributes') of
    ``least_squares``'s result at its solution ``x``, ``G(x, *args)`` the gradient of
    ``0.5 |fun(x, *args)|^2``."""
    params = args if isinstance(args, tuple) else (args,)
    xbar = ZERO
    if "x" in dy and dy["x"] is not ZERO:
        xbar = densify(dy["x"])
    rbar = ZERO
    if "fun" in dy and dy["fun"] is not ZERO:
        rbar = densify(dy["fun"])
    if "cost" in dy and dy["cost"] is not ZERO:
        # cost = 0.5 |r|^2: its cotangent is that of r, times r
        r = fun(x, *params)
        if rbar is ZERO:
            rbar = dy["cost"] * r
        else:
            rbar = rbar + dy["cost"] * r
    cargs = NO_TANGENT
    if rbar is not ZERO:
        # the residuals at x*: through x* and directly in args
        through = user_function_vjp(rbar, fun, x, *params)[0]
        if xbar is ZERO:
            xbar = densify(through)
        else:
            xbar = xbar + densify(through)
        cargs = partial_cotangent(rbar, fun, x, args)
    return plus_cotangents(cargs, implicit_cotangent(xbar, G, x, args), args)


def same_defaults(pullback_fn, fn) -> bool:
    """Whether ``pullback_fn`` (after ``dy``) has ``fn``'s parameters and defaults: it
    passes them on by position, so another SciPy's signature must not meet it."""
    import inspect

    mine = list(inspect.signature(pullback_fn).parameters.values())[1:]
    theirs = list(inspect.signature(fn).parameters.values())
    return [(p.name, p.default) for p in mine] == [(p.name, p.default) for p in theirs]


# -- non-differentiable helpers --------------------------------------------------------
def fsolve_options(col_deriv, xtol, maxfev, band, epsfcn, factor, diag):
    """The options of ``root(..., method="hybr")`` that make it the solve ``fsolve`` runs
    with these parameters (fsolve is that solver under its own names)."""
    return {
        "col_deriv": col_deriv,
        "xtol": xtol,
        "maxfev": maxfev,
        "band": band,
        "eps": epsfcn,
        "factor": factor,
        "diag": diag,
    }


def brentq_status(f, a, b, args, xtol, rtol, maxiter):
    """``{"success", "message"}`` of ``brentq(f, a, b, args, xtol, rtol, maxiter)``: its
    record says whether it converged (what brentq's rule reads)."""
    _, info = so.brentq(f, a, b, args, xtol, rtol, maxiter, True, False)
    return {"success": info.converged, "message": info.flag}


def require_stationary_at(jac, G, x, params, output):
    """:func:`~._calculus_util.require_stationary` of ``G(x, *params)`` (its output
    ``output`` when it returns a pair) with the Jacobian ``jac``."""
    g = G(x, *params)
    require_stationary("scipy.optimize", jac, g if output is None else g[output], x)


def output_shape(G, x, params, output):
    """The shape of ``G(x, *params)`` (the shapes of both outputs when it returns a pair,
    ``output`` saying which one is ``G``). Refused where ``G`` has not one equation per
    unknown (``root(..., method="lm")`` of an overdetermined system)."""
    out = G(x, *params)
    require_square("scipy.optimize.root", out if output is None else out[output], x)
    if output is None:
        return np.shape(out)
    return np.shape(out[0]), np.shape(out[1])


def _refuse_active_bounds(name, x, lower, upper):
    lo, hi = np.broadcast_to(lower, np.shape(x)), np.broadcast_to(upper, np.shape(x))
    if np.any(x <= lo) or np.any(x >= hi):
        raise UnsupportedCallError(
            f"pullback: {name}: the solution lies on a bound, where it does not move "
            "smoothly with the parameters.\nFix: widen the bounds or reparametrize."
        )


def checked_minimum(sol, constraints, bounds):
    """``sol`` of ``minimize``, refused where the implicit function theorem on the gradient
    does not give its derivative: constraints (checked alone when ``sol`` is None, before
    solving), no convergence, a solution on a bound. Called by the rule and by the
    transformable pullback (which solves again)."""
    if constraints:
        raise UnsupportedCallError(
            "pullback: scipy.optimize.minimize with constraints is not differentiated "
            "(the multipliers would enter the implicit function).\n"
            "Fix: remove the constraints, e.g. by a change of variables."
        )
    if sol is None:
        return None
    require_success(sol, "scipy.optimize.minimize")
    if bounds is not None:
        b = bounds if isinstance(bounds, so.Bounds) else so.Bounds(*zip(*bounds, strict=True))
        _refuse_active_bounds("scipy.optimize.minimize", sol.x, b.lb, b.ub)
    return sol


def checked_least_squares(sol, loss, kwargs):
    """``sol`` of ``least_squares``, refused where its derivative is not taken: a loss other
    than ``"linear"``, ``kwargs=``, no convergence, an active bound (by the rule, and by the
    transformable pullback, which solves again)."""
    name = "scipy.optimize.least_squares"
    if loss != "linear" or kwargs:
        raise UnsupportedCallError(
            f"pullback: {name} is differentiated for loss='linear' and no kwargs=.\n"
            "Fix: fold the loss into the residuals and the keywords into args."
        )
    if sol is not None:
        require_success(sol, name)
        if np.any(sol.active_mask != 0):
            _refuse_active_bounds(name, np.zeros(1), 1.0, -1.0)
    return sol


def objective_gradient(fun, jac, args):
    """``(G, output)``: the gradient of a minimized objective as a Python function of
    ``(x, *args)`` — the user's ``jac`` function (a callable object through a wrapper that
    calls it), the second output of a ``jac=True`` objective (``output`` 1), or, without a
    gradient function (``jac=None``, finite differences), pullback's reverse mode of the
    objective: exact, and its derivatives of every order are the objective's own
    (user_function_vjp's transformable pullback)."""
    nargs = len(args) if isinstance(args, tuple) else 1
    if isinstance(jac, types.FunctionType):
        return jac, None
    if jac is True:
        return fun, 1
    made = hasattr(jac, "gradient_function")  # by pullback.grad or value_and_grad
    if made and getattr(jac, "wrt_arg", None) == 0 and not getattr(jac, "has_aux", True):
        # grad(f) (SciPy takes no other): the reverse mode of f, as a function with source
        # (a call of grad(f) in code pullback transforms has no rule)
        return _cached(_gradient_source, jac.fn, None, nargs, "objective"), None
    if callable(jac):  # a callable object, bound method, partial
        return as_python_function(jac, 1 + nargs), None
    return _cached(_gradient_source, fun, None, nargs, "objective"), None


@functools.lru_cache(maxsize=64)
def _gradient_source(fun, jac, nargs, what):
    """``G(x, *args)`` as a Python function with source, so that pullback differentiates
    it like user code: for ``what="objective"`` the gradient of ``fun`` (reverse mode);
    for ``"squares"`` the gradient of ``0.5 |fun(x, *args)|^2``, ``J^T r`` from ``jac`` or
    by the reverse mode of ``fun`` without it."""
    params = "".join(f", a{k}" for k in range(nargs))
    if what == "objective":
        body = f"    return user_function_vjp(1.0, FN, x{params})[0]\n"
    elif jac is None:
        body = f"    r = FN(x{params})\n    return user_function_vjp(r, FN, x{params})[0]\n"
    else:
        body = (
            f"    r = np.ravel(FN(x{params}))\n"
            f"    J = np.reshape(JAC(x{params}), (np.size(r), np.size(x)))\n"
            "    return np.reshape(np.transpose(J) @ r, np.shape(x))\n"
        )
    source = f"def {what}_gradient(x{params}):\n" + body
    scope = {"FN": fun, "JAC": jac, "np": np, "user_function_vjp": user_function_vjp}
    return compiled_with_source(source, f"{what}_gradient", scope)


def _cached(make, *key):
    try:
        return make(*key)
    except TypeError:  # an unhashable callable: a function per call
        return make.__wrapped__(*key)


def squares_gradient(fun, jac, args):
    """The generated ``G`` of ``least_squares(fun, ..., jac=jac, args=args)`` (``jac`` a
    function, or ``None``)."""
    nargs = len(args) if isinstance(args, tuple) else 1
    return _cached(_gradient_source, fun, jac, nargs, "squares")


NON_DIFFERENTIABLE = (
    require_stationary_at,
    fsolve_options,
    brentq_status,
    output_shape,
    objective_gradient,
    squares_gradient,
    require_success,
    checked_minimum,
    checked_least_squares,
)


def register(reg, family):
    """The helpers' entries: the non-differentiable ones."""
    reg.non_differentiable(*NON_DIFFERENTIABLE, family=family, trusted=True)
    register_arg_helpers(reg)
