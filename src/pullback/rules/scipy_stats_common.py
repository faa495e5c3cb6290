"""Shared machinery of the scipy.stats rules (not a family: it registers nothing).

A distribution method ``dist.m(x, *shapes, loc=0, scale=1)`` has a transformable pullback
``pullback(dy, x, *every_parameter)`` (:mod:`.scipy_stats_pullbacks`); :func:`pullback_rrule`
makes the rule around it: its closure pullback binds the call's arguments (positional or
keyword, defaults filled) and calls that function, and returns the cotangents of the
parameters passed by keyword in a dict after the positional ones (the rule declares them
in ``Rule.extra["keyword_cotangents"]``). :func:`pull` (for the multivariate rules) turns
*partials* into cotangents: one array per argument, each the derivative of the output with
respect to that argument, elementwise and broadcastable.

Where no correct formula exists for a partial, it is a :class:`Refused` value: the rule
still runs (the parameter may be a constant the user does not differentiate), and only
using the cotangent (because the parameter *is* differentiated) raises
:class:`~pullback.errors.NotDifferentiableError`.
"""

from __future__ import annotations

import numpy as np

from ._util import NO_TANGENT, ZERO, Refused, densify, differentiable, finalize, zeros_for

LOC_SCALE = ("loc", "scale")


def refused(what: str, why: str) -> Refused:
    return Refused(what, why)


def f64(v):
    """A parameter as a float64 array (scipy computes in float64 whatever it is given)."""
    return np.asarray(v, dtype=np.float64)


def bind_params(args, kwargs, names, defaults):
    """The values of the parameters ``names`` after the first argument, given positionally
    or by name (``defaults`` fills the rest)."""
    out = dict(zip(names, defaults, strict=True))
    out.update(zip(names, args, strict=False))
    for name in names:
        if name in kwargs:
            out[name] = kwargs[name]
    return [out[n] for n in names]


def pull(dy, args, partials):
    """The cotangents of the positional ``args`` from ``dy`` and one partial per argument
    (``None``: the argument carries no tangent, e.g. an integer count)."""
    if dy is ZERO:
        return zeros_for(args)
    dy = np.asarray(densify(dy), dtype=np.float64)
    out = []
    for k, arg in enumerate(args):
        p = partials[k] if k < len(partials) else None
        if not differentiable(arg):
            out.append(NO_TANGENT)
        elif p is None:
            out.append(ZERO)
        elif isinstance(p, Refused):
            out.append(p)
        else:
            out.append(finalize(dy * p, arg))
    return tuple(out)


def keyword_zeros(passed, kwargs) -> dict:
    """The keyword cotangents for a ``ZERO`` output cotangent."""
    return {n: zeros_for((kwargs[n],))[0] for n in passed}


def constructor_rrule(dist, label, names, adapt=None):
    """A rule for ``dist(*params, **kwparams)``, the frozen distribution: its cotangent is
    a tuple with one entry per parameter of the distribution, in the order of ``names``
    (what the frozen methods' rules give for their receiver). The positional parameters
    take theirs, and those passed by keyword theirs in a dict after them
    (``Rule.extra["keyword_cotangents"]``); ``adapt(k, cotangent, arg)`` may first
    reshape the ``k``-th one to the argument's form."""

    def fit(k, dy, a):
        c = dy[k] if adapt is None else adapt(k, dy[k], a)
        return finalize(c, a) if differentiable(a) else NO_TANGENT

    def frozen_rrule(*args, **kwargs):
        frozen = dist(*args, **kwargs)
        passed = [n for n in names if n in kwargs]

        def frozen_pullback(dy):
            if dy is ZERO or dy is NO_TANGENT:
                out = zeros_for(args)
                keyword_cots = keyword_zeros(passed, kwargs)
            else:
                out = tuple(fit(k, dy, a) for k, a in enumerate(args))
                keyword_cots = {n: fit(names.index(n), dy, kwargs[n]) for n in passed}
            return out + (keyword_cots,) if passed else out

        frozen_pullback.__name__ = f"{label}_pullback"
        return frozen, frozen_pullback

    frozen_rrule.__name__ = f"{label}_rrule"
    return frozen_rrule


def constructor_tangent(names, adapt=None):
    """The forward-mode tangent of ``dist(*params, **kwparams)`` (the frozen distribution,
    ``Rule.extra["output_tangent"]``): a tuple with one entry per parameter in the order of
    ``names``, the layout of its cotangent, which the frozen methods' rules pair with their
    receiver's cotangent; ``adapt(k, tangent, arg, frozen)`` gives the ``k``-th the form the
    frozen object keeps (a scalar ``cov`` is ``cov * I``)."""

    def tangent(frozen, args, tangents, kwargs, keyword_tangents):
        out = [ZERO] * len(names)
        given = dict(zip(names, args, strict=False))
        given.update((n, kwargs[n]) for n in names if n in kwargs)
        moving = dict(zip(names, tangents, strict=False))
        moving.update(keyword_tangents)
        for k, name in enumerate(names):
            d = moving.get(name, ZERO)
            if not (d is ZERO or d is NO_TANGENT or d is None):
                out[k] = d if adapt is None else adapt(k, d, given[name], frozen)
        return tuple(out)

    return tangent


def bound_arguments(args, kwargs, names, defaults):
    """``(x, *parameters)`` of a method call, every parameter in positional order."""
    return (args[0],) + tuple(bind_params(args[1:], kwargs, names, defaults))


def pullback_rrule(method, pullback_fn, names, defaults, label):
    """A rule for ``method(x, *params, **kwargs)`` whose pullback is ``pullback_fn(dy, x,
    *every_param)`` (a transformable function returning one cotangent per parameter, in
    the order of ``names``). Parameters passed by keyword get theirs too: after the
    positional cotangents, a dict ``{name: cotangent}`` (``Rule.extra["keyword_cotangents"]``)."""

    def stats_rrule(*args, **kwargs):
        y = method(*args, **kwargs)

        def stats_pullback(dy):
            passed = [n for n in names if n in kwargs]
            if dy is ZERO:
                out = zeros_for(args)
                return out + (keyword_zeros(passed, kwargs),) if passed else out
            full = bound_arguments(args, kwargs, names, defaults)
            cots = pullback_fn(dy, *full)
            out = tuple(
                finalize(c, a) if differentiable(a) else NO_TANGENT
                for c, a in zip(cots, args, strict=False)
            )
            if not passed:
                return out
            keyword_cots = {}
            for n in passed:
                c = cots[1 + names.index(n)]
                keyword_cots[n] = finalize(c, kwargs[n]) if differentiable(kwargs[n]) else (
                    NO_TANGENT
                )
            return out + (keyword_cots,)

        stats_pullback.__name__ = f"{label}_pullback"
        return y, stats_pullback

    stats_rrule.__name__ = f"{label}_rrule"
    return stats_rrule


def register_methods(reg, family, names, methods, pullback_of, params_of):
    """Register a rule for ``scipy.stats.<name>.<method>`` for every distribution name and
    method, with the transformable pullback ``pullback_of(dist, method)``;
    ``params_of(dist)`` gives the names and defaults of the parameters after ``x``.
    Returns the Registrar."""
    import scipy.stats as st

    from ._util import Registrar

    r = Registrar(reg, family)
    for dist_name in names:
        dist = getattr(st, dist_name)
        params, defaults = params_of(dist)
        for name in methods:
            method = getattr(dist, name)
            pullback_fn = pullback_of(dist, name)
            rule = r.rule(method, pullback_rrule(method, pullback_fn, params, defaults, name),
                          name=f"scipy.stats.{dist_name}.{name}")
            rule.extra["keyword_cotangents"] = params
            # a call naming them by keyword is passed by position (keyword_positions.py)
            rule.extra["positional_names"] = ("x", *params)
            reg.set_pullback_function(method, pullback_fn)
    return r
