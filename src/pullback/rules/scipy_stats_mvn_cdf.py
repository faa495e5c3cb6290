"""``scipy.stats.multivariate_normal.cdf`` and ``.logcdf``: gradients with respect to ``x``,
``mean`` and ``cov`` (given positionally), as transformable pullbacks so that second
derivatives run through them.

SciPy computes the cdf ``Phi_d(x; m, S)`` exactly for ``d <= 2`` and by randomized
quasi-Monte Carlo (Genz) for ``d >= 3``. The rule differentiates the function SciPy
estimates, never its QMC iterations (as quad's rule uses the fundamental theorem of
calculus). With ``z = x - m``:

* ``dPhi/dx_i = phi(z_i; S_ii) Phi_{d-1}(x_{-i}; conditional mean and cov given x_i)``;
* ``dPhi/dm = -dPhi/dx`` (summed over the stacked points);
* Plackett's identity, ``dPhi/dS_ij = d2Phi/dx_i dx_j`` (``i != j``) and
  ``dPhi/dS_ii = 1/2 d2Phi/dx_i^2``, where ``d2Phi/dx_i dx_j = phi_2(z_i, z_j; S_{ij,ij})
  Phi_{d-2}(rest | x_i, x_j)`` and the diagonal follows from differentiating the first
  formula in ``x_i``: ``d2Phi/dx_i^2 = -(z_i / S_ii) dPhi/dx_i - sum_{j != i} (S_ji / S_ii)
  d2Phi/dx_i dx_j``.

The lower-dimensional cdfs are SciPy's own (``norm.cdf`` for one dimension, ``Phi_0 = 1``),
called with the accuracy options of the call (``maxpts``, ``abseps``, ``releps``, ``rng``):
the gradient is exact for ``d <= 3`` and carries SciPy's QMC error for ``d >= 4``. SciPy
reads one triangle of a 2-D ``cov`` (the lower one for ``d >= 3``, as ``logpdf`` does; the
upper one for ``d == 2`` in SciPy 1.17), so its cotangent lives there; for a symmetric
``cov`` built from other values this is the symmetric gradient either way. A scalar
``cov`` gets the trace, a 1-D one the diagonal.

With ``lower_limit`` (a box, SciPy's signed measure when a bound is above ``x``) the cdf is
exactly the signed sum of the orthant cdfs at the box's corners (inclusion-exclusion,
``2^d`` corners at most; a coordinate unbounded below adds none), and so is its gradient;
``lower_limit`` itself, a keyword, gets none. A ``lower_limit`` that broadcasts ``x`` to
more points, and a singular ``cov`` with ``allow_singular=True``, are refused with a
NotDifferentiableError.

Imported only by the scipy.stats registration (it names scipy.stats globally).
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import scipy.stats as st

from ..errors import NotDifferentiableError
from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO, unbroadcast
from ._util import differentiable, finalize, zeros_for
from .scipy_stats_transformable import mvn_dimension, refuse_singular
from .user_function_calls import has_tangent


def lower_points(lower_limit, points):
    """``lower_limit`` as an array of the points' shape (k, d) (zeros without one: no
    corner reads it). One that would broadcast ``x`` to more points is refused."""
    if lower_limit is None:
        return np.zeros(np.shape(points))
    try:
        return np.array(np.broadcast_to(lower_limit, np.shape(points)), dtype=np.float64)
    except ValueError:
        raise NotDifferentiableError(
            "pullback cannot differentiate scipy.stats.multivariate_normal.cdf with a "
            f"lower_limit of shape {np.shape(lower_limit)} that broadcasts x (points of "
            f"shape {np.shape(points)}) to more points.\n"
            "Fix: pass x broadcast to the shape of the result, e.g. "
            "`np.broadcast_to(x, np.broadcast_shapes(np.shape(x), np.shape(lower_limit)))`."
        ) from None


def box_corners(lower_limit, low):
    """The corners of the box from ``lower_limit`` to ``x`` that may carry probability:
    ``[mask, sign]`` pairs, ``mask`` (d,) 1.0 where the corner takes the lower limit and
    ``sign`` ``(-1) ** (number of those)`` (inclusion-exclusion); a coordinate whose lower
    limit is -inf at every point adds no corner (its orthant cdf is 0). Without a
    ``lower_limit``: the one corner ``x``."""
    d = np.shape(low)[-1]
    if lower_limit is None:
        return [[np.zeros(d), 1.0]]
    unbounded = [bool(np.all(np.isneginf(low[:, i]))) for i in range(d)]
    out = []
    for bits in itertools.product((0.0, 1.0), repeat=d):
        if not any(b and u for b, u in zip(bits, unbounded, strict=True)):
            out.append([np.array(bits), (-1.0) ** sum(bits)])
    return out


def frozen_cdf_options(frozen, rng):
    """``(maxpts, abseps, releps, rng)`` a frozen multivariate normal's cdf uses (its own
    random state unless the call passes ``rng``)."""
    return (frozen.maxpts, frozen.abseps, frozen.releps,
            frozen.random_state if rng is None else rng)


def cdf_form_keywords(extra):
    """``(log, lower_limit, rng)`` from the ``extra`` of a frozen cdf's parameter form
    (scipy_stats_frozen_multivariate.mvn_cdf_parameter_form): settings, which carry no
    gradient (a ``lower_limit=`` that depends on a differentiated value is refused at the
    call, PB502)."""
    return extra[0], extra[1][0], extra[1][1]


def others(d, drop):
    """The indices ``0..d-1`` without those in ``drop``."""
    return [j for j in range(d) if j not in drop]


def index_pairs(d):
    """The pairs ``[i, j]``, ``i < j``, of ``0..d-1``, row by row."""
    return [[i, j] for i in range(d) for j in range(i + 1, d)]


def pair_basis(d):
    """``E`` (pairs, d, d): ``E[p] = e_i e_j^T + e_j e_i^T`` for the ``p``-th pair."""
    out = np.zeros((d * (d - 1) // 2, d, d))
    for p, (i, j) in enumerate(index_pairs(d)):
        out[p, i, j] = out[p, j, i] = 1.0
    return out


@functools.cache
def reads_upper(d):
    """Whether scipy's cdf reads the upper triangle of a 2-D ``cov`` of dimension ``d``
    (SciPy 1.17: its bivariate routine reads ``cov[0, 1]``, its QMC one the lower
    triangle), asked of scipy once per dimension class with a triangular ``cov``."""
    if d != 2:
        return False
    upper = np.array([[1.0, 0.5], [0.0, 1.0]])
    return bool(st.multivariate_normal.cdf(np.zeros(2), None, upper) > 0.3)


@transformable
def full_covariance(cov, d):
    """The ``d x d`` covariance scipy reads: ``c I`` for a scalar, ``diag(c)`` for a 1-D
    ``cov``, the triangle it reads (:func:`reads_upper`) mirrored for a 2-D one."""
    if np.ndim(cov) == 0:
        return cov * np.eye(d)
    if np.ndim(cov) == 1:
        return np.diag(cov)
    if reads_upper(d):
        return np.triu(cov) + np.transpose(np.triu(cov, 1))
    return np.tril(cov) + np.transpose(np.tril(cov, -1))


@transformable
def finite_parts(z):
    """``(finite, zs)``: where ``z`` is finite, and ``z`` with its infinities set to 0.
    A coordinate at +-inf (a marginal, or a zero cdf) has density 0 there: the terms it
    multiplies read ``zs`` (never ``0 * inf``); the bounds of the cdfs read ``z``."""
    finite = np.isfinite(z)
    return finite, np.where(finite, z, 0.0)


@transformable
def orthant_cdf(y, cov, maxpts, abseps, releps, rng):
    """``Phi(y; 0, cov)`` for each row of the stack ``y`` (k, n): 1 for ``n == 0``,
    ``norm.cdf`` for ``n == 1``, scipy's cdf with the call's options otherwise."""
    k = np.shape(y)[0]
    n = np.shape(cov)[0]
    if n == 0:
        return np.ones(k)
    if n == 1:
        return st.norm.cdf(y[:, 0] / np.sqrt(cov[0, 0]))
    p = st.multivariate_normal.cdf(y, None, cov, False, maxpts, abseps, releps, rng=rng)
    return np.reshape(p, (k,))


@transformable
def first_partials(z, full, maxpts, abseps, releps, rng):
    """``dPhi/dx`` (k, d) at the centred points ``z`` (k, d)."""
    d = np.shape(full)[0]
    finite, zs = finite_parts(z)
    columns = []
    for i in range(d):
        rest = others(d, [i])
        s = full[i, i]
        c = full[rest, i]
        cond = full[rest][:, rest] - np.outer(c, c) / s
        zi = zs[:, i]
        y = z[:, rest] - np.outer(zi / s, c)
        density = np.where(finite[:, i], st.norm.pdf(zi / np.sqrt(s)) / np.sqrt(s), 0.0)
        columns.append(density * orthant_cdf(y, cond, maxpts, abseps, releps, rng))
    return np.stack(columns, axis=1)


@transformable
def weighted_hessian(w, z, g, full, maxpts, abseps, releps, rng):
    """``sum_k w_k d2Phi/dx dx^T`` (d, d) at the centred points ``z`` (k, d), from the
    first partials ``g`` (k, d) (see the module docstring). One flat loop over the pairs
    and array algebra for the rest (the reverse sweep of a nested loop whose inner one may
    run zero times reads its counter unbound)."""
    d = np.shape(full)[0]
    finite, zs = finite_parts(z)
    values = []  # d2Phi/dx_i dx_j (k,) for the pairs i < j
    for pair in index_pairs(d):
        i = pair[0]
        j = pair[1]
        rest = others(d, pair)
        a, b, c = full[i, i], full[i, j], full[j, j]
        det = a * c - b * b
        zi, zj = zs[:, i], zs[:, j]
        q = (c * zi * zi - 2.0 * b * zi * zj + a * zj * zj) / det
        density = np.where(
            finite[:, i] & finite[:, j], np.exp(-0.5 * q) / (2.0 * np.pi * np.sqrt(det)), 0.0
        )
        # the conditional of the rest given (x_i, x_j): B^-1 applied to (z_i, z_j)
        ui = (c * zi - b * zj) / det
        uj = (a * zj - b * zi) / det
        ci, cj = full[rest, i], full[rest, j]
        y = z[:, rest] - np.outer(ui, ci) - np.outer(uj, cj)
        cond = full[rest][:, rest] - (
            c * np.outer(ci, ci) - b * (np.outer(ci, cj) + np.outer(cj, ci))
            + a * np.outer(cj, cj)
        ) / det
        values.append(density * orthant_cdf(y, cond, maxpts, abseps, releps, rng))
    # the off-diagonal second derivatives (k, d, d), and the diagonal from them
    t = np.zeros((np.shape(z)[0], d, d))
    if d > 1:
        t = np.tensordot(np.stack(values, axis=1), pair_basis(d), axes=1)
    diagonal = -(zs * g + np.sum(t * full, axis=2)) / np.diagonal(full)
    return np.tensordot(w, t, axes=1) + np.diag(w @ diagonal)


@transformable
def mvn_cdf_cotangents(w, x, mean, cov, allow_singular, maxpts, abseps, releps, rng,
                       lower_limit=None):
    """``(dx, dmean, dcov)`` of ``sum(w * cdf(x, mean, cov, lower_limit=lower_limit))``,
    ``w`` one weight per point (the stacked points' flat order)."""
    d = mvn_dimension(mean, cov)
    full = full_covariance(cov, d)
    if allow_singular:
        refuse_singular(full)
    center = 0.0
    if mean is not None:
        center = mean
    points = np.reshape(x, (-1, d))
    z = points - center
    low = lower_points(lower_limit, points)
    lowz = low - center
    weights = np.reshape(w, (-1,))
    # the box [lower_limit, x] as a signed sum of orthant cdfs at its corners (one
    # corner, x, without a lower_limit): their gradients add; a corner's coordinate
    # taken from lower_limit (a constant) gives x nothing, and mean moves every one
    wg = 0.0
    wall = 0.0
    h = 0.0
    for corner in box_corners(lower_limit, low):
        mask = corner[0]
        zc = np.where(mask > 0.0, lowz, z)
        g = first_partials(zc, full, maxpts, abseps, releps, rng)
        wgc = (corner[1] * weights)[:, None] * g
        wg = wg + wgc * (1.0 - mask)
        wall = wall + wgc
        if has_tangent(cov):
            h = h + weighted_hessian(
                corner[1] * weights, zc, g, full, maxpts, abseps, releps, rng
            )
    dx = NO_TANGENT
    if has_tangent(x):
        dx = unbroadcast(np.reshape(wg, np.shape(x)), x)
    dmean = NO_TANGENT
    if has_tangent(mean):
        dmean = unbroadcast(-np.sum(wall, axis=0), mean)
    dcov = NO_TANGENT
    if has_tangent(cov):
        # Plackett: dPhi/dS = H / 2 as a symmetric gradient, on the triangle scipy reads
        if np.ndim(cov) == 0:
            dcov = unbroadcast(0.5 * np.trace(h), cov)
        elif np.ndim(cov) == 1:
            dcov = unbroadcast(0.5 * np.diagonal(h), cov)
        elif reads_upper(d):
            dcov = unbroadcast(np.triu(h) - 0.5 * np.diag(np.diagonal(h)), cov)
        else:
            dcov = unbroadcast(np.tril(h) - 0.5 * np.diag(np.diagonal(h)), cov)
    return dx, dmean, dcov


@transformable
def mvn_cdf_pullback(dy, x, mean=None, cov=1, allow_singular=False, maxpts=None,
                     abseps=1e-5, releps=1e-5, *, lower_limit=None, rng=None):
    dx, dmean, dcov = mvn_cdf_cotangents(
        dy, x, mean, cov, allow_singular, maxpts, abseps, releps, rng, lower_limit
    )
    return dx, dmean, dcov, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT


@transformable
def mvn_logcdf_pullback(dy, x, mean=None, cov=1, allow_singular=False, maxpts=None,
                        abseps=1e-5, releps=1e-5, *, lower_limit=None, rng=None):
    # d log Phi = dPhi / Phi; Phi computed again (the closure rule uses the primal's)
    p = st.multivariate_normal.cdf(
        x, mean, cov, allow_singular, maxpts, abseps, releps, lower_limit=lower_limit, rng=rng
    )
    return mvn_cdf_pullback(dy / p, x, mean, cov, allow_singular, maxpts, abseps, releps,
                            lower_limit=lower_limit, rng=rng)


_OPTIONS = ("mean", "cov", "allow_singular", "maxpts", "abseps", "releps")
_DEFAULTS = (None, 1, False, None, 1e-5, 1e-5)


def _cdf_rrule(log):
    def mvn_cdf_rrule(x, *args, **kwargs):
        fn = st.multivariate_normal.logcdf if log else st.multivariate_normal.cdf
        y = fn(x, *args, **kwargs)
        options = dict(zip(_OPTIONS, _DEFAULTS, strict=True))
        options.update(zip(_OPTIONS, args, strict=False))
        options.update((k, v) for k, v in kwargs.items() if k in _OPTIONS)
        rng = kwargs.get("rng")
        lower_limit = kwargs.get("lower_limit")

        def mvn_cdf_pullback(dy):
            if dy is ZERO:
                return zeros_for((x,) + args)
            w = np.asarray(dy, dtype=np.float64)
            if log:  # d log Phi = dPhi / Phi, with the primal's Phi
                w = w / np.exp(y)
            cots = mvn_cdf_cotangents(w, x, *options.values(), rng, lower_limit)
            every = (x,) + args
            return tuple(
                finalize(cots[k], every[k]) if k < 3 and differentiable(every[k]) else NO_TANGENT
                for k in range(len(every))
            )

        return y, mvn_cdf_pullback

    return mvn_cdf_rrule


def register(reg):
    """The rules of ``multivariate_normal.cdf``/``logcdf`` and their pullback functions."""
    from ._util import Registrar

    reg.non_differentiable(
        lower_points, box_corners, others, index_pairs, pair_basis, frozen_cdf_options, reads_upper,
        cdf_form_keywords,
        family="scipy_stats", trusted=True,
    )
    r = Registrar(reg, "scipy_stats")
    for log, name, pullback_fn in (
        (False, "cdf", mvn_cdf_pullback),
        (True, "logcdf", mvn_logcdf_pullback),
    ):
        fn = getattr(st.multivariate_normal, name)
        rule = r.rule(fn, _cdf_rrule(log), name=f"scipy.stats.multivariate_normal.{name}")
        reg.set_pullback_function(fn, pullback_fn)
        if log:
            # logcdf's closure divides by the primal's cdf, which the function, given only
            # the arguments, estimates again (a new QMC draw for d >= 3): the sweeps keep
            # the closure; code differentiated again calls the function
            rule.extra["sweeps_keep_closure"] = True
