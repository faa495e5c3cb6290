"""Star-calls at run time: ``f(a, *xs, k=v, **opts)`` once the normalizer has packed the
positional arguments into one tuple and the keyword arguments into dicts
(:mod:`pullback.transform.star_calls`).

``star_call(f, args, keywords, *mappings)`` is the plain call (what runs where no gradient
flows); :func:`star_call_rrule` gives ``(y, pullback)`` through the callee's rule or
generated adjoint, found at run time like any call of a run-time value; its pullback
returns the cotangent of the packed tuple (one per element) and of each dict (one per
key). Keywords that name positional parameters of the callee are passed by position, so
a user function's keyword argument gets its cotangent like a positional one.

>>> star_call(max, (1.0, 3.0, 2.0), {})
3.0
"""

from __future__ import annotations

import functools
import types

import numpy as np

from .called_objects import call_as_object_method, called_object, object_method_as_call
from .dynamic_calls import array_method_function, call_function, call_method
from .dynamic_reverse import function_reverse, method_reverse, reverse_through
from .dynamic_vjps import function_vjp, method_vjp
from .errors import ArgumentError, NotDifferentiableError, describe
from .guards import is_library_module_name
from .keyword_shims import can_shim, held_callable_function, keyword_shim, method_function
from .registry import NONDIFF, transformable
from .rule_tangents import function_tangent, method_tangent
from .signatures import signature_of
from .star_permutations import (
    _own_rrule,
    _permuted_tangent,
    _tangent_items,
    bind_front,
    merged_keywords,
)
from .tangents import NO_TANGENT, ZERO, is_differentiable_value, is_zero

_merged = merged_keywords


def _merged_at(site, keywords, mappings) -> dict:
    """:func:`_merged`, with a keyword given twice refused at the call's place (Python's
    TypeError would come out of pullback's own code). A solver call's closure takes what
    it reads through an ``args`` pullback adds (transform/solver_closures.py): a mapping
    in a name that holds ``args`` as well meets it here."""
    try:
        return _merged(keywords, mappings)
    except TypeError as e:
        key = str(e).rsplit(" ", 1)[-1]
        raise ArgumentError(
            f"{site.where()}: the keyword argument {key} is given twice (a function given to "
            "a solver passes the values it reads through 'args', which pullback adds to the "
            "call).\n"
            f"        {site.source_line.strip()}\n"
            f"Fix: give {key} once, by name or in one mapping; for a solver's 'args', write "
            f"the mapping in the call (**{{{key}: (...), ...}}) so that the values read by "
            "the function are added to it."
        ) from None


def star_call(fn, args, keywords, *mappings):
    """``fn(*args, **keywords, **mapping...)``: the primal of a star-call."""
    return fn(*args, **_merged(keywords, mappings))


def star_method(obj, name, args, keywords, *mappings):
    """``obj.name(*args, **keywords, **mapping...)``."""
    return getattr(obj, name)(*args, **_merged(keywords, mappings))


def call_plan(site, fn, args, kwargs, again=False):
    """``(callee, positional, remaining keywords, keywords moved to positions)`` for
    ``fn(*args, **kwargs)``: :func:`_by_position`, a keyword whose cotangent ``fn``'s rule
    gives (``rule.extra["keyword_cotangents"]``: ``solve_ivp``'s ``args``) passed by
    position too, the parameters before it at their defaults. The keywords left of a
    user's function (keyword-only, ``**kwargs`` entries, a parameter after one left at
    its default) are passed by position to its keyword shim (keyword_shims.py), the
    callee then: each order of derivative finds every cotangent at its place, as for an
    argument written there. ``again`` (the reverse of a gradient differentiated again):
    a rule without a transformable pullback is called through a shim too, whose call
    written out gets the rule's inline or elementwise second derivatives."""
    rule = site.registry.lookup(fn)
    declared = () if rule is None else rule.extra.get("keyword_cotangents", ())
    positional, rest, moved = _by_position(fn, args, kwargs, declared)
    if rest and rule is None and can_shim(fn, rest):
        shim = keyword_shim(fn, len(positional), tuple(rest))
        return shim, positional + tuple(rest.values()), {}, moved + list(rest)
    if again and not rest and rule is not None and rule.pullback_fn is None:
        if rule.kind != NONDIFF:
            return keyword_shim(fn, len(positional), ()), positional, rest, moved
    return fn, positional, rest, moved


def _by_position(fn, args, kwargs, declared=()):
    """``(positional, remaining keywords, keywords moved to positions)``: keyword
    arguments that fill the callee's next positional parameters are passed by position,
    and so are those of ``declared`` with the parameters before them (at their defaults)."""
    try:
        params = list(signature_of(fn).parameters.values())  # cached (signatures.py)
    except (TypeError, ValueError):
        return tuple(args), kwargs, []
    if len(args) > len(params) or any(
        p.kind in (p.VAR_POSITIONAL, p.KEYWORD_ONLY, p.VAR_KEYWORD) for p in params[: len(args)]
    ):
        return tuple(args), kwargs, []
    positional, rest, moved = list(args), dict(kwargs), []
    wanted = [k for k, p in enumerate(params) if p.name in declared and p.name in rest]
    last = max(wanted, default=-1)
    for k, p in enumerate(params[len(args) :], len(args)):
        if p.kind is not p.POSITIONAL_OR_KEYWORD:
            break
        if p.name in rest:
            positional.append(rest.pop(p.name))
        elif k < last and p.default is not p.empty:
            positional.append(p.default)
        else:
            break
        moved.append(p.name)
    return tuple(positional), rest, moved


def _method_by_position(site, obj, name, args, kwargs):
    """:func:`_by_position` for ``obj.name(*args, **kwargs)`` (``obj`` not included), by
    the signature of what the call runs: for an array, the function of the rule
    ``dynamic_calls.call_method`` runs (``x.clip(**o)`` runs ``np.clip``'s, whose
    parameters are not the method's), else the method of ``obj``'s class."""
    method = getattr(type(obj), name, None)
    if isinstance(obj, (np.ndarray, np.generic)):
        method = array_method_function(site, obj, name)
    if method is None:
        return tuple(args), kwargs, []
    positional, rest, moved = _by_position(method, (obj, *args), kwargs)
    return positional[1:], rest, moved


def active_keys(keywords_active, keywords, mappings) -> set:
    """The keys of a star-call's keyword dicts that carry a gradient, from what the
    transformation found (``transform.star_calls._keywords_active``): True for all of
    them, False for none, or one entry per dict (``keywords`` then each mapping): True,
    False, or the tuple of the dict's active keys. A key of a constant ``**opts`` is not
    one of them, whatever its value."""
    dicts = (keywords, *mappings)
    if not keywords_active:
        return set()
    if keywords_active is True:
        return {key for d in dicts for key in d}
    out = set()
    for flag, d in zip(keywords_active, dicts, strict=True):
        out.update(d if flag is True else flag or ())
    return out


def _named(fn) -> str:
    """The callee as a message names it: its name, or what it is (a callable object, a
    ``functools.partial``), never a repr with a memory address."""
    name = getattr(fn, "__name__", None)
    if isinstance(fn, functools.partial):
        return f"functools.partial of '{describe(fn.func)}'"
    return f"'{name if isinstance(name, str) else describe(fn)}'"


def _refuse_keyword_gradients(site, rest, what, active):
    """A float left in a keyword no rule differentiates would get no gradient: say so
    (for the keys ``active`` names: the others hold values no input reaches)."""
    for key, value in rest.items():
        if key in active and _holds_floats(value):
            raise NotDifferentiableError(
                f"{site.where()}: the keyword argument {key!r} of {what} carries a gradient, "
                "but it cannot be passed by position, and keyword arguments found at run "
                "time are not differentiated.\n"
                f"        {site.source_line.strip()}\n"
                f"Fix: pass {key!r} by position, or give the callee a parameter for it."
            )


def _refuse_keyword_tangents(site, rest, what, dkeywords, dmappings):
    """Forward mode's :func:`_refuse_keyword_gradients`: a keyword left as a keyword whose
    tangent is not zero would be dropped (a silently wrong derivative): refused."""
    moving = set()
    for dd in (dkeywords, *dmappings):
        if dd is None or is_zero(dd):
            continue
        moving.update(k for k, d in dd.items() if not is_zero(d) and d is not NO_TANGENT)
    _refuse_keyword_gradients(site, rest, what, moving)


def _holds_floats(value) -> bool:
    """A float value, or a list, tuple or dict holding one (``weights=[p[0], p[1]]``,
    ``args=(p,)``): a keyword whose gradient would be lost whole or in part."""
    if isinstance(value, (list, tuple)):
        return any(_holds_floats(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_floats(v) for v in value.values())
    return is_differentiable_value(value)


def _keyword_cotangents(keywords, mappings, cots_by_key):
    """One dict cotangent per keyword dict (ZERO where nothing flows)."""
    out = []
    for d in (keywords, *mappings):
        part = {k: cots_by_key[k] for k in d if k in cots_by_key}
        out.append(part if part else ZERO)
    return out


def star_call_rrule(site, keywords_active, fn, args, keywords, *mappings):
    """``(y, pullback)`` of ``star_call(fn, args, keywords, *mappings)``."""
    if called_object(fn):
        y, pb = star_method_rrule(site, keywords_active, fn, "__call__", args, keywords, *mappings)
        return y, lambda g: object_method_as_call(pb(g))
    kwargs = _merged_at(site, keywords, mappings)
    own = _own_rrule(fn, args, kwargs)
    if own is not None:
        y, pb = own
        return y, lambda g: (NO_TANGENT, pb(g), *(ZERO for _ in (keywords, *mappings)))
    callee, positional, rest, moved = call_plan(site, fn, args, kwargs)
    if rest and keywords_active and not _gives_keyword_cotangents(site, fn):
        active = active_keys(keywords_active, keywords, mappings)
        _refuse_keyword_gradients(site, rest, _named(fn), active)
    y, pullback = call_function(site, callee, *positional, **rest)
    n = len(args)

    def star_call_pullback(g):
        cots = pullback(g)
        # a user function's keyword-only parameters and **kwargs entries: their own
        # cotangents (adjoints.KeywordCotangents), returned to the dicts unpacked here
        by_key = getattr(cots, "keywords", None)
        return (NO_TANGENT, *_packed(cots, n, moved, keywords, mappings, by_key))

    return y, star_call_pullback


def _gives_keyword_cotangents(site, fn) -> bool:
    """Whether calling ``fn`` with keywords gives each keyword argument its cotangent: a
    Python function of the user's (not the standard library's, NumPy's, SciPy's or
    pullback's own) with no rule, differentiated in every argument that holds floats
    (adjoints.LazyAdjoint)."""
    return (
        isinstance(fn, types.FunctionType)
        and site.registry.lookup(fn) is None
        and not is_library_module_name(getattr(fn, "__module__", None) or "pullback")
    )


def as_function_call(site, obj, name, args, keywords, mappings):
    """The Python function ``obj.name(*args, **...)`` runs with ``obj`` first
    (keyword_shims.method_function) when keywords are left that only its keyword shim
    passes by position, else None: the star method call is then the star-call of that
    function with ``(obj, *args)``, at every order."""
    kwargs = _merged_at(site, keywords, mappings)
    _, rest, _ = _method_by_position(site, obj, name, args, kwargs)
    if not rest:
        return None
    function = method_function(site, obj, name, rest)
    if function is None:  # self.layer(x, alpha=p): a callable held on the instance
        function = held_callable_function(site, obj, name, len(args), tuple(kwargs))
    return function


def call_as_method(c, n):
    """A star-call's cotangents ``(fn's, packed, *dicts)`` of ``fn((obj, *args), ...)`` as
    those of ``star_method(obj, name, args, ...)``: ``(obj's, NO_TANGENT (the name),
    args', *dicts)``. Linear; its transpose is :func:`method_as_call`."""
    c = tuple(c)
    if is_zero(c[1]):
        return (ZERO, NO_TANGENT, ZERO, *c[2:])
    packed = tuple(c[1])
    return (packed[0], NO_TANGENT, packed[1 : n + 1], *c[2:])


def method_as_call(dy, n):
    """The transpose of :func:`call_as_method`: a star method call's cotangents
    ``(obj's, name's, args', *dicts)`` as those of the star-call of its function."""
    if is_zero(dy):
        return ZERO
    dy = tuple(dy)
    dargs = (ZERO,) * n if is_zero(dy[2]) else tuple(dy[2])
    return (NO_TANGENT, (ZERO if dy[0] is NO_TANGENT else dy[0], *dargs), *dy[3:])


@transformable
def call_as_object_method_pullback(d, dy):
    return (object_method_as_call(d),)


@transformable
def object_method_as_call_pullback(d, c):
    return (call_as_object_method(d),)


@transformable
def call_as_method_pullback(d, c, n):
    return method_as_call(d, n), NO_TANGENT


@transformable
def method_as_call_pullback(d, dy, n):
    return call_as_method(d, n), NO_TANGENT


def star_method_rrule(site, keywords_active, obj, name, args, keywords, *mappings):
    """``(y, pullback)`` of ``star_method(obj, name, args, keywords, *mappings)``."""
    function = as_function_call(site, obj, name, args, keywords, mappings)
    if function is not None:
        operands = (function, (obj, *args), keywords, *mappings)
        y, pb = star_call_rrule(site, keywords_active, *operands)
        return y, lambda g: call_as_method(pb(g), len(args))
    positional, rest, moved = _method_by_position(
        site, obj, name, args, _merged(keywords, mappings)
    )
    if keywords_active:
        active = active_keys(keywords_active, keywords, mappings)
        _refuse_keyword_gradients(site, rest, f"the method '{name}'", active)
    y, pullback = call_method(site, obj, name, *positional, **rest)
    n = len(args)

    def star_method_pullback(g):
        cots = tuple(pullback(g))
        return (cots[0], NO_TANGENT, *_packed(cots[1:], n, moved, keywords, mappings))

    return y, star_method_pullback


def _packed(cots, n, moved, keywords, mappings, keyword_cots=None):
    """Cotangents of the positional arguments a callee received (``n`` from the packed
    tuple, then the keywords moved to positions) as those of the star-call's operands:
    the tuple, then one dict per keyword dict (``keyword_cots``: those of the keywords the
    callee kept as keywords)."""
    cots = tuple(cots)
    by_key = dict(keyword_cots or {})
    by_key.update(zip(moved, cots[n:], strict=False))
    return (cots[:n], *_keyword_cotangents(keywords, mappings, by_key))


def star_call_vjp(site, keywords_active, g, fn, args, keywords, *mappings):
    """What ``star_call_rrule``'s pullback returns for ``g``, computed from the callee's
    vjp function (``dynamic_vjps.function_vjp``): the reverse of a star-call in a
    gradient that is differentiated again (its rule: rules/star_call_rules.py)."""
    if called_object(fn):
        operands = (fn, "__call__", args, keywords, *mappings)
        return object_method_as_call(star_method_vjp(site, keywords_active, g, *operands))
    kwargs = _merged(keywords, mappings)
    own = _own_rrule(fn, args, kwargs)
    if own is not None:
        return (NO_TANGENT, own[1](g), *(ZERO for _ in (keywords, *mappings)))
    callee, positional, rest, moved = call_plan(site, fn, args, kwargs, again=True)
    if keywords_active:
        active = active_keys(keywords_active, keywords, mappings)
        _refuse_keyword_gradients(site, rest, _named(fn), active)
    cots = function_vjp(site, g, callee, *positional, **rest)
    return (NO_TANGENT, *_packed(cots, len(args), moved, keywords, mappings))


def star_method_vjp(site, keywords_active, g, obj, name, args, keywords, *mappings):
    """What ``star_method_rrule``'s pullback returns for ``g``, from the method's vjp
    function (``dynamic_vjps.method_vjp``; see :func:`star_call_vjp`)."""
    function = as_function_call(site, obj, name, args, keywords, mappings)
    if function is not None:
        operands = (function, (obj, *args), keywords, *mappings)
        return call_as_method(star_call_vjp(site, keywords_active, g, *operands), len(args))
    positional, rest, moved = _method_by_position(
        site, obj, name, args, _merged(keywords, mappings)
    )
    if keywords_active:
        active = active_keys(keywords_active, keywords, mappings)
        _refuse_keyword_gradients(site, rest, f"the method '{name}'", active)
    cots = method_vjp(site, g, obj, name, *positional, **rest)
    return (cots[0], NO_TANGENT, *_packed(cots[1:], len(args), moved, keywords, mappings))


def _spread_tangents(args, dargs, keywords, dkeywords, mappings, dmappings, moved):
    positional = [ZERO] * len(args) if is_zero(dargs) or dargs is None else list(dargs)
    by_key = {}
    for d, dd in zip((keywords, *mappings), (dkeywords, *dmappings), strict=True):
        by_key.update(zip(d, _tangent_items(dd, list(d)), strict=True))
    return tuple(positional) + tuple(by_key.get(k, ZERO) for k in moved)


def star_tangent(site, primals, tangents, _kwargs):
    """Forward mode: ``(y, dy)`` of ``star_call(fn, args, keywords, *mappings)``."""
    fn, args, keywords, *mappings = primals
    dfn, dargs, dkeywords, *dmappings = tangents
    if called_object(fn):
        dobj = ZERO if dfn is NO_TANGENT or dfn is None else dfn
        return star_method_tangent(
            site,
            (fn, "__call__", args, keywords, *mappings),
            (dobj, NO_TANGENT, dargs, dkeywords, *dmappings),
            _kwargs,
        )
    kwargs = _merged_at(site, keywords, mappings)
    own = _own_rrule(fn, args, kwargs)
    if own is not None:
        # zip, sorted: permutations (linear in the values); bind_front: no tangent.
        y, pb = own
        if is_zero(dargs) or dargs is None or fn is bind_front:
            return y, ZERO
        return y, _permuted_tangent(fn, args, dargs, kwargs)
    callee, positional, rest, moved = call_plan(site, fn, args, kwargs)
    _refuse_keyword_tangents(site, rest, _named(fn), dkeywords, dmappings)
    spread = _spread_tangents(args, dargs, keywords, dkeywords, mappings, dmappings, moved)
    return function_tangent(site, callee, positional, spread, rest)


def star_method_tangent(site, primals, tangents, _kwargs):
    """Forward mode: ``(y, dy)`` of ``star_method(obj, name, args, keywords, *mappings)``."""
    obj, name, args, keywords, *mappings = primals
    dobj, _, dargs, dkeywords, *dmappings = tangents
    function = as_function_call(site, obj, name, args, keywords, mappings)
    if function is not None:
        dargs = (ZERO,) * len(args) if dargs is None or is_zero(dargs) else tuple(dargs)
        primals = (function, (obj, *args), keywords, *mappings)
        return star_tangent(site, primals, (NO_TANGENT, (dobj, *dargs), *tangents[3:]), _kwargs)
    positional, rest, moved = _method_by_position(
        site, obj, name, args, _merged(keywords, mappings)
    )
    _refuse_keyword_tangents(site, rest, f"the method '{name}'", dkeywords, dmappings)
    spread = _spread_tangents(args, dargs, keywords, dkeywords, mappings, dmappings, moved)
    return method_tangent(site, obj, dobj, name, positional, spread, rest)


# What the transformation emits for each primal helper.
RRULES = {star_call: star_call_rrule, star_method: star_method_rrule}
VJPS = {star_call: star_call_vjp, star_method: star_method_vjp}
TANGENTS = {star_call: star_tangent, star_method: star_method_tangent}


# -- the reverse of star_call_vjp/star_method_vjp, transformable (third derivatives) -----
# star_call_vjp is star_packed(function_vjp(site, g, fn, *positional)), positional being
# star_spread of the operands: two linear maps, each the other's transpose, around a
# function_vjp, whose pullback (dynamic_reverse.reverse_through) closes on itself.


def star_spread(packed, dicts, n, moved, keywords, mappings):
    """The cotangents (or values) of a star-call's operands (``packed``, the tuple, and
    ``dicts``, one per keyword dict) as one per positional argument the callee receives."""
    per = [ZERO] * n if is_zero(packed) else list(packed)
    by_key = {}
    if not is_zero(dicts):
        for d, dd in zip((keywords, *mappings), dicts, strict=True):
            by_key.update(zip(d, _tangent_items(dd, list(d)), strict=True))
    return tuple(per) + tuple(by_key.get(k, ZERO) for k in moved)


def star_packed(cots, n, moved, keywords, mappings):
    """The transpose of :func:`star_spread`: cotangents per positional argument as those
    of the operands, the tuple's then each dict's (:func:`_packed`)."""
    if is_zero(cots):
        cots = (ZERO,) * (n + len(moved))
    return _packed(cots, n, moved, keywords, mappings)


@transformable
def star_spread_pullback(d, packed, dicts, n, moved, keywords, mappings):
    c = star_packed(d, n, moved, keywords, mappings)
    return c[0], c[1:], NO_TANGENT, NO_TANGENT, ZERO, ZERO


@transformable
def star_packed_pullback(d, cots, n, moved, keywords, mappings):
    spread = star_spread(d[0], d[1:], n, moved, keywords, mappings)
    return spread, NO_TANGENT, NO_TANGENT, ZERO, ZERO


def star_permuted(dy, fn, args, keywords, mappings):
    """The cotangent of ``g`` in a permutation's ``star_call_vjp`` (``sorted``, ``zip``,
    ``{**a, **b}``: linear in ``g``) pulled back from ``dy``: the permutation forward."""
    if is_zero(dy) or is_zero(dy[1]) or fn is bind_front:
        return ZERO
    return _permuted_tangent(fn, args, dy[1], _merged(keywords, mappings))


def star_unpermuted(d, fn, args, keywords, mappings):
    """The transpose of :func:`star_permuted`: ``star_call_vjp``'s value for ``g = d``."""
    own = _own_rrule(fn, args, _merged(keywords, mappings))
    return (NO_TANGENT, own[1](d), *(ZERO for _ in (keywords, *mappings)))


@transformable
def star_permuted_pullback(d, dy, fn, args, keywords, mappings):
    return star_unpermuted(d, fn, args, keywords, mappings), NO_TANGENT, ZERO, ZERO, ZERO


@transformable
def star_unpermuted_pullback(d, g, fn, args, keywords, mappings):
    return star_permuted(d, fn, args, keywords, mappings), NO_TANGENT, ZERO, ZERO, ZERO


def star_plan(site, fn, args, keywords, mappings):
    """``(permutes, the callee, keywords moved to positions, the other keywords,
    {position: default} of the parameters passed at their defaults)`` of a star-call
    (:func:`call_plan`)."""
    kwargs = _merged(keywords, mappings)
    if _own_rrule(fn, args, kwargs) is not None:
        return True, fn, [], {}, {}
    callee, positional, rest, moved = call_plan(site, fn, args, kwargs, again=True)
    n = len(args)
    fills = {n + j: positional[n + j] for j, key in enumerate(moved) if key not in kwargs}
    return False, callee, moved, rest, fills


def star_defaults(values, fills):
    """``values`` (:func:`star_spread`'s, zero where no dict holds a parameter) with the
    parameters passed at their defaults in their places (``fills``: :func:`star_plan`)."""
    if not fills or is_zero(values):
        return values
    return tuple(fills[k] if k in fills else v for k, v in enumerate(values))


def star_unfilled(d, fills):
    """The transpose of :func:`star_defaults` in its values: no cotangent reaches a
    default."""
    if not fills or is_zero(d):
        return d
    return tuple(ZERO if k in fills else c for k, c in enumerate(d))


@transformable
def star_defaults_pullback(d, values, fills):
    return star_unfilled(d, fills), NO_TANGENT


@transformable
def star_unfilled_pullback(d, dd, fills):
    return star_unfilled(d, fills), NO_TANGENT


def star_method_plan(site, obj, name, args, keywords, mappings):
    """``(keywords moved to positions, the other keywords)`` of a star method call."""
    _, rest, moved = _method_by_position(site, obj, name, args, _merged(keywords, mappings))
    return moved, rest


def star_zeros(mappings):
    """Zero cotangents of a star-call's packed tuple and keyword dicts."""
    return (ZERO, ZERO) + tuple(ZERO for _ in mappings)


@transformable
def star_call_vjp_pullback(dy, site, keywords_active, g, fn, args, keywords, *mappings):
    if called_object(fn):  # the star method call of its __call__ (star_call_rrule)
        operands = (g, fn, "__call__", args, keywords, *mappings)
        c = star_method_vjp_pullback(call_as_object_method(dy), site, keywords_active, *operands)
        return c[:4] + c[5:]  # the name's place dropped
    permutes, callee, moved, rest, fills = star_plan(site, fn, args, keywords, mappings)
    if permutes:
        dg = star_permuted(dy, fn, args, keywords, mappings)
        return (NO_TANGENT, NO_TANGENT, dg, NO_TANGENT) + star_zeros(mappings)
    n = len(args)
    positional = star_spread(args, (keywords,) + mappings, n, moved, keywords, mappings)
    positional = star_defaults(positional, fills)
    function, head, kw = function_reverse(site, callee, positional, rest)
    d = star_spread(dy[1], dy[2:], n, moved, keywords, mappings)
    d = d + (ZERO,) * unpassed_outputs(site, callee, function, len(d))
    dg, dinputs = reverse_through(d, site, g, function, head, positional, kw, len(head), 0)
    cots = star_packed(dinputs[len(head) :], n, moved, keywords, mappings)
    return (NO_TANGENT, NO_TANGENT, dg, NO_TANGENT) + cots


def unpassed_outputs(site, fn, function, given: int) -> int:
    """How many cotangents past ``given`` a rule's pullback function ``function`` (of
    ``fn``'s rule) returns: one per positional parameter of ``fn``, passed or not
    (``np.max``'s gives ``initial`` one), where :func:`star_call_vjp` kept those of the
    arguments passed. Its transpose gives the others zero cotangents."""
    rule = site.registry.lookup(fn)
    if rule is None or rule.pullback_fn is not function:
        return 0  # a generated vjp function: one output per argument passed
    params = signature_of(function).parameters.values()
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return max(0, len(positional) - 1 - given)  # (its first parameter is the cotangent)


@transformable
def star_method_vjp_pullback(dy, site, keywords_active, g, obj, name, args, keywords, *mappings):
    function = as_function_call(site, obj, name, args, keywords, mappings)
    if function is not None:  # the star-call of the method's function, obj first
        n = len(args)
        d = method_as_call(dy, n)
        operands = (g, function, (obj, *args), keywords, *mappings)
        c = star_call_vjp_pullback(d, site, keywords_active, *operands)
        return c[:3] + call_as_method(c[3:], n)
    moved, rest = star_method_plan(site, obj, name, args, keywords, mappings)
    n = len(args)
    positional = star_spread(args, (keywords,) + mappings, n, moved, keywords, mappings)
    function, head, kw, pad, drop = method_reverse(site, obj, name, positional, rest)
    d = (dy[0],) + star_spread(dy[2], dy[3:], n, moved, keywords, mappings)
    dg, dinputs = reverse_through(d, site, g, function, head, positional, kw, pad, drop)
    dobj = NO_TANGENT
    if pad < len(head):  # the receiver's, where the vjp function differentiates it
        dobj = dinputs[0]
    cots = star_packed(dinputs[len(head) :], n, moved, keywords, mappings)
    return (NO_TANGENT, NO_TANGENT, dg, dobj, NO_TANGENT) + cots
