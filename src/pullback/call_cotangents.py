"""The cotangents of a call found at run time, as its generated vjp function takes and
gives them: which Python function a callable value runs with which leading arguments
(:func:`bound_arguments`), and the cotangents a vjp function returns for the arguments it
differentiates spread to one per argument of the call (:func:`spread_cotangents`) and
gathered back (:func:`gather_cotangents`). Apart from dynamic_calls.py because the
reverse of the reverse (dynamic_reverse.py) and the rules of these calls use them too.
"""

from __future__ import annotations

import types

from .callables import as_bound_call, rule_call_function
from .guards import is_library_module_name
from .tangents import NO_TANGENT, ZERO, is_zero


def bound_arguments(fn, registry):
    """``(function, leading arguments, keywords)`` when calling ``fn`` calls a Python
    function of the user's with arguments of its own first (``layer(x)`` is
    ``Dense.__call__(layer, x)``; a bound method, a ``functools.partial``), else None
    (``fn`` is that function, has a rule — ``scipy.stats.norm`` —, is library code or has
    no Python function behind it)."""
    if isinstance(fn, types.FunctionType):
        return None
    if getattr(fn, "gradient_function", None) is not None and hasattr(fn, "wrt"):
        # grad(g) found at run time: its generated gradient function, which computes what
        # the call does and is differentiated again as grad(grad(g)) differentiates it
        return fn.gradient_function(None), (), {}
    try:
        if registry.lookup(fn) is not None:
            return None
    except TypeError:  # unhashable: no rule is keyed by it
        pass
    method = rule_call_function(fn, registry)
    if method is not None:
        # a library object whose call's rule has a transformable pullback (a np.vectorize
        # object made inside the function): that function, with the object first
        rule = registry.lookup(method)
        return (method, (fn,), {}) if rule is not None and rule.pullback_fn else None
    bound = as_bound_call(fn)
    if bound is None or not isinstance(bound.target, types.FunctionType):
        return None
    if not bound.args and not bound.kwargs and bound.target is fn:
        return None
    if is_library_module_name(getattr(bound.target, "__module__", "") or ""):
        return None  # never transformed: only used through rules
    return bound.target, tuple(bound.args), dict(bound.kwargs)


def spread_cotangents(function, cotangents) -> tuple:
    """The cotangents a vjp function returned (those of the arguments it differentiates)
    as one per argument, ``NO_TANGENT`` for an object it does not differentiate (the
    layout :func:`vjp_function` records on a generated vjp function)."""
    layout = getattr(function, "__pullback_spread__", None)
    out = list(cotangents)
    if layout is not None:
        n, positions = layout
        out = [NO_TANGENT] * n
        # (an object a rule's pullback function read as constants: a refusing cotangent)
        for p, c in getattr(function, "__pullback_unfollowed__", {}).items():
            out[p] = c
        for p, c in zip(positions, cotangents, strict=True):
            out[p] = c
    star = getattr(function, "__pullback_star__", None)
    if star is not None:  # the *args tuple's cotangent: one per argument it took
        k, n_star = star
        items = (ZERO,) * n_star if is_zero(out[k]) else tuple(out[k])
        out[k : k + 1] = items
    return tuple(out)


def gather_cotangents(function, per_argument) -> tuple:
    """The inverse of :func:`spread_cotangents`: of one value per argument, those of the
    arguments ``function`` differentiates."""
    per_argument = list(per_argument)
    star = getattr(function, "__pullback_star__", None)
    if star is not None:
        k, n_star = star
        per_argument[k : k + n_star] = [tuple(per_argument[k : k + n_star])]
    layout = getattr(function, "__pullback_spread__", None)
    if layout is None:
        return tuple(per_argument)
    return tuple(per_argument[p] for p in layout[1])
