"""The transformable pullback of ``scipy.integrate.quad`` (its rule is in scipy_quad.py):
second derivatives of an integral, by the same mathematics as the first.

``quad_pullback`` has quad's own parameters. It hands the numbers to the primitive
:func:`quad_cotangents`, which computes them as the first-order rule does (quad's
subintervals, one reverse pass over their Gauss-Kronrod nodes; quad made again for them,
which a first derivative avoids: it calls the rule's closure, ``keep_closure=True``). The
derivatives of that primitive are those of
:func:`quad_cotangents_reference`, the same cotangents written in the differentiable subset:

* ``da = -g f(a)`` and ``db = g f(b)`` (the fundamental theorem; zero at an infinite
  limit) — calls of the integrand, which pullback differentiates in ``x`` and the
  parameters;
* ``dtheta = g * quad(df/dtheta, a, b)`` (under the integral sign) — one ``quad`` per
  parameter element of an integrand :func:`parameter_derivative` that calls the user's
  vjp through :func:`~.user_function_calls.user_function_vjp`.

Differentiating the reference therefore runs quad's rule again on the integrand's
derivatives: the Leibniz rule with its limit terms (``d/db quad(df/dtheta) = df/dtheta(b)``)
and the integral of the second derivative ``d2f/dtheta2`` under the sign.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.integrate as si  # this module is imported once scipy.integrate is

from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO
from ._calculus_util import (
    ARGS_HELPERS_FAMILY,
    ArgsPack,
    bound_call,
    dense_entry,
    entry_cotangent,
    entry_size,
    has_floats,
    reference_form,
    reference_shape,
    refuse_options,
    register_arg_helpers,
    register_with_reference,
    same_parameters,
)
from ._quad_leibniz import REFUSED, quad_cotangent_values, subintervals, with_subintervals
from .user_function_calls import compiled_with_source, user_function_vjp

_NONE_AFTER_ARGS = (NO_TANGENT,) * 11  # full_output ... complex_func


@transformable
def quad_pullback(
    dy,
    func,
    a,
    b,
    args=(),
    full_output=0,
    epsabs=1.49e-08,
    epsrel=1.49e-08,
    limit=50,
    points=None,
    weight=None,
    wvar=None,
    wopts=None,
    maxp1=50,
    limlst=50,
    complex_func=False,
):
    # quad's own parameters (checked against its signature when registered); one
    # cotangent per parameter, so that args= given by keyword finds its own
    refuse_quad_options(full_output, weight)
    if dy is ZERO:
        return (NO_TANGENT,) * 15
    g = dy[0]  # the value's cotangent (abserr carries none)
    if g is ZERO or g is NO_TANGENT or g is None:
        return (NO_TANGENT,) * 15
    params = args  # (a non-differentiable helper would cut the gradient through it)
    if args is None:
        params = ()
    elif not isinstance(args, tuple):
        params = (args,)
    else:  # a plain tuple (args=P(c, k), a named tuple, is spread as its fields)
        params = tuple([args[i] for i in range(len(args))])
    cots = quad_cotangents(g, func, a, b, epsabs, epsrel, limit, points, params)
    dparams = tuple(entry_cotangent(cots[2][k], params[k]) for k in range(len(params)))
    if not has_floats(params):
        dargs = NO_TANGENT
    elif isinstance(args, tuple):
        dargs = dparams
    else:  # SciPy accepts a single non-tuple value
        dargs = dparams[0]
    return (NO_TANGENT, cots[0], cots[1], dargs) + _NONE_AFTER_ARGS


def quad_cotangents(g, func, a, b, epsabs, epsrel, limit, points, params):
    """``(da, db, dparams)`` of ``quad(func, a, b, params)``'s value for its cotangent
    ``g``, computed as the first-order rule computes them (``dparams`` in the reference's
    form, :func:`~._calculus_util.reference_form`)."""
    kwargs = {"epsabs": epsabs, "epsrel": epsrel, "limit": limit, "points": points}
    p = bound_call(si.quad, (func, a, b, params), kwargs)
    info = subintervals(p, warn=False)[1] if with_subintervals(p) else None
    pack = ArgsPack(params)
    da, db, dargs = quad_cotangent_values(float(np.sum(g)), func, a, b, pack, p, info)
    return da, db, reference_form(dargs, params)


@transformable
def quad_cotangents_reference(g, func, a, b, epsabs, epsrel, limit, points, params):
    """What :func:`quad_cotangents` computes, in the differentiable subset (no star-call:
    a function differentiated through ``user_function_vjp`` must be differentiable
    again)."""
    da = 0.0
    if np.isfinite(a):
        da = -g * user_call(func, a, params)
    db = 0.0
    if np.isfinite(b):
        db = g * user_call(func, b, params)
    # (tuples and sums, not lists: this function is differentiated again)
    dparams = ()
    for k in range(len(params)):
        dparams = dparams + (
            g * parameter_integral(func, a, b, k, params, epsabs, epsrel, limit, points),
        )
    return da, db, dparams


@transformable
def parameter_integral(func, a, b, k, params, epsabs, epsrel, limit, points):
    """``quad(d func / d params[k], a, b)`` element by element (0.0 without floats)."""
    if not has_floats(params[k]):
        return 0.0
    n = entry_size(params[k])
    basis = np.eye(n)
    total = np.zeros(n)
    for j in range(n):
        inner = (func, k, j) + params
        part = si.quad(parameter_derivative, a, b, inner, 0, epsabs, epsrel, limit, points)
        total = total + basis[j] * part[0]
    return np.reshape(total, reference_shape(params[k]))


@transformable
def parameter_derivative(x, func, k, j, *params):
    """Element ``j`` of ``d func(x, *params) / d params[k]`` (an integrand of quad)."""
    cots = user_function_vjp(1.0, func, x, *params)
    return np.ravel(dense_entry(cots[1 + k], params[k]))[j]


@transformable
def quad_cotangents_pullback(c, g, func, a, b, epsabs, epsrel, limit, points, params):
    return user_function_vjp(
        c, quad_cotangents_reference, g, func, a, b, epsabs, epsrel, limit, points, params
    )


def user_call(fn, x, params):
    """``fn(x, *params)``: a call of a user's function (integrand, right-hand side) that a
    reference computation makes, differentiated through the function's own vjp (without
    a star-call, which code differentiated again cannot hold)."""
    return fn(x, *params)


def _user_call_rrule(fn, x, params):
    y = fn(x, *params)

    def user_call_back(dy):
        return user_call_pullback(dy, fn, x, params)

    return y, user_call_back


@transformable
def user_call_pullback(dy, fn, x, params):
    # no star-call here either (this function is differentiated again): up to four
    # parameters spelled out, more through a generated function of (x, params)
    n = len(params)
    if n == 0:
        return NO_TANGENT, user_function_vjp(dy, fn, x)[0], ()
    if n == 1:
        cots = user_function_vjp(dy, fn, x, params[0])
        return NO_TANGENT, cots[0], tuple_cotangent(cots[1:], params)
    if n == 2:
        cots = user_function_vjp(dy, fn, x, params[0], params[1])
        return NO_TANGENT, cots[0], tuple_cotangent(cots[1:], params)
    if n == 3:
        cots = user_function_vjp(dy, fn, x, params[0], params[1], params[2])
        return NO_TANGENT, cots[0], tuple_cotangent(cots[1:], params)
    if n == 4:
        cots = user_function_vjp(dy, fn, x, params[0], params[1], params[2], params[3])
        return NO_TANGENT, cots[0], tuple_cotangent(cots[1:], params)
    cots = user_function_vjp(dy, spread_call(fn, n), x, params)
    return NO_TANGENT, cots[0], tuple_cotangent(cots[1], params)


@transformable
def tuple_cotangent(c, params):
    """The cotangent of the tuple ``params`` as a tuple (``ZERO`` spelled out)."""
    whole = c is ZERO or c is NO_TANGENT or c is None
    out = ()
    for k in range(len(params)):
        if whole or c[k] is None:
            out = out + (ZERO,)
        else:
            out = out + (c[k],)
    return out


# -- non-differentiable helpers --------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _spread(fn, nparams: int):
    items = "".join(f", params[{k}]" for k in range(nparams))
    source = f"def spread(x, params):\n    return FN(x{items})\n"
    return compiled_with_source(source, "spread", {"FN": fn})


def spread_call(fn, nparams: int):
    """A Python function ``spread(x, params)`` returning ``fn(x, *params)`` (source of its
    own, so that pullback transforms it, and the call of ``fn`` in it, like user code)."""
    try:
        return _spread(fn, nparams)
    except TypeError:  # unhashable callable: a wrapper per call
        return _spread.__wrapped__(fn, nparams)


def refuse_quad_options(full_output, weight):
    """The options quad's rule does not differentiate (the forward call ran them plainly)."""
    given = {"full_output": full_output, "weight": weight}
    refuse_options("scipy.integrate.quad", given, REFUSED)


def register(reg, family):
    """quad's pullback function and the primitive it calls."""
    reg.non_differentiable(refuse_quad_options, spread_call, family=family, trusted=True)
    register_arg_helpers(reg)
    register_user_call(reg)
    register_with_reference(
        reg,
        family,
        quad_cotangents,
        quad_cotangents_pullback,
        notes="quad's cotangents; derivatives by quad of the integrand's derivatives",
    )
    if same_parameters(quad_pullback, si.quad):  # else first order only
        reg.set_pullback_function(si.quad, quad_pullback)


def register_user_call(reg):
    """The rule of :func:`user_call` (quad's and the ODE solvers' pullbacks use it)."""
    if user_call not in reg:  # (listed under one family whichever solver loads first)
        reg.register(user_call, _user_call_rrule, family=ARGS_HELPERS_FAMILY, trusted=True)
        reg.set_pullback_function(user_call, user_call_pullback)
