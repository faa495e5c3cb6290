"""Shared machinery of the scipy.stats rules (not a family: it registers nothing).

A distribution method ``dist.m(x, *shapes, loc=0, scale=1)`` is differentiated from its
*partials*: one array per parameter (``x`` or ``q`` first, then the shape parameters in
scipy's order, then ``loc`` and ``scale``), each the derivative of the output with respect
to that parameter, elementwise and broadcastable. :func:`method_rrule` turns a function
computing ``(y, partials)`` into a rule: the pullback multiplies by ``dy``, undoes
broadcasting and answers only for the positional arguments (keyword arguments are never
differentiated, see the registry's convention).

Where no correct formula exists for a partial, it is a :class:`Refused` value: the rule
still runs (the parameter may be a constant the user does not differentiate), and only
using the cotangent (because the parameter *is* differentiated) raises
:class:`~pullback.errors.NotDifferentiableError`.
"""

from __future__ import annotations

import numpy as np

from ..errors import NotDifferentiableError
from ._util import NO_TANGENT, ZERO, densify, differentiable, finalize, zeros_for

LOC_SCALE = ("loc", "scale")


class Refused:
    """A cotangent pullback cannot compute: any use of it raises, naming what and why."""

    __array_priority__ = 1000  # so that ndarray * Refused reaches __rmul__

    def __init__(self, what: str, why: str):
        self.what = what
        self.why = why

    def _raise(self, *_args, **_kwargs):
        raise NotDifferentiableError(
            f"pullback cannot differentiate {self.what}: {self.why}\n"
            "Fix: keep that parameter constant (do not differentiate with respect to it), "
            "or register your own rule with `@pullback.rrule(...)`."
        )

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _raise
    __truediv__ = __rtruediv__ = __neg__ = __array__ = __float__ = _raise

    def __repr__(self) -> str:
        return f"Refused({self.what!r})"


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


def where_finite(partial, ok):
    """``partial`` where ``ok``, else 0: outside a distribution's support its (log-)density
    or cdf is flat, so the cotangent there is zero, not the NaN a formula would give."""
    if isinstance(partial, Refused):
        return partial
    return np.where(ok, partial, 0.0)


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


def method_rrule(method, partials_of, label):
    """A rule for ``method(*args, **kwargs)`` from ``partials_of(y, args, kwargs)``, which
    returns one partial per parameter in positional order."""

    def stats_rrule(*args, **kwargs):
        y = method(*args, **kwargs)

        def stats_pullback(dy):
            return pull(dy, args, partials_of(y, args, kwargs))

        stats_pullback.__name__ = f"{label}_pullback"
        return y, stats_pullback

    stats_rrule.__name__ = f"{label}_rrule"
    return stats_rrule


def constructor_rrule(dist, label, adapt=None):
    """A rule for ``dist(*params)``, the frozen distribution: its cotangent is a tuple with
    one entry per parameter of the distribution (what the frozen methods' rules give for
    their receiver); the positional parameters take theirs (``adapt(k, cotangent, arg)``
    may first reshape the ``k``-th one to the argument's form)."""

    def frozen_rrule(*args, **kwargs):
        frozen = dist(*args, **kwargs)

        def frozen_pullback(dy):
            if dy is ZERO or dy is NO_TANGENT:
                return zeros_for(args)
            out = []
            for k, a in enumerate(args):
                c = dy[k] if adapt is None else adapt(k, dy[k], a)
                out.append(finalize(c, a) if differentiable(a) else NO_TANGENT)
            return tuple(out)

        frozen_pullback.__name__ = f"{label}_pullback"
        return frozen, frozen_pullback

    frozen_rrule.__name__ = f"{label}_rrule"
    return frozen_rrule


def register_methods(reg, family, names, methods, partials):
    """Register a rule for ``scipy.stats.<name>.<method>`` for every distribution name and
    method, from ``partials(dist, method, y, args, kwargs)``; returns the Registrar."""
    import scipy.stats as st

    from ._util import Registrar

    r = Registrar(reg, family)
    for dist_name in names:
        dist = getattr(st, dist_name)
        for name in methods:

            def partials_of(y, args, kwargs, dist=dist, name=name):
                return partials(dist, name, y, args, kwargs)

            method = getattr(dist, name)
            r.rule(
                method,
                method_rrule(method, partials_of, name),
                name=f"scipy.stats.{dist_name}.{name}",
            )
    return r
