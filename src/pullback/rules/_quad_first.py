"""quad's first Gauss-Kronrod step done vectorized, in the rule's forward: the value of a
smooth integral without QUADPACK, and the residuals its gradient needs kept from the same
pass.

``quad(f, a, b)`` on finite limits runs QUADPACK's ``qagse``: a 21-point Gauss-Kronrod
step on ``[a, b]`` (``qk21``: 21 scalar calls of ``f``), accepted at once when its error
estimate meets the tolerances, else bisection. For a smooth integrand the first step is
the whole integral, and its 21 scalar calls cost more than the reverse pass the gradient
needs. So where the integrand is proved elementwise in ``x`` (``_elementwise.py``), and
its array pass is shown to compute the very bits of its scalar calls
(:func:`same_bits_in_x`), the rule's forward instead

1. runs the integrand's generated adjoint ONCE on the 21 nodes (and the two limits, whose
   values the limits' cotangents need): both sweeps in one call where the adjoint has
   fused sweeps (the cotangents of ones, which the gradient takes, kept), else the
   forward, keeping its pullback; the adjoint and the nodes kept per interval while the
   adjoint's guard holds (:func:`_float_pass`);
2. computes ``qk21``'s result, ``resabs``, ``resasc`` and error estimate from the 21
   values with QUADPACK's constants and QUADPACK's order of operations (:func:`qk21`:
   the centre term first, then the pairs in its loop order; the same floating-point
   operations give the same bits);
3. applies ``qagse``'s acceptance of the first step (:func:`first_step_accepts`).

Accepted, the value is quad's to the bit and the pullback takes the kept cotangents of
ones (or runs the kept pullback on them), then the same Kronrod sums and error test as the
node pass of ``_quad_nodes``, bisecting where the derivative needs it
(:func:`float_step_cotangents` for Python float parameters, in one function). Not
accepted, or anything this pass cannot show (a value that is not finite, a floating-point
error, an exception), and the rule calls QUADPACK as before: what quad would subdivide, or
report, is quad's.

>>> lo, hi = 0.0, 2.0
>>> xs = step_nodes(lo, hi)
>>> result, abserr, resabs, resasc = qk21(np.exp(xs[:21]).tolist(), lo, hi)
>>> import scipy.integrate as si
>>> (result, abserr) == si.quad(np.exp, lo, hi)
True
>>> first_step_accepts(result, abserr, resabs, resasc, 1.49e-8, 1.49e-8, 50)
True
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..registry import default_registry
from ._calculus_util import user_vjp_of
from ._elementwise import elementwise_in_x, proof_details
from ._elementwise_recheck import recheck_of
from ._quad_nodes import (
    _float_layout,
    _one_shape,
    _ones,
    _spread_of,
    _wrt,
    interval_totals,
)

__all__ = [
    "FirstStep",
    "agrees_with_quad",
    "first_step",
    "first_step_accepts",
    "float_step_cotangents",
    "qk21",
    "same_bits_in_x",
    "step_totals",
    "step_nodes",
]

# QUADPACK's 21-point Gauss-Kronrod rule on [-1, 1] (mathematical constants, to more
# digits than a double holds; tests/rules/test_quad_first.py checks them against
# _kronrod.gauss_kronrod21, which derives them). By symmetry only x >= 0: XGK[k] for
# k odd are the 10-point Gauss nodes (weights WG[(k - 1) // 2]), the even k the nodes
# Kronrod added, XGK[10] = 0 the centre; WGK the Kronrod weights of XGK.
XGK = (
    0.995657163025808080735527280689003,
    0.973906528517171720077964012084452,
    0.930157491355708226001207180059508,
    0.865063366688984510732096688423493,
    0.780817726586416897063717578345042,
    0.679409568299024406234327365114874,
    0.562757134668604683339000099272694,
    0.433395394129247190799265943165784,
    0.294392862701460198131126603103866,
    0.148874338981631210884826001129720,
    0.0,
)
WGK = (
    0.011694638867371874278064396062192,
    0.032558162307964727478818972459390,
    0.054755896574351996031381300244580,
    0.075039674810919952767043140916190,
    0.093125454583697605535065465083366,
    0.109387158802297641899210590325805,
    0.123491976262065851077958109831074,
    0.134709217311473325928054001771707,
    0.142775938577060080797094273138717,
    0.147739104901338491374841515972068,
    0.149445554002916905664936468389821,
)
WG = (
    0.066671344308688137593568809893332,
    0.149451349150580593145776339657697,
    0.219086362515982043995534934228163,
    0.269266719309996355091226921569469,
    0.295524224714752870173892994651338,
)
# The step's node order (QUADPACK's): the centre, then the pair centre -/+ half * XGK[k]
# for k in this order (the Gauss nodes, then Kronrod's), then the two limits.
PAIRS = (1, 3, 5, 7, 9, 0, 2, 4, 6, 8)
_EPMACH = float(np.finfo(np.float64).eps)
_FLOAT64 = np.dtype(np.float64)  # (NumPy's built-in dtypes are single objects)
_UFLOW = float(np.finfo(np.float64).tiny)
_NODES = 21


@functools.lru_cache(maxsize=64)
def step_nodes(lo, hi, *signs):
    """The 21 nodes of ``[lo, hi]`` as QUADPACK computes them (``centr - hlgth * xgk``,
    the same operations, so the same bits), in the step's order (:data:`PAIRS`), then
    ``lo`` and ``hi``; read-only, kept per interval (an optimizer's limits stay put).
    ``signs``: those of a zero limit (``0.0 == -0.0`` in the cache's key)."""
    centr = 0.5 * (lo + hi)
    hlgth = 0.5 * (hi - lo)
    xs = [centr]
    for k in PAIRS:
        absc = hlgth * XGK[k]
        xs += (centr - absc, centr + absc)
    xs = np.array(xs + [lo, hi])
    xs.flags.writeable = False
    return xs


def qk21(f, lo, hi, *, _abs=abs, _min=min, _max=max):
    """``(result, abserr, resabs, resasc)`` of QUADPACK's ``qk21`` on ``[lo, hi]`` from the
    integrand's values ``f`` (21 Python floats at :func:`step_nodes`, in its order), with
    its operations in its order: Python floats are IEEE doubles, ``a + b + c`` is ``(a +
    b) + c`` as its loops add, and ``**`` is the C library's ``pow``, as QUADPACK's (a
    sum in another order, NumPy's pairwise one, would differ in the last bits). Written
    out, not looped: a loop's indexing would cost a third of a smooth integral."""
    # (the centre, then each pair -/+ by its XGK index: the Gauss ones, then Kronrod's)
    fc, m1, p1, m3, p3, m5, p5, m7, p7, m9, p9, m0, p0, m2, p2, m4, p4, m6, p6, m8, p8 = f
    w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10 = WGK
    g0, g1, g2, g3, g4 = WG
    s1, s3, s5, s7, s9 = m1 + p1, m3 + p3, m5 + p5, m7 + p7, m9 + p9
    s0, s2, s4, s6, s8 = m0 + p0, m2 + p2, m4 + p4, m6 + p6, m8 + p8
    resg = 0.0 + g0 * s1 + g1 * s3 + g2 * s5 + g3 * s7 + g4 * s9
    resk = w10 * fc
    resabs = _abs(resk)
    resk = resk + w1 * s1 + w3 * s3 + w5 * s5 + w7 * s7 + w9 * s9
    resk = resk + w0 * s0 + w2 * s2 + w4 * s4 + w6 * s6 + w8 * s8
    resabs = (
        resabs
        + w1 * (_abs(m1) + _abs(p1))
        + w3 * (_abs(m3) + _abs(p3))
        + w5 * (_abs(m5) + _abs(p5))
        + w7 * (_abs(m7) + _abs(p7))
        + w9 * (_abs(m9) + _abs(p9))
        + w0 * (_abs(m0) + _abs(p0))
        + w2 * (_abs(m2) + _abs(p2))
        + w4 * (_abs(m4) + _abs(p4))
        + w6 * (_abs(m6) + _abs(p6))
        + w8 * (_abs(m8) + _abs(p8))
    )
    h = resk * 0.5  # (QUADPACK's reskh; its resasc sums by XGK index, 0 to 9)
    resasc = (
        w10 * _abs(fc - h)
        + w0 * (_abs(m0 - h) + _abs(p0 - h))
        + w1 * (_abs(m1 - h) + _abs(p1 - h))
        + w2 * (_abs(m2 - h) + _abs(p2 - h))
        + w3 * (_abs(m3 - h) + _abs(p3 - h))
        + w4 * (_abs(m4 - h) + _abs(p4 - h))
        + w5 * (_abs(m5 - h) + _abs(p5 - h))
        + w6 * (_abs(m6 - h) + _abs(p6 - h))
        + w7 * (_abs(m7 - h) + _abs(p7 - h))
        + w8 * (_abs(m8 - h) + _abs(p8 - h))
        + w9 * (_abs(m9 - h) + _abs(p9 - h))
    )
    hlgth = 0.5 * (hi - lo)
    dhlgth = _abs(hlgth)
    result = resk * hlgth
    resabs = resabs * dhlgth
    resasc = resasc * dhlgth
    abserr = _abs((resk - resg) * hlgth)
    if resasc != 0.0 and abserr != 0.0:
        abserr = resasc * _min(1.0, (200.0 * abserr / resasc) ** 1.5)
    if resabs > _UFLOW / (50.0 * _EPMACH):
        abserr = _max(_EPMACH * 50.0 * resabs, abserr)
    return result, abserr, resabs, resasc


def first_step_accepts(result, abserr, resabs, resasc, epsabs, epsrel, limit) -> bool:
    """Whether ``qagse`` ends after its first step with this :func:`qk21` result and no
    error flag: not for a tolerance it rejects (its ``ier = 6``), a roundoff it detects
    (``ier = 2``) or ``limit == 1`` (``ier = 1``; quad warns for those: QUADPACK's), and
    then where the estimate meets ``max(epsabs, epsrel * |result|)`` without being the
    whole ``resasc``, or is zero."""
    if epsabs <= 0.0 and epsrel < max(50.0 * _EPMACH, 0.5e-28):
        return False
    errbnd = max(epsabs, epsrel * abs(result))
    if abserr <= 100.0 * _EPMACH * resabs and abserr > errbnd:
        return False
    if limit == 1:
        return False
    return (abserr <= errbnd and abserr != resasc) or abserr == 0.0


@functools.lru_cache(maxsize=256)
def _same_bits(ufunc) -> bool:
    """Whether ``ufunc`` computes on an array the bits it computes on each scalar (Python
    floats, as QUADPACK's scalar calls pass them), every layout the pass makes (arrays,
    an array and a scalar, either way round), over a spread of values; kept per ufunc.
    NumPy's SIMD loops handle an array's last elements, and so a one-element call, as
    the rest (this build: every float64 ufunc passes), but a build whose loops fell back
    to another implementation for short calls would not, and an integrand calling such a
    function then takes QUADPACK. (``np.where`` selects: nothing to compare.)"""
    if ufunc is np.where:
        return True
    if type(ufunc) is not np.ufunc:  # (a ufunc-like object: no evidence)
        return False
    arity = ufunc.nin
    grid = np.concatenate((np.geomspace(1e-3, 1e3, 23), -np.geomspace(1e-2, 3e2, 17), [0.0]))
    other = grid[::-1].copy()
    layouts = [(grid,)] if arity == 1 else [(grid, other), (grid, 0.7), (-1.3, other)]
    with np.errstate(all="ignore"):
        try:
            for inputs in layouts:
                array = np.asarray(ufunc(*inputs), dtype=float)
                rows = [v.tolist() if type(v) is np.ndarray else [v] * grid.size for v in inputs]
                scalar = np.array([float(ufunc(*point)) for point in zip(*rows, strict=True)])
                if not np.array_equal(array, scalar, equal_nan=True) or not np.array_equal(
                    np.signbit(array), np.signbit(scalar)
                ):
                    return False
        except Exception:  # (a ufunc that refuses these values: no evidence)
            return False
    return True


def same_bits_in_x(func, params, arrays=False, owner=None) -> bool:
    """``_elementwise.elementwise_in_x`` and more: the pass computes each node's value
    with the operations of the scalar call, so the bits of quad's calls. Not where a
    free scalar name is a narrower float (``np.float32(2) * x``: float32 for quad's Python
    float ``x``, float64 on the array), where a ``**`` reads a parameter or a local
    (Python's float power is the C library's ``pow``, NumPy's array power its own loop:
    they differ in the last bit), nor where a function it calls fails :func:`_same_bits`."""
    if not elementwise_in_x(func, params, arrays=arrays, owner=owner, same_types=True):
        return False
    details = proof_details(func, owner)
    if details is None or details[0]:
        return False
    for called in details[1]:
        if called is not None and not _same_bits(called):
            return False
    return True


@functools.lru_cache(maxsize=1)
def agrees_with_quad() -> bool:
    """Whether this SciPy's quad is the QUADPACK this module reproduces: the first steps of
    a few smooth integrals (a NumPy ufunc, the same on arrays as on scalars) give quad's
    value and error estimate to the bit and are accepted as quad accepts them, and a step
    quad bisects is not (checked once; another SciPy, whose quad differs, takes QUADPACK
    every time)."""
    import scipy.integrate as si

    cases = ((np.exp, 0.0, 1.5), (np.cos, -0.5, 2.0), (np.sqrt, 0.0, 1.0), (np.sin, 0.0, 40.0))
    try:
        for f, lo, hi in cases:
            expected = si.quad(f, lo, hi, full_output=1)
            result, abserr, resabs, resasc = qk21(f(step_nodes(lo, hi)[:_NODES]).tolist(), lo, hi)
            one = expected[2]["last"] == 1 and len(expected) == 3
            if first_step_accepts(result, abserr, resabs, resasc, 1.49e-8, 1.49e-8, 50) != one:
                return False
            if one and (result, abserr) != expected[:2]:
                return False
    except Exception:  # (another SciPy: QUADPACK's way)
        return False
    return True


class FirstStep:
    """An accepted first step: quad's ``value`` and ``abserr`` on ``[lo, hi]``, and what the
    gradient needs of the pass (its values ``y`` at the step's nodes and the limits, its
    pullback ``back``; ``vjp``, ``params``, ``spread``, ``key`` as ``_quad_nodes`` takes
    them)."""

    __slots__ = (
        "value", "abserr", "lo", "hi", "vjp", "params", "spread", "key", "y", "back", "ends"
    )  # fmt: skip

    def __init__(self, value, abserr, lo, hi, vjp, params, spread, key, y, back):
        self.value, self.abserr, self.lo, self.hi = value, abserr, lo, hi
        self.vjp, self.params, self.spread, self.key = vjp, params, spread, key
        # ``back``: the kept pullback, or (the fused pass) the cotangents it would give
        self.y, self.back = y, back
        self.ends = None  # (f(lo), f(hi) as Python floats, set by first_step)

    def info(self):
        """What QUADPACK's full output says of this integral: one subinterval, [lo, hi]."""
        return {"last": 1, "alist": np.array([self.lo]), "blist": np.array([self.hi])}


def first_step(func, lo, hi, params, epsabs, epsrel, limit, pack=None):
    """The :class:`FirstStep` of ``quad(func, lo, hi, params, epsabs=..., epsrel=...,
    limit=...)`` (``lo < hi`` finite Python floats, as quad passes them to QUADPACK;
    ``params`` Python floats, or with ``pack`` a plain ``ArgsPack`` of Python floats and
    float64 arrays), or ``None`` where QUADPACK must answer: the integrand not shown to
    compute quad's bits on arrays, a step ``qagse`` would not accept, anything not
    finite, any floating-point error or exception of the pass."""
    if not agrees_with_quad():
        return None
    try:
        if pack is None:  # (Python floats, passed as they are: see _quad_nodes._unspread)
            index, wrt, key = _float_layout(len(params))
            vjp = user_vjp_of(func, wrt)
            kept = _kept_pass(func, vjp, params, key, lo, hi)
            if kept is None:
                return None
            adj, run, xs = kept
            args = (xs, *params)
            spread = index
        else:  # (float64 arrays among them: spread over the nodes)
            params, key = pack.args, None
            vjp = user_vjp_of(func, _wrt(pack.index))
            spread = _spread_of(params, pack.index)
            if type(spread) is tuple:  # (no array among them: the caller's float way)
                return None
            kept = _kept_pass(func, vjp, params, spread, lo, hi)
            if kept is None:
                return None
            adj, run, xs = kept
            args = [xs, *params]
            spread.fill(params, xs.size, args)
    except Exception:  # (a function that cannot take x and args, what building the
        return None  # adjoint raised: quad's calls report it)
    token = _raising()
    try:
        if run is None:
            y, back = adj.forward(*args)
        else:  # (both sweeps in one call: the cotangents of ones, which a gradient takes)
            y, back = run(_node_ones, *args)
    except Exception:  # (FloatingPointError, or what the pass raised: QUADPACK's to report)
        return None
    finally:
        _EXTOBJ.reset(token)
    if type(y) is not np.ndarray or y.shape != (_NODES + 2,) or y.dtype.char != "d":
        return None
    values = y.tolist()  # (Python floats: the 21 nodes', then the limits')
    result, abserr, resabs, resasc = qk21(values[:_NODES], lo, hi)
    if not (math.isfinite(resabs) and math.isfinite(abserr)):  # (a node's value is not)
        return None
    if not first_step_accepts(result, abserr, resabs, resasc, epsabs, epsrel, limit):
        return None
    step = FirstStep(result, abserr, lo, hi, vjp, params, spread, key, y, back)
    step.ends = values[_NODES], values[_NODES + 1]
    return step


def _nodes_of(lo, hi):
    """:func:`step_nodes` of ``[lo, hi]`` (the signs of a zero limit in the key)."""
    if lo and hi:
        return step_nodes(lo, hi)
    return step_nodes(lo, hi, math.copysign(1.0, lo), math.copysign(1.0, hi))


def _kept_pass(func, vjp, params, layout, lo, hi):
    """``(adjoint, fused sweeps or None, nodes)`` of the pass on ``[lo, hi]`` for the
    parameters ``params`` laid out as ``layout`` (the kinds' key of Python floats, or the
    ``_ArrayLayout`` of spread arrays: the same layout, the same shapes and types), or
    ``None`` where :func:`same_bits_in_x` does not hold. Kept on ``vjp`` per layout and
    interval while the registry, its version and the adjoint's guard hold (what
    ``UserVJP.keyed`` checks), with the proof's per-call checks compiled into one test
    (``_elementwise_recheck``): an optimizer's calls repeat the integrand and the limits,
    and the lookups and the proof's walk would cost more than the pass's own arithmetic."""
    if lo and hi:
        where = (layout, lo, hi)
    else:  # (0.0 == -0.0: the signs of a zero limit in the key)
        where = (layout, lo, hi, math.copysign(1.0, lo), math.copysign(1.0, hi))
    plans = vjp.steps
    plan = plans.get(where)
    registry = default_registry()
    arrays = type(layout) is not tuple
    if plan is not None and plan[0] is registry and plan[1] == registry.version:
        adj = plan[2]
        if adj.guard():
            holds = plan[5]
            if holds is not None and holds():
                return adj, plan[3], plan[4]
            if not same_bits_in_x(func, params, arrays=arrays, owner=vjp):
                return None
            plans[where] = (*plan[:5], recheck_of(func, vjp))
            return adj, plan[3], plan[4]
    if not same_bits_in_x(func, params, arrays=arrays, owner=vjp):
        return None
    xs = _nodes_of(lo, hi)
    adj = _built_adjoint(vjp, params, layout, xs)
    run = adj.fused_sweeps()
    run = None if run is None else run[0]
    if len(plans) >= _PLANS_KEPT:  # (limits that move: the oldest plans go)
        plans.clear()
    plans[where] = (registry, registry.version, adj, run, xs, recheck_of(func, vjp))
    return adj, run, xs


def _built_adjoint(vjp, params, layout, xs):
    """The adjoint :func:`_kept_pass` keeps: for Python float ``params`` (``layout`` their
    kinds' key) built for them spread and called with the floats themselves; else for the
    arguments ``layout`` spreads."""
    if type(layout) is tuple:
        adj = vjp.keyed(layout)
        if adj is None:
            spread_args = [xs, *(np.full(xs.size, v) for v in params)]
            adj = vjp.adjoint_keyed(layout, spread_args, _one_shape(tuple(range(len(params)))))
        return adj
    args = [xs, *params]
    return vjp.adjoint_keyed(layout.fill(params, xs.size, args), args, layout.one_shape)


_PLANS_KEPT = 32


_NODE_ONES = _ones(_NODES + 2)  # (read-only: a constant)


def _node_ones(value):
    """The fused pass's seed: a cotangent of ones on the step's nodes and limits (the
    pullback of each node's value alone; read-only, shared)."""
    return _NODE_ONES


def step_totals(step, floats, p, reverse):
    """``(integrals of d f / d params, f(a), f(b))`` of the integral ``step`` answered
    (what ``_quad_nodes.interval_totals`` gives), from the kept pass (``floats``: the
    parameters are Python floats; ``p``: quad's tolerances and limit; ``reverse``: the
    limits were given as ``(hi, lo)``), or ``None`` where the kept pullback does not give
    one real row per node and parameter (the node pass then answers)."""
    m = _NODES + 2
    try:
        cots = step.back if type(step.back) is tuple else step.back(_ones(m))
        if floats:
            d = np.array(cots)
            if d.dtype.char != "d" or d.shape != (len(step.params), m):
                return None
        else:
            d = step.spread.rows(cots, m)
    except Exception:  # (rows and ZERO, a scalar: the node pass answers)
        return None
    weights, order = _step_weights()
    return interval_totals(
        step.vjp, step.params, step.spread, p, step.lo, step.hi, reverse, step.y, d, weights, order
    )


def float_step_cotangents(g, step, reverse, p):
    """``(da, db, dargs)`` of the usual call with Python float parameters answered by
    ``step``, for the cotangent ``g`` (a float) of its value (``reverse``: the limits were
    given as ``(hi, lo)``; ``p``: quad's tolerances and limit): :func:`step_totals` and
    the rule's scaling in one function,
    with the same operations (so the same bits), where the derivatives' error test holds
    on ``[lo, hi]`` whole; else (a bisection), and where the pass did not give one real
    row per parameter, what :func:`step_totals` gives through its general way (``None``
    there: the node pass answers)."""
    back = step.back
    m = _NODES + 2
    try:
        d = np.array(back if type(back) is tuple else back(_ones(m)))
    except Exception:  # (rows and ZERO, a scalar: the general way)
        d = None
    if d is None or d.dtype is not _FLOAT64 or d.shape != (len(step.params), m):
        return _scaled_totals(g, step, reverse, p)
    fa, fb = step.ends
    if reverse:
        fa, fb = fb, fa
    half = (step.hi - step.lo) * 0.5
    epsabs, epsrel = p["epsabs"], p["epsrel"]
    dargs = []
    # (``v - v == 0.0`` is ``math.isfinite(v)`` without a call: inf - inf and NaN are NaN)
    finite = fa - fa == 0.0 and fb - fb == 0.0
    for k_sum, e_sum in d.dot(_step_weights()[0]).tolist():
        t = k_sum * half  # (per parameter: the Kronrod sum, the error estimate)
        if not abs(e_sum * half) <= max(epsabs, epsrel * abs(t)):  # (or not finite)
            return _scaled_totals(g, step, reverse, p)
        finite = finite and t - t == 0.0
        dargs.append(g * (-t if reverse else t))
    if not finite:
        return None
    return -g * fa, g * fb, tuple(dargs)


def _scaled_totals(g, step, reverse, p):
    """:func:`float_step_cotangents` through :func:`step_totals` (bisecting)."""
    found = step_totals(step, True, p, reverse)
    if found is None:
        return None
    totals, fa, fb = found
    scaled = [g * t for t in totals] if type(totals) is list else (g * totals).tolist()
    return -g * fa, g * fb, tuple(scaled)


@functools.lru_cache(maxsize=1)
def _step_weights():
    """``(weights, order)``: the ``(23, 2)`` Kronrod and Kronrod-minus-Gauss weights of the
    step's values (zero for the limits), and the columns that put its 21 nodes in
    ascending order (``_quad_nodes._rule``'s)."""
    wk = [WGK[10]]
    wg = [0.0]
    for j, k in enumerate(PAIRS):
        wk += (WGK[k], WGK[k])
        wg += (WG[j], WG[j]) if j < 5 else (0.0, 0.0)
    wk, wg = np.array(wk), np.array(wg)
    weights = np.zeros((_NODES + 2, 2))
    weights[:_NODES, 0] = wk
    weights[:_NODES, 1] = wk - wg
    order = np.argsort(step_nodes(-1.0, 1.0)[:_NODES], kind="stable")
    return weights, order


# NumPy's floating-point error state, set for the pass by :func:`_raising` (its context
# variable, as np.errstate sets it, without the context manager's cost: a tenth of a
# smooth integral); np.errstate where that is not available.
try:
    from numpy._core.umath import _extobj_contextvar as _EXTOBJ
    from numpy._core.umath import _make_extobj
except ImportError:  # pragma: no cover - another NumPy

    class _ErrstateVar:
        """np.errstate behind the context variable's ``set``/``reset``."""

        @staticmethod
        def set(_):
            state = np.errstate(divide="raise", over="raise", invalid="raise")
            state.__enter__()
            return state

        @staticmethod
        def reset(state):
            state.__exit__(None, None, None)

    _EXTOBJ = _ErrstateVar()
    _make_extobj = None

# (the user's state last seen, and the pass's state derived from it: one tuple, replaced
# whole, so that a thread never pairs one user's state with another's derived one)
_RAISING = [(None, None)]


def _raising():
    """Set NumPy to raise on division by zero, overflow and invalid operations (the user's
    other settings kept) for the pass; return the token that resets it. The pass must
    not warn where quad's scalar calls would not (or raise ZeroDivisionError, Python's
    float division, where NumPy's gives inf): such a pass is QUADPACK's to run."""
    if _make_extobj is None:  # pragma: no cover - another NumPy
        return _EXTOBJ.set(None)
    now = _EXTOBJ.get()
    last = _RAISING[0]
    if last[0] is not now:  # (the user's state changed: derived again from it)
        last = _RAISING[0] = (now, _make_extobj(divide="raise", over="raise", invalid="raise"))
    return _EXTOBJ.set(last[1])
