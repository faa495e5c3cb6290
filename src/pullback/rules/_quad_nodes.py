"""quad's parameter integral on quad's own subintervals, by one reverse pass of the
integrand over all their Gauss-Kronrod nodes (the fast way of ``scipy_quad``'s rule).

``d/dtheta integral f(x, theta) dx = integral df/dtheta(x, theta) dx`` is summed with the
21-point Gauss-Kronrod rule on each subinterval quad ended with; the 10-point Gauss rule on
the same nodes gives each subinterval's error estimate, and subintervals are bisected
until the caller's ``epsabs``/``epsrel`` hold for every parameter (the derivative may be
sharper than the integrand). The derivatives at all nodes come from ONE call of the
integrand's adjoint: ``x`` is the array of nodes and each float parameter is spread into
an array of the same length (an array parameter ``p`` into ``p.shape + (nodes,)``, so that
its constant-index reads ``p[0]`` are such arrays), so the pullback of a cotangent of ones
gives every node its own ``df/dtheta(x_i)``. That is the derivative of the scalar
integrand only when the integrand maps its arrays elementwise, which ``_elementwise.py``
proves from the source first; otherwise (and for anything the pass cannot give as one
real row per node) this returns ``None`` and the rule takes its exact per-node path.

The cost matters: the gradient of a smooth integral (one subinterval, 21 integrand calls)
should cost a few times the integral, so the pass calls the generated adjoint directly
(its errors only mean "take the per-node path", which reports them), and the arrays are
laid out ``(parameter, subinterval, node)`` so that one matrix product gives both rules'
sums. Python float parameters are not even spread on the one-subinterval pass: the adjoint
built for spread ones is called with the floats themselves (:func:`_unspread`), which
gives the same rows.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ._calculus_util import float_sequence, user_vjp_of
from ._elementwise import elementwise_in_x
from ._kronrod import gauss_kronrod21
from ._util import ZERO

__all__ = [
    "float_args_cotangents",
    "interval_totals",
    "node_parameter_integral",
    "plain_args_cotangents",
]

_NODES = 21


@functools.lru_cache(maxsize=1)
def _rule():
    """``(a, b, weights, end_weights)``: node ``j`` of ``[lo, hi]`` is ``lo * a[j] + hi *
    b[j]`` (for ``j < 21``; ``a`` and ``b`` have two more entries, which give ``lo`` and
    ``hi``); the weights a ``(21, 2)`` array, its columns the Kronrod weights and the
    Kronrod minus the Gauss weights (whose sum is the error estimate); ``end_weights`` the
    same with two rows of zeros after them, for the 23 values of ``a * lo + b * hi``."""
    x, wk, wg = gauss_kronrod21()
    a = np.concatenate(((1 - x) / 2, [1.0, 0.0]))
    b = np.concatenate(((1 + x) / 2, [0.0, 1.0]))
    w = np.ascontiguousarray(np.stack((wk, wk - wg), axis=1))
    return a, b, w, np.concatenate((w, np.zeros((2, 2))))


def _grid(lo, hi, ends=()):
    """The 21 nodes of each subinterval ``[lo_i, hi_i]`` in one flat array, followed by
    the points ``ends`` (none or two)."""
    a, b, _, _ = _rule()
    n = lo.size * _NODES
    if lo.size == 1:  # (one subinterval, the smooth case: from two Python floats)
        xs = a[: n + len(ends)] * float(lo[0])
        xs += b[: n + len(ends)] * float(hi[0])
    else:
        xs = np.empty(n + len(ends))
        grid = xs[:n].reshape(lo.size, _NODES)
        np.multiply(lo[:, None], a[:_NODES], out=grid)
        grid += hi[:, None] * b[:_NODES]
    if ends:
        xs[n:] = ends
    return xs


def _node_derivatives(vjp, params, spread, xs, key=None):
    """``(f(xs), d f(xs) / d params[k])``, the derivatives a ``(P, len(xs))`` array, by one
    reverse pass with every float parameter spread over the nodes: ``spread`` the tuple of
    the positions ``k`` of scalar parameters (a row each), or an :class:`_ArrayLayout`
    where arrays are among them (an array ``p`` spread to ``p.shape + (len(xs),)``, whose
    constant-index reads are rows: a row per element). ``None`` when the pass does not give
    one real row per node and parameter element. ``key``: the kinds' key of Python float
    parameters where the caller knows them to be such (see :func:`_float_layout`)."""
    m = xs.size
    if key is not None:  # (Python floats: passed as they are where the adjoint serves)
        found = _unspread(vjp, params, spread, xs, key)
        if found is not None:
            return found
    args = [xs, *params]
    if type(spread) is tuple:  # scalars: a vector each
        for k in spread:
            row = args[1 + k] = np.empty(m)
            row.fill(params[k])
        # (x and the spread parameters are float vectors: the other arguments' types
        # decide the kinds the adjoint is specialized on)
        if key is None:
            key = (_NODES,) + tuple(map(type, params))
        one_shape = _one_shape(spread)
    else:
        key = spread.fill(params, m, args)
        one_shape = spread.one_shape
    try:
        y, back = vjp.adjoint_keyed(key, args, one_shape).forward(*args)
        if type(y) is not np.ndarray or y.shape != (m,) or y.dtype.kind != "f":
            return None
        cots = back(_ones(m))
        if type(spread) is not tuple:
            d = spread.rows(cots, m)
        else:  # (the usual case: float64 rows, stacked by one copy, checked after)
            d = _stacked(cots, m)
    except Exception:  # (a ufunc without a rule, ...: the per-node path reports it)
        return None
    return None if d is None else (y, d)


def _unspread(vjp, params, index, xs, key):
    """:func:`_node_derivatives` for Python float ``params`` passed to the pass as they
    are, not spread into vectors: the adjoint built for spread ones (under ``key``)
    computes, operation by operation, the same values from a float as from its vector
    (NumPy broadcasts it), and since it was built for arguments of one shape it sums no
    cotangent over the nodes: each parameter's cotangent is still its vector of node
    derivatives. ``None`` for anything else (a cotangent that is not one float64 vector of
    the nodes' length, a parameter not read, an error): the spread way answers it. Which
    way answers depends on the integrand and the values alone, never on what ran before:
    a missing adjoint is built here, from spread arguments."""
    m = xs.size
    adj = vjp.keyed(key)
    try:
        if adj is None:
            spread = [xs, *(np.full(m, v) for v in params)]
            adj = vjp.adjoint_keyed(key, spread, _one_shape(index))
        y, back = adj.forward(xs, *params)
        if type(y) is not np.ndarray or y.shape != (m,) or y.dtype.char != "d":
            return None
        d = np.array(back(_ones(m)))
    except Exception:  # (rows and ZERO, or scalars: ValueError; or what the pass raised)
        return None
    if d.dtype.char != "d" or d.shape != (len(index), m):
        return None
    return y, d


@functools.lru_cache(maxsize=64)
def _one_shape(spread):
    """What the pass's arguments share (see ``UserVJP.adjoint``): ``x`` and the scalar
    parameters at ``spread``, all spread to float64 vectors of the nodes' length."""
    return frozenset(((0, 0),) + tuple((1 + k, 0) for k in spread))


def _stacked(cots, m):
    """The ``(P, m)`` float64 derivatives from the pass's cotangents of spread scalars: the
    usual float64 rows stacked by one copy, any other through :func:`_scalar_rows`."""
    try:
        d = np.array(cots)
    except ValueError:  # (rows and ZERO, or rows of other lengths)
        return _scalar_rows(cots, m)
    if d.dtype.char != "d" or d.shape != (len(cots), m):
        return _scalar_rows(cots, m)
    return d


def _scalar_rows(cots, m):
    """The ``(P, m)`` derivatives from the pass's cotangents of spread scalars where they
    are not all float64 vectors (which :func:`_stacked` stacks itself): a
    parameter the integrand does not read (``ZERO``) a row of zeros, a scalar broadcast
    over its row, another real vector converted; ``None`` for a cotangent that is not
    real."""
    d = np.empty((len(cots), m))
    for j, c in enumerate(cots):
        if c is ZERO:  # a parameter the integrand does not read
            d[j] = 0.0
        elif isinstance(c, np.ndarray) and c.dtype.kind != "f":
            return None
        else:
            d[j] = c  # (a scalar broadcasts over the nodes)
    return d


class _ArrayLayout:
    """How float parameters, arrays among them, are spread over the nodes: ``entries``
    per parameter ``(k, first row, shape or None for a scalar)``, ``size`` rows in all.
    Made from ``kinds``, per parameter its shape (an array) or its type (see
    :func:`_spread_of`), so one serves every call with parameters of those kinds."""

    __slots__ = ("entries", "size", "key", "single", "one_shape")

    def __init__(self, kinds, index):
        self.entries, start = [], 0
        for k in index:
            shape = kinds[k] if type(kinds[k]) is tuple else None
            self.entries.append((k, start, shape))
            start += 1 if shape is None else math.prod(shape)
        self.size = start
        # (the kinds of the pass's arguments: an array's rank, one more for the spread
        # ones, all alike; the other arguments' types)
        self.key = (_NODES,) + tuple(
            (len(kind), "f") if type(kind) is tuple else kind for kind in kinds
        )
        # one array parameter: spread into its own buffer by one broadcast
        self.single = len(index) == 1 and self.entries[0][2] is not None
        # x and the spread parameters: float64, of x's shape after an array's own axes
        self.one_shape = frozenset(
            ((0, 0),)
            + tuple((1 + k, 0 if shape is None else len(shape)) for k, _, shape in self.entries)
        )

    def fill(self, params, m, args):
        """Spread ``params`` over ``m`` nodes into ``args`` (at ``1 + k``); the key of the
        kinds of ``args`` (an array's rank: the spread ones have one more, all the same)."""
        if self.single:
            k, _, shape = self.entries[0]
            spread = args[1 + k] = np.empty(shape + (m,))
            spread[...] = params[k][..., None]
            return self.key
        buffer = np.empty((self.size, m))
        for k, first, shape in self.entries:
            if shape is None:
                row = args[1 + k] = buffer[first]
                row.fill(params[k])
            else:
                block = buffer[first : first + params[k].size]
                block[...] = params[k].reshape(-1, 1)
                args[1 + k] = block.reshape(shape + (m,))  # (a view: its reads are rows)
        return self.key

    def rows(self, cots, m):
        """The ``(size, m)`` derivatives from the pass's cotangents of the spread
        parameters (a scalar's cotangent broadcast over its row, an array's of its spread
        shape); raises ``ValueError`` for any other."""
        if len(cots) == 1:  # one parameter (a closure's array): its float64 cotangent as is
            c, shape = cots[0], self.entries[0][2]
            if (
                type(c) is np.ndarray
                and c.dtype.char == "d"
                and c.shape == ((m,) if shape is None else shape + (m,))
            ):
                return c.reshape(self.size, m)  # (only read: the sums, their bisection)
        d = np.empty((self.size, m))
        for (_, first, shape), c in zip(self.entries, cots, strict=True):
            if shape is None:
                block = d[first]
            else:
                block = d[first : first + math.prod(shape)].reshape(shape + (m,))
                if not (c is ZERO or (type(c) is np.ndarray and c.shape == block.shape)):
                    raise ValueError("not one cotangent per element and node")
            if c is ZERO:  # a parameter the integrand does not read
                block[...] = 0.0
            elif isinstance(c, np.ndarray) and c.dtype.kind != "f":
                raise ValueError("not a real cotangent")
            else:
                block[...] = c
        return d


def _spread_of(params, index):
    """What :func:`_node_derivatives` takes as ``spread`` for the parameters ``params[k]``,
    ``k`` in ``index``."""
    for k in index:
        if type(params[k]) is np.ndarray:
            if len(params) == 1:  # (one array, a closure's: its shape alone)
                return _layout((params[0].shape,), index)
            kinds = tuple(v.shape if type(v) is np.ndarray else type(v) for v in params)
            return _layout(kinds, index)
    return index


@functools.lru_cache(maxsize=64)
def _layout(kinds, index):
    """The :class:`_ArrayLayout` of parameters of these ``kinds`` (kept: it depends on
    the shapes and types alone, and an optimizer's calls repeat them)."""
    return _ArrayLayout(kinds, index)


def _rule_sums(d, lo, hi):
    """Per parameter and subinterval, the Kronrod sum of the node derivatives ``d``
    (``(P, L * 21)``) on ``[lo_i, hi_i]`` and its error estimate (the size of its
    difference from the Gauss sum), as one ``(P, L, 2)`` array."""
    w = _rule()[2]
    sums = np.matmul(d.reshape(d.shape[0], lo.size, _NODES), w)
    sums *= ((hi - lo) * 0.5)[:, None] if lo.size > 1 else float(hi[0] - lo[0]) * 0.5
    err = sums[..., 1]
    np.abs(err, out=err)
    return sums


def node_parameter_integral(func, a, b, pack, p, info):
    """``(integral of d f / d args over [a, b] as a flat vector, f(a), f(b))`` on the
    subintervals of quad's ``info``, or ``None`` where this way does not apply: an
    integrand not proved elementwise in ``x`` (array parameters read otherwise than at
    constant indices among them), derivatives that are not finite or that need more than
    quad's ``limit`` subintervals."""
    params = pack.args
    if not pack.plain:  # (tuples of floats read at constant indices: read as arrays)
        params = tuple(np.array(v) if float_sequence(v) else v for v in params)
    index = pack.index
    vjp = user_vjp_of(func, _wrt(index))
    if not elementwise_in_x(func, params, arrays=True, owner=vjp):
        return None
    last = int(info.get("last", 0))
    if last < 1:
        return None
    alist, blist = info["alist"], info["blist"]
    spread = _spread_of(params, index)
    if last == 1:  # (the smooth case: quad kept [min(a, b), max(a, b)] whole)
        lo, hi = float(alist[0]), float(blist[0])
        if (lo, hi) == (a, b) or (lo, hi) == (b, a):
            return _one_interval(vjp, params, spread, p, lo, hi, a > b)
    lo, hi = alist[:last], blist[:last]
    found = _node_derivatives(vjp, params, spread, _grid(lo, hi, (float(a), float(b))))
    if found is None:
        return None
    y, d = found
    sums = _rule_sums(d[:, :-2], lo, hi)
    return _finish(vjp, params, spread, p, lo, hi, sums, y[-2], y[-1], b < a)


def float_args_cotangents(g, func, a, b, args, p, info):
    """``(da, db, dargs)`` of the usual call ``quad(func, a, b, args)`` (float limits, ``a !=
    b``, ``args`` a tuple of Python floats) for the cotangent ``g`` (a float) of its value,
    where quad kept ``[a, b]`` whole and the integrand is proved elementwise: the one-pass
    way with no layer between the rule's pullback and the pass (no :class:`ArgsPack`, the
    limits' cotangents from the pass's values there). ``None`` otherwise."""
    if info["last"] != 1:
        return None
    lo, hi = info["alist"].item(0), info["blist"].item(0)
    if not ((lo == a and hi == b) or (lo == b and hi == a)):
        return None
    index, wrt, key = _float_layout(len(args))
    vjp = user_vjp_of(func, wrt)
    if not elementwise_in_x(func, args, owner=vjp):
        return None
    found = _one_interval(vjp, args, index, p, lo, hi, a > b, key)
    if found is None:
        return None
    totals, fa, fb = found
    # Python floats, the cotangents of Python floats (what grad hands back without a call)
    dargs = tuple([g * t for t in totals] if type(totals) is list else (g * totals).tolist())
    return -g * fa, g * fb, dargs


def plain_args_cotangents(g, func, a, b, pack, p, info):
    """:func:`float_args_cotangents` for ``args`` of Python floats and float64 arrays
    (``pack`` a plain :class:`~._calculus_util.ArgsPack` of them: a closure's array passed
    on by the rewrite of its call, read at constant indices), the arrays spread over the
    nodes: what :func:`node_parameter_integral` gives the usual call, without the layers
    a general call needs. ``None`` where it does not apply (the general way answers)."""
    if info["last"] != 1:
        return None
    lo, hi = info["alist"].item(0), info["blist"].item(0)
    if not ((lo == a and hi == b) or (lo == b and hi == a)):
        return None
    params, index = pack.args, pack.index
    vjp = user_vjp_of(func, _wrt(index))
    if not elementwise_in_x(func, params, arrays=True, owner=vjp):
        return None
    found = _one_interval(vjp, params, _spread_of(params, index), p, lo, hi, a > b)
    if found is None:
        return None
    totals, fa, fb = found
    scaled = [g * t for t in totals] if type(totals) is list else g * totals
    # (the limits' cotangents as finalize gives a Python float limit's)
    return np.float64(-g * fa), np.float64(g * fb), pack.cotangent(scaled)


@functools.lru_cache(maxsize=64)
def _float_layout(n):
    """``(index, wrt, key)`` of ``n`` Python float parameters: their positions in ``args``
    and in ``f(x, *args)``, and the key of the node pass's kinds."""
    index = tuple(range(n))
    return index, _wrt(index), (_NODES,) + (float,) * n


@functools.lru_cache(maxsize=64)
def _ones(m):
    """The cotangent of ones the node pass pulls back (read-only, so kept: a pullback that
    wrote into it would raise, and the per-node path would answer)."""
    ones = np.ones(m)
    ones.flags.writeable = False
    return ones


@functools.lru_cache(maxsize=64)
def _wrt(index):
    """The positions of the parameters ``args[k]``, ``k`` in ``index``, in ``f(x, *args)``."""
    return tuple(1 + k for k in index)


def _one_interval(vjp, params, spread, p, lo, hi, reverse, key=None):
    """:func:`node_parameter_integral` on the one subinterval ``[lo, hi]`` (Python floats),
    the limits ``(a, b)`` being ``(lo, hi)`` or (``reverse``) ``(hi, lo)``: the nodes and
    the limits in one product of the rule's constants, the sums and their test in Python
    floats where no bisection is needed."""
    if lo and hi:
        xs = _interval_nodes(lo, hi)
    else:  # (the sign of a zero limit in the key: 1 / x sees it)
        xs = _interval_nodes(lo, hi, math.copysign(1.0, lo), math.copysign(1.0, hi))
    found = _node_derivatives(vjp, params, spread, xs, key)
    if found is None:
        return None
    y, d = found
    return interval_totals(vjp, params, spread, p, lo, hi, reverse, y, d)


def interval_totals(vjp, params, spread, p, lo, hi, reverse, y, d, weights=None, order=None):
    """:func:`_one_interval` from the pass's values ``y`` and node derivatives ``d``
    (``(P, 23)``: the 21 nodes of ``[lo, hi]``, then ``lo`` and ``hi``): the Kronrod sums
    and their error test, bisecting where the test fails. ``weights``: the ``(23, 2)``
    Kronrod and Kronrod-minus-Gauss weights of the columns of ``d`` where its nodes are
    in another order than :func:`_rule`'s, ``order`` the columns that put them in that
    order (for the bisection)."""
    fa, fb = y[21:].tolist()  # (Python floats)
    if reverse:
        fa, fb = fb, fa
    half = (hi - lo) * 0.5
    epsabs, epsrel = p["epsabs"], p["epsrel"]
    totals = []
    # (ndarray.dot: the same product as np.matmul, without a ufunc's dispatch)
    for k_sum, e_sum in d.dot(_rule()[3] if weights is None else weights).tolist():
        t = k_sum * half  # (per parameter: the Kronrod sum, the error estimate)
        if not abs(e_sum * half) <= max(epsabs, epsrel * abs(t)):  # (or not finite)
            lo_hi = np.array([lo]), np.array([hi])
            rows = d[:, :-2] if order is None else d[:, order]
            return _finish(
                vjp, params, spread, p, *lo_hi, _rule_sums(rows, *lo_hi), fa, fb, reverse
            )
        totals.append(-t if reverse else t)
    if not (math.isfinite(fa) and math.isfinite(fb) and all(map(math.isfinite, totals))):
        return None
    return totals, fa, fb


@functools.lru_cache(maxsize=64)
def _interval_nodes(lo, hi, *signs):
    """The 21 nodes of ``[lo, hi]`` then ``lo`` and ``hi`` (read-only: kept for the next
    gradient of the same integral, since an optimizer's parameters move and its limits
    do not; ``signs``: those of a zero ``lo`` or ``hi``, which the value alone does not
    tell apart)."""
    ra, rb, _, _ = _rule()
    xs = ra * lo
    xs += rb * hi
    xs[21:] = lo, hi  # (-0.0 * 1.0 + 0.0 * hi is 0.0: the limits as given)
    xs.flags.writeable = False
    return xs


def _finish(vjp, params, spread, p, lo, hi, sums, fa, fb, reverse):
    """The result of :func:`node_parameter_integral` from the first pass's ``sums`` (see
    :func:`_rule_sums`) and the integrand's values ``fa``, ``fb`` at the limits."""
    if not (math.isfinite(fa) and math.isfinite(fb)):
        return None  # (a call at a limit that Python would refuse: the per-node path)
    total = _adaptive_sum(vjp, params, spread, p, lo, hi, sums)
    if total is None:
        return None
    if reverse:  # quad's subintervals run from min(a, b) to max(a, b)
        total = -total
    return total, fa, fb


def _adaptive_sum(vjp, params, spread, p, lo, hi, sums):
    """From the Kronrod sums and error estimates ``sums`` (``(P, L, 2)``, see
    :func:`_rule_sums`) on ``[lo_i, hi_i]``, bisect the subintervals whose estimated error
    is more than their share of the tolerance until ``epsabs``/``epsrel`` hold for every
    parameter. ``None`` past quad's subdivision limit, for sums that are not finite (a
    non-finite derivative at a node: every Kronrod weight is positive), or for a pass that
    fails."""
    epsabs, epsrel = p["epsabs"], p["epsrel"]
    while True:
        totals = sums.sum(axis=1)  # (P, 2): the integral and its error estimate
        done = True
        for t, e in totals.tolist():  # (a handful of floats: tested in Python)
            if not math.isfinite(t):
                return None
            done = done and e <= max(epsabs, epsrel * abs(t))
        if done:
            return totals[:, 0]
        if lo.size >= p["limit"]:
            return None
        err = sums[..., 1]
        tol = np.maximum(epsabs, epsrel * np.abs(totals[:, :1]))  # (P, 1)
        split = np.any(err > tol * ((hi - lo) / np.sum(hi - lo)), axis=0)
        if not split.any():
            ratio = np.max(err / tol, axis=0)
            split = ratio >= ratio.max()
        mid = (lo[split] + hi[split]) / 2
        new_lo = np.concatenate((lo[split], mid))
        new_hi = np.concatenate((mid, hi[split]))
        found = _node_derivatives(vjp, params, spread, _grid(new_lo, new_hi))
        if found is None:
            return None
        keep = ~split
        lo, hi = np.concatenate((lo[keep], new_lo)), np.concatenate((hi[keep], new_hi))
        sums = np.concatenate((sums[:, keep], _rule_sums(found[1], new_lo, new_hi)), axis=1)
