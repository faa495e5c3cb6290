"""NumPy functions that call user functions: ``np.piecewise``, ``np.apply_along_axis`` and
``np.vectorize`` objects (a rule keyed by ``np.vectorize.__call__``, whose first argument
is the vectorized object).

Their pullbacks differentiate the user function once per call NumPy makes (per piece,
per 1-d slice, per element): with its rule when it has one, otherwise with
``pullback.vjp`` (reached through ``registry.ENTRY_POINTS``: rules sit below the api
layer and never import it). A np.vectorize object whose function is proved elementwise in
the arrays it maps over (``numpy_functional_pullbacks.one_call_modes``, the proof of
``_elementwise.py``) is differentiated by ONE vjp of the function over those arrays
instead; the primal stays NumPy's own loop. A user function's float arguments beyond
the array are differentiated too; integers, flags and keyword arguments are not. The
pullbacks are also given as transformable functions (numpy_functional_pullbacks.py) that
call the user function's vjp: second derivatives run through them.
"""

from __future__ import annotations

import numpy as np

from ..called_objects import refusing_hidden_records
from ..errors import UnsupportedCallError
from ..registry import ENTRY_POINTS, NONDIFF, default_registry
from ._util import NO_TANGENT, ZERO, Registrar, densify, differentiable, finalize, unbroadcast
from .numpy_functional_pullbacks import (
    ARRAY,
    ELEMENT,
    element_of,
    excluded_positions,
    one_call_modes,
    piecewise_conditions,
    piecewise_owner,
)

FAMILY = "numpy_functional"


def _call_with_pullback(f, args):
    """``(y, back)`` for ``f(*args)``; ``back(dy)`` gives one cotangent per argument
    (``NO_TANGENT`` for those without one)."""
    rule = default_registry().lookup(f)
    if rule is not None and rule.kind != NONDIFF:
        return rule.rrule(*args)
    wrt = tuple(k for k, a in enumerate(args) if differentiable(a))
    if rule is not None or not wrt:
        y = f(*args)
        return y, lambda dy: (NO_TANGENT,) * len(args)
    y, back = ENTRY_POINTS.vjp(f, *args, wrt=wrt)

    def user_function_pullback(dy):
        got = back(dy)
        out = [NO_TANGENT] * len(args)
        for k, c in zip(wrt, got, strict=True):
            out[k] = c
        return tuple(out)

    return y, user_function_pullback


def _refuse_keywords(name, kwargs):
    if kwargs:
        raise UnsupportedCallError(
            f"pullback: np.{name}(..., **kwargs) has no rule (keyword arguments passed on to "
            "the user function); fix: bind them with functools.partial or a lambda"
        )


def _accumulate(total, c):
    if c is ZERO or c is NO_TANGENT or c is None:
        return total
    c = densify(c)
    return c if total is ZERO else total + c


# -- piecewise ------------------------------------------------------------------------
def _piecewise_rrule(x, condlist, funclist, *args, **kw):
    y = np.piecewise(x, condlist, funclist, *args, **kw)
    _refuse_keywords("piecewise", kw)
    xa = np.asarray(x)
    conds = piecewise_conditions(x, condlist, len(funclist))
    owner = piecewise_owner(conds, xa.shape)  # a later condition overrides, as in NumPy
    pieces = []
    for k, (c, f) in enumerate(zip(conds, funclist, strict=False)):
        if callable(f) and np.any(c):
            pieces.append((k, c) + _call_with_pullback(f, (xa[c],) + args))

    def piecewise_pullback(dy):
        if dy is ZERO:
            return (ZERO if differentiable(x) else NO_TANGENT, NO_TANGENT, NO_TANGENT) + tuple(
                ZERO if differentiable(a) else NO_TANGENT for a in args
            )
        g = np.asarray(densify(dy))
        gx = np.zeros(xa.shape, dtype=np.result_type(g, xa, np.float16))
        gargs = [ZERO] * len(args)
        # a constant in funclist is the value of its elements: it gets their cotangents
        gfuncs = [
            NO_TANGENT
            if callable(f) or not differentiable(f)
            else finalize(np.sum(np.where(owner == k, g, np.zeros_like(g))), f)
            for k, f in enumerate(funclist)
        ]
        for k, c, yk, back in pieces:
            mine = np.where(owner[c] == k, g[c], np.zeros_like(g[c]))
            cots = back(unbroadcast(mine, yk))  # a function may return one value for all
            if cots[0] is not ZERO and cots[0] is not NO_TANGENT:
                gx[c] += np.reshape(densify(cots[0]), gx[c].shape)
            for j in range(len(args)):
                gargs[j] = _accumulate(gargs[j], cots[j + 1])
        rest = tuple(finalize(ga, a) for ga, a in zip(gargs, args, strict=True))
        constants = type(funclist) in (list, tuple) and differentiable(funclist)
        gf = type(funclist)(gfuncs) if constants else NO_TANGENT
        return (finalize(gx, x), NO_TANGENT, gf) + rest

    return y, piecewise_pullback


# -- apply_along_axis -----------------------------------------------------------------
def _apply_along_axis_rrule(func1d, axis, arr, *args, **kwargs):
    y = np.apply_along_axis(func1d, axis, arr, *args, **kwargs)
    _refuse_keywords("apply_along_axis", kwargs)
    a = np.asarray(arr)
    ax = axis % a.ndim
    moved = np.moveaxis(a, ax, -1)
    backs = {}
    for idx in np.ndindex(moved.shape[:-1]):
        backs[idx] = _call_with_pullback(func1d, (moved[idx],) + args)[1]

    def apply_along_axis_pullback(dy):
        if dy is ZERO:
            return (NO_TANGENT, NO_TANGENT, ZERO) + tuple(
                ZERO if differentiable(v) else NO_TANGENT for v in args
            )
        g = np.asarray(densify(dy))
        # y's axes: arr's axes before `axis`, the result's axes, arr's axes after.
        res_nd = g.ndim - (a.ndim - 1)
        g = np.moveaxis(g, tuple(range(ax, ax + res_nd)), tuple(range(g.ndim - res_nd, g.ndim)))
        garr = np.zeros(moved.shape, dtype=np.result_type(g, a, np.float16))
        gargs = [ZERO] * len(args)
        for idx, back in backs.items():
            cots = back(g[idx])
            if cots[0] is not ZERO and cots[0] is not NO_TANGENT:
                garr[idx] = densify(cots[0])
            for j in range(len(args)):
                gargs[j] = _accumulate(gargs[j], cots[j + 1])
        rest = tuple(finalize(ga, v) for ga, v in zip(gargs, args, strict=True))
        return (NO_TANGENT, NO_TANGENT, finalize(np.moveaxis(garr, -1, ax), arr)) + rest

    return y, apply_along_axis_pullback


# -- np.vectorize ---------------------------------------------------------------------
def _vectorize_call_rrule(vec, *args, **kwargs):
    y = vec(*args, **kwargs)
    excluded = excluded_positions(vec, len(args))
    if vec.signature is not None or excluded is None or kwargs:
        raise UnsupportedCallError(
            "pullback: a np.vectorize object with a signature, excluded keyword arguments or "
            "keyword arguments has no rule; fix: vectorize a function of positional "
            "arguments (excluded ones by position), or write the loop in the differentiated "
            "function"
        )
    # excluded arguments reach every call as they are: their cotangents are summed
    arrays = [None if k in excluded else np.asarray(v) for k, v in enumerate(args)]
    shape = np.broadcast_shapes(*(v.shape for v in arrays if v is not None))
    modes = one_call_modes(vec, args)
    if modes is not None:
        return y, _one_call_pullback(vec, args, modes, shape)
    full = [v if v is None else np.broadcast_to(v, shape) for v in arrays]
    backs = {}
    for idx in np.ndindex(shape):
        given = tuple(
            a if v is None else element_of(v[idx]) if v.dtype.kind in "biu" else v[idx][()]
            for a, v in zip(args, full, strict=True)
        )
        backs[idx] = _call_with_pullback(vec.pyfunc, given)[1]

    def vectorize_pullback(dy):
        if dy is ZERO:
            return (NO_TANGENT,) + tuple(ZERO if differentiable(v) else NO_TANGENT for v in args)
        g = np.asarray(densify(dy))
        grads = [
            ZERO if v is None else np.zeros(shape, dtype=np.result_type(g, v, np.float16))
            for v in arrays
        ]
        for idx, back in backs.items():
            for j, c in enumerate(back(g[idx])):
                if c is not ZERO and c is not NO_TANGENT and c is not None:
                    if arrays[j] is None:
                        grads[j] = _accumulate(grads[j], c)
                    else:
                        grads[j][idx] = densify(c)
        return (NO_TANGENT,) + tuple(finalize(gr, v) for gr, v in zip(grads, args, strict=True))

    return y, vectorize_pullback


def _one_call_pullback(vec, args, modes, shape):
    """The pullback of a np.vectorize call whose function is proved elementwise in its
    arrays (``one_call_modes``): ONE vjp of the function over the arrays, each element's
    cotangents at once; an argument passed whole gets the sum over the elements."""
    passed = tuple(
        np.asarray(a) if m == ARRAY else element_of(a) if m == ELEMENT else a
        for a, m in zip(args, modes, strict=True)
    )
    y1, back = _call_with_pullback(vec.pyfunc, passed)

    def vectorize_pullback(dy):
        if dy is ZERO:
            return (NO_TANGENT,) + tuple(ZERO if differentiable(v) else NO_TANGENT for v in args)
        g = np.broadcast_to(np.asarray(densify(dy)), shape)
        cots = back(unbroadcast(g, y1))  # (a function may return one value for all)
        out = []
        for c, a, m in zip(cots, args, modes, strict=True):
            if m == ELEMENT or not differentiable(a):
                out.append(NO_TANGENT)
            elif c is NO_TANGENT or c is None:
                out.append(ZERO)
            else:
                out.append(finalize(densify(c), a))
        return (NO_TANGENT,) + tuple(out)

    return vectorize_pullback


def register(reg):
    r = Registrar(reg, FAMILY)
    note = "user functions via their rule or pullback.vjp, one call per piece/slice/element"
    # (a user object holding differentiated values, handed over, is refused: its rule
    # differentiates the functions' arguments, not the objects' fields)
    pieces = r.rule(
        np.piecewise, refusing_hidden_records(_piecewise_rrule, "numpy.piecewise"), notes=note
    )
    pieces.extra["args_receivers"] = (("x", "condlist", "funclist", "*args"), ("funclist",))
    applied = r.rule(
        np.apply_along_axis,
        refusing_hidden_records(_apply_along_axis_rrule, "numpy.apply_along_axis"),
        notes=note,
    )
    # a closure given as func1d takes what it reads as extra arguments, which
    # apply_along_axis passes on and the rule differentiates (transform/solver_closures.py)
    applied.extra["args_receivers"] = (("func1d", "axis", "arr", "*args"), ("func1d",))
    vectorized = r.rule(
        np.vectorize.__call__,
        refusing_hidden_records(_vectorize_call_rrule, "numpy.vectorize"),
        name="numpy.vectorize.__call__",
        notes="no signature or excluded keywords; one vjp over the arrays where the "
        "function is proved elementwise, else " + note,
    )
    vectorized.extra["takes_callables"] = True
    from . import numpy_functional_pullbacks as pbs

    reg.set_pullback_function(np.apply_along_axis, pbs.apply_along_axis_pullback)
    reg.set_pullback_function(np.piecewise, pbs.piecewise_pullback)
    reg.set_pullback_function(np.vectorize.__call__, pbs.vectorize_pullback)
    reg.non_differentiable(*pbs.NON_DIFFERENTIABLE, family=FAMILY, trusted=True)
