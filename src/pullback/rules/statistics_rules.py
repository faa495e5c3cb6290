"""Python's ``statistics`` module: the averages and spreads of a sequence of floats (a
list, a tuple or a 1-d array), as pure-Python numeric code calls them.

The value is ``statistics``'s own (exact where it is exact); the pullback is the
derivative of the formula it computes: ``mean``/``fmean`` (with ``weights=``), ``median``
and its ``_low``/``_high`` forms (the middle element(s) in sorted order, a tie broken by
position), ``variance``/``pvariance``/``stdev``/``pstdev`` (with ``xbar``/``mu`` given,
the sum of squared deviations from it, as Python computes it), ``geometric_mean``,
``harmonic_mean``, ``covariance`` and ``correlation``. Each pullback is a transformable
function, the rule's closure calls it, so second derivatives run through the same code.
``quantiles`` (both methods) interpolates neighbours of the sorted data with fixed
weights: its rule sends the weights back through the sort (first order only).
A sequence's cotangent has its kind: a list, a tuple or an array.

Loaded when the differentiated code has imported ``statistics`` (a deferred family:
pullback never imports it itself).

>>> import statistics
>>> from pullback import grad
>>> grad(lambda x: statistics.pvariance(x))([1.0, 2.0, 6.0])
[-1.3333333333333333, -0.6666666666666666, 2.0]
"""

from __future__ import annotations

import statistics

import numpy as np

from ..errors import UnsupportedCallError
from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO
from .transformable import set_pullbacks

FAMILY = "statistics"
REQUIRES = "statistics"


@transformable
def like_data(g, data):
    """The cotangent ``g`` (an array, one entry per item) in the kind of ``data``."""
    if isinstance(data, np.ndarray):
        return np.reshape(g, np.shape(data))
    items = [g[k] for k in range(len(data))]
    return tuple(items) if isinstance(data, tuple) else items


@transformable
def mean_pullback(dy, data):
    x = np.asarray(data)
    return (like_data(dy / len(data) + 0.0 * x, data),)


@transformable
def fmean_pullback(dy, data, weights=None):
    x = np.asarray(data)
    if weights is None:
        return like_data(dy / len(data) + 0.0 * x, data), NO_TANGENT
    w = np.asarray(weights)
    total = np.sum(w)
    y = np.sum(w * x) / total
    return like_data(dy * w / total, data), like_data(dy * (x - y) / total, weights)


@transformable
def median_pullback(dy, data, low=False, high=False):
    x = np.asarray(data)
    n = len(data)
    order = np.argsort(x, kind="stable")
    g = np.zeros(np.shape(x), dtype=np.result_type(x, 1.0))
    if n % 2 == 1 or high:
        g = g + dy * (np.arange(n) == order[n // 2])
    elif low:
        g = g + dy * (np.arange(n) == order[n // 2 - 1])
    else:
        g = g + 0.5 * dy * (np.arange(n) == order[n // 2 - 1])
        g = g + 0.5 * dy * (np.arange(n) == order[n // 2])
    return (like_data(g, data),)


@transformable
def median_low_pullback(dy, data):
    return median_pullback(dy, data, True, False)


@transformable
def median_high_pullback(dy, data):
    return median_pullback(dy, data, False, True)


@transformable
def squares_pullback(dy, data, center, ddof):
    """Of ``sum((x - c)**2) / (n - ddof)``: ``c`` the mean (None) or the one given."""
    x = np.asarray(data)
    n = len(data)
    c = np.sum(x) / n if center is None else center
    g = 2.0 * dy * (x - c) / (n - ddof)
    dc = NO_TANGENT if center is None else -np.sum(g)
    return like_data(g, data), dc


@transformable
def pvariance_pullback(dy, data, mu=None):
    return squares_pullback(dy, data, mu, 0)


@transformable
def variance_pullback(dy, data, xbar=None):
    return squares_pullback(dy, data, xbar, 1)


@transformable
def root_squares_pullback(dy, data, center, ddof):
    """Of ``sqrt(sum((x - c)**2) / (n - ddof))``."""
    x = np.asarray(data)
    n = len(data)
    c = np.sum(x) / n if center is None else center
    s = np.sqrt(np.sum((x - c) ** 2) / (n - ddof))
    return squares_pullback(dy / (2.0 * s), data, center, ddof)


@transformable
def pstdev_pullback(dy, data, mu=None):
    return root_squares_pullback(dy, data, mu, 0)


@transformable
def stdev_pullback(dy, data, xbar=None):
    return root_squares_pullback(dy, data, xbar, 1)


@transformable
def geometric_mean_pullback(dy, data):
    x = np.asarray(data)
    y = np.exp(np.mean(np.log(x)))
    return (like_data(dy * y / (len(data) * x), data),)


@transformable
def harmonic_mean_pullback(dy, data, weights=None):
    x = np.asarray(data)
    w = 1.0 + 0.0 * x if weights is None else np.asarray(weights)
    total = np.sum(w)
    s = np.sum(w / x)
    g = dy * total * w / (s * s * x * x)
    dw = NO_TANGENT if weights is None else like_data(dy * (1.0 / s - total / (s * s * x)), weights)
    return like_data(g, data), dw


@transformable
def covariance_pullback(dy, x, y):
    a = np.asarray(x)
    b = np.asarray(y)
    n = len(x)
    da = dy * (b - np.mean(b)) / (n - 1)
    db = dy * (a - np.mean(a)) / (n - 1)
    return like_data(da, x), like_data(db, y)


@transformable
def correlation_pullback(dy, x, y):
    a = np.asarray(x)
    b = np.asarray(y)
    u = a - np.mean(a)
    v = b - np.mean(b)
    suu = np.sum(u * u)
    svv = np.sum(v * v)
    r = np.sum(u * v) / np.sqrt(suu * svv)
    # d r = (v / sqrt(suu svv) - r u / suu) . du, the centring's own term vanishing
    da = dy * (v / np.sqrt(suu * svv) - r * u / suu)
    db = dy * (u / np.sqrt(suu * svv) - r * v / svv)
    return like_data(da, x), like_data(db, y)


def quantile_weights(size: int, n: int, method: str) -> np.ndarray:
    """``W`` with ``statistics.quantiles(data, n=n, method=method) == W @ sorted(data)``:
    each cut point interpolates two neighbours of the sorted data (Python's formulas)."""
    W = np.zeros((n - 1, size))
    if size == 1:
        W[:, 0] = 1.0  # quantiles([v], n=n) is [v] * (n - 1)
        return W
    for i in range(1, n):
        if method == "inclusive":
            j, delta = divmod(i * (size - 1), n)
        else:
            j = min(max(i * (size + 1) // n, 1), size - 1)
            delta = i * (size + 1) - j * n
            j -= 1
        W[i - 1, j] += (n - delta) / n
        if delta:
            W[i - 1, j + 1] += delta / n
    return W


@transformable
def quantiles_pullback(dy, data, n=4, method="exclusive"):
    # the weights' transpose applied to dy (a list: entries may be ZERO), then sent back
    # through the sorting permutation (its inverse gathers the sorted cotangents)
    x = np.asarray(data)
    weights = quantile_weights(len(data), n, method).astype(np.result_type(x, 1.0))
    inverse = np.argsort(np.argsort(x, kind="stable"), kind="stable")
    g = 0.0 * weights[0]
    for i in range(len(dy)):
        if dy[i] is not ZERO and dy[i] is not NO_TANGENT:
            g = g + dy[i] * weights[i]
    return (like_data(g[inverse], data),)


def quantiles_rrule(data, *, n=4, method="exclusive"):
    """``statistics.quantiles``: piecewise linear in the data (fixed weights on the sorted
    values between ties), so its cotangent is the weights' transpose, sent back through
    the sorting permutation."""
    y = statistics.quantiles(data, n=n, method=method)

    def quantiles_pullback(dy):
        if dy is ZERO or dy is NO_TANGENT:
            return (ZERO,)
        d = np.array([0.0 if v is ZERO or v is NO_TANGENT else float(v) for v in dy])
        x = np.asarray(data)
        order = np.argsort(x, kind="stable")
        g = np.zeros(np.shape(x), dtype=np.result_type(x, 1.0))
        g[order] = quantile_weights(len(x), n, method).T @ d
        return (like_data(g, data),)

    return y, quantiles_pullback


def _rule_of(fn, pullback_fn, positions):
    """The rule of ``fn`` from its transformable pullback; ``positions`` names the
    arguments that may take a float sequence or value by keyword (``weights=``, ``mu=``)."""

    def statistics_rrule(*args, **kwargs):
        if kwargs.get("method", "linear") != "linear":  # correlation(method="ranked")
            raise UnsupportedCallError(
                f"statistics.{fn.__name__}(method={kwargs['method']!r}) has no derivative "
                "rule (ranks are piecewise constant). Fix: compute it outside the "
                "differentiated function, or use the linear correlation."
            )
        y = fn(*args, **kwargs)
        extra = [kwargs.get(name) for name in positions[len(args) - 1 :]]
        full = (*args, *extra)

        def statistics_pullback(dy):
            if dy is ZERO or dy is NO_TANGENT:
                return (ZERO,) * len(args)
            return tuple(pullback_fn(dy, *full))[: len(args)]

        return y, statistics_pullback

    return statistics_rrule


def register(reg):
    from ._util import Registrar

    r = Registrar(reg, FAMILY)
    table = [
        (statistics.mean, mean_pullback, ()),
        (statistics.fmean, fmean_pullback, ("weights",)),
        (statistics.median, median_pullback, ()),
        (statistics.median_low, median_low_pullback, ()),
        (statistics.median_high, median_high_pullback, ()),
        (statistics.pvariance, pvariance_pullback, ("mu",)),
        (statistics.variance, variance_pullback, ("xbar",)),
        (statistics.pstdev, pstdev_pullback, ("mu",)),
        (statistics.stdev, stdev_pullback, ("xbar",)),
        (statistics.geometric_mean, geometric_mean_pullback, ()),
        (statistics.harmonic_mean, harmonic_mean_pullback, ("weights",)),
    ]
    for name in ("covariance", "correlation"):  # Python 3.10+
        fn = getattr(statistics, name, None)
        if fn is not None:
            table.append((fn, globals()[f"{name}_pullback"], ()))
    for fn, pullback_fn, keywords in table:
        r.rule(fn, _rule_of(fn, pullback_fn, keywords))
    set_pullbacks(reg, [(fn, pullback_fn) for fn, pullback_fn, _ in table])
    r.rule(statistics.quantiles, quantiles_rrule)
    reg.set_pullback_function(statistics.quantiles, quantiles_pullback)
    reg.non_differentiable(quantile_weights, family=FAMILY, trusted=True)
    reg.non_differentiable(statistics.mode, statistics.multimode, family=FAMILY, trusted=True)
