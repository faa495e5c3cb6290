"""Probe: scientific code in the styles simulation scripts write it.

Finite-difference and finite-volume stencils with slices and ``np.roll``, time loops that
write into a preallocated array (``u[1:-1] = ...``, ``out[i, :] = ...``), ``np.einsum``
contractions, ``scipy.integrate`` (``solve_ivp``, ``quad``, ``odeint``) with the parameters
in ``args``, and ``scipy.optimize`` solutions (``root``, ``brentq``, ``minimize``)
differentiated through their optimality conditions; back substitution, augmented slice
writes, masked stores, ``np.add.at``, a fixed-point ``while True`` loop with ``break``,
implicit Euler steps and Newton iterations. Gradients (and for some jvp, hvp and
the Hessian) are checked against central differences (probe_harness.py).
"""

import numpy as np
from probe_harness import probe_tests
from scipy import integrate, optimize


def laplacian_roll(u):
    return np.roll(u, 1) + np.roll(u, -1) - 2.0 * u


def heat_roll(u0, steps=8, r=0.2):
    u = u0.copy()
    for _ in range(steps):
        u = u + r * laplacian_roll(u)
    return np.sum(u ** 3)


def heat_prealloc(u0, steps=6, r=0.25):
    # the whole history in a preallocated table, row by row
    hist = np.zeros((steps + 1, u0.size))
    hist[0] = u0
    for n in range(steps):
        hist[n + 1, 1:-1] = hist[n, 1:-1] + r * (hist[n, 2:] - 2 * hist[n, 1:-1] + hist[n, :-2])
        hist[n + 1, 0] = hist[n + 1, 1]
        hist[n + 1, -1] = hist[n + 1, -2]
    return np.sum(hist[-1] ** 2) + 0.1 * np.sum(hist[:, 3])


def wave_leapfrog(c, n=16, steps=10, dt=0.05):
    x = np.linspace(0, 1, n)
    dx = x[1] - x[0]
    prev = np.exp(-40 * (x - 0.5) ** 2)
    cur = prev.copy()
    coef = (c * dt / dx) ** 2
    for _ in range(steps):
        nxt = np.zeros(n)
        nxt[1:-1] = 2 * cur[1:-1] - prev[1:-1] + coef * (cur[2:] - 2 * cur[1:-1] + cur[:-2])
        prev, cur = cur, nxt
    return np.sum(cur ** 2)


def upwind_flux(u0, vel=0.7, dx=0.1, dt=0.05, steps=6):
    u = np.array(u0, dtype=float)
    for _ in range(steps):
        flux = vel * u
        u[1:] = u[1:] - dt / dx * (flux[1:] - flux[:-1])
    return np.sum(u * np.arange(u.size))


def burgers_fv(u0, steps=5, dt=0.02, dx=0.1):
    # Godunov-like Rusanov flux, periodic through np.roll
    u = u0
    for _ in range(steps):
        ur = np.roll(u, -1)
        f_l = 0.5 * u ** 2
        f_r = 0.5 * ur ** 2
        a = np.maximum(np.abs(u), np.abs(ur))
        flux = 0.5 * (f_l + f_r) - 0.5 * a * (ur - u)
        u = u - dt / dx * (flux - np.roll(flux, 1))
    return np.sum(u ** 2)


def poisson_jacobi(src, iters=15, h=0.1):
    n = src.shape[0]
    phi = np.zeros((n, n))
    for _ in range(iters):
        new = phi.copy()
        new[1:-1, 1:-1] = 0.25 * (phi[2:, 1:-1] + phi[:-2, 1:-1] + phi[1:-1, 2:]
                                  + phi[1:-1, :-2] - h * h * src[1:-1, 1:-1])
        phi = new
    return np.sum(phi * src)


def rows_filled(w, xs):
    out = np.empty((len(xs), w.size))
    for i, x in enumerate(xs):
        out[i, :] = np.tanh(w * x)
    return out.sum()


def cols_filled(w, xs):
    out = np.zeros((w.size, len(xs)))
    for j in range(len(xs)):
        out[:, j] = w ** 2 * xs[j] + np.sin(w)
    return np.sum(out ** 2)


def gradient_energy(field, dx=0.1):
    gx, gy = np.gradient(field, dx)
    return 0.5 * np.sum(gx ** 2 + gy ** 2)


def central_diff_slices(f, dx=0.2):
    d = (f[2:] - f[:-2]) / (2 * dx)
    d2 = (f[2:] - 2 * f[1:-1] + f[:-2]) / dx ** 2
    return np.sum(d ** 2) + 0.1 * np.sum(d2 ** 2)


def einsum_bilinear(W, x, y):
    return np.einsum("i,ij,j->", x, W, y) ** 2


def einsum_batch_attention(q, k, v):
    s = np.einsum("bqd,bkd->bqk", q, k)
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p = p / p.sum(axis=-1, keepdims=True)
    return np.einsum("bqk,bkd->bqd", p, v).sum()


def einsum_trace_chain(A, B):
    return np.einsum("ij,jk,ki", A, B, A) + np.einsum("ii", A @ A)


def einsum_outer_norm(u, v):
    M = np.einsum("i,j->ij", u, v)
    return np.einsum("ij,ij->", M, M)


def decay_rhs(t, y, k1, k2):
    a, b = y
    return [-k1 * a, k1 * a - k2 * b]


def ivp_final_b(rates):
    sol = integrate.solve_ivp(decay_rhs, (0.0, 2.0), [1.0, 0.0], args=(rates[0], rates[1]),
                              rtol=1e-10, atol=1e-12)
    return sol.y[1, -1]


def ivp_initial(y0, k):
    sol = integrate.solve_ivp(lambda t, y: -k * y + np.sin(t), [0, 1.5], y0, rtol=1e-10,
                              atol=1e-12)
    return np.sum(sol.y[:, -1] ** 2)


def pendulum(y, t, g, length):
    theta, omega = y
    return [omega, -(g / length) * np.sin(theta)]


def odeint_length(length):
    ts = np.linspace(0.0, 2.0, 11)
    traj = integrate.odeint(pendulum, [0.4, 0.0], ts, args=(9.81, length), rtol=1e-10,
                            atol=1e-12)
    return np.sum(traj[:, 0] ** 2)


def integrand(t, a, b):
    return np.exp(-a * t) * np.cos(b * t)


def quad_params(ab):
    val, _ = integrate.quad(integrand, 0.0, 3.0, args=(ab[0], ab[1]))
    return val


def quad_upper(upper, a):
    return integrate.quad(lambda t: np.sqrt(1 + a * t * t), 0.0, upper)[0]


def residual(z, p):
    return [z[0] ** 3 + p[0] * z[0] - z[1], z[1] - p[1] * np.tanh(z[0]) - 0.3]


def root_param(p):
    sol = optimize.root(residual, np.array([0.5, 0.5]), args=(p,), tol=1e-12)
    return sol.x[0] + 2 * sol.x[1]


def kepler(ecc, mean_anom=1.1):
    ecc_anom = optimize.brentq(lambda e, m, k: e - k * np.sin(e) - m, 0.0, 2 * np.pi,
                               args=(mean_anom, ecc), xtol=1e-14)
    return np.cos(ecc_anom)


def ridge_objective(w, X, y, lam):
    # value and gradient together (jac=True): the optimum is then exact enough for the
    # finite differences of the validation loss (with SciPy's own differences it is not)
    r = X @ w - y
    return r @ r + lam * w @ w, 2.0 * X.T @ r + 2.0 * lam * w


def ridge_fit_loss(lam, X, y, X_val, y_val):
    res = optimize.minimize(ridge_objective, np.zeros(X.shape[1]), args=(X, y, lam),
                            jac=True, method="BFGS", options={"gtol": 1e-12})
    return np.sum((X_val @ res.x - y_val) ** 2)


def back_substitution(b, U):
    n = len(b)
    x = np.zeros(n)
    for i in reversed(range(n)):
        x[i] = (b[i] - U[i, i + 1:] @ x[i + 1:]) / U[i, i]
    return np.sum(x ** 2)

def aug_slice_stencil(u0, steps=4, r=0.2):
    u = u0.copy()
    for _ in range(steps):
        lap = np.zeros_like(u)
        lap[1:-1] += u[2:] + u[:-2]
        lap[1:-1] -= 2 * u[1:-1]
        u += r * lap
    return np.sum(u ** 3)

def masked_clip(x):
    y = x * 2.0
    y[y > 1.0] = 1.0
    return np.sum(y ** 2)

def fixed_point(a, tol=1e-12):
    x = 0.5
    it = 0
    while True:
        new = np.cos(a * x)
        it += 1
        if abs(new - x) < tol or it > 200:
            break
        x = new
    return new

def scatter_add(w, idx):
    out = np.zeros(4)
    np.add.at(out, idx, w ** 2)
    return np.sum(np.sin(out))

def rows_augmented(w, xs):
    out = np.zeros((len(xs), w.size))
    for i in range(len(xs)):
        out[i, :] += w * xs[i]
        out[i] *= 1.0 + xs[i]
    return np.sum(out ** 2)

def implicit_euler(k, n=5, steps=4, dt=0.1):
    A = np.eye(n) * (1 + 2 * k * dt) - k * dt * (np.eye(n, k=1) + np.eye(n, k=-1))
    u = np.linspace(0, 1, n) ** 2
    for _ in range(steps):
        u = np.linalg.solve(A, u)
    return u @ u

def newton_sqrt(a):
    x = a
    for _ in range(30):
        x = 0.5 * (x + a / x)
    return x

class Counter:
    # a count on a class, kept across calls: no gradient flows through it
    calls = 0

def with_class_counter(x):
    Counter.calls += 1
    return np.sum(x ** 2)


def cumsum_flux(u):
    # jvp was silently wrong (np.diff taken as linear with its prepend) and grad refused
    # the keyword, before probe4's fix
    flux = np.diff(u, prepend=u[0]) * 0.3
    return np.sum(np.cumsum(flux) ** 2)


_g = np.random.default_rng(11)
U0 = np.exp(-((np.linspace(0, 1, 12) - 0.4) ** 2) / 0.02)
SRC = _g.standard_normal((7, 7))
XS = np.linspace(-1, 1, 5)
Xr = _g.standard_normal((12, 3))
yr = Xr @ np.array([0.5, -1.0, 0.3]) + 0.1 * _g.standard_normal(12)

PROBES = {
    "heat_roll": (heat_roll, (U0,), True),
    "heat_prealloc": (heat_prealloc, (U0,), True),
    "wave_leapfrog": (wave_leapfrog, (0.8,), True),
    "upwind_flux": (upwind_flux, (U0,), True),
    "burgers_fv": (burgers_fv, (U0 + 0.1,), False),
    "poisson_jacobi": (poisson_jacobi, (SRC,), True),
    "rows_filled": (rows_filled, (np.array([0.3, -0.5, 1.2]), XS), True),
    "cols_filled": (cols_filled, (np.array([0.3, -0.5, 1.2]), XS), True),
    "gradient_energy": (gradient_energy, (SRC,), True),
    "central_diff_slices": (central_diff_slices, (U0,), True),
    "einsum_bilinear": (einsum_bilinear, (SRC[:3, :4], XS[:3], XS[1:]), True),
    "einsum_batch_attention": (einsum_batch_attention,
                               (_g.standard_normal((2, 3, 4)), _g.standard_normal((2, 5, 4)),
                                _g.standard_normal((2, 5, 4))), False),
    "einsum_trace_chain": (einsum_trace_chain, (SRC[:3, :3], SRC[3:6, 3:6]), True),
    "einsum_outer_norm": (einsum_outer_norm, (XS, XS[:3] + 0.5), True),
    "ivp_final_b": (ivp_final_b, (np.array([1.3, 0.6]),), False),
    "ivp_initial": (ivp_initial, (np.array([1.0, -0.5]), 0.7), False),
    "odeint_length": (odeint_length, (1.3,), False),
    "quad_params": (quad_params, (np.array([0.6, 1.7]),), True),
    "quad_upper": (quad_upper, (1.4, 0.5), True),
    "root_param": (root_param, (np.array([1.2, 0.8]),), False),
    "kepler": (kepler, (0.3,), True),
    "ridge_fit_loss": (ridge_fit_loss, (0.7, Xr[:8], yr[:8], Xr[8:], yr[8:]), False),
    "back_substitution": (back_substitution, (np.array([1.0, 2.0, -1.0]),
                                              np.triu(np.ones((3, 3))) + np.eye(3)), True),
    "aug_slice_stencil": (aug_slice_stencil, (np.linspace(0, 1, 8) ** 2,), True),
    "masked_clip": (masked_clip, (np.array([0.2, 0.7, -0.3, 0.1]),), True),
    "fixed_point": (fixed_point, (0.8,), True),
    "scatter_add": (scatter_add, (np.array([0.3, -0.5, 1.2]), np.array([0, 2, 0])), True),
    "rows_augmented": (rows_augmented, (np.array([0.3, -0.5, 1.2]), np.array([0.5, -1.0])),
                       True),
    "implicit_euler": (implicit_euler, (0.6,), True),
    "newton_sqrt": (newton_sqrt, (2.0,), True),
    "with_class_counter": (with_class_counter, (np.array([0.3, 0.4]),), True),
    "cumsum_flux": (cumsum_flux, (np.linspace(0, 1, 6) ** 2,), True),
}


test_probe, test_float32 = probe_tests(PROBES)
