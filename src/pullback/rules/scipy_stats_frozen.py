"""Frozen scipy.stats distributions: ``norm(loc, scale).logpdf(x)`` and the like.

The engine needs no special case. ``scipy.stats.norm(mu, s)`` is a call of a global
callable object, so it looks up a rule keyed by the distribution object: that rule
returns scipy's own frozen distribution, and its pullback maps the frozen object's
cotangent back to the positional parameters. ``d.logpdf(x)`` is a method call on a value
known only at run time; the engine looks up a rule for the method of the value's class
(``rv_continuous_frozen.logpdf``, ``multivariate_normal_frozen.logpdf``, ...). Those rules
compute what the unfrozen method's rule computes and give the frozen object, as its
cotangent, a tuple with one entry per parameter of the distribution (in scipy's order:
shapes, ``loc``, ``scale``; ``mean``, ``cov``; ``alpha``; ``n``, ``p``).

A frozen distribution made outside the differentiated function (a constant) works the
same: its tuple cotangent is simply not used.
"""

from __future__ import annotations

import numpy as np

from ._util import NO_TANGENT, ZERO, Registrar, differentiable, finalize, zeros_for
from .scipy_stats_common import bound_arguments, constructor_rrule, constructor_tangent
from .scipy_stats_frozen_pullbacks import frozen_parameters

FAMILY = "scipy_stats"
REQUIRES = "scipy.stats"

CONTINUOUS_METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf")
DISCRETE_METHODS = ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf")


def _univariate_rrule(reg, name):
    """The rule of ``frozen.<name>(x)`` for the frozen univariate distributions: the
    unfrozen method's transformable pullback, called with every parameter."""
    from . import scipy_stats_continuous as cont
    from . import scipy_stats_discrete as disc

    def frozen_method_rrule(frozen, x):
        import scipy.stats as st

        y = getattr(frozen, name)(x)
        dist_name = frozen.dist.name
        module = cont if dist_name in cont.DISTRIBUTIONS else disc
        if dist_name not in module.DISTRIBUTIONS or not hasattr(module, "parameters"):
            raise NotImplementedError(  # pragma: no cover - every frozen we make is known
                f"pullback: no rule for frozen scipy.stats.{dist_name}.{name}"
            )
        dist = getattr(st, dist_name)
        names, defaults = module.parameters(dist)
        full = bound_arguments((x,) + tuple(frozen.args), frozen.kwds, names, defaults)

        def frozen_method_pullback(dy):
            if dy is ZERO or (module is disc and name == "ppf"):  # integer quantiles
                return ZERO, zeros_for((x,))[0]
            pullback_fn = reg.lookup(getattr(dist, name)).pullback_fn
            cots = pullback_fn(dy, *full)
            # every parameter, in scipy's order, for the frozen object (see the module)
            params = tuple(
                finalize(c, a) if differentiable(a) else NO_TANGENT
                for c, a in zip(cots[1:], full[1:], strict=True)
            )
            return params, finalize(cots[0], x)

        return y, frozen_method_pullback

    frozen_method_rrule.__name__ = f"frozen_{name}_rrule"
    return frozen_method_rrule


def _multivariate_rrule(kind, name):
    """The rule of ``frozen.<name>(x)`` for a frozen multivariate ``kind``: its pullback
    is the transformable one (scipy_stats_frozen_multivariate.py), called directly."""

    def frozen_multivariate_rrule(frozen, x, **kwargs):
        from .scipy_stats_frozen_multivariate import frozen_mvn_cdf_pullback, method_pullback

        y = getattr(frozen, name)(x, **kwargs)

        def frozen_multivariate_pullback(dy):
            if dy is ZERO:
                return ZERO, ZERO
            if name in ("cdf", "logcdf"):  # logcdf: with the primal's cdf
                log = name == "logcdf"
                params, dx = frozen_mvn_cdf_pullback(
                    dy, frozen, x, log, value=np.exp(y) if log else None, **kwargs
                )
            else:
                params, dx = method_pullback(kind, name)(dy, frozen, x, **kwargs)
            own = frozen_parameters(frozen)
            params = tuple(
                finalize(c, a) if differentiable(a) else NO_TANGENT
                for c, a in zip(params, own, strict=True)
            )
            return params, NO_TANGENT if dx is NO_TANGENT else finalize(dx, x)

        return y, frozen_multivariate_pullback

    frozen_multivariate_rrule.__name__ = f"frozen_{kind}_{name}_rrule"
    return frozen_multivariate_rrule


#: The frozen multivariate distributions: (kind, its frozen class (from scipy's module),
#: its methods with rules)
MULTIVARIATE = (
    ("multivariate_normal", lambda m: m.multivariate_normal_frozen,
     ("logpdf", "pdf", "cdf", "logcdf")),
    ("dirichlet", lambda m: m.dirichlet_frozen, ("logpdf", "pdf")),
    ("multinomial", lambda m: m.multinomial_frozen, ("logpmf", "pmf")),
)


def _mvn_constructor_cotangent(k, cot, arg):
    """multivariate_normal's frozen ``cov`` is 2-D; give a scalar or 1-D ``cov`` its form."""
    if k == 1 and cot is not ZERO and np.ndim(arg) < 2:
        g = np.asarray(cot)
        return np.trace(g) if np.ndim(arg) == 0 else np.diagonal(g).copy()
    return cot


def _mvn_frozen_tangent(k, tangent, arg, frozen):
    """The tangent of multivariate_normal's frozen ``cov`` (2-D) from a scalar or 1-D
    ``cov``'s: the transpose of :func:`_mvn_constructor_cotangent`."""
    if k == 1 and np.ndim(arg) < 2:
        eye = np.eye(np.shape(frozen.cov_object.covariance)[0])
        return tangent * eye if np.ndim(arg) == 0 else np.diag(tangent)
    return tangent


def register(reg):
    try:
        import scipy.stats as st
        from scipy.stats import _distn_infrastructure as infra
        from scipy.stats import _multivariate as multi
    except ImportError:  # pragma: no cover - scipy is optional
        return
    from . import scipy_stats_continuous as cont
    from . import scipy_stats_discrete as disc

    r = Registrar(reg, FAMILY)

    def constructor(dist_name, names, adapt=None, adapt_tangent=None):
        dist = getattr(st, dist_name)
        rule = r.rule(dist, constructor_rrule(dist, dist_name, names, adapt),
                      name=f"scipy.stats.{dist_name}", notes="frozen distribution")
        rule.extra["keyword_cotangents"] = names
        rule.extra["output_tangent"] = constructor_tangent(names, adapt_tangent)

    for module in (cont, disc):
        for dist_name in module.DISTRIBUTIONS:
            constructor(dist_name, module.parameters(getattr(st, dist_name))[0])
    constructor(
        "multivariate_normal", ("mean", "cov"), _mvn_constructor_cotangent, _mvn_frozen_tangent
    )
    constructor("dirichlet", ("alpha",))
    constructor("multinomial", ("n", "p"))
    # cdf, sf, ppf, ... are rv_frozen's own methods, shared by both kinds
    for cls, names in (
        (infra.rv_continuous_frozen, CONTINUOUS_METHODS),
        (infra.rv_discrete_frozen, DISCRETE_METHODS),
    ):
        for name in names:
            method = getattr(cls, name)
            if reg.lookup(method) is None:
                r.rule(method, _univariate_rrule(reg, name),
                       name=f"scipy.stats.{method.__qualname__}")
    for kind, cls, names in MULTIVARIATE:
        for name in names:
            r.rule(getattr(cls(multi), name), _multivariate_rrule(kind, name),
                   name=f"scipy.stats.{cls(multi).__name__}.{name}")
    # last, once every stats rule exists: the pullbacks second derivatives run through
    from . import scipy_stats_frozen_pullbacks as frozen_pbs
    from . import scipy_stats_transformable

    scipy_stats_transformable.register(reg)
    frozen_pbs.register(reg, FAMILY)
    for module in (cont, disc):
        for dist_name in module.DISTRIBUTIONS:
            names = tuple(module.parameters(getattr(st, dist_name))[0])
            reg.set_pullback_function(
                getattr(st, dist_name), frozen_pbs.keyword_constructor_pullback(names)
            )
    for cls, names in (
        (infra.rv_continuous_frozen, CONTINUOUS_METHODS),
        (infra.rv_discrete_frozen, DISCRETE_METHODS),
    ):
        for name in names:
            reg.set_pullback_function(getattr(cls, name), frozen_pbs.METHOD_PULLBACKS[name])
    from . import scipy_stats_frozen_multivariate as frozen_mv

    for kind, cls, names in MULTIVARIATE:
        reg.set_pullback_function(getattr(st, kind), frozen_mv.CONSTRUCTOR_PULLBACKS[kind])
        for name in names:
            method = getattr(cls(multi), name)
            reg.set_pullback_function(method, frozen_mv.method_pullback(kind, name))
