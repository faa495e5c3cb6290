"""Transformable pullbacks of the frozen multivariate scipy.stats distributions:
``multivariate_normal(mean, cov).logpdf(x)``, ``dirichlet(alpha).pdf(x)``,
``multinomial(n, p).logpmf(k)`` and their constructors, so that second derivatives run
through the frozen forms as they do through the unfrozen ones.

The pattern is the univariate one (scipy_stats_frozen_pullbacks.py): a frozen object's
cotangent is the tuple of its parameters' cotangents (``(mean, cov)``, ``(alpha,)``,
``(n, p)``); a method's pullback reads the parameters with
:func:`~.scipy_stats_frozen_pullbacks.frozen_parameters` (a primitive whose rule gives the
frozen object that tuple) and calls the unfrozen method's transformable pullback
(scipy_stats_transformable.py). The frozen ``mean`` and ``cov`` are scipy's normalized
forms (``mean`` of length ``d``, a 2-D ``cov``): the constructor's pullback brings their
cotangents back to the form the user passed (a scalar ``mean`` sums, a scalar ``cov``
``c I`` takes the trace, a 1-D one the diagonal).

``multivariate_normal(mean, cov).cdf(x)`` and ``.logcdf(x)`` take the frozen object's
accuracy options and random state (or the call's ``rng``) to the lower-dimensional cdfs of
their pullback (scipy_stats_mvn_cdf.py).

Imported only by the scipy.stats registration (it names scipy.stats' pullbacks globally).
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.stats as st

from ..registry import transformable
from ..tangents import NO_TANGENT, unbroadcast
from .scipy_stats_frozen_pullbacks import frozen_parameters, keyword_constructor_pullback
from .scipy_stats_mvn_cdf import cdf_form_keywords, frozen_cdf_options, mvn_cdf_cotangents
from .scipy_stats_transformable import (
    dirichlet_logpdf_pullback,
    dirichlet_pdf_pullback,
    multinomial_logpmf_pullback,
    multinomial_pmf_pullback,
    mvn_logpdf_pullback,
    mvn_pdf_pullback,
)
from .user_function_calls import has_tangent


@transformable
def frozen_mvn_method_pullback(dy, frozen, x, density):
    """``((dmean, dcov), dx)`` of ``frozen.logpdf(x)`` (``frozen.pdf(x)`` if density)."""
    return mvn_method_pullback(dy, x, frozen_parameters(frozen), frozen, density)


@transformable
def mvn_method_pullback(dy, x, params, frozen, density):
    """:func:`frozen_mvn_method_pullback` with the parameters ``(mean, cov)`` given (the
    frozen object is not read: the forms below share one signature)."""
    d = np.shape(params[0])[0]
    # every form of x (one point, a stack of points, d == 1) as the 2-D stack scipy reads:
    # the transformable pullback's own form
    points = np.reshape(x, (-1, d))
    w = np.reshape(dy, (-1,))
    # allow_singular=True: a singular cov (which a frozen object may hold) is refused
    # with a pullback error, not a LinAlgError
    if density:
        cots = mvn_pdf_pullback(w, points, params[0], params[1], True)
    else:
        cots = mvn_logpdf_pullback(w, points, params[0], params[1], True)
    return (cots[1], cots[2]), unbroadcast(np.reshape(cots[0], np.shape(x)), x)


@transformable
def frozen_dirichlet_method_pullback(dy, frozen, x, density):
    """``((dalpha,), dx)`` of ``frozen.logpdf(x)`` (``frozen.pdf(x)`` if density)."""
    return dirichlet_method_pullback(dy, x, frozen_parameters(frozen), frozen, density)


@transformable
def dirichlet_method_pullback(dy, x, params, frozen, density):
    """:func:`frozen_dirichlet_method_pullback` with the parameters ``(alpha,)`` given."""
    if density:
        cots = dirichlet_pdf_pullback(dy, x, params[0])
    else:
        cots = dirichlet_logpdf_pullback(dy, x, params[0])
    return (cots[1],), cots[0]


@transformable
def frozen_multinomial_method_pullback(dy, frozen, x, density):
    """``((NO_TANGENT, dp), NO_TANGENT)`` of ``frozen.logpmf(x)`` (``pmf`` if density):
    the counts and ``n`` are integers."""
    return multinomial_method_pullback(dy, x, frozen_parameters(frozen), frozen, density)


@transformable
def multinomial_method_pullback(dy, x, params, frozen, density):
    """:func:`frozen_multinomial_method_pullback` with the parameters ``(n, p)`` given."""
    if density:
        cots = multinomial_pmf_pullback(dy, x, params[0], params[1])
    else:
        cots = multinomial_logpmf_pullback(dy, x, params[0], params[1])
    return (NO_TANGENT, cots[2]), NO_TANGENT


@transformable
def frozen_mvn_cdf_pullback(dy, frozen, x, log, lower_limit=None, rng=None, value=None):
    """``((dmean, dcov), dx)`` of ``frozen.cdf(x)`` (``frozen.logcdf(x)`` if log, whose
    cdf is ``value`` when given, else computed again) (scipy_stats_mvn_cdf.py)."""
    return mvn_cdf_parameter_form(
        dy, x, frozen_parameters(frozen), frozen, (log, (lower_limit, rng)), value
    )


@transformable
def mvn_cdf_parameter_form(dy, x, params, frozen, extra, value=None):
    """:func:`frozen_mvn_cdf_pullback` with the parameters ``(mean, cov)`` given, and
    ``extra`` = ``(log, (lower_limit, rng))``: the form the reverse of the pullback
    differentiates (runtime_call_pullbacks.receiver_method_reverse), with the call's
    keywords, which ``__pullback_parameter_keywords__`` names."""
    log, lower_limit, rng = cdf_form_keywords(extra)
    opts = frozen_cdf_options(frozen, rng)
    d = np.shape(params[0])[0]
    points = np.reshape(x, (-1, d))
    w = np.reshape(dy, (-1,))
    if log:
        if value is None:
            value = st.multivariate_normal.cdf(
                points, params[0], params[1], True, opts[0], opts[1], opts[2],
                lower_limit=lower_limit, rng=opts[3]
            )
        w = w / np.reshape(value, (-1,))
    # allow_singular=True: a singular cov (which a frozen object may hold) is refused
    # with a pullback error, not a LinAlgError
    cots = mvn_cdf_cotangents(w, points, params[0], params[1], True, *opts, lower_limit)
    return (cots[1], cots[2]), unbroadcast(np.reshape(cots[0], np.shape(x)), x)


_METHODS = {
    "multivariate_normal": frozen_mvn_method_pullback,
    "dirichlet": frozen_dirichlet_method_pullback,
    "multinomial": frozen_multinomial_method_pullback,
}

#: Each frozen method's pullback in the parameters (``form(dy, x, params, frozen,
#: density)``): the reverse of the pullback differentiates those, not the object
#: (runtime_call_pullbacks.receiver_method_reverse).
_PARAMETER_FORMS = {
    "multivariate_normal": mvn_method_pullback,
    "dirichlet": dirichlet_method_pullback,
    "multinomial": multinomial_method_pullback,
}


@functools.cache
def method_pullback(kind, name):
    """The pullback function of ``frozen.name(x)`` for a frozen ``kind`` (marked: its
    receiver, the frozen object, is differentiated too)."""
    if kind == "multivariate_normal" and name in ("cdf", "logcdf"):
        return _cdf_method_pullback(name == "logcdf")
    inner = _METHODS[kind]
    density = name in ("pdf", "pmf")

    @transformable
    def multivariate_method_pullback(dy, frozen, x):
        return inner(dy, frozen, x, density)

    label = f"frozen_{kind}_{name}_pullback"
    multivariate_method_pullback.__name__ = multivariate_method_pullback.__qualname__ = label
    multivariate_method_pullback.__pullback_receiver_cotangent__ = True
    multivariate_method_pullback.__pullback_parameter_form__ = (_PARAMETER_FORMS[kind], density)
    return multivariate_method_pullback


def _cdf_method_pullback(log):
    """The pullback function of ``frozen.cdf(x)`` (``logcdf`` if log) of a frozen
    multivariate normal, with the method's keywords."""

    @transformable
    def mvn_cdf_method_pullback(dy, frozen, x, *, lower_limit=None, rng=None):
        return frozen_mvn_cdf_pullback(dy, frozen, x, log, lower_limit, rng)

    label = f"frozen_multivariate_normal_{'logcdf' if log else 'cdf'}_pullback"
    mvn_cdf_method_pullback.__name__ = mvn_cdf_method_pullback.__qualname__ = label
    mvn_cdf_method_pullback.__pullback_receiver_cotangent__ = True
    mvn_cdf_method_pullback.__pullback_parameter_form__ = (mvn_cdf_parameter_form, log)
    mvn_cdf_method_pullback.__pullback_parameter_keywords__ = ("lower_limit", "rng")
    return mvn_cdf_method_pullback


@transformable
def _cov_form(dcov, cov):
    """The cotangent of the frozen (2-D) ``cov`` in the form of the ``cov`` passed."""
    if np.ndim(cov) == 0:
        return unbroadcast(np.trace(dcov), cov)
    if np.ndim(cov) == 1:
        return unbroadcast(np.diagonal(dcov), cov)
    return unbroadcast(dcov, cov)


@transformable
def mvn_constructor_pullback(dy, mean=None, cov=1, allow_singular=False, seed=None):
    """The cotangents of ``mean`` and ``cov`` of ``multivariate_normal(...)`` from the
    frozen object's ``(dmean, dcov)``, one per parameter of the constructor: a keyword's
    (``multivariate_normal(mean=m, cov=C)``) is at its parameter's place."""
    dmean = NO_TANGENT
    if has_tangent(mean):
        dmean = unbroadcast(dy[0], mean)
    dcov = NO_TANGENT
    if has_tangent(cov):
        dcov = _cov_form(dy[1], cov)
    return dmean, dcov, NO_TANGENT, NO_TANGENT


CONSTRUCTOR_PULLBACKS = {
    "multivariate_normal": mvn_constructor_pullback,
    "dirichlet": keyword_constructor_pullback(("alpha",), True),
    "multinomial": keyword_constructor_pullback(("n", "p"), True),
}
