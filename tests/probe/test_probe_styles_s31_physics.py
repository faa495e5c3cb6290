"""Probe: physics, signal processing and geometry code as simulation scripts write it.

N-body forces from broadcast pair differences, spring networks held as lists of
dataclasses, wave and heat stencils on preallocated arrays, velocity Verlet with tuple
state, FIR filters written as double loops, IIR recursions on scalars, ``np.fft`` power
spectra and filters, rotation matrices built from ``np.array`` of scalars, quaternions as
4-vectors multiplied by a helper, Rodrigues' formula with ``np.cross``. Each is
differentiated with respect to its first argument against central differences (and for
most jvp, hvp and the Hessian; float32 where the input is an array), by probe_harness.py.
"""

from dataclasses import dataclass, field

import numpy as np
import numpy.linalg as la
from numpy import cos, sin, sqrt
from numpy import sum as npsum
from probe_harness import probe_tests

G_CONST = 1.0
SOFTENING = 0.05


# -- n-body -----------------------------------------------------------------------------------

def nbody_potential(pos, masses):
    """Pairwise potential from broadcast differences; the diagonal removed by a mask."""
    diff = pos[:, None, :] - pos[None, :, :]
    r2 = npsum(diff ** 2, axis=-1) + SOFTENING ** 2
    inv_r = 1.0 / sqrt(r2)
    np.fill_diagonal(inv_r, 0.0)
    return -0.5 * G_CONST * npsum(masses[:, None] * masses[None, :] * inv_r)


def nbody_accelerations(pos, masses):
    n = pos.shape[0]
    acc = np.zeros_like(pos)
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            d = pos[j] - pos[i]
            r = sqrt(d @ d + SOFTENING ** 2)
            acc[i] += G_CONST * masses[j] * d / r ** 3
    return acc


def nbody_leapfrog(pos0, masses, dt=0.01, steps=8):
    pos = pos0.copy()
    vel = np.zeros_like(pos0)
    for _ in range(steps):
        vel = vel + 0.5 * dt * nbody_accelerations(pos, masses)
        pos = pos + dt * vel
        vel = vel + 0.5 * dt * nbody_accelerations(pos, masses)
    return npsum(pos[:, 0] ** 2) + 0.1 * npsum(vel ** 2)


def nbody_einsum(pos, masses):
    diff = pos[:, np.newaxis] - pos[np.newaxis]
    dist = la.norm(diff + np.eye(len(pos))[..., None], axis=2)
    w = np.einsum("i,j->ij", masses, masses)
    return npsum(np.triu(w / dist, k=1))


# -- springs ----------------------------------------------------------------------------------

@dataclass
class Spring:
    i: int
    j: int
    k: float = 1.0
    rest: float = 1.0


@dataclass
class Network:
    springs: list = field(default_factory=list)
    gravity: float = 0.0

    def energy(self, x):
        e = 0.0
        for s in self.springs:
            d = x[s.j] - x[s.i]
            length = sqrt(npsum(d * d))
            e += 0.5 * s.k * (length - s.rest) ** 2
        return e + self.gravity * npsum(x[:, 1])


NET = Network([Spring(0, 1), Spring(1, 2, 2.0), Spring(2, 0, 0.5, 1.5), Spring(0, 3, 3.0, 0.8)],
              gravity=0.3)


def spring_energy(x):
    return NET.energy(x)


def spring_dynamics(x0, dt=0.02, steps=10):
    """Explicit Euler on the energy's forces written out per spring (no grad inside)."""
    x = x0
    v = np.zeros_like(x0)
    for _ in range(steps):
        f = np.zeros_like(x)
        for s in NET.springs:
            d = x[s.j] - x[s.i]
            length = sqrt(d @ d)
            fvec = s.k * (length - s.rest) * d / length
            f[s.i] = f[s.i] + fvec
            f[s.j] = f[s.j] - fvec
        v = 0.9 * v + dt * f
        x = x + dt * v
    return npsum(x ** 2)


# -- stencils ---------------------------------------------------------------------------------

def wave_leapfrog(u0, c=0.5, steps=12):
    """1-D wave equation, leapfrog on three time levels, fixed ends."""
    u_prev = u0.copy()
    u = u0.copy()
    for _ in range(steps):
        u_next = np.zeros_like(u)
        u_next[1:-1] = 2 * u[1:-1] - u_prev[1:-1] + c ** 2 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u_prev, u = u, u_next
    return npsum(u ** 2)


def heat_roll(u0, alpha=0.2, steps=15):
    """Periodic heat equation with np.roll."""
    u = u0
    for _ in range(steps):
        u = u + alpha * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
    return npsum(u ** 3)


def heat_2d(u0, alpha=0.1, steps=6):
    """2-D heat stencil with a boundary kept by writing the interior of a copy."""
    u = u0.copy()
    for _ in range(steps):
        new = u.copy()
        new[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha * (
            u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])
        u = new
    return npsum(u[1:-1, 1:-1] ** 2)


def heat_alpha(alpha, u0, steps=10):
    """The same stencil differentiated with respect to the diffusivity."""
    u = u0
    for _ in range(steps):
        lap = np.zeros_like(u)
        lap[1:-1] = u[2:] - 2 * u[1:-1] + u[:-2]
        u = u + alpha * lap
    return float(u[len(u) // 2])


def verlet_pendulum(state, g=9.81, dt=0.01, steps=30):
    theta, omega = state[0], state[1]
    for _ in range(steps):
        a = -g * sin(theta)
        theta, omega = theta + dt * omega + 0.5 * dt * dt * a, omega + 0.5 * dt * a
        omega = omega + 0.5 * dt * (-g * sin(theta))
    return theta ** 2 + 0.1 * omega ** 2


# -- signal -----------------------------------------------------------------------------------

def fir_loop(x, h):
    n, m = len(x), len(h)
    y = np.zeros(n)
    for i in range(n):
        for k in range(m):
            if i - k >= 0:
                y[i] += h[k] * x[i - k]
    return npsum(y ** 2)


def fir_taps(h, x):
    """The same filter differentiated with respect to the taps, output kept in a list."""
    out = []
    for i in range(len(h) - 1, len(x)):
        acc = 0.0
        for k in range(len(h)):
            acc = acc + h[k] * x[i - k]
        out.append(acc)
    return npsum(np.array(out) ** 2)


def iir_scalar(a, x):
    """First-order low-pass y[n] = a*y[n-1] + (1-a)*x[n] on Python floats."""
    y = 0.0
    total = 0.0
    for xn in x:
        y = a * y + (1 - a) * xn
        total += y * y
    return total


def convolve_modes(x, h):
    full = np.convolve(x, h)
    same = np.convolve(x, h, mode="same")
    valid = np.convolve(h, x, "valid")
    return npsum(full ** 2) + npsum(same * x) + npsum(np.sin(valid))


def power_spectrum(x):
    X = np.fft.rfft(x * np.hanning(len(x)))
    p = np.abs(X) ** 2 / len(x)
    return npsum(p[1:4]) + np.log(p[0] + 1.0)


def fft_lowpass(x, keep=3):
    X = np.fft.fft(x)
    mask = np.zeros(len(x))
    mask[:keep] = 1.0
    mask[-keep + 1:] = 1.0
    y = np.fft.ifft(X * mask).real
    return npsum((y - x) ** 2) + npsum(y ** 3)


def autocorrelation(x, lags=3):
    xc = x - x.mean()
    var = np.dot(xc, xc)
    return sum((np.dot(xc[:-k], xc[k:]) / var) ** 2 for k in range(1, lags + 1))


# -- geometry ---------------------------------------------------------------------------------

def rot2(theta):
    c, s = cos(theta), sin(theta)
    return np.array([[c, -s], [s, c]])


def rotate_points(theta, pts):
    target = pts[::-1] + 0.3
    moved = pts @ rot2(theta).T
    return npsum((moved - target) ** 2)


def euler_matrix(angles):
    a, b, c = angles
    rx = np.array([[1, 0, 0], [0, cos(a), -sin(a)], [0, sin(a), cos(a)]])
    ry = np.array([[cos(b), 0, sin(b)], [0, 1, 0], [-sin(b), 0, cos(b)]])
    rz = np.array([[cos(c), -sin(c), 0], [sin(c), cos(c), 0], [0, 0, 1]])
    return rz @ ry @ rx


def euler_fit(angles, pts):
    r = euler_matrix(angles)
    return npsum((pts @ r.T - pts[:, ::-1]) ** 2)


def qmul(q, r):
    w0, x0, y0, z0 = q
    w1, x1, y1, z1 = r
    return np.array([w0 * w1 - x0 * x1 - y0 * y1 - z0 * z1,
                     w0 * x1 + x0 * w1 + y0 * z1 - z0 * y1,
                     w0 * y1 - x0 * z1 + y0 * w1 + z0 * x1,
                     w0 * z1 + x0 * y1 - y0 * x1 + z0 * w1])


def quaternion_rotate(q, v):
    q = q / la.norm(q)
    conj = q * np.array([1.0, -1.0, -1.0, -1.0])
    p = np.concatenate([[0.0], v])
    out = qmul(qmul(q, p), conj)
    return npsum(out[1:] * np.array([1.0, 2.0, 3.0]))


def rodrigues(axis_angle, v):
    theta = la.norm(axis_angle)
    k = axis_angle / theta
    v_rot = v * cos(theta) + np.cross(k, v) * sin(theta) + k * np.dot(k, v) * (1 - cos(theta))
    return npsum(v_rot ** 2 * np.arange(1, 4))


def pairwise_mds_stress(X, D):
    d = sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) + 1e-12)
    iu = np.triu_indices(len(X), 1)
    return npsum((d[iu] - D[iu]) ** 2)


def triangle_areas(verts, faces):
    a = verts[faces[:, 0]]
    b = verts[faces[:, 1]]
    c = verts[faces[:, 2]]
    n = np.cross(b - a, c - a)
    return npsum(0.5 * la.norm(n, axis=1))


_r = np.random.default_rng(3131)
POS = _r.standard_normal((4, 2))
MASS = np.array([1.0, 2.0, 0.5, 1.5])
X4 = np.array([[0.0, 0.0], [1.1, 0.1], [0.4, 0.9], [-0.2, 0.7]])
U8 = np.sin(np.linspace(0, np.pi, 8)) + 0.1 * _r.standard_normal(8)
U2D = _r.random((5, 5))
SIG = _r.standard_normal(12)
H3 = np.array([0.5, 0.3, 0.2])
PTS = _r.standard_normal((5, 3))
VERTS = _r.standard_normal((5, 3))
FACES = np.array([[0, 1, 2], [1, 2, 3], [2, 3, 4], [0, 3, 4]])
D5 = np.abs(_r.standard_normal((5, 5))) + 0.5
D5 = D5 + D5.T

PROBES = {
    "nbody_potential": (nbody_potential, (POS, MASS), True),
    "nbody_leapfrog": (nbody_leapfrog, (POS, MASS), False),
    "nbody_masses": (lambda m, p: nbody_potential(p, m), (MASS, POS), True),
    "nbody_einsum": (nbody_einsum, (POS, MASS), True),
    "spring_energy": (spring_energy, (X4,), True),
    "spring_dynamics": (spring_dynamics, (X4,), False),
    "wave_leapfrog": (wave_leapfrog, (U8,), True),
    "heat_roll": (heat_roll, (U8,), True),
    "heat_2d": (heat_2d, (U2D,), True),
    "heat_alpha": (heat_alpha, (0.2, U8), True),
    "verlet_pendulum": (verlet_pendulum, (np.array([0.4, 0.1]),), True),
    "fir_loop": (fir_loop, (SIG, H3), True),
    "fir_taps": (fir_taps, (H3, SIG), True),
    "iir_scalar": (iir_scalar, (0.7, SIG), True),
    "convolve_modes": (convolve_modes, (SIG, H3), True),
    "power_spectrum": (power_spectrum, (SIG,), True),
    "fft_lowpass": (fft_lowpass, (SIG,), True),
    "autocorrelation": (autocorrelation, (SIG,), True),
    "rotate_points": (rotate_points, (0.4, PTS[:, :2]), True),
    "euler_fit": (euler_fit, (np.array([0.1, -0.4, 0.7]), PTS), True),
    "quaternion_rotate": (quaternion_rotate, (np.array([0.9, 0.1, -0.3, 0.2]), PTS[0]), True),
    "rodrigues": (rodrigues, (np.array([0.3, -0.5, 0.8]), PTS[1]), True),
    "pairwise_mds_stress": (pairwise_mds_stress, (PTS[:, :2], D5), True),
    "triangle_areas": (triangle_areas, (VERTS, FACES), True),
}

test_probe, test_float32 = probe_tests(PROBES)
