"""scipy.spatial.distance's cdist, pdist and squareform against finite differences (first
and second order; the coverage cases are in so_scipy_spatial.py)."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_jvp
from rule_inputs import FLOATS, make

from pullback import grad
from pullback.errors import UnsupportedCallError
from pullback.testing import check_rrule, check_rrule_second_order

ssd = pytest.importorskip("scipy.spatial.distance")

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
METRICS = pytest.mark.parametrize(
    "metric, kwargs",
    [
        ("euclidean", {}),
        ("sqeuclidean", {}),
        ("cityblock", {}),
        ("minkowski", {}),
        ("minkowski", {"p": 1}),
        ("minkowski", {"p": 1.5}),
        ("minkowski", {"p": 3.0}),
        ("minkowski", {"p": np.inf}),
        ("chebyshev", {}),
        ("cosine", {}),
    ],
    ids=lambda v: str(v),
)


def _points(shape, dtype, seed=0):
    # well-separated coordinates: |t|^(p-1) and the maxima are smooth near them
    return make("distinct", shape, dtype, seed=seed)


@D
@METRICS
def test_cdist(dtype, metric, kwargs):
    a, b = _points((4, 3), dtype), _points((5, 3), dtype, seed=1)
    check_rrule(ssd.cdist, a, b, metric, **kwargs)
    check_rrule_second_order(ssd.cdist, a, b, metric, **kwargs)


@D
@METRICS
def test_pdist(dtype, metric, kwargs):
    x = _points((5, 3), dtype)
    check_rrule(ssd.pdist, x, metric, **kwargs)
    check_rrule_second_order(ssd.pdist, x, metric, **kwargs)


@D
def test_default_metric_and_squareform(dtype):
    a, b = _points((4, 2), dtype), _points((3, 2), dtype, seed=1)
    check_rrule(ssd.cdist, a, b)
    check_rrule(ssd.pdist, a)
    v = ssd.pdist(a)
    check_rrule(ssd.squareform, v)
    check_rrule_second_order(ssd.squareform, v)
    m = make("real", (4, 4), dtype, seed=2)
    check_rrule(ssd.squareform, m, checks=False)
    check_rrule(ssd.squareform, m, "tovector", False)
    check_rrule_second_order(ssd.squareform, m, "tovector", False)


def test_zero_distance_has_the_norm_convention():
    # coincident points: the euclidean distance 0 has the gradient 0, as np.linalg.norm
    x = np.array([[0.5, 1.0], [0.5, 1.0], [2.0, -1.0]])
    g_pdist = grad(lambda x: np.sum(ssd.pdist(x)))(x)
    pairs = ((0, 1), (0, 2), (1, 2))
    g_norm = grad(lambda x: sum(np.linalg.norm(x[i] - x[j]) for i, j in pairs))(x)
    assert np.allclose(g_pdist, g_norm)
    g_cdist = grad(lambda x: np.sum(ssd.cdist(x, x)))(x)
    assert np.allclose(g_cdist, 2 * g_norm)
    # minkowski: the same convention (the coincident pair adds nothing)
    g_p3 = grad(lambda x: np.sum(ssd.pdist(x, "minkowski", p=3.0)))(x)
    others = ((0, 2), (1, 2))
    want = grad(lambda x: sum(np.linalg.norm(x[i] - x[j], 3) for i, j in others))(x)
    assert np.allclose(g_p3, want)


@D
def test_ties_have_the_numpy_conventions(dtype):
    # points on a grid: coordinates that agree (|t| at 0 has the slope 0, as np.abs) and
    # chebyshev maxima reached by several coordinates (shared equally, as np.max)
    x = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 2.0], [1.0, 2.0, 1.0], [3.0, 1.0, 0.0]], dtype)
    w = np.linspace(0.5, 2.0, 6).astype(dtype)
    i, j = np.triu_indices(4, 1)
    for metric, by_hand in (
        ("cityblock", lambda d: np.sum(np.abs(d), axis=1)),
        ("chebyshev", lambda d: np.max(np.abs(d), axis=1)),
    ):
        got = grad(lambda x: np.sum(ssd.pdist(x, metric) * w))(x)
        want = grad(lambda x: np.sum(by_hand(x[i] - x[j]) * w))(x)
        np.testing.assert_allclose(got, want, rtol=1e-6)
        got_c = grad(lambda x: np.sum(ssd.cdist(x, x + 0.0, metric)))(x)
        want_c = grad(lambda x: 2 * np.sum(by_hand(x[i] - x[j])))(x)
        np.testing.assert_allclose(got_c, want_c, rtol=1e-6)


@pytest.mark.parametrize("metric", ["cityblock", "chebyshev", "minkowski", "euclidean"])
def test_points_without_coordinates(metric):
    # distances of points with no coordinates are 0, constants: the gradient is empty
    x = np.zeros((3, 0))
    assert grad(lambda x: np.sum(ssd.pdist(x, metric)))(x).shape == (3, 0)
    assert grad(lambda x: np.sum(ssd.cdist(x, x + 1.0, metric)))(x).shape == (3, 0)


def test_in_user_code():
    x = _points((5, 2), np.float64)

    def energy(x):
        d = ssd.squareform(ssd.pdist(x, "sqeuclidean"))
        return np.sum(np.exp(-d))

    g = grad(energy)(x)
    step = 1e-6
    e = np.zeros_like(x)
    e[2, 1] = step
    assert np.isclose(g[2, 1], (energy(x + e) - energy(x - e)) / (2 * step), rtol=1e-6)


@pytest.mark.parametrize(
    "call, said",
    [
        (lambda x: ssd.pdist(x, "hamming"), "metric='hamming'"),
        (lambda x: ssd.pdist(x, "euclidean", w=np.ones(2)), "w="),
        (lambda x: ssd.cdist(x, x, "minkowski", p=0.5), "p >= 1"),
        (lambda x: ssd.cdist(x, 0.0 * x, "cosine"), "zero vector"),
    ],
)
def test_refused(call, said):
    x = _points((3, 2), np.float64)

    def f(x):
        return np.sum(call(x))

    with pytest.raises(UnsupportedCallError, match=said):
        grad(f)(x)


def test_forward_mode():
    a = _points((4, 3), np.float64)

    def f(a):
        near = ssd.cdist(a, a[:2] + 0.3, "minkowski", p=3.0)
        return np.sum(near) + np.sum(ssd.squareform(ssd.pdist(a, "cosine")))

    check_jvp(f, (a,), (make("real", (4, 3), seed=5),))
