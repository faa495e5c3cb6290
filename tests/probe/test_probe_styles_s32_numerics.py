"""Probe s32: classic numerical methods written imperatively, as courses, Numerical-Recipes
ports and scientific scripts write them: linear systems and PDE/ODE steppers.

The Thomas algorithm with ``c_``/``d_`` filled in a forward loop and a backward
substitution (the ``map(np.array, (a, b, c, d))`` gist refused where its solution array
is the diagonal's under another name),
Gauss-Seidel / Jacobi / SOR sweeps updating ``u[i]`` in place (neighbours read with
``u[i - 1] if i > 0 else 0.0``, a residual by ``np.concatenate``), LU and Gaussian
elimination by hand (row swaps ``A[[k, p]] = A[[p, k]]``), hand Cholesky and Gram-Schmidt,
power and QR iterations; explicit heat steps with boundary writes, ``np.roll`` stencils,
2-D five-point Laplacians (in place on a copy, and by Gauss-Seidel), Crank-Nicolson
assembled by hand; RK4 with
``k1..k4`` on arrays and on state lists, adaptive loops ``while t < T`` with
``h = min(h, T - t)`` and ``h *= 1.5``, leapfrog/Verlet into preallocated trajectories,
``Y[i + 1] = Y[i] + dt * f(Y[i])``; Kalman filters with ``inv`` and ``solve``. Each
against central differences (probe_harness.py), float64 and float32, with jvp, hvp and
hessian. The second half (roots, interpolation, quadrature, Monte-Carlo):
test_probe_styles_s32_quadrature.py.
"""

# ruff: noqa: B007, B905, E731 - written the way public code is written

import math

import numpy as np
from numerics_s32_helpers import gauss_seidel
from probe_harness import check_refusal, probe_tests


def thomas(d, a=None):
    n = len(d)
    a = np.full(n, -1.0)
    b = np.full(n, 4.0) + d**2
    c = np.full(n, -1.0)
    c_ = np.zeros(n)
    d_ = np.zeros(n)
    c_[0] = c[0] / b[0]
    d_[0] = d[0] / b[0]
    for i in range(1, n):
        m = b[i] - a[i] * c_[i - 1]
        c_[i] = c[i] / m
        d_[i] = (d[i] - a[i] * d_[i - 1]) / m
    x = np.zeros(n)
    x[-1] = d_[-1]
    for i in range(n - 2, -1, -1):
        x[i] = d_[i] - c_[i] * x[i + 1]
    return np.sum(x**2)


def jacobi(b, iters=10):
    n = b.shape[0]
    A = 4.0 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)
    x = np.zeros_like(b)
    D = np.diag(A)
    R = A - np.diagflat(D)
    for k in range(iters):
        x_new = (b - np.dot(R, x)) / D
        if np.linalg.norm(x_new - x, ord=np.inf) < 1e-14:
            break
        x = x_new
    return np.sum(x * b)


def jacobi_genexpr(b):
    n = len(b)
    A = [
        [4.0 if i == j else (-1.0 if abs(i - j) == 1 else 0.0) for j in range(n)] for i in range(n)
    ]
    x = [0.0] * n
    for it in range(12):
        x_new = [0.0] * n
        for i in range(n):
            s = sum(A[i][j] * x[j] for j in range(n) if j != i)
            x_new[i] = (b[i] - s) / A[i][i]
        x = x_new
    return sum(xi**2 for xi in x)


def sor(b, omega=1.3, iters=6):
    n = len(b)
    x = np.zeros(n)
    for it in range(iters):
        for i in range(n):
            sigma = 0.0
            for j in range(n):
                if j != i:
                    aij = -1.0 if abs(i - j) == 1 else 0.0
                    sigma += aij * x[j]
            x[i] = (1 - omega) * x[i] + omega * (b[i] - sigma) / 4.0
    return np.sum(x**3)


def sor_while(b, omega=1.2, tol=1e-10, maxit=200):
    n = len(b)
    x = np.zeros(n)
    r = b.copy()
    it = 0
    while np.linalg.norm(r) > tol and it < maxit:
        for i in range(n):
            s = 0.0
            if i > 0:
                s -= x[i - 1]
            if i < n - 1:
                s -= x[i + 1]
            x[i] = (1 - omega) * x[i] + omega * (b[i] - s) / 3.0
        r = b - (3 * x - np.concatenate(([0.0], x[:-1])) - np.concatenate((x[1:], [0.0])))
        it += 1
    return x @ np.arange(1, n + 1)


def lu_nopivot(a):
    A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]) + np.diag(a)
    A = A.copy()
    n = A.shape[0]
    L = np.eye(n)
    for k in range(n - 1):
        for i in range(k + 1, n):
            L[i, k] = A[i, k] / A[k, k]
            for j in range(k, n):
                A[i, j] = A[i, j] - L[i, k] * A[k, j]
    U = A
    logdet = 0.0
    for i in range(n):
        logdet += np.log(abs(U[i, i]))
    return logdet + np.sum(L)


def lu_rowops(M):
    A = M.copy()
    n = len(A)
    for k in range(n - 1):
        for i in range(k + 1, n):
            f = A[i, k] / A[k, k]
            A[i, k:] -= f * A[k, k:]
            A[i, k] = f
    return np.sum(np.triu(A)) + np.prod(np.diag(A))


def gauss_elim_pivot(b):
    A = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5], [7.0, 8.5, 9.0]])
    b = b.copy()
    n = len(b)
    for k in range(n - 1):
        p = np.argmax(np.abs(A[k:, k])) + k
        if p != k:
            A[[k, p]] = A[[p, k]]
            b[[k, p]] = b[[p, k]]
        for i in range(k + 1, n):
            m = A[i, k] / A[k, k]
            A[i, k:] = A[i, k:] - m * A[k, k:]
            b[i] = b[i] - m * b[k]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - A[i, i + 1 :] @ x[i + 1 :]) / A[i, i]
    return np.sum(x**2)


def back_substitution(b):
    U = np.array([[2.0, 1.0, -1.0], [0.0, 3.0, 0.5], [0.0, 0.0, 1.5]])
    n = len(b)
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - np.dot(U[i, i + 1 :], x[i + 1 :])) / U[i, i]
    return np.sum(x**2)


def cholesky_hand(d):
    A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.3], [0.5, 0.3, 2.0]]) + np.diag(d**2)
    n = len(A)
    L = np.zeros_like(A)
    for i in range(n):
        for j in range(i + 1):
            s = np.sum(L[i, :j] * L[j, :j])
            if i == j:
                L[i, j] = np.sqrt(A[i, i] - s)
            else:
                L[i, j] = (A[i, j] - s) / L[j, j]
    return np.sum(np.log(np.diag(L))) + L[2, 0]


def gram_schmidt(M):
    A = M.copy()
    m, n = A.shape
    Q = np.zeros((m, n))
    R = np.zeros((n, n))
    for j in range(n):
        v = A[:, j].copy()
        for i in range(j):
            R[i, j] = Q[:, i] @ A[:, j]
            v = v - R[i, j] * Q[:, i]
        R[j, j] = np.linalg.norm(v)
        Q[:, j] = v / R[j, j]
    return np.sum(R) + np.sum(Q[:, 0])


def power_iteration(a):
    A = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]]) + np.diag(a)
    v = np.ones(3) / np.sqrt(3)
    for _ in range(60):
        w = A @ v
        v = w / np.linalg.norm(w)
    return v @ A @ v


def qr_algorithm(d):
    A = np.diag(d) + np.array([[0.0, 0.3, 0.1], [0.3, 0.0, 0.2], [0.1, 0.2, 0.0]])
    for _ in range(30):
        Q, R = np.linalg.qr(A)
        A = R @ Q
    return np.sum(np.diag(A) ** 2)


def heat_explicit(u0, r=0.25, steps=10):
    u = u0.copy()
    for n in range(steps):
        u_new = np.empty_like(u)
        u_new[1:-1] = u[1:-1] + r * (u[2:] - 2 * u[1:-1] + u[:-2])
        u_new[0] = u_new[-1] = 0.0
        u = u_new
    return np.sum(u**2)


def roll_advection(u0, c=0.4, steps=6):
    u = u0
    for _ in range(steps):
        u = u - c * (u - np.roll(u, 1)) + 0.1 * (np.roll(u, -1) - 2 * u + np.roll(u, 1))
    return np.sum(u**2)


def laplace_2d(f):
    n = int(round(np.sqrt(f.size)))
    u = f.reshape(n, n).copy()
    for it in range(5):
        lap = np.zeros_like(u)
        lap[1:-1, 1:-1] = (
            u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
        )
        u = u + 0.2 * lap
    return np.sum(u**2)


def poisson_gs_2d(f):
    N = 4
    rhs = f.reshape(N, N)
    u = np.zeros((N + 2, N + 2))
    h2 = (1.0 / (N + 1)) ** 2
    for sweep in range(4):
        for i in range(1, N + 1):
            for j in range(1, N + 1):
                u[i, j] = 0.25 * (
                    u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] + h2 * rhs[i - 1, j - 1]
                )
    return np.sum(u**2) * 1e3


def heat2d_inplace(u0):
    u = u0.reshape(4, 4).copy()
    for _ in range(5):
        un = u.copy()
        u[1:-1, 1:-1] += 0.2 * (
            un[2:, 1:-1] + un[:-2, 1:-1] + un[1:-1, 2:] + un[1:-1, :-2] - 4 * un[1:-1, 1:-1]
        )
    return np.sum(u**3)


def crank_nicolson_dense(u0, r=0.5, steps=4):
    n = len(u0)
    A = np.zeros((n, n))
    B = np.zeros((n, n))
    for i in range(n):
        A[i, i] = 1 + r
        B[i, i] = 1 - r
        if i > 0:
            A[i, i - 1] = -r / 2
            B[i, i - 1] = r / 2
        if i < n - 1:
            A[i, i + 1] = -r / 2
            B[i, i + 1] = r / 2
    u = u0
    for _ in range(steps):
        u = np.linalg.solve(A, B @ u)
    return np.sum(u**2)


def rk4(y0, T=1.0, n=10):
    def f(t, y):
        return np.array([y[1], -np.sin(y[0]) - 0.1 * y[1]])

    h = T / n
    t = 0.0
    y = y0
    ys = [y]
    for i in range(n):
        k1 = f(t, y)
        k2 = f(t + h / 2, y + h / 2 * k1)
        k3 = f(t + h / 2, y + h / 2 * k2)
        k4 = f(t + h, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t = t + h
        ys.append(y)
    Y = np.array(ys)
    return np.sum(Y[:, 0] ** 2) + y[1]


def rk4_list_state(y0):
    def deriv(state):
        x, v = state
        return [v, -x - 0.1 * v**3]

    h = 0.1
    state = list(y0)
    for _ in range(10):
        k1 = deriv(state)
        k2 = deriv([s + 0.5 * h * k for s, k in zip(state, k1)])
        k3 = deriv([s + 0.5 * h * k for s, k in zip(state, k2)])
        k4 = deriv([s + h * k for s, k in zip(state, k3)])
        state = [
            s + h / 6 * (a + 2 * b + 2 * c + d) for s, a, b, c, d in zip(state, k1, k2, k3, k4)
        ]
    return state[0] ** 2 + state[1]


def rk45_adaptive(k):
    t, T = 0.0, 1.0
    y = np.array([1.0, 0.0])
    h = 0.1
    while t < T:
        h = min(h, T - t)
        f = lambda y: np.array([y[1], -k * y[0]])
        k1 = f(y)
        k2 = f(y + h * k1 / 2)
        k3 = f(y + h * k2 / 2)
        k4 = f(y + h * k3)
        y4 = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        y2 = y + h * k2
        err = np.max(np.abs(y4 - y2))
        if err < 1e-3:
            t += h
            y = y4
            h *= 1.5
        else:
            h *= 0.5
    return y[0]


def leapfrog(q0, dt=0.1, steps=12):
    q = q0.copy()
    p = np.zeros_like(q0)
    p = p - 0.5 * dt * (q + 0.1 * q**3)
    for _ in range(steps):
        q = q + dt * p
        p = p - dt * (q + 0.1 * q**3)
    p = p + 0.5 * dt * (q + 0.1 * q**3)
    return 0.5 * np.sum(p**2) + 0.5 * np.sum(q**2)


def verlet_traj(k):
    N = 30
    dt = 0.05
    x = np.zeros(N)
    x[0] = 1.0
    x[1] = 1.0
    for i in range(1, N - 1):
        a = -k * x[i]
        x[i + 1] = 2 * x[i] - x[i - 1] + a * dt**2
    return x[-1]


def lotka_volterra(theta):
    N = 40
    dt = 0.02
    Y = np.empty((N, 2))
    Y[0] = [1.0, 0.5]

    def f(y):
        return np.array(
            [theta[0] * y[0] - theta[1] * y[0] * y[1], -theta[2] * y[1] + theta[3] * y[0] * y[1]]
        )

    for i in range(N - 1):
        Y[i + 1] = Y[i] + dt * f(Y[i])
    return Y[-1, 0] + Y[:, 1].mean()


def adaptive_euler(k, T=1.0):
    t = 0.0
    y = 1.0
    h = 0.13
    while t < T:
        h = min(h, T - t)
        y = y + h * (-k * y + np.sin(t))
        t += h
    return y


def adaptive_rk_embedded(lam, T=2.0, tol=1e-6):
    t, y, h = 0.0, 1.0, 0.1
    while t < T:
        if t + h > T:
            h = T - t
        k1 = -lam * y
        k2 = -lam * (y + h * k1)
        y_euler = y + h * k1
        y_heun = y + 0.5 * h * (k1 + k2)
        err = abs(y_heun - y_euler)
        if err < tol or h < 1e-3:
            y = y_heun
            t = t + h
        h = 0.9 * h * min(2.0, max(0.2, math.sqrt(tol / (err + 1e-30))))
    return y


def shooting(v0):
    y, v = 0.0, v0
    dt = 0.01
    for _ in range(100):
        y, v = y + dt * v, v - dt * 9.81 - dt * 0.1 * v * abs(v)
    return (y - 1.0) ** 2


def kalman(z, q=0.01, r=0.1):
    F = np.array([[1.0, 1.0], [0.0, 1.0]])
    H = np.array([[1.0, 0.0]])
    Q = q * np.eye(2)
    R = np.array([[r]])
    x = np.zeros(2)
    P = np.eye(2)
    I = np.eye(2)
    total = 0.0
    for k in range(len(z)):
        x = F @ x
        P = F @ P @ F.T + Q
        y = z[k] - H @ x
        S = H @ P @ H.T + R
        K = P @ H.T @ np.linalg.inv(S)
        x = x + K @ y
        P = (I - K @ H) @ P
        total = total + x[0] ** 2
    return total + np.trace(P)


def kalman_solve(z):
    A = np.array([[0.9, 0.1], [0.0, 0.95]])
    C = np.eye(2)
    x = np.zeros(2)
    P = np.eye(2)
    ll = 0.0
    for t in range(z.shape[0]):
        x = A @ x
        P = A @ P @ A.T + 0.05 * np.eye(2)
        S = C @ P @ C.T + 0.2 * np.eye(2)
        v = z[t] - C @ x
        ll -= 0.5 * (v @ np.linalg.solve(S, v) + np.log(np.linalg.det(S)))
        K = np.linalg.solve(S, C @ P).T
        x = x + K @ v
        P = P - K @ S @ K.T
    return ll


_r = np.random.default_rng(3)
X5 = np.array([0.3, -0.2, 0.5, 0.1, -0.4])
WAVE = np.sin(np.linspace(0, 3, 7))

PROBES = {
    "thomas": (thomas, (X5,), True),
    "gauss_seidel": (gauss_seidel, (X5,), True),
    "jacobi": (jacobi, (X5,), True),
    "jacobi_genexpr": (jacobi_genexpr, (X5,), True),
    "sor": (sor, (X5,), True),
    "sor_while": (sor_while, (X5,), True),
    "lu_nopivot": (lu_nopivot, (np.array([0.2, 0.1, -0.3]),), True),
    "lu_rowops": (
        lu_rowops,
        (
            np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
            + 0.1 * _r.standard_normal((3, 3)),
        ),
        True,
    ),
    "gauss_elim_pivot": (gauss_elim_pivot, (np.array([1.0, 2.0, -0.5]),), True),
    "back_substitution": (back_substitution, (np.array([1.0, 2.0, -0.5]),), True),
    "cholesky_hand": (cholesky_hand, (np.array([0.5, 0.2, -0.3]),), True),
    "gram_schmidt": (gram_schmidt, (np.eye(3) + 0.3 * _r.standard_normal((3, 3)),), True),
    "power_iteration": (power_iteration, (np.array([0.1, -0.2, 0.3]),), True),
    "qr_algorithm": (qr_algorithm, (np.array([1.0, 2.0, 3.5]),), True),
    "heat_explicit": (heat_explicit, (WAVE,), True),
    "roll_advection": (roll_advection, (np.cos(np.linspace(0, 3, 6)),), True),
    "laplace_2d": (laplace_2d, (_r.standard_normal(16),), True),
    "poisson_gs_2d": (poisson_gs_2d, (_r.standard_normal(16),), True),
    "heat2d_inplace": (heat2d_inplace, (_r.standard_normal(16),), True),
    "crank_nicolson_dense": (crank_nicolson_dense, (np.sin(np.linspace(0, 3, 6)),), True),
    "rk4": (rk4, (np.array([0.5, 0.1]),), True),
    "rk4_list_state": (rk4_list_state, (np.array([0.5, 0.2]),), True),
    "rk45_adaptive": (rk45_adaptive, (2.0,), True),
    "leapfrog": (leapfrog, (np.array([0.4, -0.7, 1.0]),), True),
    "verlet_traj": (verlet_traj, (1.5,), True),
    "lotka_volterra": (lotka_volterra, (np.array([1.1, 0.4, 0.4, 0.1]),), True),
    "adaptive_euler": (adaptive_euler, (0.8,), True),
    "adaptive_rk_embedded": (adaptive_rk_embedded, (1.3,), True),
    "shooting": (shooting, (5.0,), True),
    "kalman": (kalman, (np.array([0.1, 0.5, 0.9, 1.6, 2.1]),), True),
    "kalman_solve": (kalman_solve, (_r.standard_normal((4, 2)),), True),
}

test_probe, test_float32 = probe_tests(PROBES)


def tdma_alias(d):
    n = len(d)
    ac, bc, cc, dc = map(np.array, ([-1.0] * (n - 1), [4.0] * n, [-1.0] * (n - 1), d))
    for it in range(1, n):
        mc = ac[it - 1] / bc[it - 1]
        bc[it] = bc[it] - mc * cc[it - 1]
        dc[it] = dc[it] - mc * dc[it - 1]
    xc = bc  # the gist's solution array is the diagonal's, read on after the writes
    xc[-1] = dc[-1] / bc[-1]
    for il in range(n - 2, -1, -1):
        xc[il] = (dc[il] - cc[il] * xc[il + 1]) / bc[il]
    return np.sum(xc**2)


def rows_kept_by_the_step(y0):
    kept = []

    def f(y):
        kept.append(y)
        return -y

    Y = np.zeros((2, 2))
    Y[0] = y0
    for i in range(3):
        Y[(i + 1) % 2] = Y[i % 2] + 0.1 * f(Y[i % 2])
    return np.sum(Y**2) + np.sum(kept[0])


def test_refused():
    check_refusal(
        tdma_alias,
        X5,
        says=("PB101", "'xc' is bound on line", "to the array of 'bc'", "`xc = bc.copy()`"),
    )
    check_refusal(
        rows_kept_by_the_step,
        np.array([1.0, 0.5]),
        says=("PB101", "from 'Y[i % 2]', a view of the same array", "`Y[i % 2].copy()`"),
    )
