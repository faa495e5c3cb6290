"""scipy.spatial.distance: ``cdist`` and ``pdist`` for the metrics that are differentiable
almost everywhere, and ``squareform`` (linear). Each pullback is a transformable function
(the rule's closure calls it too), so second derivatives run through it.

The metrics: ``euclidean``, ``sqeuclidean``, ``cityblock``, ``minkowski`` (``p >= 1``;
``p=1``, ``2`` and ``inf`` as cityblock, euclidean and chebyshev), ``chebyshev`` and
``cosine``. Where a distance is not differentiable the conventions of the NumPy rules
hold: a ``euclidean`` (or ``minkowski``) distance of 0 has the gradient 0 (as
``np.linalg.norm`` at 0), ``|t|`` at ``t = 0`` has the slope 0 (as ``np.abs``), and the
coordinates that tie for a ``chebyshev`` maximum share its cotangent equally (as ``np.max``).
Another metric, a callable one, weights ``w=`` and ``out=`` are refused; so is ``cosine``
with a zero vector (its distance is undefined there).
"""

from __future__ import annotations

import numpy as np
import scipy.spatial.distance as ssd

from ..errors import UnsupportedCallError
from ..registry import transformable
from ..tangents import NO_TANGENT, densify, unbroadcast
from ._util import Registrar
from .transformable import rule_from_pullback

FAMILY = "scipy_spatial"
REQUIRES = "scipy.spatial.distance"

METRICS = ("euclidean", "sqeuclidean", "cityblock", "minkowski", "chebyshev", "cosine")


def _metric_name(name, metric, out, kwargs):
    """The canonical metric of a call (minkowski's special ``p`` as their metrics), or a
    refusal naming the fix."""
    if out is not None:
        raise UnsupportedCallError(
            f"pullback: {name}(out=...) has no rule.\nFix: use the returned array (a "
            "differentiated function may not write into an array it was given)."
        )
    extra = set(kwargs) - ({"p"} if metric == "minkowski" else set())
    if not isinstance(metric, str) or metric not in METRICS or extra:
        what = f"metric={metric!r}" if not extra else ", ".join(f"{k}=" for k in sorted(extra))
        raise UnsupportedCallError(
            f"pullback: {name}({what}) has no rule.\nFix: use one of the metrics "
            f"{', '.join(METRICS)} (minkowski with p >= 1, no weights w=), or write the "
            "distance with NumPy in the differentiated function."
        )
    if metric != "minkowski":
        return metric
    p = kwargs.get("p", 2.0)
    if not p >= 1:
        raise UnsupportedCallError(
            f"pullback: {name}(metric='minkowski', p={p!r}) has no rule.\nFix: p >= 1 (for "
            "p < 1 the 'distance' has infinite slopes wherever two coordinates agree)."
        )
    return {1: "cityblock", 2: "euclidean", np.inf: "chebyshev"}.get(p, "minkowski")


def _check_cosine(u, v):
    if np.any(np.sum(np.abs(u), axis=-1) == 0) or np.any(np.sum(np.abs(v), axis=-1) == 0):
        raise UnsupportedCallError(
            "pullback: a cosine distance to a zero vector has no derivative (the distance "
            "is undefined there).\nFix: leave zero rows out of the call."
        )


# Checks only (no value to differentiate): transformed code calls them as they are.
_metric_name.__pullback_opaque__ = True
_check_cosine.__pullback_opaque__ = True


#: Metrics whose cotangents are matrix products (no array of all pairs' coordinates).
_BY_PRODUCTS = ("euclidean", "sqeuclidean", "cosine")


@transformable
def product_cotangents(G, XA, XB, D, metric):
    """``(dXA, dXB)`` of ``D = cdist(XA, XB, metric)`` whose cotangent is ``G``, by matrix
    products, for the metrics of ``_BY_PRODUCTS``."""
    if metric == "cosine":
        _check_cosine(XA, XB)
        nu = np.sqrt(np.sum(XA * XA, axis=1))
        nv = np.sqrt(np.sum(XB * XB, axis=1))
        # D = 1 - S / (|u| |v|) with S = XA XB^T
        K = G / (np.expand_dims(nu, 1) * np.expand_dims(nv, 0))
        KS = K * (XA @ np.transpose(XB))
        dA = np.expand_dims(np.sum(KS, axis=1) / (nu * nu), 1) * XA - K @ XB
        dB = np.expand_dims(np.sum(KS, axis=0) / (nv * nv), 1) * XB - np.transpose(K) @ XA
        return dA, dB
    if metric == "sqeuclidean":
        H = 2.0 * G
    else:  # euclidean: (u - v) / D, taken as 0 at D = 0 (as np.linalg.norm's rule does)
        H = np.where(D == 0, 0.0, G / np.where(D == 0, 1.0, D))
    dA = np.expand_dims(np.sum(H, axis=1), 1) * XA - H @ XB
    dB = np.expand_dims(np.sum(H, axis=0), 1) * XB - np.transpose(H) @ XA
    return dA, dB


@transformable
def cdist_pullback(dy, XA, XB, metric="euclidean", *, out=None, **kwargs):
    m = _metric_name("scipy.spatial.distance.cdist", metric, out, kwargs)
    p = kwargs.get("p", 2.0)
    D = ssd.cdist(XA, XB, metric, **kwargs)
    if m in _BY_PRODUCTS:
        dA, dB = product_cotangents(densify(dy), XA, XB, D, m)
        return unbroadcast(dA, XA), unbroadcast(dB, XB), NO_TANGENT
    if np.shape(XA)[1] == 0:  # no coordinates: the distances are constants
        return unbroadcast(0.0 * XA, XA), unbroadcast(0.0 * XB, XB), NO_TANGENT
    g = densify(dy)
    # one coordinate at a time (see pdist_pullback): an (ma, mb) matrix of differences each
    if m == "chebyshev":
        D, ties = _chebyshev_ties(XA, XB, None)
        g = g / ties
    da = ()
    db = ()
    for k in range(np.shape(XA)[1]):
        c = g * _coordinate_slope(_differences(XA, XB, k, None), D, m, p)
        da = da + (np.sum(c, axis=1),)
        db = db + (-np.sum(c, axis=0),)
    return (
        unbroadcast(np.stack(da, axis=1), XA),
        unbroadcast(np.stack(db, axis=1), XB),
        NO_TANGENT,
    )


@transformable
def pdist_pullback(dy, X, metric="euclidean", *, out=None, **kwargs):
    m = _metric_name("scipy.spatial.distance.pdist", metric, out, kwargs)
    p = kwargs.get("p", 2.0)
    n = np.shape(X)[0]
    D = ssd.pdist(X, metric, **kwargs)
    if m in _BY_PRODUCTS:
        # pdist(X) is the upper triangle of cdist(X, X), which is symmetric: the symmetric
        # cotangent squareform(dy) / 2 pulls back through both of its arguments
        G = 0.5 * ssd.squareform(densify(dy), "tomatrix", False)
        dA, dB = product_cotangents(G, X, X, ssd.squareform(D, "tomatrix", False), m)
        return unbroadcast(dA + dB, X), NO_TANGENT
    if np.shape(X)[1] == 0:  # no coordinates: the distances are constants
        return unbroadcast(0.0 * X, X), NO_TANGENT
    g = densify(dy)
    i, j = np.triu_indices(n, 1)  # the pairs, in pdist's order
    # one coordinate at a time: arrays of one value a pair (arrays of every pair's
    # coordinates, made anew on each call, cost more in page faults than in arithmetic)
    if m == "chebyshev":
        D, ties = _chebyshev_ties(X, X, (i, j))
        g = g / ties
    columns = ()
    for k in range(np.shape(X)[1]):
        c = g * _coordinate_slope(_differences(X, X, k, (i, j)), D, m, p)
        columns = columns + (np.bincount(i, c, n) - np.bincount(j, c, n),)
    return unbroadcast(np.stack(columns, axis=1), X), NO_TANGENT


@transformable
def _coordinate_slope(delta, D, metric, p):
    """dD/d delta for one coordinate's differences ``delta`` of the pairs whose distances
    are ``D`` (cityblock, minkowski; chebyshev's, before it is shared among its ties)."""
    if metric == "cityblock":
        return np.sign(delta)
    if metric == "chebyshev":  # the coordinates where |delta| reaches the maximum D
        return np.sign(delta) * (np.abs(delta) == D)
    # minkowski: sign(delta) (|delta| / D)^(p-1), taken as 0 at D = 0 (as
    # np.linalg.norm's rule does)
    zero = D == 0
    safe = np.where(zero, 1.0, D)
    return np.where(zero, 0.0, np.sign(delta) * (np.abs(delta) / safe) ** (p - 1.0))


@transformable
def _differences(XA, XB, k, pairs):
    """Coordinate ``k``'s differences: of the pairs ``(i, j)`` of the rows of ``XA``
    (pdist, ``XB`` is ``XA``), or of every row of ``XA`` against every row of ``XB``
    (cdist, ``pairs`` None: an (ma, mb) matrix)."""
    if pairs is None:
        return np.expand_dims(XA[:, k], 1) - np.expand_dims(XB[:, k], 0)
    return np.take(XA[:, k], pairs[0]) - np.take(XB[:, k], pairs[1])


@transformable
def _chebyshev_ties(XA, XB, pairs):
    """Each pair's largest ``|delta|`` (its chebyshev distance, from the differences the
    slopes read: in the arrays' dtype) and how many coordinates reach it (they share its
    cotangent equally, as np.max's rule does)."""
    top = 0.0 * np.abs(_differences(XA, XB, 0, pairs))
    for k in range(np.shape(XA)[1]):
        top = np.maximum(top, np.abs(_differences(XA, XB, k, pairs)))
    ties = 0.0 * top
    for k in range(np.shape(XA)[1]):
        ties = ties + (np.abs(_differences(XA, XB, k, pairs)) == top)
    return top, ties


def _to_matrix(X, force):
    """Whether ``squareform(X, force)`` makes a matrix of a condensed vector."""
    if force.lower() == "tomatrix":
        return True
    if force.lower() == "tovector":
        return False
    return np.ndim(X) == 1


_to_matrix.__pullback_opaque__ = True


@transformable
def squareform_pullback(dy, X, force="no", checks=True):
    g = densify(dy)
    if _to_matrix(X, force):
        # each distance stands twice in the matrix, at (i, j) and (j, i)
        dX = ssd.squareform(g + np.transpose(g), "tovector", False)
        return unbroadcast(dX, X), NO_TANGENT, NO_TANGENT
    # the condensed vector reads the upper triangle
    return np.triu(ssd.squareform(g, "tomatrix", False), 1), NO_TANGENT, NO_TANGENT


def register(reg):
    r = Registrar(reg, FAMILY)
    for fn, pullback_fn, notes in (
        (ssd.cdist, cdist_pullback, "metrics " + ", ".join(METRICS)),
        (ssd.pdist, pdist_pullback, "metrics " + ", ".join(METRICS)),
        (ssd.squareform, squareform_pullback, ""),
    ):
        r.rule(fn, rule_from_pullback(fn, pullback_fn), notes=notes)
        reg.set_pullback_function(fn, pullback_fn)
