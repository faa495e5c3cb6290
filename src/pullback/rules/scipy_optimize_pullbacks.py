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
pullback takes by transforming the user's function again.
"""

from __future__ import annotations

import functools
import itertools
import linecache
import math
import types

import numpy as np
import scipy.optimize as so  # this module is imported once scipy.optimize is

from ..errors import HigherOrderError
from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO, densify
from .user_function_calls import has_tangent, user_function_vjp


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
    if xbar is ZERO or not has_tangent(params):
        return NO_TANGENT
    n = math.prod(np.shape(x))
    shapes = output_shape(G, x, params, output)
    eye = np.eye(n)
    rows = [
        user_function_vjp(residual_cotangent(eye[i], shapes, output), G, x, *params)[0]
        for i in range(n)
    ]
    jac = np.stack([np.ravel(densify(r)) for r in rows]) if n else np.zeros((0, 0))
    lam = np.linalg.solve(np.transpose(jac), np.ravel(densify(xbar)))
    cots = user_function_vjp(residual_cotangent(lam, shapes, output), G, x, *params)
    out = tuple(
        NO_TANGENT if c is NO_TANGENT or c is ZERO or not has_tangent(p) else -densify(c)
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
    # fsolve's own parameters (checked against its signature when registered), passed on
    # by position: the solution is found again as the forward call found it
    x = so.fsolve(func, x0, args, fprime, 0, col_deriv, xtol, maxfev, band, epsfcn, factor, diag)
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
    G, output = objective_gradient(fun, jac)
    if G is None:
        return minimize_first_order(
            dy, fun, x0, args, method, jac, hess, hessp, bounds, constraints, tol, callback, options
        )
    cargs = NO_TANGENT
    if "x" in dy:
        cargs = implicit_cotangent(dy["x"], G, sol.x, args, output)
    if "fun" in dy and dy["fun"] is not ZERO:
        fbar = dy["fun"]
        if jac is True:
            fbar = (fbar, np.zeros(np.shape(sol.x)))  # zeros: no ZERO inside a pair
        cargs = plus_cotangents(cargs, partial_cotangent(fbar, fun, sol.x, args))
    return (NO_TANGENT, NO_TANGENT, cargs) + (NO_TANGENT,) * 9


@transformable
def partial_cotangent(ybar, fn, x, args):
    """The cotangent of ``args`` of ``fn(x, *args)`` with ``x`` held fixed."""
    params = args if isinstance(args, tuple) else (args,)
    if ybar is ZERO or not has_tangent(params):
        return NO_TANGENT
    cots = user_function_vjp(ybar, fn, x, *params)
    out = tuple(
        NO_TANGENT if c is NO_TANGENT or c is ZERO or not has_tangent(p) else densify(c)
        for c, p in zip(cots[1:], params, strict=True)
    )
    if isinstance(args, tuple):
        return out
    return out[0]


@transformable
def plus_cotangents(a, b):
    """The sum of two cotangents of ``args`` (tuples, single values or ``NO_TANGENT``)."""
    if a is NO_TANGENT:
        return b
    if b is NO_TANGENT:
        return a
    if not isinstance(a, tuple):
        return a + b
    return tuple(
        u if v is NO_TANGENT else (v if u is NO_TANGENT else u + v)
        for u, v in zip(a, b, strict=True)
    )


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
    # by keyword: SciPy's wrapper of least_squares takes workers= by keyword only
    sol = so.least_squares(
        fun, x0, jac, bounds, method, ftol, xtol, gtol, x_scale, loss, f_scale, diff_step,
        tr_solver, tr_options, jac_sparsity, max_nfev, 0, args, kwargs,
        callback=callback, workers=workers,
    )
    if not isinstance(jac, types.FunctionType):
        cargs = least_squares_first_order(dy, fun, sol.x, args)
    else:
        cargs = least_squares_cotangents(dy, fun, sol.x, args, squares_gradient(fun, jac, args))
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
    return plus_cotangents(cargs, implicit_cotangent(xbar, G, x, args))


def same_defaults(pullback_fn, fn) -> bool:
    """Whether ``pullback_fn`` (after ``dy``) has ``fn``'s parameters and defaults: it
    passes them on by position, so another SciPy's signature must not meet it."""
    import inspect

    mine = list(inspect.signature(pullback_fn).parameters.values())[1:]
    theirs = list(inspect.signature(fn).parameters.values())
    return [(p.name, p.default) for p in mine] == [(p.name, p.default) for p in theirs]


# -- non-differentiable helpers --------------------------------------------------------
def output_shape(G, x, params, output):
    """The shape of ``G(x, *params)`` (the shapes of both outputs when it returns a pair,
    ``output`` saying which one is ``G``)."""
    out = G(x, *params)
    if output is None:
        return np.shape(out)
    return np.shape(out[0]), np.shape(out[1])


def objective_gradient(fun, jac):
    """``(G, output)``: the gradient of a minimized objective as a Python function of
    ``(x, *args)`` — the user's ``jac`` function, or the second output of a ``jac=True``
    objective; ``(None, None)`` otherwise (no jac, finite differences, a gradient made by
    ``pullback.grad``)."""
    if isinstance(jac, types.FunctionType):
        return jac, None
    if jac is True:
        return fun, 1
    return None, None


def minimize_first_order(dy, *args):
    """The cotangents of ``minimize(*args)`` by its rule's own pullback: where the
    objective's gradient is pullback's (or finite differences), whose derivative — the
    objective's third — pullback does not take."""
    from .scipy_optimize import _minimize_rrule

    return tuple(_minimize_rrule(*args)[1](dy))


def _minimize_first_order_rrule(dy, *args):
    raise HigherOrderError(
        "pullback: a second derivative through scipy.optimize.minimize needs the "
        "derivative of the objective's gradient at the optimum differentiated once more "
        "(the objective's third derivative), which pullback does not take through its own "
        "gradient or finite differences.\n"
        "Fix: pass jac= a Python function that returns the gradient (or jac=True with an "
        "objective that returns (value, gradient))."
    )


def least_squares_first_order(dy, fun, x, args):
    """The cotangent of ``args`` of ``least_squares`` without a ``jac=`` function: ``G``
    is the reverse-mode gradient of ``0.5 |r|^2`` (exact; ``dG/dx`` by the residuals'
    second derivative), whose derivative — the residuals' third — pullback does not take
    through the vjp of a user function."""
    return least_squares_cotangents(dy, fun, x, args, squares_gradient(fun, None, args))


def _least_squares_first_order_rrule(dy, fun, x, args):
    raise HigherOrderError(
        "pullback: a second derivative through scipy.optimize.least_squares needs the "
        "derivative of J^T r (the gradient of the squared residuals) at the solution "
        "differentiated once more: the residuals' third derivative, which pullback does not "
        "take through the vjp of a user function (the Jacobian of a function without jac=).\n"
        "Fix: pass jac= a Python function that returns the Jacobian of the residuals "
        "(an (m, n) array)."
    )


_SQUARES = itertools.count()


@functools.lru_cache(maxsize=64)
def _squares_source(fun, jac, nargs):
    """``G(x, *args)``: the gradient of ``0.5 |fun(x, *args)|^2`` as a Python function
    with source (``J^T r`` from ``jac``, or the reverse mode of ``fun`` without it), so that
    pullback differentiates it like user code."""
    params = "".join(f", a{k}" for k in range(nargs))
    if jac is None:
        body = f"    r = FUN(x{params})\n    return user_function_vjp(r, FUN, x{params})[0]\n"
    else:
        body = (
            f"    r = np.ravel(FUN(x{params}))\n"
            f"    J = np.reshape(JAC(x{params}), (np.size(r), np.size(x)))\n"
            "    return np.reshape(np.transpose(J) @ r, np.shape(x))\n"
        )
    source = f"def squares_gradient(x{params}):\n" + body
    filename = f"<pullback: gradient of least_squares' squared residuals {next(_SQUARES)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = {"FUN": fun, "JAC": jac, "np": np, "user_function_vjp": user_function_vjp}
    exec(compile(source, filename, "exec"), scope)  # noqa: S102 - our own lines
    return scope["squares_gradient"]


def squares_gradient(fun, jac, args):
    """The generated ``G`` of ``least_squares(fun, ..., jac=jac, args=args)`` (``jac`` a
    function, or ``None``)."""
    nargs = len(args) if isinstance(args, tuple) else 1
    try:
        return _squares_source(fun, jac, nargs)
    except TypeError:  # an unhashable callable: a function per call
        return _squares_source.__wrapped__(fun, jac, nargs)


NON_DIFFERENTIABLE = (output_shape, objective_gradient, squares_gradient)


def register(reg, family):
    """The helpers' entries: the non-differentiable ones, and the first-order-only path
    of ``minimize`` (its rule refuses a second derivative)."""
    reg.non_differentiable(*NON_DIFFERENTIABLE, family=family, trusted=True)
    reg.register(minimize_first_order, _minimize_first_order_rrule, family=family, trusted=True)
    reg.register(
        least_squares_first_order, _least_squares_first_order_rrule, family=family, trusted=True
    )
