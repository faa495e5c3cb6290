"""Rules for the reverse of star-calls in a gradient that is differentiated again.

A gradient written to be differentiated again (``hessian``, ``grad(grad(f))``) computes
the cotangents of ``f(*args, **opts)`` with ``star_call_vjp`` (``obj.m(*args)``:
``star_method_vjp``, see :mod:`pullback.star_runtime`) instead of the closure pullback
``star_call_rrule`` returned. Their rules give the second derivative:

* for a user function, a method or a rule found at run time, through the rule of its vjp
  function (``dynamic_vjps.function_vjp``/``method_vjp``, rules/pullback_runtime.py),
  with the packed tuple and the keyword dicts spread into positions and back;
* for the permutations star-calls run themselves (``sorted(xs, key=...)``, ``zip(*rows)``,
  ``{**a, **b}``), which are linear in the cotangent: the derivative in ``g`` is the same
  permutation applied forward, and the values (which only choose the order) get none.

A third derivative through them is refused (their pullbacks are closures).

>>> from pullback.star_runtime import star_call_vjp
>>> star_call_vjp(None, False, [1.0, 2.0, 3.0], sorted, ([3.0, 1.0, 2.0],), {})
(NO_TANGENT, ([3.0, 1.0, 2.0],), ZERO)
"""

from __future__ import annotations

from .. import star_runtime as star
from ..tangents import NO_TANGENT, ZERO, is_zero
from .pullback_runtime import _vjp_function_rrule, vjp_function_rrule
from .runtime_call_pullbacks import register_pullbacks

FAMILY = "star_call_rules"

_method_vjp_rrule = _vjp_function_rrule(skip_receiver=True)


def _spread(dy, index, n, moved, keywords, mappings) -> tuple:
    """The cotangent ``dy`` of a star-call's cotangents (the tuple at ``dy[index]``, the
    dicts after it) as one per positional argument the callee received."""
    if is_zero(dy):
        return star.star_spread(ZERO, ZERO, n, moved, keywords, mappings)
    return star.star_spread(dy[index], tuple(dy)[index + 1 :], n, moved, keywords, mappings)


def _called_object_vjp_rrule(site, keywords_active, g, obj, args, keywords, mappings):
    """``star_call_vjp``'s rule for an object called (star_runtime.called_object): the
    rule of the star method call of its ``__call__``, cotangents laid out back."""
    y, inner = _star_method_vjp_rrule(
        site, keywords_active, g, obj, "__call__", args, keywords, *mappings
    )

    def called_object_vjp_pullback(dy):
        if not is_zero(dy):
            dy = (dy[0], NO_TANGENT, *tuple(dy)[1:])
        c = tuple(inner(dy))  # site, keywords_active, g, obj, name, packed, *dicts
        return (*c[:4], *c[5:])

    return star.object_method_as_call(y), called_object_vjp_pullback


def _star_call_vjp_rrule(site, keywords_active, g, fn, args, keywords, *mappings):
    if star.called_object(fn):
        return _called_object_vjp_rrule(site, keywords_active, g, fn, args, keywords, mappings)
    y = star.star_call_vjp(site, keywords_active, g, fn, args, keywords, *mappings)
    fixed = (NO_TANGENT, NO_TANGENT)  # site, keywords_active
    kwargs = star._merged(keywords, mappings)
    operands = (ZERO,) * (1 + len(mappings))  # args, keywords, mappings: they only choose
    if star._own_rrule(fn, args, kwargs) is not None:

        def permutation_vjp_pullback(dy):
            if is_zero(dy) or is_zero(dy[1]) or fn is star.bind_front:
                return (*fixed, ZERO, NO_TANGENT, *operands, ZERO)
            dg = star._permuted_tangent(fn, args, dy[1], kwargs)
            return (*fixed, dg, NO_TANGENT, *operands, ZERO)

        return y, permutation_vjp_pullback
    callee, positional, rest, moved = star.call_plan(site, fn, args, kwargs, again=True)
    n = len(args)
    _, inner = vjp_function_rrule(site, g, callee, *positional, **rest)

    def star_call_vjp_pullback(dy):
        c = inner(_spread(dy, 1, n, moved, keywords, mappings))  # site, g, fn, *arguments
        return (*fixed, c[1], NO_TANGENT, *star._packed(c[3:], n, moved, keywords, mappings))

    return y, star_call_vjp_pullback


def _shimmed_method_vjp_rrule(site, keywords_active, g, function, obj, args, keywords, mappings):
    """``star_method_vjp``'s rule where the method call is the star-call of ``function``
    (star_runtime.as_function_call): the star-call's, its cotangents laid out back."""
    n = len(args)
    operands = (function, (obj, *args), keywords, *mappings)
    y, inner = _star_call_vjp_rrule(site, keywords_active, g, *operands)

    def shimmed_method_vjp_pullback(dy):
        c = inner(star.method_as_call(dy, n))  # site, keywords_active, g, fn, packed, *dicts
        return tuple(c[:3]) + star.call_as_method(c[3:], n)

    return star.call_as_method(y, n), shimmed_method_vjp_pullback


def _star_method_vjp_rrule(site, keywords_active, g, obj, name, args, keywords, *mappings):
    function = star.as_function_call(site, obj, name, args, keywords, mappings)
    if function is not None:
        return _shimmed_method_vjp_rrule(
            site, keywords_active, g, function, obj, args, keywords, mappings
        )
    y = star.star_method_vjp(site, keywords_active, g, obj, name, args, keywords, *mappings)
    kwargs = star._merged(keywords, mappings)
    positional, rest, moved = star._method_by_position(site, obj, name, args, kwargs)
    n = len(args)
    _, inner = _method_vjp_rrule(site, g, obj, name, *positional, **rest)

    def star_method_vjp_pullback(dy):
        receiver = ZERO if is_zero(dy) else dy[0]
        spread = (receiver, *_spread(dy, 2, n, moved, keywords, mappings))
        c = inner(spread)  # site, g, obj, name, *arguments
        packed = star._packed(c[4:], n, moved, keywords, mappings)
        return (NO_TANGENT, NO_TANGENT, c[1], c[2], NO_TANGENT, *packed)

    return y, star_method_vjp_pullback


def _linear_rrule(fn, linear=1):
    """The rule of a helper linear in its first ``linear`` arguments, from its pullback
    function."""
    pullback = getattr(star, fn.__name__ + "_pullback")

    def linear_rrule(*args):
        def linear_pullback(d):
            if is_zero(d):
                return tuple(ZERO if k < linear else NO_TANGENT for k in range(len(args)))
            return pullback(d, *args)

        return fn(*args), linear_pullback

    return linear_rrule


def register(reg):
    reg.register(star.star_call_vjp, _star_call_vjp_rrule, family=FAMILY, trusted=True)
    reg.register(star.star_method_vjp, _star_method_vjp_rrule, family=FAMILY, trusted=True)
    register_pullbacks(reg)
    for fn, rrule, pullback in (
        (star.star_spread, _linear_rrule(star.star_spread, 2), star.star_spread_pullback),
        (star.star_packed, _linear_rrule(star.star_packed), star.star_packed_pullback),
        (star.star_permuted, _linear_rrule(star.star_permuted), star.star_permuted_pullback),
        (star.star_unpermuted, _linear_rrule(star.star_unpermuted), star.star_unpermuted_pullback),
        (star.star_defaults, _linear_rrule(star.star_defaults), star.star_defaults_pullback),
        (star.star_unfilled, _linear_rrule(star.star_unfilled), star.star_unfilled_pullback),
        (star.call_as_method, _linear_rrule(star.call_as_method), star.call_as_method_pullback),
        (star.method_as_call, _linear_rrule(star.method_as_call), star.method_as_call_pullback),
        (
            star.call_as_object_method,
            _linear_rrule(star.call_as_object_method),
            star.call_as_object_method_pullback,
        ),
        (
            star.object_method_as_call,
            _linear_rrule(star.object_method_as_call),
            star.object_method_as_call_pullback,
        ),
    ):
        reg.register(fn, rrule, family=FAMILY, trusted=True)
        reg.set_pullback_function(fn, pullback)
    reg.set_pullback_function(star.star_call_vjp, star.star_call_vjp_pullback)
    reg.set_pullback_function(star.star_method_vjp, star.star_method_vjp_pullback)
    helpers = (star.star_plan, star.star_method_plan, star.star_zeros, star.unpassed_outputs)
    helpers += (star.as_function_call, star.called_object)
    reg.non_differentiable(*helpers, family=FAMILY, trusted=True)
