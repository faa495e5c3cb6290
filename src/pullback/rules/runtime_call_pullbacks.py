"""Transformable pullbacks for the reverse of calls found at run time
(``dynamic_calls.function_vjp``/``method_vjp``, see :mod:`pullback.dynamic_reverse`):
with them a gradient differentiated twice (a third derivative, and any order after it)
runs through a call whose callee is known only when it runs.

Registered by :mod:`.star_call_rules` after the closure rules of ``function_vjp`` and
``method_vjp`` (rules/pullback_runtime.py), which these functions agree with.
"""

from __future__ import annotations

from .. import dynamic_calls
from .. import dynamic_reverse as rev
from ..tangents import NO_TANGENT, ZERO

FAMILY = "star_call_rules"


def _linear_rrule(fn, pullback):
    """The rule of a helper linear in its second argument (``fn(function, c, *rest)``)."""

    def linear_rrule(function, c, *rest):
        y = fn(function, c, *rest)

        def linear_pullback(d):
            if d is ZERO or d is NO_TANGENT:
                return (NO_TANGENT, ZERO) + (NO_TANGENT,) * len(rest)
            return pullback(d, function, c, *rest)

        return y, linear_pullback

    return linear_rrule


def _vjp_apply_rrule(site, dy, function, inputs, keywords):
    y = rev.vjp_apply(site, dy, function, inputs, keywords)

    def vjp_apply_closure(d):
        if d is ZERO or d is NO_TANGENT:
            return NO_TANGENT, ZERO, NO_TANGENT, ZERO, NO_TANGENT
        return rev.vjp_apply_pullback(d, site, dy, function, inputs, keywords)

    return y, vjp_apply_closure


def register_pullbacks(reg):
    for fn, pullback in (
        (rev.vjp_layout, rev.vjp_layout_pullback),
        (rev.vjp_output, rev.vjp_output_pullback),
    ):
        reg.register(fn, _linear_rrule(fn, pullback), family=FAMILY, trusted=True)
        reg.set_pullback_function(fn, pullback)
    reg.register(rev.vjp_apply, _vjp_apply_rrule, family=FAMILY, trusted=True)
    reg.set_pullback_function(rev.vjp_apply, rev.vjp_apply_pullback)
    reg.set_pullback_function(dynamic_calls.function_vjp, rev.function_vjp_pullback)
    reg.set_pullback_function(dynamic_calls.method_vjp, rev.method_vjp_pullback)
    helpers = (rev.function_reverse, rev.method_reverse, rev.outer_function)
    reg.non_differentiable(*helpers, family=FAMILY, trusted=True)
