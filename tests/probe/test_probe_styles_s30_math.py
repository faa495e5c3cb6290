"""Probe: mathematics in model code, and vector-valued functions.

scipy.stats log-densities and distribution functions of several families (as functions
and frozen, parameters broadcast against the data), scipy.special, a Gaussian process by
``cho_factor``/``cho_solve`` and by ``cholesky``/``solve_triangular``, ``solve_ivp`` and
``odeint`` with parameters passed in ``args``, ``quad`` of a closure, a root by
``brentq``, and the solution of ``minimize`` differentiated in a parameter; Jacobians and
Hessians of vector-valued functions, tuple outputs, ``vjp``/``jvp`` with structured
outputs. Gradients (and where documented jvp, hvp and the Hessian) against central
differences (probe_harness.py).
"""

import numpy as np
import pytest
from probe_harness import check_probe, fd_grad, probe_tests
from scipy import integrate, linalg, optimize, special, stats
from sweeps import long_run

import pullback
import pullback.errors

DATA = np.array([0.1, 0.5, -0.3, 1.1, 0.7])
P4 = np.array([0.3, -0.7, 1.2, 0.9])
X = P4

# -- scipy.stats ------------------------------------------------------------------------------


def normal_loglik(p):
    mu, log_sigma = p
    return np.sum(stats.norm.logpdf(DATA, loc=mu, scale=np.exp(log_sigma)))


def student_t_loglik(p):
    return np.sum(stats.t.logpdf(DATA, df=np.exp(p[0]) + 1, loc=p[1], scale=1.3))


def gamma_loglik(p):
    return np.sum(stats.gamma.logpdf(np.abs(DATA) + 0.1, a=np.exp(p[0]), scale=np.exp(p[1])))


def beta_loglik(p):
    return np.sum(stats.beta.logpdf(np.array([0.2, 0.5, 0.7]), np.exp(p[0]), np.exp(p[1])))


def frozen_normal(p):
    dist = stats.norm(loc=p[0], scale=p[1])
    return np.sum(dist.logpdf(DATA)) + dist.cdf(0.5)


def broadcast_cdf(locs):
    return np.sum(stats.norm.cdf(DATA[:, None], loc=locs[None, :], scale=1.0))


def poisson_loglik(log_rate):
    return np.sum(stats.poisson.logpmf(np.array([0, 2, 3]), mu=np.exp(log_rate)))


def exponential_survival(p):
    return np.sum(stats.expon.logsf(np.abs(DATA), scale=np.exp(p[0])))


def mvn_loglik(mean):
    cov = np.array([[1.0, 0.3], [0.3, 2.0]])
    points = np.array([[0.1, 0.2], [0.3, -0.1]])
    return np.sum(stats.multivariate_normal.logpdf(points, mean=mean, cov=cov))


def lognormal_loglik(p):
    return np.sum(stats.lognorm.logpdf(np.array([0.5, 1.5]), s=np.exp(p[0]), scale=np.exp(p[1])))


def normal_quantiles(p):
    return np.sum(stats.norm.ppf(np.array([0.1, 0.7]), loc=p[0], scale=p[1]))


def binomial_logit(p):
    return np.sum(stats.binom.logpmf(np.array([1, 3]), 5, special.expit(p)))


def heavy_tails(p):
    return np.sum(stats.cauchy.logpdf(DATA, p[0], np.exp(p[1]))) + np.sum(
        stats.laplace.logcdf(DATA, p[0])
    )


# -- scipy.special ----------------------------------------------------------------------------


def gamma_functions(p):
    return np.sum(special.gammaln(np.exp(p))) + np.sum(special.digamma(np.exp(p) + 1))


def logistic_functions(p):
    return np.sum(special.expit(p) * special.log_expit(-p)) + special.logsumexp(p)


def error_functions(p):
    return np.sum(special.erf(p) + special.erfc(p / 2) ** 2 + special.xlogy(p ** 2, np.abs(p) + 1))


def beta_softmax(p):
    return np.sum(special.betaln(np.exp(p), 2.0) + special.softmax(p) * p)


def theis_drawdown(p):
    # a well-test model (drawdown by the exponential integral), log-transmissivity and
    # log-storativity fitted (before: refused, PB301, scipy.special.exp1 had no rule)
    T, S = np.exp(p)
    r, t = 10.0, np.array([1.0, 5.0, 20.0])
    u = r ** 2 * S / (4 * T * t)
    s = special.exp1(u) / (4 * np.pi * T)
    return np.sum((s - np.array([0.5, 0.9, 1.2])) ** 2)


def count_model(p):
    # a beta-binomial-like log-likelihood written with binom and poch
    a, b = np.exp(p)
    k, n = np.array([1.0, 3.0, 4.0]), 5.0
    log_choose = np.log(special.binom(n, k))
    return np.sum(log_choose + np.log(special.poch(a, k)) + np.log(special.poch(b, n - k)))


def slab_flux(p):
    return np.sum(special.expn(3, p) + 0.1 * special.expi(-p) + special.expn(1, 2 * p))


# -- NumPy written for two versions, weighted counts ------------------------------------------


def trapezoid_either_version(y):
    # np.trapz is gone from NumPy 2: the branch that names it never runs (before: refused,
    # PB302, before running)
    return np.trapz(y ** 2, dx=0.5) if hasattr(np, "trapz") else np.trapezoid(y ** 2, dx=0.5)


def trapezoid_by_statement(y):
    if hasattr(np, "trapezoid"):
        return np.trapezoid(np.sin(y) * y, dx=0.5)
    return np.trapz(np.sin(y) * y, dx=0.5)


def weighted_counts(w):
    # before: refused, PB502 (weights by keyword)
    counts = np.bincount(np.array([0, 1, 1, 2]), weights=w)
    return np.sum(counts ** 2)


def weighted_counts_minlength(w):
    counts = np.bincount(np.array([0, 1, 1, 2]), weights=w ** 2, minlength=5)
    return np.sum(counts * np.arange(5)) + np.sum(np.sqrt(counts + 1.0))


# -- scipy.linalg: a Gaussian process ---------------------------------------------------------

XG = np.linspace(0, 1, 6)
YG = np.sin(3 * XG)


def gp_nll_cho(p):
    ell, sf, sn = np.exp(p)
    K = sf ** 2 * np.exp(-0.5 * (XG[:, None] - XG[None, :]) ** 2 / ell ** 2)
    K = K + sn ** 2 * np.eye(len(XG))
    c, low = linalg.cho_factor(K)
    alpha = linalg.cho_solve((c, low), YG)
    return 0.5 * YG @ alpha + np.sum(np.log(np.diag(c)))


def gp_nll_triangular(p):
    ell, sn = np.exp(p)
    K = np.exp(-0.5 * (XG[:, None] - XG[None, :]) ** 2 / ell ** 2) + sn ** 2 * np.eye(len(XG))
    L = linalg.cholesky(K, lower=True)
    a = linalg.solve_triangular(L, YG, lower=True)
    return 0.5 * a @ a + np.sum(np.log(np.diag(L)))


# -- solvers with parameters ------------------------------------------------------------------


def damped(t, y, k, c):
    return np.array([y[1], -k * y[0] - c * y[1]])


def oscillator_end(p):
    sol = integrate.solve_ivp(
        damped, (0, 2.0), [1.0, 0.0], args=(p[0], p[1]), rtol=1e-10, atol=1e-12
    )
    return sol.y[0, -1] ** 2


def oscillator_at_times(p):
    sol = integrate.solve_ivp(
        damped, (0, 2.0), [1.0, 0.0], t_eval=[1.0, 2.0], args=(p[0], p[1]), rtol=1e-10,
        atol=1e-12,
    )
    return np.sum(sol.y[0] ** 2)


def forced_decay(y, t, k):
    return -k * y + np.sin(t)


def odeint_path(p):
    ts = np.linspace(0, 1, 5)
    ys = integrate.odeint(forced_decay, p[1], ts, args=(p[0],), rtol=1e-11, atol=1e-12)
    return np.sum(ys ** 2)


def quad_of_closure(p):
    a, b = p
    val, _ = integrate.quad(lambda t: np.exp(-a * t) * np.cos(b * t), 0, 2)
    return val


def objective(z, p):
    return (z[0] - p[0]) ** 2 + p[1] * z[0] ** 4 + (z[1] - 1) ** 2


def objective_grad(z, p):
    return np.array([2 * (z[0] - p[0]) + 4 * p[1] * z[0] ** 3, 2 * (z[1] - 1)])


def minimizer_value(p):
    res = optimize.minimize(
        objective, np.zeros(2), args=(p,), jac=objective_grad, method="BFGS", tol=1e-10
    )
    return res.x[0] ** 2 + res.fun


SOLVER_OPTIONS = {"method": "L-BFGS-B", "options": {"gtol": 1e-12}}


def minimizer_with_options(p):
    # the options spread from a dict (before: refused, PB501 on res.x, where the same call
    # with the keywords written out was differentiated)
    res = optimize.minimize(objective, np.zeros(2), args=(p,), **SOLVER_OPTIONS)
    return res.x[0] ** 2 + res.fun


def minimizer_exact(p):
    """What minimizer_value computes, with the minimizer found to full precision (the
    optimizer's own stopping makes its finite differences too coarse to check against)."""
    z = optimize.brentq(lambda z: 2 * (z - p[0]) + 4 * p[1] * z ** 3, -5, 5, xtol=1e-15)
    return z ** 2 + (z - p[0]) ** 2 + p[1] * z ** 4


@pytest.mark.parametrize("f", [minimizer_value, minimizer_with_options])
def test_minimizer_in_a_parameter(f):
    p = np.array([0.7, 0.3])
    want = fd_grad(minimizer_exact, (p,))
    np.testing.assert_allclose(pullback.grad(f)(p), want, rtol=1e-6)
    v = np.array([1.0, -0.5])
    _, tangent = pullback.jvp(f, (p,), (v,))
    np.testing.assert_allclose(tangent, want @ v, rtol=1e-6)
    g = pullback.grad(minimizer_exact)
    want_hv = (g(p + 1e-4 * v) - g(p - 1e-4 * v)) / 2e-4
    np.testing.assert_allclose(pullback.hvp(f)(p, v), want_hv, rtol=1e-4)


def oscillator_list_rhs(p):
    sol = integrate.solve_ivp(
        lambda t, y: [y[1], -p[0] * y[0] - p[1] * y[1]], (0, 2.0), [1.0, 0.0], t_eval=[1.0, 2.0],
        rtol=1e-10, atol=1e-12,
    )
    return np.sum(sol.y[0] ** 2)


def test_solve_ivp_with_a_list_right_hand_side_first_order():
    check_probe(oscillator_list_rhs, np.array([2.0, 0.3]))


@pytest.mark.long  # (the same program is ivp_list of tests/test_ode_list_rhs_second_order.py)
def test_solve_ivp_with_a_list_right_hand_side_second_order():
    check_probe(oscillator_list_rhs, np.array([2.0, 0.3]), second=True)


def cubic_root(p):
    return optimize.brentq(lambda z: z ** 3 + p[0] * z - p[1], -5, 5, xtol=1e-14)


PROBES = {
    "normal_loglik": (normal_loglik, (np.array([0.2, -0.1]),), True),
    "student_t_loglik": (student_t_loglik, (np.array([0.5, 0.2]),), True),
    "gamma_loglik": (gamma_loglik, (np.array([0.5, 0.2]),), True),
    "beta_loglik": (beta_loglik, (np.array([0.5, 0.2]),), True),
    "frozen_normal": (frozen_normal, (np.array([0.2, 1.3]),), True),
    "broadcast_cdf": (broadcast_cdf, (np.array([0.2, -0.4, 0.9]),), True),
    "poisson_loglik": (poisson_loglik, (np.array([0.3, 0.1, -0.2]),), True),
    "exponential_survival": (exponential_survival, (np.array([0.3]),), True),
    "mvn_loglik": (mvn_loglik, (np.array([0.2, -0.3]),), True),
    "lognormal_loglik": (lognormal_loglik, (np.array([0.1, 0.2]),), True),
    "normal_quantiles": (normal_quantiles, (np.array([0.1, 1.2]),), True),
    "binomial_logit": (binomial_logit, (np.array([0.1, -0.3]),), True),
    "heavy_tails": (heavy_tails, (np.array([0.1, -0.3]),), True),
    "gamma_functions": (gamma_functions, (P4,), True),
    "logistic_functions": (logistic_functions, (P4,), True),
    "error_functions": (error_functions, (P4,), True),
    "beta_softmax": (beta_softmax, (P4,), True),
    "theis_drawdown": (theis_drawdown, (np.array([-1.0, -3.0]),), True),
    "count_model": (count_model, (np.array([0.2, 0.5]),), True),
    "slab_flux": (slab_flux, (np.array([0.3, 0.8, 1.5]),), True),
    "trapezoid_either_version": (trapezoid_either_version, (P4,), True),
    "trapezoid_by_statement": (trapezoid_by_statement, (P4,), True),
    "weighted_counts": (weighted_counts, (P4,), True),
    "weighted_counts_minlength": (weighted_counts_minlength, (P4,), True),
    "gp_nll_cho": (gp_nll_cho, (np.array([-1.0, 0.1, -2.0]),), True),
    "gp_nll_triangular": (gp_nll_triangular, (np.array([-1.0, -2.0]),), True),
    "oscillator_end": (oscillator_end, (np.array([2.0, 0.3]),), False),
    # (second order through solve_ivp with t_eval and args: tests/test_ode_list_rhs_second_order
    # by default, this probe's too under pytest --long)
    "oscillator_at_times": (oscillator_at_times, (np.array([2.0, 0.3]),), long_run()),
    "odeint_path": (odeint_path, (np.array([0.7, 1.2]),), True),
    "quad_of_closure": (quad_of_closure, (np.array([0.7, 1.2]),), True),
    "cubic_root": (cubic_root, (np.array([1.0, 2.0]),), True),
}

test_probe, test_float32 = probe_tests(PROBES)


# -- vector outputs ---------------------------------------------------------------------------


def fd_jacobian(f, x, eps=1e-6):
    cols = []
    for k in range(x.size):
        up, down = x.copy(), x.copy()
        up.flat[k] += eps
        down.flat[k] -= eps
        cols.append((np.asarray(f(up)) - np.asarray(f(down))) / (2 * eps))
    return np.stack(cols, axis=-1).reshape(np.shape(f(x)) + x.shape)


def summaries(x):
    return np.array([np.sum(x ** 2), np.prod(x), x[0] * x[2]])


def mirrored(x):
    return np.sin(x) * x[::-1]


def scaled_by_norm(x):
    return np.linalg.norm(x) * x


def spiral(t):
    return np.array([np.cos(t), np.sin(t)]) * t


def gram(X):
    return X @ X.T


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("f", [summaries, mirrored, scaled_by_norm, np.outer])
def test_jacobian_of_vector_outputs(f, mode):
    g = (lambda x: np.outer(x, x)) if f is np.outer else f
    jac = pullback.jacobian(g, mode=mode)(X)
    np.testing.assert_allclose(jac, fd_jacobian(g, X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [mirrored, scaled_by_norm])
def test_hessian_of_vector_outputs(f):
    hess = pullback.hessian(f)(X)
    assert hess.shape == (4, 4, 4)
    want = fd_jacobian(lambda z: pullback.jacobian(f)(z), X, eps=1e-5)
    np.testing.assert_allclose(hess, want, rtol=1e-5, atol=1e-7)


def test_scalar_input_vector_output():
    np.testing.assert_allclose(
        pullback.jacobian(spiral)(0.4), fd_jacobian(lambda z: spiral(z[0]), np.array([0.4]))[:, 0]
    )
    h = pullback.hessian(spiral)(0.4)
    want = fd_jacobian(lambda z: pullback.jacobian(spiral)(z[0]), np.array([0.4]), eps=1e-5)
    np.testing.assert_allclose(h, want[:, 0], rtol=1e-6)


def test_matrix_input_matrix_output():
    M = np.arange(6.0).reshape(2, 3) / 5
    for mode in ("reverse", "forward"):
        np.testing.assert_allclose(pullback.jacobian(gram, mode=mode)(M), fd_jacobian(gram, M))


def with_cumsum(x):
    return np.sum(x ** 2), np.cumsum(x)


def as_dict(x):
    return {"a": np.sum(x), "b": x ** 2}


def test_jacobian_of_tuple_outputs_and_dict_refused():
    total, running = pullback.jacobian(with_cumsum)(X)
    np.testing.assert_allclose(total, 2 * X)
    np.testing.assert_allclose(running, fd_jacobian(lambda z: with_cumsum(z)[1], X))
    with pytest.raises(pullback.ArgumentError, match="vjp"):
        pullback.jacobian(as_dict)(X)


def test_vjp_and_jvp_with_structured_outputs():
    y, back = pullback.vjp(with_cumsum, X)
    (got,) = back((2.0, np.ones(4)))
    np.testing.assert_allclose(got, 4 * X + np.arange(4, 0, -1))
    y, back = pullback.vjp(as_dict, X)
    (got,) = back({"a": 1.0, "b": np.ones(4)})
    np.testing.assert_allclose(got, 1.0 + 2 * X)
    v = np.array([1.0, -1.0, 0.5, 2.0])
    value, tangent = pullback.jvp(as_dict, (X,), (v,))
    np.testing.assert_allclose(tangent["a"], np.sum(v))
    np.testing.assert_allclose(tangent["b"], 2 * X * v)
    value, tangent = pullback.jvp(with_cumsum, (X,), (v,))
    np.testing.assert_allclose(tangent[0], fd_grad(lambda z: with_cumsum(z)[0], (X,)) @ v)
    np.testing.assert_allclose(tangent[1], np.cumsum(v))


def test_jacobian_with_respect_to_two_arguments():
    def scaled(x, s):
        return np.tanh(x) * s

    jx, js = pullback.jacobian(scaled, wrt=(0, 1))(X, 2.0)
    np.testing.assert_allclose(jx, np.diag(2.0 / np.cosh(X) ** 2))
    np.testing.assert_allclose(js, np.tanh(X))
