"""multivariate_normal.cdf/logcdf (plain and frozen): gradients in x, mean and cov.

SciPy's cdf is exact for d <= 2 (norm.cdf, a bivariate routine) and a quasi-Monte Carlo
estimate for d >= 3; the rule differentiates the exact function (scipy_stats_mvn_cdf.py).
d = 1 and 2 are checked against hand formulas to ~1e-12; d = 3 and 4 against central
differences of SciPy's estimate with a fixed seed (``rng=0``: the same QMC points at each
call, so the estimate is a smooth function) and a small ``abseps``, within a tolerance of
the order of that error bound over the step."""

from __future__ import annotations

import numpy as np
import pytest
from sweeps import sweep

st = pytest.importorskip("scipy.stats")

import pullback  # noqa: E402
from pullback import grad, hessian  # noqa: E402
from pullback.testing import check_grads, check_rrule  # noqa: E402

MVN = st.multivariate_normal
COV2 = np.array([[1.3, 0.4], [0.4, 0.8]])
MEAN2 = np.array([0.2, -0.3])
COV3 = np.array([[1.0, 0.3, 0.2], [0.3, 2.0, -0.4], [0.2, -0.4, 1.5]])
MEAN3 = np.array([0.1, -0.2, 0.3])
COV4 = np.eye(4) + 0.3
COV4[0, 3] = COV4[3, 0] = -0.2


def central(fn, a, h):
    """Central differences of the scalar ``fn`` at every element of ``a``."""
    out = np.zeros(np.shape(a))
    for idx in np.ndindex(np.shape(a)):
        e = np.zeros(np.shape(a))
        e[idx] = h
        out[idx] = (fn(a + e) - fn(a - e)) / (2 * h)
    return out


def assert_matches_central(fn, args):
    """The gradient of ``fn`` in each of its three arguments against central differences
    with a step of 1e-4; ``fn`` asks scipy for abseps=1e-6 with a fixed seed, so the
    differences of its estimate carry ~1e-5."""
    got = grad(fn, wrt=(0, 1, 2))(*args)
    for k in range(3):
        def moved(v, k=k):
            return fn(*[v if j == k else a for j, a in enumerate(args)])

        # scipy reads one triangle of a 2-D cov: moving an entry of the other changes nothing
        want = central(moved, args[k], 1e-4)
        np.testing.assert_allclose(got[k], want, rtol=0, atol=2e-5)


def upper(sym):
    """A symmetric gradient's cotangent on the upper triangle (off-diagonal doubled), the
    one scipy's bivariate cdf reads."""
    return 2.0 * np.triu(sym) - np.diag(np.diagonal(sym))


# -- d = 2: hand formulas with norm.cdf/pdf ---------------------------------------------------
def hand_bivariate(x, m, s):
    """``(dPhi/dx, d2Phi/dx dx^T)`` of the bivariate normal cdf at one point ``x``."""
    z = x - m
    g = np.zeros(2)
    h = np.zeros((2, 2))
    for i, j in ((0, 1), (1, 0)):
        sc = s[j, j] - s[i, j] ** 2 / s[i, i]
        u = (z[j] - s[i, j] / s[i, i] * z[i]) / np.sqrt(sc)
        phi = st.norm.pdf(z[i], 0.0, np.sqrt(s[i, i]))
        g[i] = phi * st.norm.cdf(u)
        du = -s[i, j] / s[i, i] / np.sqrt(sc)
        h[i, i] = -z[i] / s[i, i] * g[i] + phi * st.norm.pdf(u) * du
    h[0, 1] = h[1, 0] = MVN.pdf(x, m, s)
    return g, h


def cdf_sum(x, m, s):
    return np.sum(MVN.cdf(x, m, s) * np.array([0.7, -1.1, 1.6]))


def logcdf_sum(x, m, s):
    return np.sum(MVN.logcdf(x, m, s) * np.array([0.7, -1.1, 1.6]))


@pytest.mark.parametrize("log", [False, True], ids=["cdf", "logcdf"])
def test_bivariate_against_the_hand_formula(log):
    x = np.array([[0.4, -0.1], [-0.5, 0.6], [1.2, 0.3]])
    w = np.array([0.7, -1.1, 1.6])
    gx, gm, gs = grad(logcdf_sum if log else cdf_sum, wrt=(0, 1, 2))(x, MEAN2, COV2)
    want_x = np.zeros_like(x)
    want_s = np.zeros((2, 2))
    for k in range(3):
        g, h = hand_bivariate(x[k], MEAN2, COV2)
        scale = w[k] / MVN.cdf(x[k], MEAN2, COV2) if log else w[k]
        want_x[k] = scale * g
        want_s += scale * 0.5 * h  # Plackett: the symmetric gradient is H / 2
    np.testing.assert_allclose(gx, want_x, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gm, -want_x.sum(axis=0), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gs, upper(want_s), rtol=1e-12, atol=1e-14)


def bivariate_cdf(x):
    return MVN.cdf(x, MEAN2, COV2)


def test_bivariate_hessian_against_the_hand_formula():
    x = np.array([0.4, -0.1])
    np.testing.assert_allclose(
        hessian(bivariate_cdf)(x), hand_bivariate(x, MEAN2, COV2)[1], rtol=1e-12, atol=1e-14
    )


def univariate(x, m, s):
    return np.sum(MVN.cdf(x, m, s))


def test_one_dimension_is_norm_cdf():
    # d == 1: a vector of points; Phi_0 = 1
    x = np.array([0.3, -0.8, 1.4])
    gx, gm, gs = grad(univariate, wrt=(0, 1, 2))(x, 0.2, 1.7)
    z = (x - 0.2) / np.sqrt(1.7)
    phi = st.norm.pdf(z) / np.sqrt(1.7)
    np.testing.assert_allclose(gx, phi, rtol=1e-12)
    np.testing.assert_allclose(gm, -np.sum(phi), rtol=1e-12)
    np.testing.assert_allclose(gs, np.sum(-0.5 * z / np.sqrt(1.7) * phi), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("method", ["cdf", "logcdf"])
def test_check_rrule_bivariate(method, dtype):
    # exact in d == 2: finite differences of scipy's own value; every form of cov
    fn = getattr(MVN, method)
    x = np.asarray([[0.4, -0.1], [-0.5, 0.6]], dtype)
    mean, cov = np.asarray(MEAN2, dtype), np.asarray(COV2, dtype)
    check_rrule(fn, x, mean, cov)
    check_rrule(fn, x[0], mean, cov)
    check_rrule(fn, x, mean, np.asarray([1.2, 0.7], dtype))  # a diagonal
    check_rrule(fn, x, mean, dtype(1.4))  # c * identity
    check_rrule(fn, np.asarray([[[0.3, 0.1]], [[-0.2, 0.5]]], dtype), mean, cov)  # (2, 1, 2)


def test_float32_keeps_its_dtype():
    x = np.array([0.4, -0.1], np.float32)
    gx, gm, gs = grad(cdf_sum, wrt=(0, 1, 2))(
        x, MEAN2.astype(np.float32), COV2.astype(np.float32)
    )
    assert gx.dtype == gm.dtype == gs.dtype == np.float32
    want = grad(cdf_sum, wrt=(0, 1, 2))(x.astype(np.float64), MEAN2, COV2)
    for got, w in zip((gx, gm, gs), want, strict=True):
        np.testing.assert_allclose(got, w, rtol=2e-5, atol=1e-6)


# -- d = 3, 4: central differences of a seeded, accurate estimate ------------------------
def seeded(x, m, s):
    w = np.array([1.0, -2.0])[: np.size(x) // np.shape(s)[0]]
    return np.sum(MVN.cdf(x, m, s, False, None, 1e-6, 1e-6, rng=0) * w)


def seeded_log(x, m, s):
    return np.sum(MVN.logcdf(x, m, s, False, None, 1e-6, 1e-6, rng=0))


@pytest.mark.parametrize("fn", [seeded, seeded_log], ids=["cdf", "logcdf"])
@pytest.mark.parametrize("d", sweep([3, 4], quick=1))
def test_against_central_differences(d, fn):
    mean, cov = (MEAN3, COV3) if d == 3 else (np.zeros(4) + 0.1, COV4)
    x = np.array([[0.2, -0.4, 0.5, 0.1], [1.0, 0.3, -0.2, 0.6]])[:, :d]
    if fn is seeded_log:
        x = x[0]  # one point
    assert_matches_central(fn, [x, mean, cov])


@pytest.mark.parametrize("frozen", [False, True], ids=["plain", "frozen"])
def test_options_reach_the_inner_cdfs(monkeypatch, frozen):
    # abseps and maxpts of the call (of the frozen object) are those of the
    # lower-dimensional cdfs of the pullback
    import scipy.stats._multivariate as multi

    seen = []
    qauto = multi._qauto

    def spy(*args, **kwargs):
        seen.append((len(args[1]), kwargs["error"], kwargs["limit"]))
        return qauto(*args, **kwargs)

    monkeypatch.setattr(multi, "_qauto", spy)
    x = np.array([0.2, -0.4, 0.5, 0.1])
    grad(frozen_options_probe if frozen else options_probe)(x)
    assert seen and {(e, n) for _, e, n in seen} == {(3e-5, 50_000)}
    # the primal, the first partials, the pairs' (cov is a float array: its cotangent is
    # computed although only x is asked for)
    assert {d for d, _, _ in seen} == {4, 3, 2}


def options_probe(x):
    return MVN.cdf(x, None, COV4, False, 50_000, 3e-5, 1e-5, rng=1)


def frozen_options_probe(x):
    return MVN(None, COV4, seed=1, maxpts=50_000, abseps=3e-5).cdf(x)


def plain_cdf(x, m, s):
    return MVN.cdf(x, m, s)


def test_infinite_coordinates():
    # x_3 = +inf marginalizes it out: the gradient is the bivariate marginal's (exact),
    # zero in x_3 and in the entries of cov that involve it; x_2 = -inf: a zero cdf
    x = np.array([0.2, -0.4, np.inf])
    gx, gm, gs = grad(plain_cdf, wrt=(0, 1, 2))(x, MEAN3, COV3)
    wx, wm, ws = grad(plain_cdf, wrt=(0, 1, 2))(x[:2], MEAN3[:2], COV3[:2, :2])
    np.testing.assert_allclose(gx, np.append(wx, 0.0), rtol=1e-12)
    np.testing.assert_allclose(gm, np.append(wm, 0.0), rtol=1e-12)
    want = np.zeros((3, 3))
    want[:2, :2] = ws.T  # the bivariate cdf reads the upper triangle, the trivariate the lower
    np.testing.assert_allclose(gs, want, rtol=1e-12, atol=1e-15)
    gx, gm, gs = grad(plain_cdf, wrt=(0, 1, 2))(np.array([0.2, -np.inf, 0.5]), MEAN3, COV3)
    for g in (gx, gm, gs):
        np.testing.assert_array_equal(g, 0.0)


def log_unseeded(x):
    return MVN.logcdf(x, MEAN3, COV3)


def cdf_unseeded(x):
    return MVN.cdf(x, MEAN3, COV3)


def frozen_log_unseeded(x):
    return MVN(MEAN3, COV3).logcdf(x)


@pytest.mark.parametrize("log", [log_unseeded, frozen_log_unseeded], ids=["plain", "frozen"])
def test_logcdf_divides_by_the_primal_cdf(log):
    # d == 3: the cdf's gradient is exact, its value a fresh QMC estimate at each call;
    # logcdf's gradient is that gradient over the cdf of this very call
    x = np.array([0.2, -0.4, 0.5])
    value, g = pullback.value_and_grad(log)(x)
    np.testing.assert_allclose(g * np.exp(value), grad(cdf_unseeded)(x), rtol=1e-13)


# -- frozen ---------------------------------------------------------------------------------
def frozen_sum(m, s, x):
    d = MVN(m, s)
    return np.sum(d.cdf(x) * np.array([0.7, -1.1, 1.6])) + d.logcdf(x[0])


def plain_sum(m, s, x):
    return np.sum(MVN.cdf(x, m, s) * np.array([0.7, -1.1, 1.6])) + MVN.logcdf(x[0], m, s)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_frozen_matches_the_plain_form(dtype):
    x = np.asarray([[0.4, -0.1], [-0.5, 0.6], [1.2, 0.3]], dtype)
    m, s = np.asarray(MEAN2, dtype), np.asarray(COV2, dtype)
    got = grad(frozen_sum, wrt=(0, 1, 2))(m, s, x)
    want = grad(plain_sum, wrt=(0, 1, 2))(m, s, x)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == dtype
        np.testing.assert_allclose(g, w, rtol=1e-12 if dtype == np.float64 else 1e-5)


def frozen_seeded(m, s, x):
    return MVN(m, s, seed=3, abseps=1e-6).cdf(x)


def test_frozen_against_central_differences():
    assert_matches_central(frozen_seeded, [MEAN3, COV3, np.array([0.2, -0.4, 0.5])])


def frozen_hessian_probe(x):
    return MVN(MEAN2, COV2).cdf(x)


def test_frozen_hessian():
    x = np.array([0.4, -0.1])
    np.testing.assert_allclose(
        hessian(frozen_hessian_probe)(x), hand_bivariate(x, MEAN2, COV2)[1], rtol=1e-12
    )


# -- lower_limit: a box, as inclusion-exclusion over its corners -----------------------
LOW2 = np.array([-0.5, -1.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("method", ["cdf", "logcdf"])
def test_box_bivariate(method, dtype):
    # exact in d == 2; the second point is below the first lower bound (scipy's signed
    # measure: a negative cdf, so no logcdf there)
    fn = getattr(MVN, method)
    x = np.asarray([[0.4, -0.1], [-0.9, 0.6]] if method == "cdf" else [[0.4, -0.1]], dtype)
    mean, cov = np.asarray(MEAN2, dtype), np.asarray(COV2, dtype)
    for low in (LOW2, np.array([-np.inf, -1.0]), np.array([[-0.5, -1.0], [-2.0, -np.inf]])):
        check_rrule(fn, x, mean, cov, lower_limit=low[: len(x)] if low.ndim == 2 else low)
    check_rrule(fn, x, mean, dtype(1.4), lower_limit=LOW2)


def box_twice(x, m, s):
    return np.sum(MVN.cdf(x, m, s, lower_limit=LOW2) * np.array([0.7, -1.1]))


def test_box_twice():
    x = np.array([[0.4, -0.1], [1.1, 0.3]])
    how = check_grads(box_twice, x, MEAN2, COV2, wrt=(0, 1, 2), order=2)
    assert how == "reverse over reverse"


def box_seeded(x, m, s):
    low = np.array([-0.8, -np.inf, -0.3])
    return MVN.cdf(x, m, s, False, None, 1e-6, 1e-6, lower_limit=low, rng=0)


def frozen_box(x):
    return MVN(MEAN2, COV2).cdf(x, lower_limit=LOW2)


def plain_box(x):
    return MVN.cdf(x, MEAN2, COV2, lower_limit=LOW2)


def test_box_trivariate_and_frozen():
    assert_matches_central(box_seeded, [np.array([0.2, -0.4, 0.5]), MEAN3, COV3])
    x = np.array([0.4, -0.1])
    np.testing.assert_allclose(grad(frozen_box)(x), grad(plain_box)(x), rtol=1e-13)


def broadcast_box(x):
    return np.sum(MVN.cdf(x, None, COV2, lower_limit=np.array([[-1.0, -1.0], [-2.0, 0.0]])))


def test_a_lower_limit_that_adds_points_is_refused():
    with pytest.raises(pullback.PullbackError, match="lower_limit of shape"):
        grad(broadcast_box)(np.array([0.4, -0.1]))


# -- refusals -----------------------------------------------------------------------------
def singular(x):
    return MVN.cdf(x, None, np.ones((2, 2)), True)


def test_singular_covariance_is_refused():
    with pytest.raises(pullback.PullbackError, match="singular"):
        grad(singular)(np.array([0.4, -0.1]))


# -- second order ---------------------------------------------------------------------------
def frozen_twice(m, s, x):
    d = MVN(m, s)
    return np.sum(d.cdf(x) * np.array([0.7, -1.1, 1.6])) + d.logcdf(x[0]) * d.cdf(x[1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_frozen_twice(dtype):
    # second derivatives in x, mean and cov, the mixed ones through the frozen object
    x = np.asarray([[0.4, -0.1], [-0.5, 0.6], [1.2, 0.3]], dtype)
    m, s = np.asarray(MEAN2, dtype), np.asarray(COV2, dtype)
    assert check_grads(frozen_twice, m, s, x, wrt=(0, 1, 2), order=2) == "reverse over reverse"


def trivariate(x, m, s):
    return MVN.cdf(x, m, s)


@pytest.mark.long
def test_trivariate_hessian_against_differences_of_the_exact_gradient():
    # d == 3: the cdf's gradient needs the bivariate and univariate cdfs only, both exact,
    # so central differences of the gradient are clean (logcdf's divides by the QMC value)
    x = np.array([0.2, -0.4, 0.5])
    args = [x, MEAN3, COV3]
    for k in range(3):
        def partial(v, k=k):
            return grad(trivariate, wrt=k)(*[v if j == k else a for j, a in enumerate(args)])

        def second(v, k=k):
            return trivariate(*[v if j == k else a for j, a in enumerate(args)])

        got = hessian(second)(args[k])
        want = np.stack(
            [central(lambda v, i=i: np.ravel(partial(v))[i], args[k], 1e-5)
             for i in range(args[k].size)]
        )
        np.testing.assert_allclose(np.reshape(got, want.shape), want, rtol=1e-6, atol=1e-8)
