"""Probe s32, second half (the first: test_probe_styles_s32_numerics.py): roots,
interpolation, quadrature and Monte-Carlo written imperatively.

Newton iterations with a tolerance ``break`` (scalar, vectorized Kepler, a 2x2 system by
``solve``), bisection then regula falsi, the secant method with ``x0, x1 = x1, x2``, a
golden-section search, gradient descent in a ``while`` loop; natural cubic spline
coefficients by the textbook recurrences and by a hand-assembled ``solve``, Horner's rule,
Clenshaw's recurrence, Chebyshev ``T[k] = 2*x*T[k-1] - T[k-2]`` into a preallocated array
and Legendre into a list, Neville's table and Newton's divided differences by overlapping
slice writes; Simpson by hand, Romberg and Richardson tables ``R[i, j] = ...``,
Gauss-Legendre by ``leggauss``; Monte-Carlo with ``np.random.default_rng(0)`` inside the
function (no gradient through the generator, values through the samples), ``np.cumsum``
random walks, geometric Brownian paths, Euler-Maruyama and a Brownian bridge. Each against
central differences (probe_harness.py), float64 and float32, with jvp, hvp and hessian.
"""

# ruff: noqa: B007, B905, E731 - written the way public code is written

import math

import numpy as np
from probe_harness import probe_tests


def newton_sqrt(a, tol=1e-12, maxit=50):
    x = a
    for i in range(maxit):
        fx = x * x - a
        dx = fx / (2 * x)
        x = x - dx
        if abs(dx) < tol:
            break
    return x


def newton_kepler(M, e=0.3):
    E = M.copy()
    for _ in range(30):
        f = E - e * np.sin(E) - M
        fp = 1 - e * np.cos(E)
        step = f / fp
        E = E - step
        if np.max(np.abs(step)) < 1e-13:
            break
    return np.sum(np.sin(E))


def newton_system(p):
    x = np.array([1.0, 1.0])
    for it in range(50):
        F = np.array([x[0] ** 2 + x[1] ** 2 - p[0], x[0] - x[1] * p[1]])
        J = np.array([[2 * x[0], 2 * x[1]], [1.0, -p[1]]])
        dx = np.linalg.solve(J, -F)
        x += dx
        if np.linalg.norm(dx) < 1e-13:
            break
    return x[0] * x[1]


def bisection_root(c):
    lo, hi = 0.0, 3.0
    while hi - lo > 1e-3:
        mid = 0.5 * (lo + hi)
        if mid**3 - c > 0:
            hi = mid
        else:
            lo = mid
    flo, fhi = lo**3 - c, hi**3 - c
    return lo - flo * (hi - lo) / (fhi - flo)


def secant(c):
    x0, x1 = 0.5, 2.0
    for _ in range(40):
        f0 = x0**3 - c
        f1 = x1**3 - c
        if abs(f1 - f0) < 1e-15:
            break
        x2 = x1 - f1 * (x1 - x0) / (f1 - f0)
        x0, x1 = x1, x2
        if abs(x1 - x0) < 1e-13:
            break
    return x1


def golden_section(c):
    gr = (math.sqrt(5) - 1) / 2
    lo, hi = -3.0, 3.0
    f = lambda t: (t - 0.5) ** 2 + c * t**4
    x1 = hi - gr * (hi - lo)
    x2 = lo + gr * (hi - lo)
    while abs(hi - lo) > 1e-5:
        if f(x1) < f(x2):
            hi = x2
        else:
            lo = x1
        x1 = hi - gr * (hi - lo)
        x2 = lo + gr * (hi - lo)
    return f(0.5 * (lo + hi))


def gd_while(a):
    x = 0.0
    it = 0
    g = 1.0
    while abs(g) > 1e-10 and it < 500:
        g = 2 * (x - a) + 0.3 * math.sin(x)
        x = x - 0.2 * g
        it += 1
    return x


def natural_spline(y):
    n = len(y) - 1
    x = np.linspace(0.0, 1.0, n + 1)
    h = np.diff(x)
    alpha = np.zeros(n + 1)
    for i in range(1, n):
        alpha[i] = 3 / h[i] * (y[i + 1] - y[i]) - 3 / h[i - 1] * (y[i] - y[i - 1])
    l = np.ones(n + 1)
    mu = np.zeros(n + 1)
    z = np.zeros(n + 1)
    for i in range(1, n):
        l[i] = 2 * (x[i + 1] - x[i - 1]) - h[i - 1] * mu[i - 1]
        mu[i] = h[i] / l[i]
        z[i] = (alpha[i] - h[i - 1] * z[i - 1]) / l[i]
    c = np.zeros(n + 1)
    b = np.zeros(n)
    d = np.zeros(n)
    for j in range(n - 1, -1, -1):
        c[j] = z[j] - mu[j] * c[j + 1]
        b[j] = (y[j + 1] - y[j]) / h[j] - h[j] * (c[j + 1] + 2 * c[j]) / 3
        d[j] = (c[j + 1] - c[j]) / (3 * h[j])
    return np.sum(b**2) + np.sum(c[:-1] * d)


def spline_eval_loop(y):
    xs = np.linspace(0, 1, len(y))
    n = len(y)
    h = xs[1] - xs[0]
    A = np.zeros((n, n))
    rhs = np.zeros(n)
    A[0, 0] = A[-1, -1] = 1.0
    for i in range(1, n - 1):
        A[i, i - 1], A[i, i], A[i, i + 1] = h, 4 * h, h
        rhs[i] = 3 / h * (y[i + 1] - 2 * y[i] + y[i - 1])
    c = np.linalg.solve(A, rhs)
    t = 0.43
    i = min(int(t / h), n - 2)
    dx = t - xs[i]
    b = (y[i + 1] - y[i]) / h - h * (2 * c[i] + c[i + 1]) / 3
    d = (c[i + 1] - c[i]) / (3 * h)
    return y[i] + b * dx + c[i] * dx**2 + d * dx**3


def horner(coeffs, x=0.7):
    result = 0.0
    for a in reversed(coeffs):
        result = result * x + a
    return result


def clenshaw(c, x=0.3):
    b1, b2 = 0.0, 0.0
    for k in range(len(c) - 1, 0, -1):
        b1, b2 = 2 * x * b1 - b2 + c[k], b1
    return x * b1 - b2 + c[0]


def chebyshev(x, n=6):
    T = np.zeros((n, len(x)))
    T[0] = 1.0
    T[1] = x
    for k in range(2, n):
        T[k] = 2 * x * T[k - 1] - T[k - 2]
    coef = np.arange(1, n + 1) / n
    return np.sum(coef @ T)


def legendre(x, n=5):
    P = [np.ones_like(x), x]
    for k in range(1, n):
        P.append(((2 * k + 1) * x * P[k] - k * P[k - 1]) / (k + 1))
    return np.sum(P[-1] ** 2 + P[-2])


def neville(y, x=0.37):
    xs = np.linspace(0, 1, len(y))
    n = len(y)
    P = y.copy()
    for k in range(1, n):
        P[: n - k] = ((x - xs[k:]) * P[: n - k] + (xs[: n - k] - x) * P[1 : n - k + 1]) / (
            xs[: n - k] - xs[k:]
        )
    return P[0]


def divided_differences(y):
    x = np.linspace(0.0, 2.0, len(y))
    n = len(y)
    coef = y.copy()
    for j in range(1, n):
        coef[j:] = (coef[j:] - coef[j - 1 : -1]) / (x[j:] - x[: n - j])
    t = 0.9
    p = coef[-1]
    for k in range(n - 2, -1, -1):
        p = p * (t - x[k]) + coef[k]
    return p + np.sum(coef**2)


def simpson(a):
    def f(t):
        return np.exp(-a * t * t)

    N = 10
    lo, hi = 0.0, 2.0
    h = (hi - lo) / N
    s = f(lo) + f(hi)
    for i in range(1, N):
        if i % 2 == 1:
            s += 4 * f(lo + i * h)
        else:
            s += 2 * f(lo + i * h)
    return s * h / 3


def romberg(a, levels=4):
    R = np.zeros((levels, levels))
    lo, hi = 0.0, 1.0
    h = hi - lo
    R[0, 0] = 0.5 * h * (np.exp(a * lo) + np.exp(a * hi))
    for i in range(1, levels):
        h = h / 2
        s = 0.0
        for k in range(1, 2**i, 2):
            s += np.exp(a * (lo + k * h))
        R[i, 0] = 0.5 * R[i - 1, 0] + h * s
        for j in range(1, i + 1):
            R[i, j] = R[i, j - 1] + (R[i, j - 1] - R[i - 1, j - 1]) / (4**j - 1)
    return R[levels - 1, levels - 1]


def richardson_derivative(x0):
    def f(t):
        return np.sin(t) * np.exp(0.5 * t)

    D = np.zeros((4, 4))
    h = 0.4
    for i in range(4):
        D[i, 0] = (f(x0 + h) - f(x0 - h)) / (2 * h)
        for j in range(1, i + 1):
            D[i, j] = D[i, j - 1] + (D[i, j - 1] - D[i - 1, j - 1]) / (4**j - 1)
        h /= 2
    return D[-1, -1]


def gauss_legendre(a):
    nodes, weights = np.polynomial.legendre.leggauss(6)
    lo, hi = 0.0, a
    t = 0.5 * (hi - lo) * nodes + 0.5 * (hi + lo)
    return 0.5 * (hi - lo) * np.sum(weights * np.exp(-(t**2)))


def monte_carlo(theta, n=200):
    rng = np.random.default_rng(0)
    z = rng.standard_normal(n)
    samples = theta[0] + theta[1] * z
    return np.mean(np.sin(samples) ** 2)


def random_walk(drift):
    rng = np.random.default_rng(0)
    steps = rng.normal(size=(50,))
    path = np.cumsum(drift[0] + drift[1] * steps)
    return np.mean(path**2) / 100


def gbm_paths(sigma):
    rng = np.random.default_rng(0)
    n_paths, n_steps = 20, 8
    dt = 1.0 / n_steps
    S = np.full(n_paths, 100.0)
    for t in range(n_steps):
        Z = rng.standard_normal(n_paths)
        S = S * np.exp((0.05 - 0.5 * sigma**2) * dt + sigma * np.sqrt(dt) * Z)
    return np.mean(np.maximum(S - 100.0, 0.0))


def euler_maruyama(theta):
    rng = np.random.default_rng(0)
    n, dt = 50, 0.02
    x = np.empty(n + 1)
    x[0] = 1.0
    dW = rng.normal(0.0, np.sqrt(dt), n)
    for i in range(n):
        x[i + 1] = x[i] + theta[0] * (theta[1] - x[i]) * dt + 0.3 * dW[i]
    return np.mean(x)


def brownian_bridge(s):
    rng = np.random.default_rng(0)
    t = np.linspace(0, 1, 21)
    W = np.concatenate([[0.0], np.cumsum(rng.standard_normal(20) * np.sqrt(np.diff(t)))])
    B = s * (W - t * W[-1])
    return np.sum(B**2)


def mc_importance(mu):
    rng = np.random.default_rng(0)
    total = 0.0
    N = 100
    for i in range(N):
        u = rng.uniform()
        total += np.exp(-((u - mu) ** 2))
    return total / N


CURVE = np.cos(np.linspace(0, 2, 5))

PROBES = {
    "newton_sqrt": (newton_sqrt, (2.0,), True),
    "newton_kepler": (newton_kepler, (np.array([0.3, 1.2, 2.5]),), True),
    "newton_system": (newton_system, (np.array([2.0, 0.7]),), True),
    "bisection_root": (bisection_root, (2.0,), True),
    "secant": (secant, (2.0,), True),
    # the bracket moves in steps: its second derivative is zero where finite differences
    # of the gradient see the steps
    "golden_section": (golden_section, (0.2,), False),
    "gd_while": (gd_while, (0.8,), True),
    "natural_spline": (natural_spline, (np.sin(np.linspace(0, 2, 6)),), True),
    "spline_eval_loop": (spline_eval_loop, (np.sin(np.linspace(0, 2, 6)),), True),
    "horner": (horner, (np.array([1.0, -0.5, 0.3, 2.0]),), True),
    "clenshaw": (clenshaw, (np.array([1.0, 0.5, -0.3, 0.2]),), True),
    "chebyshev": (chebyshev, (np.array([0.2, -0.6, 0.9]),), True),
    "legendre": (legendre, (np.array([0.2, -0.6, 0.9]),), True),
    "neville": (neville, (CURVE,), True),
    "divided_differences": (divided_differences, (CURVE,), True),
    "simpson": (simpson, (0.7,), True),
    "romberg": (romberg, (0.6,), True),
    "richardson_derivative": (richardson_derivative, (0.4,), True),
    "gauss_legendre": (gauss_legendre, (1.2,), True),
    "monte_carlo": (monte_carlo, (np.array([0.3, 0.8]),), True),
    "random_walk": (random_walk, (np.array([0.1, 0.5]),), True),
    "gbm_paths": (gbm_paths, (0.25,), True),
    "euler_maruyama": (euler_maruyama, (np.array([0.8, 0.3]),), True),
    "brownian_bridge": (brownian_bridge, (1.3,), True),
    "mc_importance": (mc_importance, (0.3,), True),
}

test_probe, test_float32 = probe_tests(PROBES)
