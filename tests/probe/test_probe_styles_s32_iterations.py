"""Probe s32, third part (with test_probe_styles_s32_numerics.py and _quadrature.py):
iterations as scripts write them.

A 2-D Jacobi sweep ``while err > tol and it < maxit`` on ``u_old = u.copy()``, Burgers'
equation by upwind differences with periodic ends, conjugate gradients with ``x += alpha * p``
and a residual ``break``, Householder QR with ``x = R[k:, k]`` read up before
``R[k:, :] -= ...``, inverse and power iterations (``while True`` with a ``break``), a heat
step by ``matrix_power``, a spectral derivative by FFT, a Jacobian by forward differences
into ``J[:, j]``; ODE loops appending to ``t``/``y`` lists, a midpoint rule with
``t, y = 0.0, y0`` and ``t += h``, a bouncing ball with an event, a pendulum in a state
dict; Newton with lambdas, fixed-point and Steffensen iterations; Lagrange and Chebyshev
interpolation, adaptive trapezoid by a recursive nested function, Simpson by strided
sums; Monte-Carlo with ``np.random.default_rng(0)`` inside (a weighted disc, antithetic
paths, a noisy AR(1) in a loop and by ``cumsum``); a heat history ``u[n + 1, 1:-1] = ...``,
states stored by column ``y[:, i + 1] = y[:, i] + h * f(t[i], y[:, i])``, RK4 on a float
parameter with ``y += ...`` and ``x += h``, growth by ``np.append``/``np.vstack``,
``for t in ts[:-1]``, ``while np.linalg.norm(g) > tol``, a Taylor ``expm`` with ``S += term``,
Gauss-Newton by ``lstsq`` with ``dp, *_ =``, a tridiagonal system by ``solve_banded``. Each
against central differences (probe_harness.py), float64 and float32, with jvp, hvp and
hessian.
"""

# ruff: noqa: B007, B905, E731 - written the way public code is written

import math

import numpy as np
from numerics_s32_helpers import householder
from probe_harness import probe_tests


def jacobi_2d_while(f):
    N = 4
    u = np.zeros((N + 2, N + 2))
    rhs = f.reshape(N, N)
    err = 1.0
    it = 0
    while err > 1e-8 and it < 200:
        u_old = u.copy()
        u[1:-1, 1:-1] = 0.25 * (
            u_old[:-2, 1:-1] + u_old[2:, 1:-1] + u_old[1:-1, :-2] + u_old[1:-1, 2:] + 0.01 * rhs
        )
        err = np.max(np.abs(u - u_old))
        it += 1
    return np.sum(u)


def burgers_upwind(u0, nu=0.05, steps=10):
    dx, dt = 0.1, 0.02
    u = u0.copy()
    for n in range(steps):
        un = u.copy()
        for i in range(1, len(u) - 1):
            u[i] = (
                un[i]
                - un[i] * dt / dx * (un[i] - un[i - 1])
                + nu * dt / dx**2 * (un[i + 1] - 2 * un[i] + un[i - 1])
            )
        u[0] = u[-2]
        u[-1] = u[1]
    return np.sum(u**2)


def conjugate_gradient(b):
    A = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 0.5], [0.0, 0.5, 2.0]])
    x = np.zeros_like(b)
    r = b - A @ x
    p = r.copy()
    rs_old = r @ r
    for i in range(len(b)):
        Ap = A @ p
        alpha = rs_old / (p @ Ap)
        x += alpha * p
        r -= alpha * Ap
        rs_new = r @ r
        if np.sqrt(rs_new) < 1e-14:
            break
        p = r + (rs_new / rs_old) * p
        rs_old = rs_new
    return np.sum(x**2)


def inverse_iteration(d):
    A = np.diag(d) + 0.1
    mu = 0.9
    x = np.ones(len(d))
    for _ in range(20):
        x = np.linalg.solve(A - mu * np.eye(len(d)), x)
        x /= np.linalg.norm(x)
    return x @ A @ x


def power_method_while(a):
    A = np.array([[2.0, a], [a, 1.0]])
    v = np.array([1.0, 0.0])
    lam_old = 0.0
    while True:
        w = A.dot(v)
        lam = np.linalg.norm(w)
        v = w / lam
        if abs(lam - lam_old) < 1e-12:
            break
        lam_old = lam
    return lam


def heat_matrix_power(u0):
    n = len(u0)
    r = 0.3
    A = np.eye(n) * (1 - 2 * r)
    for i in range(n - 1):
        A[i, i + 1] = r
        A[i + 1, i] = r
    u = np.linalg.matrix_power(A, 5) @ u0
    return np.sum(u**2)


def spectral_derivative(u):
    n = len(u)
    k = np.fft.fftfreq(n, d=1.0 / n) * 2 * np.pi / n
    du = np.real(np.fft.ifft(1j * k * np.fft.fft(u)))
    return np.sum(du**2)


def finite_diff_jacobian(p):
    def F(x):
        return np.array([x[0] ** 2 + p[0] * x[1], np.sin(x[0]) * p[1] + x[1] ** 3])

    x0 = np.array([0.5, 0.3])
    J = np.zeros((2, 2))
    h = 1e-5
    f0 = F(x0)
    for j in range(2):
        xp = x0.copy()
        xp[j] += h
        J[:, j] = (F(xp) - f0) / h
    return np.linalg.det(J)


def euler_list_append(k):
    t = [0.0]
    y = [1.0]
    dt = 0.1
    while t[-1] < 1.0 - 1e-12:
        y.append(y[-1] + dt * (-k * y[-1]))
        t.append(t[-1] + dt)
    return y[-1] + sum(y) * 0.01


def midpoint_ode_tuple(y0):
    def f(t, y):
        return np.array([y[1], -y[0]])

    t, y = 0.0, y0
    h = 0.1
    traj = []
    while t < 1.0:
        ymid = y + 0.5 * h * f(t, y)
        y = y + h * f(t + 0.5 * h, ymid)
        t += h
        traj.append(y)
    traj = np.array(traj)
    return np.sum(traj[:, 0])


def ode_with_events(v0):
    y, v, t, dt = 0.0, v0, 0.0, 0.01
    bounces = 0
    while t < 2.0:
        v -= 9.81 * dt
        y += v * dt
        if y < 0:
            y = -y
            v = -0.9 * v
            bounces += 1
        t += dt
    return y + 0.1 * v


def semi_implicit_euler_dict(q0):
    state = {"q": q0, "p": 0.0}
    dt = 0.05
    for _ in range(40):
        state["p"] -= dt * math.sin(state["q"])
        state["q"] += dt * state["p"]
    return state["q"] + state["p"] ** 2


def newton_raphson_generic(a):
    f = lambda x: x**3 - 2 * x - a
    df = lambda x: 3 * x**2 - 2
    x = 2.0
    for i in range(100):
        x_new = x - f(x) / df(x)
        if abs(x_new - x) < 1e-12:
            x = x_new
            break
        x = x_new
    return x


def fixed_point(c):
    x = 0.5
    while True:
        x_new = math.cos(c * x)
        if abs(x_new - x) < 1e-12:
            break
        x = x_new
    return x_new


def steffensen_style(c):
    x = 1.0
    for _ in range(20):
        fx = x * x - c
        if fx == 0:
            break
        g = (x + fx) ** 2 - c
        x = x - fx * fx / (g - fx)
    return x


def lagrange_interp(y):
    xs = np.linspace(0, 1, len(y))
    x = 0.37
    total = 0.0
    for i in range(len(xs)):
        L = 1.0
        for j in range(len(xs)):
            if i != j:
                L *= (x - xs[j]) / (xs[i] - xs[j])
        total += y[i] * L
    return total


def chebyshev_nodes_interp(c):
    n = 6
    k = np.arange(n)
    x = np.cos((2 * k + 1) * np.pi / (2 * n))
    y = np.exp(c * x)
    coef = np.zeros(n)
    for j in range(n):
        coef[j] = 2.0 / n * np.sum(y * np.cos(j * np.arccos(x)))
    coef[0] /= 2
    return np.sum(coef * np.arange(1, n + 1))


def trapz_adaptive(a):
    f = lambda t: math.exp(-a * t) * math.sin(t)

    def integrate(lo, hi, depth):
        mid = 0.5 * (lo + hi)
        whole = 0.5 * (hi - lo) * (f(lo) + f(hi))
        halves = 0.25 * (hi - lo) * (f(lo) + 2 * f(mid) + f(hi))
        if depth == 0 or abs(whole - halves) < 1e-6:
            return halves
        return integrate(lo, mid, depth - 1) + integrate(mid, hi, depth - 1)

    return integrate(0.0, 2.0, 4)


def cumulative_simpson_vec(w):
    x = np.linspace(0, 1, 9)
    y = np.sin(w[0] * x) + w[1] * x**2
    h = x[1] - x[0]
    S = h / 3 * (y[0] + 4 * np.sum(y[1:-1:2]) + 2 * np.sum(y[2:-1:2]) + y[-1])
    return S


def mc_pi_style(r):
    rng = np.random.default_rng(0)
    pts = rng.random((200, 2)) * 2 - 1
    d2 = np.sum(pts**2, axis=1)
    w = np.exp(-d2 / r**2)
    return np.mean(w)


def antithetic(sigma):
    rng = np.random.default_rng(0)
    z = rng.standard_normal(100)
    z = np.concatenate([z, -z])
    ST = 100 * np.exp(-0.5 * sigma**2 + sigma * z)
    payoff = np.maximum(ST - 95.0, 0)
    return payoff.mean()


def random_walk_loop(p):
    rng = np.random.default_rng(0)
    x = np.zeros(30)
    for i in range(1, 30):
        x[i] = x[i - 1] + p[0] * rng.standard_normal() - p[1] * x[i - 1]
    return np.var(x)


def ar1_cumsum(phi):
    rng = np.random.default_rng(0)
    eps = rng.standard_normal(40)
    x = np.empty_like(eps)
    x[0] = eps[0]
    for t in range(1, len(eps)):
        x[t] = phi * x[t - 1] + eps[t]
    return np.mean(np.cumsum(x) ** 2) / 100


def heat_history(u0, r=0.3, nt=6):
    nx = len(u0)
    u = np.zeros((nt, nx))
    u[0, :] = u0
    for n in range(nt - 1):
        u[n + 1, 1:-1] = u[n, 1:-1] + r * (u[n, 2:] - 2 * u[n, 1:-1] + u[n, :-2])
    return np.sum(u[-1] ** 2) + np.sum(u[:, 2])


def column_states(y0):
    def f(t, y):
        return np.array([y[1], -y[0] - 0.2 * y[1] * t])

    n = 20
    t = np.linspace(0, 2, n)
    y = np.zeros((2, n))
    y[:, 0] = y0
    for i in range(n - 1):
        h = t[i + 1] - t[i]
        y[:, i + 1] = y[:, i] + h * f(t[i], y[:, i])
    return np.sum(y[0] ** 2)


def rk4_scalar_param(x0):
    def f(x, y):
        return -2 * x * y

    x, y, h = x0, 1.0, 0.05
    for _ in range(10):
        k1 = h * f(x, y)
        k2 = h * f(x + h / 2, y + k1 / 2)
        k3 = h * f(x + h / 2, y + k2 / 2)
        k4 = h * f(x + h, y + k3)
        y += (k1 + 2 * k2 + 2 * k3 + k4) / 6
        x += h
    return y


def euler_np_append(k):
    ys = np.array([1.0])
    y = 1.0
    for _ in range(15):
        y = y - 0.1 * k * y
        ys = np.append(ys, y)
    return np.sum(ys)


def heun_ts(k):
    ts = np.arange(0, 1.0, 0.1)
    y = 1.0
    for t in ts[:-1]:
        f1 = -k * y + np.sin(t)
        yp = y + 0.1 * f1
        f2 = -k * yp + np.sin(t + 0.1)
        y = y + 0.05 * (f1 + f2)
    return y


def vstack_growth(x0):
    traj = x0[None, :]
    x = x0
    for _ in range(5):
        x = x + 0.1 * np.array([x[1], -x[0]])
        traj = np.vstack([traj, x])
    return np.sum(traj**2)


def gd_norm_while(a):
    x = np.zeros(2)
    g = np.ones(2)
    it = 0
    while np.linalg.norm(g) > 1e-8 and it < 300:
        g = 2 * (x - a) + 0.1 * np.sin(x)
        x -= 0.2 * g
        it += 1
    return np.sum(x**2)


def expm_taylor(a):
    A = np.array([[0.0, a[0]], [-a[1], 0.0]])
    S = np.eye(2)
    term = np.eye(2)
    for k in range(1, 15):
        term = term @ A / k
        S += term
    return np.sum(S)


def gauss_newton_lstsq(p0):
    t = np.linspace(0, 1, 8)
    y = 2.0 * np.exp(-1.3 * t)
    p = p0.copy()
    for _ in range(6):
        r = p[0] * np.exp(-p[1] * t) - y
        J = np.column_stack([np.exp(-p[1] * t), -p[0] * t * np.exp(-p[1] * t)])
        dp, *_ = np.linalg.lstsq(J, -r, rcond=None)
        p = p + dp
    return np.sum(p**2)


def newton_param_inplace(x):
    a = 2.0
    for _ in range(30):
        fx = x**3 - a * x - 1
        if abs(fx) < 1e-14:
            break
        x -= fx / (3 * x**2 - a)
    return x


def stencil_loop_2d(f):
    n = 4
    u = f.reshape(n, n)
    out = np.zeros_like(u)
    for i in range(1, n - 1):
        for j in range(1, n - 1):
            out[i, j] = u[i + 1, j] + u[i - 1, j] + u[i, j + 1] + u[i, j - 1] - 4 * u[i, j]
    return np.sum(out**2)


def tridiag_solve_banded(d):
    from scipy.linalg import solve_banded

    n = len(d)
    ab = np.zeros((3, n))
    ab[0, 1:] = -1.0
    ab[1, :] = 4.0 + d**2
    ab[2, :-1] = -1.0
    x = solve_banded((1, 1), ab, np.ones(n))
    return np.sum(x**2)


_r = np.random.default_rng(7)

PROBES = {
    "jacobi_2d_while": (jacobi_2d_while, (_r.standard_normal(16),), True),
    "burgers_upwind": (burgers_upwind, (0.5 + 0.3 * np.sin(np.linspace(0, 3, 8)),), True),
    "conjugate_gradient": (conjugate_gradient, (np.array([1.0, -0.5, 0.3]),), True),
    "householder": (householder, (np.eye(3) + 0.3 * _r.standard_normal((3, 3)),), True),
    "inverse_iteration": (inverse_iteration, (np.array([1.0, 2.0, 3.0]),), True),
    "power_method_while": (power_method_while, (0.4,), True),
    "heat_matrix_power": (heat_matrix_power, (np.sin(np.linspace(0, 3, 6)),), True),
    "spectral_derivative": (spectral_derivative, (np.sin(np.linspace(0, 6, 8)),), True),
    "finite_diff_jacobian": (finite_diff_jacobian, (np.array([0.7, 1.3]),), True),
    "euler_list_append": (euler_list_append, (0.7,), True),
    "midpoint_ode_tuple": (midpoint_ode_tuple, (np.array([0.5, 0.2]),), True),
    "ode_with_events": (ode_with_events, (3.0,), True),
    "semi_implicit_euler_dict": (semi_implicit_euler_dict, (0.9,), True),
    "newton_raphson_generic": (newton_raphson_generic, (1.0,), True),
    "fixed_point": (fixed_point, (0.8,), True),
    "steffensen_style": (steffensen_style, (2.0,), True),
    "lagrange_interp": (lagrange_interp, (np.cos(np.linspace(0, 2, 5)),), True),
    "chebyshev_nodes_interp": (chebyshev_nodes_interp, (0.7,), True),
    "trapz_adaptive": (trapz_adaptive, (0.6,), True),
    "cumulative_simpson_vec": (cumulative_simpson_vec, (np.array([1.3, 0.4]),), True),
    "mc_pi_style": (mc_pi_style, (0.8,), True),
    "antithetic": (antithetic, (0.25,), True),
    "random_walk_loop": (random_walk_loop, (np.array([0.5, 0.1]),), True),
    "ar1_cumsum": (ar1_cumsum, (0.6,), True),
    "heat_history": (heat_history, (np.sin(np.linspace(0, 3, 7)),), True),
    "column_states": (column_states, (np.array([0.5, 0.2]),), True),
    "rk4_scalar_param": (rk4_scalar_param, (0.3,), True),
    "euler_np_append": (euler_np_append, (0.7,), True),
    "heun_ts": (heun_ts, (0.9,), True),
    "vstack_growth": (vstack_growth, (np.array([0.5, 0.2]),), True),
    "gd_norm_while": (gd_norm_while, (np.array([0.5, -0.2]),), True),
    "expm_taylor": (expm_taylor, (np.array([0.5, 0.8]),), True),
    "gauss_newton_lstsq": (gauss_newton_lstsq, (np.array([1.5, 1.0]),), True),
    "newton_param_inplace": (newton_param_inplace, (1.5,), True),
    "stencil_loop_2d": (stencil_loop_2d, (_r.standard_normal(16),), True),
    "tridiag_solve_banded": (tridiag_solve_banded, (np.array([0.3, -0.2, 0.5, 0.1]),), True),
}

test_probe, test_float32 = probe_tests(PROBES)
