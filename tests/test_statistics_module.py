"""Python's ``statistics`` module in differentiated code (rules/statistics_rules.py):
each rule checked by ``check_rrule`` in float64 and float32 on lists, tuples and arrays,
user functions against finite differences and hand-derived gradients, and the family
loaded only once the user's code has imported ``statistics``."""

import inspect
import statistics as st
import subprocess
import sys

import numpy as np
import pytest

from pullback import grad, hessian, hvp, jvp
from pullback.errors import SourceUnavailableError, UnsupportedCallError
from pullback.testing import check_grads, check_rrule

X = [0.3, -0.7, 1.2, 2.5, 0.9]
P = [0.5, 1.5, 0.8, 2.2]
W = [1.0, 2.0, 0.5, 1.5]
WEIGHTED_FMEAN = "weights" in str(inspect.signature(st.fmean))

CALLS = [
    (st.mean, (X,)),
    (st.fmean, (X,)),
    (st.median, (X,)),
    (st.median, (X[:4],)),
    (st.median_low, (X[:4],)),
    (st.median_high, (X[:4],)),
    (st.pvariance, (X,)),
    (st.variance, (X,)),
    (st.pstdev, (X,)),
    (st.stdev, (X,)),
    (st.variance, (X, 0.4)),
    (st.pstdev, (X, -0.2)),
    (st.geometric_mean, (P,)),
    (st.harmonic_mean, (P,)),
    (st.harmonic_mean, (P, W)),
    (st.covariance, (X[:4], P)),
    (st.correlation, (X[:4], P)),
] + ([(st.fmean, (P, W))] if WEIGHTED_FMEAN else [])


def _as(kind, value, dtype):
    if not isinstance(value, list):
        return value
    if kind == "array":
        return np.asarray(value, dtype=dtype)
    return tuple(value) if kind == "tuple" else list(value)


@pytest.mark.parametrize("fn, args", CALLS, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("kind", ["list", "tuple", "array"])
def test_check_rrule_float64(fn, args, kind):
    check_rrule(fn, *(_as(kind, a, np.float64) for a in args))


@pytest.mark.parametrize("fn, args", CALLS, ids=lambda v: getattr(v, "__name__", ""))
def test_check_rrule_float32(fn, args):
    check_rrule(fn, *(_as("array", a, np.float32) for a in args))


def _of(fn):
    """``fn`` as user code calls it (grad of a library function itself is refused)."""
    return lambda x: fn(x)


def test_by_hand():
    x = np.array(X)
    n, m = len(X), np.mean(X)
    np.testing.assert_allclose(grad(_of(st.pvariance))(x), 2 * (x - m) / n, rtol=1e-12)
    np.testing.assert_allclose(grad(_of(st.variance))(x), 2 * (x - m) / (n - 1), rtol=1e-12)
    s = np.std(x, ddof=1)
    np.testing.assert_allclose(grad(_of(st.stdev))(x), (x - m) / ((n - 1) * s), rtol=1e-12)
    p = np.array(P)
    g = np.exp(np.mean(np.log(p)))
    want = g / (len(P) * p)
    np.testing.assert_allclose(grad(_of(st.geometric_mean))(p), want, rtol=1e-12)
    # the median of an even count: half to each middle element
    got = grad(_of(st.median))(np.array([4.0, 1.0, 3.0, 2.0]))
    np.testing.assert_allclose(got, [0, 0, 0.5, 0.5])


def test_grad_of_the_library_function_itself_says_how():
    with pytest.raises(SourceUnavailableError, match="it is library code"):
        grad(st.variance)(np.array(X))


def standardize(w):
    xs = [w[0], 2.0 * w[1], w[2] ** 2, np.sin(w[3])]
    mu, sd = st.mean(xs), st.stdev(xs)
    return sum(((v - mu) / sd) ** 3 for v in xs) + st.median(xs) * st.pvariance(xs, mu)


def robust_scale(w):
    return st.median(np.abs(w - st.median(w))) + st.correlation(w, w**3)


@pytest.mark.parametrize("fn", [standardize, robust_scale])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_user_functions_against_finite_differences(fn, dtype):
    w = np.array([0.3, -0.8, 1.1, 0.6], dtype=dtype)
    check_grads(fn, w)
    check_grads(fn, w, order=2)


def test_the_hessian_of_the_variance():
    x = np.array(X)
    n = len(X)
    want = 2 * (np.eye(n) - 1 / n) / (n - 1)
    np.testing.assert_allclose(hessian(_of(st.variance))(x), want, rtol=1e-10, atol=1e-12)


def test_a_ranked_correlation_is_refused():
    def ranked(w):
        return st.correlation(w, w**2, method="ranked")

    if "method" not in str(inspect.signature(st.correlation)):
        pytest.skip("statistics.correlation takes no method= before Python 3.12")
    with pytest.raises(UnsupportedCallError, match="ranks are piecewise constant"):
        grad(ranked)(np.array(X))


def test_the_family_loads_only_after_statistics_is_imported(tmp_path):
    script = tmp_path / "uses_statistics.py"
    script.write_text(
        "import sys, numpy as np, pullback\n"
        "from pullback import grad\n"
        "grad(lambda x: np.sum(x * x))(np.ones(3))\n"
        "assert 'statistics' not in sys.modules, 'pullback imported statistics'\n"
        "import statistics\n"
        "print(grad(lambda x: statistics.fmean(x))(np.ones(4)))\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[0.25 0.25 0.25 0.25]"


def appended_then_read(w):
    xs = []
    for v in w:
        xs.append(1.5 * v)
    return st.mean(xs) + st.pvariance(xs) * xs[0] + xs[-1] ** 2 + st.median(xs) * xs[1]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_forward_mode_keeps_a_built_list_whole_after_a_statistics_call(dtype):
    # the tangent of a list built by appends went into the rule's transposed pullback, which
    # took its items off in place: a later xs[0] was an IndexError
    w = np.array([0.3, -0.8, 1.1, 0.6], dtype=dtype)
    v = np.array([0.5, 1.0, -1.0, 2.0], dtype=dtype)
    w64, v64, h = w.astype(np.float64), v.astype(np.float64), 1e-6
    want = (appended_then_read(w64 + h * v64) - appended_then_read(w64 - h * v64)) / (2 * h)
    _, tangent = jvp(appended_then_read, (w,), (v,))
    tol = 1e-6 if dtype == np.float64 else 1e-3
    np.testing.assert_allclose(tangent, want, rtol=tol, atol=tol)
    g = grad(appended_then_read)
    want_hv = (g(w64 + 1e-5 * v64) - g(w64 - 1e-5 * v64)) / 2e-5
    np.testing.assert_allclose(hvp(appended_then_read)(w, v), want_hv, rtol=1e-3, atol=tol)
