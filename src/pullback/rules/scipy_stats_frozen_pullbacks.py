"""Transformable pullbacks of frozen univariate scipy.stats distributions: the frozen
constructor (``norm(loc, scale)``) and the frozen methods (``frozen.logpdf(x)``), so that
second derivatives run through ``norm(mu, s).logpdf(x)`` as they do through
``norm.logpdf(x, mu, s)``.

A frozen distribution's cotangent is the tuple of its parameters' cotangents, in SciPy's
order (shapes, ``loc``, ``scale``; see scipy_stats_frozen.py). A method's pullback reads
the parameters with :func:`frozen_parameters` — a primitive whose rule gives the frozen
object that very tuple as its cotangent (linear: its transformable pullback closes at any
order) — and calls the unfrozen method's transformable
pullback with them. The constructor's pullback hands each parameter its entry, by position
or by keyword.
A method's pullback function is marked ``__pullback_receiver_cotangent__``: the
derivative of a method's vjp (pullback_runtime.py) then differentiates the receiver too,
so that the mixed terms (``d2/dloc dx``) reach the parameters.
"""

from __future__ import annotations

import functools

from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO, unbroadcast
from .user_function_calls import called_by_name, has_tangent


def frozen_parameters(frozen):
    """Every parameter of a frozen distribution, in SciPy's order (defaults filled in);
    for the multivariate ones scipy's normalized ``(mean, cov)``, ``(alpha,)``, ``(n, p)``."""
    import scipy.stats as st
    from scipy.stats import _multivariate as multi

    if isinstance(frozen, multi.multivariate_normal_frozen):
        return (frozen.mean, frozen.cov_object.covariance)
    if isinstance(frozen, multi.dirichlet_frozen):
        return (frozen.alpha,)
    if isinstance(frozen, multi.multinomial_frozen):
        return (frozen.n, frozen.p)

    from . import scipy_stats_continuous as cont
    from . import scipy_stats_discrete as disc
    from .scipy_stats_common import bind_params

    module = cont if frozen.dist.name in cont.DISTRIBUTIONS else disc
    names, defaults = module.parameters(getattr(st, frozen.dist.name))
    return tuple(bind_params(tuple(frozen.args), frozen.kwds, names, defaults))


def _frozen_parameters_rrule(frozen):
    params = frozen_parameters(frozen)

    def frozen_parameters_pullback(dy):
        if dy is ZERO:
            return (ZERO,)
        return (tuple(dy),)  # the frozen object's cotangent is that tuple

    return params, frozen_parameters_pullback


@transformable
def frozen_parameters_pullback(dy, frozen):
    """The transformable form of :func:`_frozen_parameters_rrule`'s pullback (linear: the
    frozen object's cotangent is the parameters' tuple), so that derivatives of any order
    run through it."""
    if dy is ZERO:
        return (ZERO,)
    return (tuple(dy),)


def unfrozen_pullback(frozen, name, nargs):
    """The transformable pullback of the unfrozen ``dist.name`` (``None`` for a discrete
    ``ppf``, whose integer quantiles have no derivative), called through a wrapper that
    names it as a global (``called_by_name``): some are made by a factory, and
    pullback transforms those where it reads them by name, not as run-time values."""
    import scipy.stats as st

    from ..registry import default_registry

    dist = getattr(st, frozen.dist.name)  # a frozen object holds a copy of the instance
    if name == "ppf" and not hasattr(dist, "_pdf"):
        return None
    return called_by_name(default_registry().lookup(getattr(dist, name)).pullback_fn, nargs)


@transformable
def frozen_method_pullback(dy, frozen, x, name):
    """``(cotangent of frozen, cotangent of x)`` of ``frozen.name(x)``."""
    return parameters_method_pullback(dy, x, frozen_parameters(frozen), frozen, name)


@transformable
def parameters_method_pullback(dy, x, params, frozen, name):
    """:func:`frozen_method_pullback` with the parameters given (``params``, the frozen
    object's, which it reads only for its distribution): the unfrozen method's pullback,
    ``norm(loc, scale).logpdf(x)`` being ``norm.logpdf(x, loc, scale)``. Its vjp is the
    reverse of the frozen method's pullback in which the object is no differentiated
    value (see runtime_call_pullbacks.receiver_method_reverse)."""
    pullback_fn = unfrozen_pullback(frozen, name, 2 + len(params))
    if pullback_fn is None:
        return ZERO, ZERO
    cots = pullback_fn(dy, x, *params)
    out = tuple(cots[k + 1] if has_tangent(params[k]) else NO_TANGENT for k in range(len(params)))
    return out, cots[0]


def _method_pullback(name):
    """The pullback function of ``frozen.name(x)`` (marked: its receiver is differentiated
    too, see the module docstring; and with its form in the parameters, see
    :func:`parameters_method_pullback`)."""

    @transformable
    def method_pullback(dy, frozen, x):
        return frozen_method_pullback(dy, frozen, x, name)

    method_pullback.__name__ = method_pullback.__qualname__ = f"frozen_{name}_pullback"
    method_pullback.__pullback_receiver_cotangent__ = True
    method_pullback.__pullback_parameter_form__ = (parameters_method_pullback, name)
    return method_pullback


METHOD_PULLBACKS = {
    name: _method_pullback(name)
    for name in ("logpdf", "pdf", "logpmf", "pmf", "cdf", "logcdf", "sf", "logsf", "ppf")
}


@transformable
def _parameter_cotangent(d, arg, shaped):
    """The cotangent ``d`` of a parameter ``arg`` (none where it has no tangent), summed
    to its shape where ``shaped`` (a multivariate distribution's array parameters)."""
    if not has_tangent(arg):
        return NO_TANGENT
    if shaped:
        return unbroadcast(d, arg)
    return d


@functools.cache
def keyword_constructor_pullback(names, shaped=False):
    """The pullback function of ``dist(*args, **kwargs)`` for a distribution whose
    parameters are ``names`` (SciPy's order, the layout of the frozen object's cotangent):
    the positional parameters' cotangents, then a dict of those passed by keyword
    (``norm(loc=mu, scale=s)``, ``dirichlet(alpha=a)``), as the rule's closure gives them."""

    @transformable
    def frozen_keywords_constructor_pullback(dy, *args, **kwargs):
        out = tuple([_parameter_cotangent(dy[k], args[k], shaped) for k in range(len(args))])
        if not kwargs:
            return out
        cots = {}
        for k in range(len(names)):
            if names[k] in kwargs:
                cots[names[k]] = _parameter_cotangent(dy[k], kwargs[names[k]], shaped)
        return out + (cots,)

    return frozen_keywords_constructor_pullback


def register_parameters(reg, family="scipy_stats"):
    """``frozen_parameters``' rule, registered with the reverse of method calls found at
    run time (rules/runtime_call_pullbacks.py, whose reverse of a frozen method reads it:
    the transform of a fourth derivative reads that code before SciPy is imported)."""
    reg.register(frozen_parameters, _frozen_parameters_rrule, family=family, trusted=True)
    reg.set_pullback_function(frozen_parameters, frozen_parameters_pullback)


def register(reg, family):
    reg.non_differentiable(unfrozen_pullback, family=family, trusted=True)
