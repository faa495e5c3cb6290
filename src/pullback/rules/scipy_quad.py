"""scipy.integrate.quad: the derivative of an integral, by mathematics rather than by
differentiating the quadrature.

For ``I = quad(f, a, b, args=(theta, ...))[0]``:

* the limits by the fundamental theorem of calculus: ``dI/db = f(b)``, ``dI/da = -f(a)``
  (zero for an infinite limit);
* the parameters in ``args`` by differentiating under the integral sign:
  ``dI/dtheta = integral of df/dtheta(x) over [a, b]``, where ``df/dtheta`` is the reverse
  mode of the user's integrand by pullback itself.

The parameter integral is computed, where it can be, on the subintervals ``quad`` itself
ended with (finite limits): one reverse pass of the integrand over all their 21-point
Gauss-Kronrod nodes at once (the scalar parameters spread over the nodes, so each node gets
its own derivative), with the Kronrod-minus-Gauss estimate of each subinterval's error
and bisection until the caller's ``epsabs``/``epsrel`` hold. That is only the derivative
of the scalar integrand where the integrand maps an array of ``x`` elementwise, which
``_elementwise.py`` proves from its source (straight-line NumPy ufunc arithmetic on the
parameters, scalar constants and scalar free names; agreeing values would be no proof).
An array parameter read only at constant indices, each naming one element (``p[0]``,
``p[1, -1]``, ``a, b = p``), is spread over the nodes too (to ``p.shape + (nodes,)``).
Any other integrand (``math.*``, a branch on ``x``, a call of another function, an array
read whole or at a variable index, ...) or an infinite limit takes the general path: one
vjp per evaluation, integrated with ``quad`` again (``quad_vec`` for several parameters).

The usual call (``quad(f, a, b, args=(c, k))``, finite float limits, Python floats or
float64 arrays in ``args``, quad's default options) calls QUADPACK's routine behind quad
directly (:func:`_usual_rrule`: the same routine quad calls for finite limits, so the
value is quad's to the bit; its Python layers cost a tenth of a smooth integral), checked
once against quad itself and left for quad's own way where it reports a problem.

A smooth integral (quad's first Gauss-Kronrod step accepted at once) is answered without
QUADPACK where the integrand is shown to compute quad's bits on an array of nodes
(``_quad_first``): one pass of its adjoint over the step's 21 nodes gives the value, by
QUADPACK's own arithmetic, and keeps the pullback the gradient needs (:func:`_usual_rrule`,
:func:`_general_first_step`). Any other call runs quad as below.

The Leibniz rule's numbers themselves (and quad's call keeping its subintervals) are in
``_quad_leibniz``, which the second derivatives share: ``scipy_quad_pullbacks.quad_pullback``
is the rule's pullback as a transformable function (the same numbers, then the Leibniz rule
differentiated again).

``quad`` returns ``(value, abserr)``: only the value carries a gradient. Weighted and
``full_output`` calls are refused. Values the integrand reads from globals or closures are
constants: pass what should be differentiated through ``args``.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from . import scipy_quad_pullbacks
from ._calculus_util import (
    ArgsPack,
    bound_call,
    call_cotangents,
    refuse_options,
    register_solver,
)
from ._quad_first import FirstStep, first_step, float_step_cotangents, step_totals
from ._quad_leibniz import (
    REFUSED,
    fit_limit,
    quad_cotangent_values,
    refuse_arity,
    scipy_integrate,
    subintervals,
    with_subintervals,
)
from ._quad_nodes import float_args_cotangents, plain_args_cotangents
from ._util import NO_TANGENT, ZERO, Registrar, dy_parts

FAMILY = "scipy_quad"
REQUIRES = "scipy.integrate"

QUAD_KEYWORDS = ("a", "b", "args")


def _quad_call(args, kwargs, p):
    """``(quad's result, its info dict or None)``: the same call, with ``full_output=1``
    where the subintervals can serve the gradient (its warning is given as quad gives it)."""
    import scipy.integrate as si

    if not with_subintervals(p):
        try:
            return si.quad(*args, **kwargs), None
        except TypeError as exc:
            refuse_arity(p["func"], p["args"], exc)
            raise
    return subintervals(p)


def _plain_call(args, kwargs):
    """quad's parameters (as :func:`bound_call` gives them) for the usual call,
    ``quad(func, a, b[, args])`` or ``quad(func, a, b, args=...)`` with finite float
    limits, bound without the general checks (no option to refuse, subintervals to keep);
    ``None`` for any other call."""
    n = len(args)
    if n == 3:
        if kwargs and (len(kwargs) != 1 or "args" not in kwargs):
            return None
    elif n != 4 or kwargs:
        return None
    a, b = args[1], args[2]
    if type(a) is not float or type(b) is not float or not callable(args[0]):
        return None
    if not (math.isfinite(a) and math.isfinite(b)):
        return None
    p = dict(_plain_defaults())
    p["func"], p["a"], p["b"] = args[0], a, b
    if n == 4:
        p["args"] = args[3]
    elif kwargs:
        p["args"] = kwargs["args"]
    return p


@functools.lru_cache(maxsize=1)
def _plain_defaults():
    import scipy.integrate as si

    return bound_call(si.quad, (None, 0.0, 0.0), {})


def _quad_rrule(*args, **kwargs):
    found = _usual_rrule(args, kwargs)
    if found is not None:
        return found
    si = scipy_integrate()
    p = _plain_call(args, kwargs)
    floats = None  # the usual call's args where all are Python floats: the direct way
    if p is None:
        p = bound_call(si.quad, args, kwargs)
        refuse_options("scipy.integrate.quad", p, REFUSED)
        stepped = _general_first_step(args, kwargs, p)
        if stepped is not None:  # (a smooth integral: quad's first step, vectorized)
            return stepped
        out, info = _quad_call(args, kwargs, p)
    else:
        out, info = subintervals(p, usual=True)
        given = p["args"]
        if type(given) is tuple and given and p["a"] != p["b"]:
            floats = given
            for v in given:  # (a loop: a generator's frame costs more than two floats)
                if type(v) is not float:
                    floats = None
                    break
    usual = len(args) == 3 and len(kwargs) == 1 and "args" in kwargs
    # (made here, from the values of this call; floats, immutable, may wait for the pullback)
    pack = ArgsPack(p["args"]) if floats is None else None

    def quad_pullback(dy):
        g = dy[0] if type(dy) is tuple else dy_parts(dy, 2)[0]
        if g is ZERO or g is NO_TANGENT or g is None:
            return call_cotangents(si.quad, args, kwargs, {}, QUAD_KEYWORDS)
        if type(g) is not float:
            g = float(np.sum(g))
        found = None
        if floats is not None:
            found = float_args_cotangents(g, p["func"], p["a"], p["b"], floats, p, info)
        if found is None:
            found = quad_cotangent_values(
                g, p["func"], p["a"], p["b"], pack or ArgsPack(floats), p, info
            )
        da, db, dargs = found
        if usual:  # (what call_cotangents gives the usual call)
            return NO_TANGENT, da, db, {"args": dargs}
        cots = {"a": da, "b": db, "args": dargs}
        return call_cotangents(si.quad, args, kwargs, cots, QUAD_KEYWORDS)

    return out, quad_pullback


def _general_first_step(args, kwargs, p):
    """``(quad's result, pullback)`` of a general call (bound as ``p``: keywords, int or
    NumPy limits, its own tolerances and limit) answered by quad's first step
    (``_quad_first``), or ``None``: other options, limits that are not finite real
    numbers, ``args`` other than Python floats and float64 arrays, or a step QUADPACK
    must take (the general way then calls quad)."""
    given, a, b = p["args"], p["a"], p["b"]
    epsabs, epsrel, limit = p["epsabs"], p["epsrel"], p["limit"]
    if (
        p.get("points") is not None
        or p.get("weight") is not None
        or p.get("full_output")
        or p.get("complex_func")
        or type(given) is not tuple
        or not given
        or type(epsabs) not in (float, int)
        or type(epsrel) not in (float, int)
        or type(limit) is not int
        or not (_real_number(a) and _real_number(b))
        or not callable(p["func"])
    ):
        return None
    try:  # (quad's call converts the limits to C doubles, as float does)
        lo, hi = float(a), float(b)
    except (OverflowError, TypeError, ValueError):
        return None
    if lo == hi or not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    pack = ArgsPack(given)
    if not pack.plain:
        return None
    flip = hi < lo
    if flip:
        lo, hi = hi, lo
    params = (given, None) if pack.floats else (pack.args, pack)
    step = first_step(p["func"], lo, hi, params[0], float(epsabs), float(epsrel), limit, params[1])
    if step is None:
        return None

    def quad_first_step_pullback(dy):
        si = scipy_integrate()
        g = dy[0] if type(dy) is tuple else dy_parts(dy, 2)[0]
        if g is ZERO or g is NO_TANGENT or g is None:
            return call_cotangents(si.quad, args, kwargs, {}, QUAD_KEYWORDS)
        if type(g) is not float:
            g = float(np.sum(g))
        found = step_totals(step, pack.floats, p, flip)
        if found is None:  # (the node pass on the subinterval QUADPACK would have kept)
            da, db, dargs = quad_cotangent_values(g, p["func"], a, b, pack, p, step.info())
        else:
            totals, fa, fb = found
            scaled = [g * t for t in totals] if type(totals) is list else g * totals
            da, db, dargs = fit_limit(-g * fa, a), fit_limit(g * fb, b), pack.cotangent(scaled)
        cots = {"a": da, "b": db, "args": dargs}
        return call_cotangents(si.quad, args, kwargs, cots, QUAD_KEYWORDS)

    return ((-step.value if flip else step.value), step.abserr), quad_first_step_pullback


def _real_number(v) -> bool:
    """A real number as quad's limits take them (not a bool, not an array)."""
    return type(v) in (float, int) or isinstance(v, (np.floating, np.integer))


_INF = math.inf
_NEG_INF = -math.inf


def _usual_rrule(args, kwargs):
    """The rule of the usual call at its most common, ``quad(func, a, b, args=(c, k))`` or
    ``quad(func, a, b, (c, k))``, the limits Python floats ``a != b``, both finite, every
    parameter a Python float (the one-pass way takes them as they are) or a float64 array
    (a closure's, passed on by the rewrite of its call), with QUADPACK's routine called
    directly (what quad calls for finite limits, so the value is quad's to the bit, without
    its Python layers: they cost a tenth of a smooth integral); ``None`` for any other
    call, or where that routine is not available or reports a problem (the general way
    then calls quad again, which warns as quad does). One function, its tests in the
    order of their cost: a call per layer costs a few percent of a smooth integral."""
    if len(args) == 3:
        if len(kwargs) != 1:
            return None
        given = kwargs.get("args")
    elif len(args) == 4 and not kwargs:
        given = args[3]
    else:
        return None
    if type(given) is not tuple or not given:
        return None
    floats = True
    for v in given:  # (a loop: a generator's frame costs more than two floats)
        if type(v) is not float:
            if type(v) is not np.ndarray or v.dtype.char != "d":
                return None
            floats = False
    func, a, b = args[0], args[1], args[2]
    if type(a) is not float or type(b) is not float or a == b:
        return None
    if not (_NEG_INF < a < _INF and _NEG_INF < b < _INF):  # (NaN fails too)
        return None
    if not callable(func):
        return None
    pack = None if floats else ArgsPack(given)
    flip = b < a
    lo, hi = (b, a) if flip else (a, b)
    p = _plain_defaults()
    step = first_step(func, lo, hi, given, p["epsabs"], p["epsrel"], p["limit"], pack)
    if step is not None:  # (a smooth integral: quad's first step, vectorized)
        pullback = functools.partial(_usual_pullback, (args, kwargs, given, pack, step))
        return ((-step.value if flip else step.value), step.abserr), pullback
    qagse = _direct_qagse()
    if qagse is None:
        return None
    try:
        value, abserr, info, ier = qagse(func, lo, hi, given, 1, _EPS, _EPS, _LIMIT)
    except TypeError as exc:
        refuse_arity(func, given, exc)
        raise
    if ier:
        return None
    # (a partial of one tuple: a closure would make a cell per name it keeps)
    pullback = functools.partial(_usual_pullback, (args, kwargs, given, pack, info))
    return ((-value if flip else value), abserr), pullback


def _usual_pullback(call, dy):
    """The pullback of :func:`_usual_rrule`'s call ``(args, kwargs, given, pack, info)``
    (``info``: QUADPACK's full output, or the :class:`~._quad_first.FirstStep` that
    answered the call in its place)."""
    args, kwargs, given, pack, info = call
    g = dy[0] if type(dy) is tuple else dy_parts(dy, 2)[0]
    if g is ZERO or g is NO_TANGENT or g is None:
        return call_cotangents(scipy_integrate().quad, args, kwargs, {}, QUAD_KEYWORDS)
    if type(g) is not float:
        g = float(np.sum(g))
    func, a, b = args[0], args[1], args[2]
    # (quad's options are its defaults: what the one-pass and general ways read of p)
    p = _plain_defaults()
    found = None
    if type(info) is FirstStep:  # the kept pass's derivatives
        if pack is None:  # (Python floats: the usual gradient, in one function)
            found = float_step_cotangents(g, info, b < a, p)
        else:
            found = _step_cotangents(g, info, a, b, pack, p)
        if found is None:  # (the node pass on the subinterval QUADPACK would have kept)
            info = info.info()
    if found is not None:
        pass
    elif pack is None:
        found = float_args_cotangents(g, func, a, b, given, p, info)
    else:  # (float64 arrays among them: a closure's, passed on by the rewrite of its call)
        found = plain_args_cotangents(g, func, a, b, pack, p, info)
    if found is None:
        found = quad_cotangent_values(g, func, a, b, pack or ArgsPack(given), p, info)
    da, db, dargs = found
    if len(args) == 3:  # args= by keyword (what call_cotangents gives the usual call)
        return NO_TANGENT, da, db, {"args": dargs}
    return NO_TANGENT, da, db, dargs


def _step_cotangents(g, step, a, b, pack, p):
    """``(da, db, dargs)`` of the usual call answered by ``step`` (float limits ``a``,
    ``b``; ``pack``: ``None`` for Python float parameters) from its kept pass, as the node
    pass gives them; ``None`` where the kept pass does not serve."""
    found = step_totals(step, pack is None, p, b < a)
    if found is None:
        return None
    totals, fa, fb = found
    scaled = [g * t for t in totals] if type(totals) is list else (g * totals).tolist()
    if pack is None:  # Python floats (what grad hands back for Python float parameters)
        return -g * fa, g * fb, tuple(scaled)
    # (the limits' cotangents as finalize gives a Python float limit's)
    return np.float64(-g * fa), np.float64(g * fb), pack.cotangent(scaled)


_EPS = 1.49e-08  # quad's default epsabs and epsrel
_LIMIT = 50  # and its default limit


@functools.lru_cache(maxsize=1)
def _direct_qagse():
    """SciPy's QUADPACK routine behind ``quad(func, a, b, args, full_output=1)`` for finite
    ``a < b`` without points or weight (``_quadpack._qagse``, private: so taken only when
    it exists, quad's defaults are those :data:`_EPS`, :data:`_LIMIT` assume, and a probe
    integral through it gives quad's result and info exactly), else ``None``."""
    si = scipy_integrate()
    try:
        from scipy.integrate import _quadpack

        routine = _quadpack._qagse
        defaults = _plain_defaults()
        if (defaults["epsabs"], defaults["epsrel"], defaults["limit"]) != (_EPS, _EPS, _LIMIT):
            return None
        probe = routine(_probe, 0.0, 1.5, (2.0,), 1, _EPS, _EPS, _LIMIT)
        expected = si.quad(_probe, 0.0, 1.5, (2.0,), 1)
    except Exception:  # (another SciPy: quad's own way)
        return None
    same = (
        type(probe) is tuple
        and len(probe) == 4
        and probe[3] == 0
        and len(expected) == 3
        and probe[:2] == expected[:2]
        and type(probe[2]) is dict
        and probe[2]["last"] == expected[2]["last"] == 1
        and probe[2]["alist"][0] == expected[2]["alist"][0]
        and probe[2]["blist"][0] == expected[2]["blist"][0]
    )
    return routine if same else None


def _probe(x, c):
    return math.exp(-c * x) * math.cos(c * x)


def register(reg):
    try:
        import scipy.integrate as si
    except ImportError:  # pragma: no cover - scipy is optional
        return
    r = Registrar(reg, FAMILY)
    register_solver(
        r,
        si.quad,
        _quad_rrule,
        keywords=QUAD_KEYWORDS,
        notes="limits (fundamental theorem) and args (under the integral sign); value only",
        keep_closure=True,
        receivers=("func",),
    )
    scipy_quad_pullbacks.register(reg, FAMILY)
