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

from .dynamic_calls import call_function, call_method
from .dynamic_reverse import function_reverse, method_reverse, reverse_through
from .dynamic_vjps import function_vjp, method_vjp
from .errors import NotDifferentiableError
from .guards import is_library_module_name
from .registry import transformable
from .rule_tangents import function_tangent, method_tangent
from .signatures import signature_of
from .tangents import NO_TANGENT, ZERO, densify, is_differentiable_value, is_zero


def _merged(keywords, mappings) -> dict:
    out = dict(keywords)
    for m in mappings:
        for key, value in m.items():
            if key in out:  # what Python itself says for f(k=1, **{"k": 2})
                raise TypeError(f"got multiple values for keyword argument {key!r}")
            out[key] = value
    return out


def star_call(fn, args, keywords, *mappings):
    """``fn(*args, **keywords, **mapping...)``: the primal of a star-call."""
    return fn(*args, **_merged(keywords, mappings))


def star_method(obj, name, args, keywords, *mappings):
    """``obj.name(*args, **keywords, **mapping...)``."""
    return getattr(obj, name)(*args, **_merged(keywords, mappings))


def call_plan(site, fn, args, kwargs):
    """:func:`_by_position` for ``fn(*args, **kwargs)``, a keyword whose cotangent
    ``fn``'s rule gives (``rule.extra["keyword_cotangents"]``: ``solve_ivp``'s ``args``)
    passed by position too, the parameters before it at their defaults: each order of
    derivative then finds its cotangent at its place, as for an argument written there."""
    rule = site.registry.lookup(fn)
    declared = () if rule is None else rule.extra.get("keyword_cotangents", ())
    return _by_position(fn, args, kwargs, declared)


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


def _method_by_position(obj, name, args, kwargs):
    """:func:`_by_position` for ``obj.name(*args, **kwargs)`` (``obj`` not included)."""
    method = getattr(type(obj), name, None)
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


def _like(parts, seq):
    """Cotangents of the items of ``seq`` as the cotangent of ``seq``: a tuple, a list, or
    (for an array, iterated over its first axis) an array of rows."""
    if isinstance(seq, np.ndarray):
        out = np.zeros(seq.shape, dtype=seq.dtype if seq.dtype.kind in "fc" else float)
        for k, p in enumerate(parts):
            if not is_zero(p):
                out[k] = densify(p)
        return out
    return tuple(parts) if isinstance(seq, tuple) else list(parts)


def _zip_rrule(args, kwargs):
    """``zip(*seqs)`` as the list it yields: a transpose, whose pullback transposes back."""
    lengths = [len(s) for s in args]
    y = list(zip(*args, strict=bool(kwargs.get("strict", False))))

    def zip_pullback(g):
        if is_zero(g):
            return tuple(ZERO for _ in args)
        n = len(y)
        cols = []
        for j, length in enumerate(lengths):
            col = [g[i][j] if not is_zero(g[i]) else ZERO for i in range(n)]
            col += [ZERO] * (length - n)
            cols.append(_like(col, args[j]))
        return tuple(cols)

    return y, zip_pullback


def bind_front(fn, *values):
    """``fn`` with its first parameters bound to ``values``: a lambda key that captures
    local values (transform/higher_order_builtins.py). It chooses, so it carries no
    gradient."""
    return functools.partial(fn, *values)


def _sort_order(items, key, reverse) -> list[int]:
    """Where each item of ``sorted(items, key=key, reverse=reverse)`` came from."""
    chosen = items.__getitem__ if key is None else (lambda i: key(items[i]))
    return sorted(range(len(items)), key=chosen, reverse=reverse)


def _sorted_rrule(iterable, key=None, reverse=False):
    """``sorted`` as a permutation of its items: the pullback sends each cotangent back to
    the item that landed there (the key and its values carry no gradient)."""
    items = list(iterable)
    order = _sort_order(items, key, reverse)
    y = [items[i] for i in order]

    def sorted_pullback(g):
        if is_zero(g):
            return (ZERO,)
        back = [ZERO] * len(items)
        for pos, i in enumerate(order):
            back[i] = g[pos]
        return (_like(back, iterable),)

    return y, sorted_pullback


def merge_dicts(*dicts):
    """``{**a, **b, ...}``: later keys win, as in a dict display."""
    out = {}
    for d in dicts:
        out.update(d)
    return out


def _merge_rrule(dicts):
    y = merge_dicts(*dicts)
    # The cotangent of each key goes to the dict whose value the display kept.
    owner = {}
    for k, d in enumerate(dicts):
        for key in d:
            owner[key] = k

    def merge_pullback(g):
        parts = [{} for _ in dicts]
        if not is_zero(g):
            for key, c in g.items():
                parts[owner[key]][key] = c
        return tuple(p if p else ZERO for p in parts)

    return y, merge_pullback


def _own_rrule(fn, args, kwargs):
    """``(y, pullback)`` for the callees star-calls handle themselves, or None."""
    if fn is merge_dicts and not kwargs:
        return _merge_rrule(args)
    if fn is zip and set(kwargs) <= {"strict"}:
        y, pb = _zip_rrule(args, kwargs)
        return y, pb
    if fn is sorted and set(kwargs) <= {"key", "reverse"} and len(args) == 1:
        y, pb = _sorted_rrule(args[0], **kwargs)
        return y, pb
    if fn is bind_front:
        return bind_front(*args), lambda g: tuple(NO_TANGENT for _ in args)
    return None


def star_call_rrule(site, keywords_active, fn, args, keywords, *mappings):
    """``(y, pullback)`` of ``star_call(fn, args, keywords, *mappings)``."""
    kwargs = _merged(keywords, mappings)
    own = _own_rrule(fn, args, kwargs)
    if own is not None:
        y, pb = own
        return y, lambda g: (NO_TANGENT, pb(g), *(ZERO for _ in (keywords, *mappings)))
    positional, rest, moved = call_plan(site, fn, args, kwargs)
    if keywords_active and not _gives_keyword_cotangents(site, fn):
        active = active_keys(keywords_active, keywords, mappings)
        _refuse_keyword_gradients(site, rest, f"'{getattr(fn, '__name__', fn)}'", active)
    y, pullback = call_function(site, fn, *positional, **rest)
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


def star_method_rrule(site, keywords_active, obj, name, args, keywords, *mappings):
    """``(y, pullback)`` of ``star_method(obj, name, args, keywords, *mappings)``."""
    positional, rest, moved = _method_by_position(obj, name, args, _merged(keywords, mappings))
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
    kwargs = _merged(keywords, mappings)
    own = _own_rrule(fn, args, kwargs)
    if own is not None:
        return (NO_TANGENT, own[1](g), *(ZERO for _ in (keywords, *mappings)))
    positional, rest, moved = call_plan(site, fn, args, kwargs)
    if keywords_active:
        active = active_keys(keywords_active, keywords, mappings)
        _refuse_keyword_gradients(site, rest, f"'{getattr(fn, '__name__', fn)}'", active)
    cots = function_vjp(site, g, fn, *positional, **rest)
    return (NO_TANGENT, *_packed(cots, len(args), moved, keywords, mappings))


def star_method_vjp(site, keywords_active, g, obj, name, args, keywords, *mappings):
    """What ``star_method_rrule``'s pullback returns for ``g``, from the method's vjp
    function (``dynamic_vjps.method_vjp``; see :func:`star_call_vjp`)."""
    positional, rest, moved = _method_by_position(obj, name, args, _merged(keywords, mappings))
    if keywords_active:
        active = active_keys(keywords_active, keywords, mappings)
        _refuse_keyword_gradients(site, rest, f"the method '{name}'", active)
    cots = method_vjp(site, g, obj, name, *positional, **rest)
    return (cots[0], NO_TANGENT, *_packed(cots[1:], len(args), moved, keywords, mappings))


def _tangent_items(d, keys):
    if is_zero(d) or d is None:
        return [ZERO] * len(keys)
    return [d.get(k, ZERO) for k in keys]


def _spread_tangents(args, dargs, keywords, dkeywords, mappings, dmappings, moved):
    positional = [ZERO] * len(args) if is_zero(dargs) or dargs is None else list(dargs)
    by_key = {}
    for d, dd in zip((keywords, *mappings), (dkeywords, *dmappings), strict=True):
        by_key.update(zip(d, _tangent_items(dd, list(d)), strict=True))
    return tuple(positional) + tuple(by_key.get(k, ZERO) for k in moved)


def star_tangent(site, primals, tangents, _kwargs):
    """Forward mode: ``(y, dy)`` of ``star_call(fn, args, keywords, *mappings)``."""
    fn, args, keywords, *mappings = primals
    _, dargs, dkeywords, *dmappings = tangents
    kwargs = _merged(keywords, mappings)
    own = _own_rrule(fn, args, kwargs)
    if own is not None:
        # zip, sorted: permutations (linear in the values); bind_front: no tangent.
        y, pb = own
        if is_zero(dargs) or dargs is None or fn is bind_front:
            return y, ZERO
        return y, _permuted_tangent(fn, args, dargs, kwargs)
    positional, rest, moved = call_plan(site, fn, args, kwargs)
    spread = _spread_tangents(args, dargs, keywords, dkeywords, mappings, dmappings, moved)
    return function_tangent(site, fn, positional, spread, rest)


def _permuted_tangent(fn, args, dargs, kwargs):
    """The tangent of ``zip``/``sorted``: the same permutation applied to the tangents."""
    if fn is zip:
        seqs = [[ZERO] * len(a) if is_zero(d) else d for a, d in zip(args, dargs, strict=True)]
        return list(zip(*seqs, strict=False))
    if fn is merge_dicts:
        out = {}
        for d, dd in zip(args, dargs, strict=True):
            out.update(zip(d, _tangent_items(dd, list(d)), strict=True))
        return out
    items = list(args[0])
    d = [ZERO] * len(items) if is_zero(dargs[0]) else list(dargs[0])
    order = _sort_order(items, kwargs.get("key"), kwargs.get("reverse", False))
    return [d[i] for i in order]


def star_method_tangent(site, primals, tangents, _kwargs):
    """Forward mode: ``(y, dy)`` of ``star_method(obj, name, args, keywords, *mappings)``."""
    obj, name, args, keywords, *mappings = primals
    dobj, _, dargs, dkeywords, *dmappings = tangents
    positional, rest, moved = _method_by_position(obj, name, args, _merged(keywords, mappings))
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
    """``(permutes, keywords moved to positions, the other keywords, {position: default}
    of the parameters passed at their defaults)`` of a star-call (:func:`call_plan`)."""
    kwargs = _merged(keywords, mappings)
    if _own_rrule(fn, args, kwargs) is not None:
        return True, [], {}, {}
    positional, rest, moved = call_plan(site, fn, args, kwargs)
    n = len(args)
    fills = {n + j: positional[n + j] for j, key in enumerate(moved) if key not in kwargs}
    return False, moved, rest, fills


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


def star_method_plan(obj, name, args, keywords, mappings):
    """``(keywords moved to positions, the other keywords)`` of a star method call."""
    _, rest, moved = _method_by_position(obj, name, args, _merged(keywords, mappings))
    return moved, rest


def star_zeros(mappings):
    """Zero cotangents of a star-call's packed tuple and keyword dicts."""
    return (ZERO, ZERO) + tuple(ZERO for _ in mappings)


@transformable
def star_call_vjp_pullback(dy, site, keywords_active, g, fn, args, keywords, *mappings):
    permutes, moved, rest, fills = star_plan(site, fn, args, keywords, mappings)
    if permutes:
        dg = star_permuted(dy, fn, args, keywords, mappings)
        return (NO_TANGENT, NO_TANGENT, dg, NO_TANGENT) + star_zeros(mappings)
    n = len(args)
    positional = star_spread(args, (keywords,) + mappings, n, moved, keywords, mappings)
    positional = star_defaults(positional, fills)
    function, head, kw = function_reverse(site, fn, positional, rest)
    d = star_spread(dy[1], dy[2:], n, moved, keywords, mappings)
    d = d + (ZERO,) * unpassed_outputs(site, fn, function, len(d))
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
    moved, rest = star_method_plan(obj, name, args, keywords, mappings)
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
