"""Transformable pullbacks of ``scipy.optimize.fsolve``, ``brentq`` and ``root`` (the
rules are in scipy_optimize.py; each takes the solver's own parameters): the implicit
function theorem written in the differentiable subset, so that second derivatives run
through a solution.

At ``G(x*, p) = 0`` the cotangent ``xbar`` of ``x*`` pulls back to ``-(dG/dp)^T lam`` with
``(dG/dx)^T lam = xbar``. Here ``x*`` is found again by the solver (its rule gives
``dx*/dp`` when this function is differentiated), ``dG/dx`` is assembled row by row from
the user function's vjp and the products with ``dG/dp`` are one more vjp: all through
:func:`~.user_function_calls.user_function_vjp`, whose rule is the user function's second
derivative. A second derivative therefore needs ``G``'s own second derivative, which
pullback takes by transforming the user's function again.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.optimize as so  # this module is imported once scipy.optimize is

from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO, densify
from .user_function_calls import has_tangent, user_function_vjp


@transformable
def residual_cotangent(v, out_shape, output):
    """The cotangent of ``G``'s output for ``v`` (``output``: which output of a function
    returning a pair is ``G``, ``None`` for a function returning ``G`` alone)."""
    v = np.reshape(v, out_shape)
    if output is None:
        return v
    if output == 0:
        return v, ZERO
    return ZERO, v


@transformable
def implicit_cotangent(xbar, G, x, args, output=None):
    """The cotangent of the parameters ``args`` of ``G(x, *args) = 0`` for the cotangent
    ``xbar`` of its solution ``x``: a tuple like ``args`` (a single value when ``args``
    is one, as SciPy allows), ``NO_TANGENT`` where an entry holds no float."""
    params = args if isinstance(args, tuple) else (args,)
    if xbar is ZERO or not has_tangent(params):
        return NO_TANGENT
    n = math.prod(np.shape(x))
    out_shape = output_shape(G, x, params, output)
    eye = np.eye(n)
    rows = [
        user_function_vjp(residual_cotangent(eye[i], out_shape, output), G, x, *params)[0]
        for i in range(n)
    ]
    jac = np.stack([np.ravel(densify(r)) for r in rows]) if n else np.zeros((0, 0))
    lam = np.linalg.solve(np.transpose(jac), np.ravel(densify(xbar)))
    cots = user_function_vjp(residual_cotangent(lam, out_shape, output), G, x, *params)
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


def same_defaults(pullback_fn, fn) -> bool:
    """Whether ``pullback_fn`` (after ``dy``) has ``fn``'s parameters and defaults: it
    passes them on by position, so another SciPy's signature must not meet it."""
    import inspect

    mine = list(inspect.signature(pullback_fn).parameters.values())[1:]
    theirs = list(inspect.signature(fn).parameters.values())
    return [(p.name, p.default) for p in mine] == [(p.name, p.default) for p in theirs]


# -- non-differentiable helpers --------------------------------------------------------
def output_shape(G, x, params, output):
    """The shape of ``G(x, *params)`` (of its output ``output`` when it returns a pair)."""
    out = G(x, *params)
    return np.shape(out if output is None else out[output])


NON_DIFFERENTIABLE = (output_shape,)
