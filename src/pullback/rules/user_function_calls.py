"""Calls of a user's function inside a rule's transformable pullback.

Rules such as ``np.piecewise`` and ``np.apply_along_axis`` call a function the user
passes. Their pullbacks need that function's vjp; written as transformable functions
(so that a gradient through them can be differentiated again), they get it from
:func:`user_function_vjp`, a primitive whose own rule is the derivative of the user
function's generated vjp function (the rule of ``dynamic_vjps.function_vjp``): second
derivatives through these rules are the user function's own second derivatives.

A callee that is not a Python function (a NumPy ufunc with a rule, a callable object) is
called through a small generated wrapper ``def apply(a0, ...): return FN(a0, ...)`` whose
global ``FN`` is the callee: pullback then resolves the callee like any call it reads in
source, with its rule's inline or transformable derivatives.
"""

from __future__ import annotations

import functools
import types

from .. import dynamic_calls, dynamic_vjps
from ..dynamic_reverse import function_reverse, reverse_through
from ..keyword_shims import compiled_with_source  # (re-exported: other rules use it)
from ..registry import ENTRY_POINTS, default_registry, transformable
from ._util import NO_TANGENT, differentiable

FAMILY = "user_function_calls"


@functools.lru_cache(maxsize=256)
def _wrapper(fn, nargs: int):
    """A Python function calling ``fn`` with ``nargs`` positional arguments, with source."""
    params = ", ".join(f"a{k}" for k in range(nargs))
    source = f"def apply({params}):\n    return FN({params})\n"
    return compiled_with_source(source, "apply", {"FN": fn})


def as_python_function(fn, nargs: int):
    """``fn`` itself when it is a Python function, else a wrapper that calls it."""
    if isinstance(fn, types.FunctionType):
        return fn
    return called_by_name(fn, nargs)


def called_by_name(fn, nargs: int):
    """A wrapper calling ``fn`` (with ``nargs`` arguments) by a global name, so that
    pullback resolves it as it resolves a call it reads in source."""
    try:
        return _wrapper(fn, nargs)
    except TypeError:  # unhashable callable: a wrapper per call
        return _wrapper.__wrapped__(fn, nargs)


def rule_site():
    """The call site of a user function called by a rule's pullback (for messages, and
    for the adjoints and vjp functions of the active registry)."""
    registry = default_registry()
    return _site_for(registry)


@functools.lru_cache(maxsize=8)
def _site_for(registry):
    def vjp_of(fn, wrt):
        return ENTRY_POINTS.VJPRef(fn, wrt, registry)

    return dynamic_calls.CallSite(
        "<a rule's pullback>",
        0,
        0,
        "(the call of a user function a rule makes)",
        registry,
        functools.partial(ENTRY_POINTS.LazyAdjoint, registry=registry),
        vjp_of,
    )


def user_function_vjp(g, fn, *args):
    """The cotangents of ``fn(*args)``'s positional arguments pulled back from ``g``."""
    target = as_python_function(fn, len(args))
    return dynamic_vjps.function_vjp(rule_site(), g, target, *args)


def _user_function_vjp_rrule(g, fn, *args):
    from .pullback_runtime import vjp_function_rrule

    target = as_python_function(fn, len(args))
    y, pullback = vjp_function_rrule(rule_site(), g, target, *args)

    def user_function_vjp_pullback(dy):
        cots = tuple(pullback(dy))  # site, g, callee, *args
        return (cots[1], NO_TANGENT, *cots[3:])

    return y, user_function_vjp_pullback


@transformable
def user_function_vjp_pullback(dy, g, fn, *args):
    # function_vjp_pullback's, at the rule's call site (no star-call: any order closes)
    site = rule_site()
    function, head, keywords = function_reverse(site, as_python_function(fn, len(args)), args, {})
    dg, dargs = reverse_through(dy, site, g, function, head, args, keywords, len(head), 0)
    return (dg, NO_TANGENT) + dargs


def has_tangent(value) -> bool:
    """Whether ``value`` holds a float (a helper of transformable pullbacks: the question
    carries no gradient)."""
    return differentiable(value)


def register(reg):
    reg.register(user_function_vjp, _user_function_vjp_rrule, family=FAMILY, trusted=True)
    reg.set_pullback_function(user_function_vjp, user_function_vjp_pullback)
    reg.non_differentiable(has_tangent, rule_site, as_python_function, family=FAMILY, trusted=True)
