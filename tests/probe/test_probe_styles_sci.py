"""Probe: physics steps and numerical routines in the styles of course scripts.

Explicit diffusion steps (element loops, slice updates, 2-d with boundary resets), a
spring by explicit Euler into preallocated arrays, an n-body RK4 integrator class taking
the force method of another class, predator-prey with ``max`` clamps, the Thomas
tridiagonal solver, Griewank by list comprehensions, Horner by a loop and by ``reduce``,
Simpson's rule by generators, a loop and slices, and implicit schemes through
``np.linalg.solve`` and ``inv``. Checked against central differences (probe_harness.py);
refusals with their reason and place, and the fixes the messages name are shown to work.
"""

import math
from functools import reduce

import numpy as np
from probe_harness import probe_tests, refusal_test
from scipy.linalg import cho_factor, cho_solve


def heat_points_in_place(u, cells=12, steps=5, dt=0.004, kappa=0.06):
    dx = 2 / (cells - 1)
    for _ in range(steps):
        old = u.copy()
        for j in range(1, cells - 1):
            u[j] = old[j] + kappa * dt / dx ** 2 * (old[j + 1] - 2 * old[j] + old[j - 1])
    return np.sum(u ** 2)


def heat_points_copied(u, cells=12, steps=5, dt=0.004, kappa=0.06):
    u = u.copy()
    dx = 2 / (cells - 1)
    for _ in range(steps):
        old = u.copy()
        for j in range(1, cells - 1):
            u[j] = old[j] + kappa * dt / dx ** 2 * (old[j + 1] - 2 * old[j] + old[j - 1])
    return np.sum(u ** 2)


def heat_slices(kappa, cells=21, steps=20):
    dx = 2.0 / (cells - 1)
    dt = 0.2 * dx ** 2 / 0.3
    u = np.ones(cells)
    u[int(0.5 / dx):int(1 / dx + 1)] = 2.0  # a raised block as the start
    for _ in range(steps):
        old = u.copy()
        u[1:-1] = old[1:-1] + kappa * dt / dx ** 2 * (old[2:] - 2 * old[1:-1] + old[:-2])
    return np.sum(u ** 2)


def heat_plane(kappa, nx=11, ny=11, steps=10):
    dx, dy = 2.0 / (nx - 1), 2.0 / (ny - 1)
    dt = 0.25 * dx * dy
    u = np.ones((ny, nx))
    u[int(0.5 / dy):int(1 / dy + 1), int(0.5 / dx):int(1 / dx + 1)] = 2.0
    for _ in range(steps):
        old = u.copy()
        mid = old[1:-1, 1:-1]
        u[1:-1, 1:-1] = (mid + kappa * dt / dx ** 2 * (old[1:-1, 2:] - 2 * mid + old[1:-1, :-2])
                         + kappa * dt / dy ** 2 * (old[2:, 1:-1] - 2 * mid + old[:-2, 1:-1]))
        u[0, :] = 1.0
        u[-1, :] = 1.0
        u[:, 0] = 1.0
        u[:, -1] = 1.0
    return np.sum(u ** 2)


def bouncing_spring(stiff, mass=1.0, v_start=10.0, horizon=2.0, grav=9.8):
    dt = 1 / 60
    n = int(round(horizon / dt))
    clock = np.zeros(n)
    pos = np.zeros(n)
    vel = np.zeros(n)
    vel[0] = v_start
    for i in range(n - 1):
        acc = (-stiff * pos[i] - mass * grav) / mass
        vel[i + 1] = vel[i] + acc * dt
        pos[i + 1] = pos[i] + vel[i + 1] * dt  # semi-implicit: the new velocity moves
        clock[i + 1] = clock[i] + dt
    return pos[-1] + 0.1 * vel[-1]


class PairForces:
    def __init__(self, strength=1.0, soft=0.1):
        self.strength = strength
        self.soft = soft

    def accel(self, state, masses):
        pos = state["pos"]
        sep = pos[None, :, :] - pos[:, None, :]
        r2 = np.sum(sep ** 2, axis=2) + self.soft ** 2
        r3 = r2 * np.sqrt(r2)
        np.fill_diagonal(r3, np.inf)  # no self-force
        pull = self.strength * masses[None, :] / r3
        return np.sum(pull[:, :, None] * sep, axis=1)


class RungeKutta4:
    def __init__(self, accel):
        self.accel = accel

    def advance(self, state, masses, h):
        x, v = state["pos"], state["vel"]

        def rates(p, q):
            return q, self.accel({"pos": p, "vel": q}, masses)

        a_x, a_v = rates(x, v)
        b_x, b_v = rates(x + 0.5 * h * a_x, v + 0.5 * h * a_v)
        c_x, c_v = rates(x + 0.5 * h * b_x, v + 0.5 * h * b_v)
        d_x, d_v = rates(x + h * c_x, v + h * c_v)
        return {"pos": x + h / 6 * (a_x + 2 * b_x + 2 * c_x + d_x),
                "vel": v + h / 6 * (a_v + 2 * b_v + 2 * c_v + d_v)}


def bodies_spread(v_start, x_start, masses, h=0.05, steps=4):
    stepper = RungeKutta4(PairForces(1.0, 0.1).accel)
    state = {"pos": x_start, "vel": v_start}
    for _ in range(steps):
        state = stepper.advance(state, masses, h)
    return np.sum(state["pos"] ** 2)


def prey_predator(growth, horizon=5.0, dt=0.1, eat=0.15, convert=0.05, die=0.3,
                  prey0=5.0, pred0=3.0):
    n = int(horizon / dt)
    prey = np.zeros(n)
    pred = np.zeros(n)
    prey[0], pred[0] = prey0, pred0
    for i in range(n - 1):
        d_prey = (growth * prey[i] - eat * prey[i] * pred[i]) * dt
        d_pred = (convert * prey[i] * pred[i] - die * pred[i]) * dt
        prey[i + 1] = max(prey[i] + d_prey, 0)
        pred[i + 1] = max(pred[i] + d_pred, 0)
    return np.linspace(0, horizon, n), prey, pred


def prey_at_end(growth):
    _, prey, pred = prey_predator(growth)
    return prey[-1] + 0.5 * pred[-1]


def thomas(lower, diag, upper, rhs):
    size = len(rhs)
    lo, di, up, rh = map(np.array, (lower, diag, upper, rhs))
    for k in range(1, size):
        ratio = lo[k - 1] / di[k - 1]
        di[k] = di[k] - ratio * up[k - 1]
        rh[k] = rh[k] - ratio * rh[k - 1]
    sol = di
    sol[-1] = rh[-1] / di[-1]
    for k in range(size - 2, -1, -1):
        sol[k] = (rh[k] - up[k] * sol[k + 1]) / di[k]
    return sol


def thomas_by_rhs(rhs, lower, diag, upper, w):
    return np.dot(w, thomas(lower, diag, upper, rhs))


def thomas_copied(lower, diag, upper, rhs):
    size = len(rhs)
    lo, di, up, rh = map(np.array, (lower, diag, upper, rhs))
    di = di.copy()
    rh = rh.copy()
    for k in range(1, size):
        ratio = lo[k - 1] / di[k - 1]
        di[k] = di[k] - ratio * up[k - 1]
        rh[k] = rh[k] - ratio * rh[k - 1]
    sol = di.copy()
    sol[-1] = rh[-1] / di[-1]
    for k in range(size - 2, -1, -1):
        sol[k] = (rh[k] - up[k] * sol[k + 1]) / di[k]
    return sol


def thomas_copied_by_rhs(rhs, lower, diag, upper, w):
    return np.dot(w, thomas_copied(lower, diag, upper, rhs))


def thomas_copied_by_diag(diag, lower, upper, rhs, w):
    return np.dot(w, thomas_copied(lower, diag, upper, rhs))


def griewank(xs):
    bowl = np.sum([v * v for v in xs]) / 4000.0
    ripple = np.prod([np.cos(v / np.sqrt(k)) for k, v in enumerate(xs, 1)])
    return bowl - ripple + 1


def horner_loop(coeffs, x):
    acc = 0
    for c in reversed(coeffs):
        acc = acc * x + c
    return acc


def horner_loop_by_x(x, coeffs):
    return horner_loop(coeffs, x)


def horner_fold(coeffs, x):
    return reduce(lambda acc, c: acc * x + c, reversed(coeffs), 0)


def horner_fold_by_x(x, coeffs):
    return horner_fold(coeffs, x)


def rbf_gram(points, length):
    gaps = np.zeros((len(points), len(points)))
    gaps[:] = points
    gaps.T[:] -= points.T  # a write through the transpose view: refused (PB102)
    return np.exp(-0.5 * gaps ** 2 / length ** 2)


def gp_evidence(gram, targets, jitter=1e-10):
    chol, low = cho_factor(gram + jitter * np.eye(gram.shape[0]))
    logdet_half = np.sum(np.log(np.maximum(np.diagonal(chol), 1e-200)))
    alpha = cho_solve((chol, low), targets)
    return -0.5 * (np.dot(alpha, alpha) + logdet_half)


def gp_evidence_by_length(length, points, targets):
    return gp_evidence(rbf_gram(points, length) + 0.1 * np.eye(len(points)), targets)


def simpson_gen(fn, lo, hi, n):
    h = (hi - lo) / n
    odd = sum(fn(lo + (2 * k + 1) * h) for k in range(n // 2))
    even = sum(fn(lo + (2 * k + 2) * h) for k in range(n // 2 - 1))
    return (fn(lo) + fn(hi) + 4 * odd + 2 * even) * h / 3


def simpson_gen_by_freq(freq):
    return simpson_gen(lambda t: math.cos(freq * t), 0, math.pi / 2, 20)


def simpson_gen_by_end(end):
    return simpson_gen(lambda t: 2 * t ** 3 - 5 * t ** 2 + 3 * t + 1, 0, end, 10)


def simpson_panels(lo, hi, panels, fn):
    h = (hi - lo) / panels / 2.0
    total = 0.0
    for k in range(panels):
        left = lo + 2.0 * k * h
        total = total + 2.0 * h * (fn(left) + 4.0 * fn(left + h) + fn(left + 2 * h)) / 6.0
    return total


def simpson_panels_by_freq(freq):
    return simpson_panels(0.0, 1.0, 8, lambda t: np.sin(freq * t) ** 2)


def simpson_slices(fn, lo, hi, n=100):
    if n % 2 == 1:
        n += 1  # augmented on an int parameter: rebinds, as in Python
    grid = np.linspace(lo, hi, n + 1)
    y = fn(grid)
    h = (hi - lo) / n
    return h / 3 * (y[0] + 4 * np.sum(y[1:n:2]) + 2 * np.sum(y[2:n:2]) + y[n])


def simpson_slices_by_end(end):
    return simpson_slices(np.exp, 0.0, end, 21)


def simpson_slices_fixed(fn, lo, hi, n=100):
    if n % 2 == 1:
        n = n + 1
    grid = np.linspace(lo, hi, n + 1)
    y = fn(grid)
    h = (hi - lo) / n
    return h / 3 * (y[0] + 4 * np.sum(y[1:n:2]) + 2 * np.sum(y[2:n:2]) + y[n])


def simpson_slices_fixed_by_end(end):
    return simpson_slices_fixed(np.exp, 0.0, end, 21)


def backward_euler_rod(dt, dx, t_end, length, diff, start):
    s = diff * dt / dx ** 2
    m = len(np.arange(0, length + dx, dx))
    rows = len(np.arange(0, t_end + dt, dt))
    mat = (np.diag([1 + 2 * s] * (m - 1)) + np.diag([-s] * (m - 2), 1)
           + np.diag([-s] * (m - 2), -1))
    mat[m - 2, m - 3] = -2 * s  # insulated right end
    u = np.zeros([rows, m])
    u[0, :] = start
    u[:, 0] = np.zeros(rows)
    for n in range(1, rows):
        u[n, 1:m] = np.linalg.solve(mat, u[n - 1, 1:m])
    return u


def rod_by_diff(diff, start):
    return np.sum(backward_euler_rod(0.01, 0.25, 0.05, 1.0, diff, start)[-1] ** 2)


def rod_by_start(start, diff):
    return np.sum(backward_euler_rod(0.01, 0.25, 0.05, 1.0, diff, start)[-1] ** 2)


def ring_crank_nicolson(dt, cells=12, steps=6, dx=1.0, diff=0.5, theta=0.5):
    r = diff * dt / dx ** 2
    mat = ((1 + 2 * r * theta) * np.eye(cells) - r * theta * np.eye(cells, k=1)
           - r * theta * np.eye(cells, k=-1))
    mat[0, -1] = -r * theta  # periodic: the ends touch
    mat[-1, 0] = -r * theta
    step = np.linalg.inv(mat)
    hist = np.zeros((cells, steps))
    hist[cells // 2, 0] = 1.0
    for k in range(steps - 1):
        hist[:, k + 1] = step.dot(hist[:, k])
    return hist


def ring_peak(dt):
    hist = ring_crank_nicolson(dt)
    return np.sum(hist[:, -1] ** 2) + hist[6, -1]


_g = np.random.default_rng(23)
RHS, LOWER, UPPER = np.array([3.0, 4, 5, 6]), np.array([3.0, 1, 3]), np.array([2.0, 4.0, 5.0])
DIAG, WTS = np.array([10.0, 10.0, 7.0, 4.0]), np.array([1.0, -2, 3, 0.5])
GRID = np.sort(_g.uniform(0, 3, 6))
BODIES = _g.standard_normal((6, 2))
COEFFS = (-11.0, 6.0, -3.0, 5.0)
START = np.sin(np.linspace(0, np.pi, 5))

PROBES = {
    "heat_points_copied": (heat_points_copied, (np.linspace(0, 1, 12) ** 2,), True),
    "heat_slices": (heat_slices, (0.3,), True),
    "heat_plane": (heat_plane, (0.8,), False),
    "bouncing_spring": (bouncing_spring, (100.0,), True),
    "bodies_spread": (bodies_spread, (0.1 * BODIES[:3], BODIES[3:], np.array([1.0, 0.5, 2.0])),
                      False),
    "prey_at_end": (prey_at_end, (0.3,), True),
    "rod_by_diff": (rod_by_diff, (0.3, START), True),
    "rod_by_start": (rod_by_start, (START, 0.3), True),
    "ring_peak": (ring_peak, (0.5,), True),
    "thomas_copied_by_rhs": (thomas_copied_by_rhs, (RHS, LOWER, DIAG, UPPER, WTS), True),
    "thomas_copied_by_diag": (thomas_copied_by_diag, (DIAG, LOWER, UPPER, RHS, WTS), True),
    "griewank": (griewank, (np.array([1.5, -2.0, 0.7, 3.1]),), True),
    "horner_loop_coeffs": (horner_loop, (np.array(COEFFS), 3.0), False),
    "horner_loop_by_x": (horner_loop_by_x, (0.7, COEFFS), True),
    "horner_fold_coeffs": (horner_fold, (np.array(COEFFS), 3.0), False),
    "horner_fold_by_x": (horner_fold_by_x, (0.7, COEFFS), True),
    "simpson_gen_by_freq": (simpson_gen_by_freq, (1.3,), True),
    "simpson_gen_by_end": (simpson_gen_by_end, (2.0,), False),
    "simpson_panels_by_freq": (simpson_panels_by_freq, (2.0,), True),
    "simpson_slices_fixed_by_end": (simpson_slices_fixed_by_end, (1.5,), True),
    "simpson_slices_by_end": (simpson_slices_by_end, (1.5,), True),
}


test_probe, test_float32 = probe_tests(PROBES)


# Refused with reason and place (the fixes the messages name work above): a write into the
# argument's array; writes into copies made by `map(np.array, ...)`, which pullback does not
# prove new; a write through a transpose view.
REFUSED = {
    "heat_points_in_place": (heat_points_in_place, (np.linspace(0, 1, 12) ** 2,),
                             ("PB101", "u[j] = old[j]",
                              "write `u = u.copy()` before the first write")),
    "thomas_by_rhs": (thomas_by_rhs, (RHS, LOWER, DIAG, UPPER, WTS),
                      # (the writes into di, map(np.array, ...)'s new arrays, run; the
                      # solution written into di under another name is refused)
                      ("PB101", "sol[-1] = rh[-1] / di[-1]", "`sol = di.copy()`")),
    "gp_evidence_by_length": (gp_evidence_by_length, (0.8, GRID, np.sin(GRID)),
                              ("PB102", "gaps.T[:] -= points.T", "a view of 'gaps'")),
}


test_refused = refusal_test(REFUSED)
