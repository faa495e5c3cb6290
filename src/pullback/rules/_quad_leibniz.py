"""The cotangents of ``scipy.integrate.quad``'s value by the Leibniz rule, which the rule
(scipy_quad.py) and its transformable pullback (scipy_quad_pullbacks.py) both compute:
the limits by the fundamental theorem of calculus, the parameters in ``args`` under the
integral sign (on quad's own subintervals where :mod:`_quad_nodes` can, else by
:func:`parameter_integral`, quad again over the integrand's vjp), and quad's call with its
subintervals kept (:func:`subintervals`), refusing with what to fix where the integrand
cannot take ``x`` and ``args`` (:func:`refuse_arity`).

>>> from pullback.rules._calculus_util import ArgsPack
>>> da, db, dargs = quad_cotangent_values(1.0, lambda x, c: c * x, 0.0, 2.0, ArgsPack((3.0,)),
...     {"limit": 50, "epsabs": 1.49e-8, "epsrel": 1.49e-8}, None)
>>> float(da), float(db), [round(float(v), 12) for v in dargs]
(-0.0, 6.0, [2.0])
"""

from __future__ import annotations

import functools
import inspect
import math
import types
import warnings

import numpy as np

from ..errors import ArgumentError
from ._calculus_util import user_vjp_of
from ._quad_nodes import node_parameter_integral
from ._util import NO_TANGENT, finalize

REFUSED = {
    "full_output": "its extra outputs describe the quadrature, not the integral",
    "weight": "the weight function's own parameters would need a rule",
}


def _finite(limit) -> bool:
    if type(limit) is float:
        return math.isfinite(limit)
    return (isinstance(limit, (float, np.floating)) or np.ndim(limit) == 0) and bool(
        np.isfinite(limit)
    )


def fit_limit(g, limit):
    """:func:`finalize` of a limit's cotangent (what it gives for a Python float, without
    its checks: a small integral's gradient costs microseconds)."""
    return np.float64(g) if type(limit) is float else finalize(g, limit)


def _limit_cotangent(g, f, limit, args, sign, value=None):
    """``sign * g * f(limit)`` (the fundamental theorem), zero at an infinite limit
    (``value``: ``f(limit)`` where it is known already)."""
    if not _finite(limit):
        return 0.0
    return sign * g * float(f(limit, *args) if value is None else value)


def parameter_integral(f, a, b, pack, p):
    """``integral of d f(x, *args) / d args`` over ``[a, b]`` as a flat vector."""
    import scipy.integrate as si

    vjp = user_vjp_of(f, tuple(1 + k for k in pack.index))

    def integrand(x):
        _, back = vjp((x,) + pack.args)
        return pack.flatten(back(1.0))

    opts = {"limit": p["limit"]}
    if p.get("points") is not None:
        opts["points"] = p["points"]
    tol = {"epsabs": p["epsabs"], "epsrel": p["epsrel"]}
    if pack.size == 1:
        return np.array([si.quad(lambda x: integrand(x)[0], a, b, **tol, **opts)[0]])
    opts.pop("limit")  # quad_vec has its own subdivision limit
    return si.quad_vec(integrand, a, b, **tol, **opts)[0]


def with_subintervals(p) -> bool:
    """Whether the call can run with ``full_output=1`` for its subintervals: finite limits,
    a real integrand without weight."""
    return (
        p.get("weight") is None
        and not p.get("complex_func", False)
        and _finite(p["a"])
        and _finite(p["b"])
        and callable(p["func"])
    )


def subintervals(p, warn=True, usual=False):
    """``(quad's (value, abserr), its info dict)`` of the call ``p`` (bound parameters) run
    with ``full_output=1``, warning as quad itself does (unless ``warn`` is false: a call
    made again, whose warning was given). ``usual``: ``p`` is a ``scipy_quad._plain_call``'s, so
    quad is called positionally (its keywords cost a microsecond) from the rule itself."""
    si = scipy_integrate()
    try:
        if usual:
            out = si.quad(p["func"], p["a"], p["b"], p["args"], 1)
        else:
            out = si.quad(**dict(p, full_output=1))
    except TypeError as exc:
        refuse_arity(p["func"], p["args"], exc)
        raise
    if warn and len(out) > 3:  # quad gives the message instead of warning under full_output
        warnings.warn(out[3], si.IntegrationWarning, stacklevel=4 if usual else 5)
    return out[:2], out[2]


def refuse_arity(func, given, exc) -> None:
    """Raise the error that says what to fix where quad's call of ``func`` failed with
    ``exc`` because ``func`` cannot take ``x`` and the values of ``args`` (``given``) by
    position; return for any other failure. The function may be a closure converted to
    take what it reads through ``args`` (transform/solver_closures.py): its name and its
    counts are pullback's, so the message gives what the user wrote, the difference."""
    code = getattr(func, "__code__", None)
    if not isinstance(func, types.FunctionType) or code.co_flags & inspect.CO_VARARGS:
        return
    if type(given) is not tuple:
        given = (given,)
    most = code.co_argcount
    least = most - len(func.__defaults__ or ())
    passed = 1 + len(given)
    if least <= passed <= most and not code.co_kwonlyargcount - len(func.__kwdefaults__ or {}):
        return
    if func.__name__.startswith("_pb_"):  # (a lambda or closure pullback converted)
        named = "the function given to it"
    else:
        named = f"'{func.__qualname__}'"
    if passed > most:
        count = f"{_arguments(passed - most)} more than it takes"
    elif passed < least:
        count = f"{_arguments(least - passed)} fewer than it needs"
    else:
        count = "no value for its keyword-only parameters"
    raise ArgumentError(
        f"scipy.integrate.quad calls {named} as func(x, *args), x then each value of args: "
        f"{count}.\n"
        "Fix: give the function one parameter after x for each value of args "
        "(`lambda x, p: x * p` with args=(p,)), or leave out args where it reads those "
        "values itself (a lambda may read the variables of the function it is in)."
    ) from exc


def _arguments(n) -> str:
    return f"{n} positional argument{'s' * (n > 1)}"


def quad_cotangent_values(g, func, a, b, pack, p, info):
    """``(da, db, dargs)`` of ``quad(func, a, b, args)`` for the cotangent ``g`` (a float) of
    its value: the limits by the fundamental theorem, ``args`` under the integral sign
    (``info``: quad's full output where its subintervals can serve, else ``None``)."""
    fa = fb = None
    dargs = NO_TANGENT
    if pack.size:
        lo, hi = float(a), float(b)
        if math.isfinite(lo) or math.isfinite(hi) or lo != hi:
            fast = None
            if info is not None and lo != hi:
                fast = node_parameter_integral(func, lo, hi, pack, p, info)
            if fast is None:
                dargs = pack.cotangent(g * parameter_integral(func, lo, hi, pack, p))
            else:  # (the integrals a list of floats or an array)
                integral, fa, fb = fast
                scaled = [g * t for t in integral] if type(integral) is list else g * integral
                dargs = pack.cotangent(scaled)
                if type(a) is float and type(b) is float:  # (what fit_limit gives these)
                    return np.float64(-g * float(fa)), np.float64(g * float(fb)), dargs
    da = fit_limit(_limit_cotangent(g, func, a, pack.args, -1.0, fa), a)
    db = fit_limit(_limit_cotangent(g, func, b, pack.args, 1.0, fb), b)
    return da, db, dargs


@functools.lru_cache(maxsize=1)
def scipy_integrate():
    """``scipy.integrate``, imported at the first call (an import statement costs a fifth
    of a microsecond at each call, two of them per gradient)."""
    import scipy.integrate as si

    return si
