# ruff: noqa: B006, B007, B008, B905 - written the way public code is written
"""Probe: physics and geometry code written the way public repositories write it.

Lennard-Jones energies (double loop, broadcasting, np.triu_indices), spring networks,
N-body leapfrog, rotations and quaternions, ray-sphere intersection, soft-body energies.
Each gradient (and for a third jvp, hvp and the Hessian) is checked against central finite
differences of the function itself.
"""

import math

import numpy as np
import pytest
from probe_harness import check_probe

EPSILON = 1.0
SIGMA = 1.0
G = 1.0


def lj_double_loop(pos, eps=EPSILON, sig=SIGMA):
    n = len(pos)
    energy = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            r = np.linalg.norm(pos[i] - pos[j])
            sr6 = (sig / r) ** 6
            energy += 4 * eps * (sr6 ** 2 - sr6)
    return energy


def lj_flat_coordinates(x):
    # positions as a flat vector, the way optimizers hand them over
    pos = x.reshape(-1, 3)
    e = 0.0
    for i in range(pos.shape[0] - 1):
        d = pos[i + 1:] - pos[i]
        r2 = np.sum(d * d, axis=1)
        inv6 = 1.0 / r2 ** 3
        e += np.sum(4.0 * (inv6 * inv6 - inv6))
    return e


def lj_broadcast(pos):
    diff = pos[:, np.newaxis, :] - pos[np.newaxis, :, :]
    r2 = np.sum(diff ** 2, axis=-1)
    i, j = np.triu_indices(len(pos), k=1)
    r6 = r2[i, j] ** 3
    return np.sum(4 * EPSILON * (SIGMA ** 12 / r6 ** 2 - SIGMA ** 6 / r6))


def lj_masked_matrix(pos, cutoff=2.5):
    d = pos[:, None, :] - pos[None, :, :]
    r = np.sqrt((d ** 2).sum(-1) + np.eye(len(pos)))
    mask = np.triu(np.ones_like(r, dtype=bool), k=1) & (r < cutoff)
    inv = np.where(mask, 1.0 / r, 0.0)
    return np.sum(4.0 * (inv ** 12 - inv ** 6))


def spring_network(pos, edges=((0, 1), (1, 2), (2, 0), (2, 3)), k=10.0, rest=1.0):
    energy = 0.0
    for a, b in edges:
        length = np.linalg.norm(pos[a] - pos[b])
        energy += 0.5 * k * (length - rest) ** 2
    return energy


def spring_vectorized(pos, edges, rest_lengths, stiffness):
    d = pos[edges[:, 0]] - pos[edges[:, 1]]
    lengths = np.sqrt(np.einsum("ij,ij->i", d, d))
    return 0.5 * np.sum(stiffness * (lengths - rest_lengths) ** 2)


def nbody_leapfrog(v0, x0, masses, dt=0.01, steps=10):
    x = x0.copy()
    v = v0.copy()

    def accel(x):
        a = np.zeros_like(x)
        for i in range(len(masses)):
            for j in range(len(masses)):
                if i != j:
                    r = x[j] - x[i]
                    a[i] += G * masses[j] * r / (np.dot(r, r) + 0.01) ** 1.5
        return a

    a = accel(x)
    for _ in range(steps):
        v += 0.5 * dt * a
        x += dt * v
        a = accel(x)
        v += 0.5 * dt * a
    return np.sum(x[0] ** 2) + np.sum(v ** 2)


def nbody_leapfrog_fixed(v0, x0, masses, dt=0.01, steps=10):
    # nbody_leapfrog with `x = x + dt * v` (the rebinding it once had to be written as)
    x = x0.copy()
    v = v0.copy()

    def accel(x):
        a = np.zeros_like(x)
        for i in range(len(masses)):
            for j in range(len(masses)):
                if i != j:
                    r = x[j] - x[i]
                    a[i] += G * masses[j] * r / (np.dot(r, r) + 0.01) ** 1.5
        return a

    a = accel(x)
    for _ in range(steps):
        v += 0.5 * dt * a
        x = x + dt * v
        a = accel(x)
        v += 0.5 * dt * a
    return np.sum(x[0] ** 2) + np.sum(v ** 2)


def nbody_energy_broadcast(x, masses, soft=0.05):
    dx = x[np.newaxis, :, :] - x[:, np.newaxis, :]
    inv_r = 1.0 / np.sqrt(np.sum(dx ** 2, axis=2) + soft ** 2)
    inv_r = np.triu(inv_r, 1)
    return -G * np.sum(masses[:, None] * masses[None, :] * inv_r)


def rotation_z(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rotated_points_error(theta, points, target):
    R = rotation_z(theta)
    return np.sum((points @ R.T - target) ** 2)


def euler_rotation(angles, v):
    a, b, c = angles
    Rx = np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])
    Ry = np.array([[math.cos(b), 0, math.sin(b)], [0, 1, 0], [-math.sin(b), 0, math.cos(b)]])
    Rz = np.array([[math.cos(c), -math.sin(c), 0], [math.sin(c), math.cos(c), 0], [0, 0, 1]])
    return np.sum((Rz @ Ry @ Rx @ v) * np.array([1.0, 2.0, 3.0]))


def rodrigues(axis_angle, v):
    theta = np.linalg.norm(axis_angle)
    k = axis_angle / theta
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    R = np.eye(3) + np.sin(theta) * K + (1 - np.cos(theta)) * K @ K
    return np.sum(R @ v * v)


def quat_multiply(q1, q2):
    w1, x1, y1, z1 = q1
    w2, x2, y2, z2 = q2
    return np.array([
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
    ])


def quat_rotate(q, v):
    q = q / np.linalg.norm(q)
    qv = np.concatenate([[0.0], v])
    q_conj = q * np.array([1, -1, -1, -1])
    out = quat_multiply(quat_multiply(q, qv), q_conj)
    return np.sum(out[1:] * np.array([0.3, -0.2, 1.0]))


def quat_to_matrix_loss(q, target):
    w, x, y, z = q / np.sqrt(np.sum(q ** 2))
    R = np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])
    return np.sum((R - target) ** 2)


def ray_sphere_distance(center, origin, direction, radius=1.0):
    oc = origin - center
    b = 2.0 * np.dot(oc, direction)
    c = np.dot(oc, oc) - radius * radius
    disc = b * b - 4 * c
    if disc < 0:
        return 1e3
    t = (-b - math.sqrt(disc)) / 2.0
    if t < 0:
        t = (-b + math.sqrt(disc)) / 2.0
    hit = origin + t * direction
    return np.sum(hit ** 2)


def rays_sphere_batch(radius, origins, dirs, center=np.array([0.0, 0.0, 5.0])):
    oc = origins - center
    b = np.einsum("ij,ij->i", oc, dirs)
    c = np.einsum("ij,ij->i", oc, oc) - radius ** 2
    disc = b ** 2 - c
    hit = disc > 0
    t = np.where(hit, -b - np.sqrt(np.where(hit, disc, 1.0)), 0.0)
    return np.sum(t)


def soft_body_energy(pos, rest, k_stretch=50.0, k_bend=1.0):
    seg = np.diff(pos, axis=0)
    lengths = np.linalg.norm(seg, axis=1)
    stretch = k_stretch * np.sum((lengths - rest) ** 2)
    t = seg / lengths[:, None]
    cos_angles = np.sum(t[1:] * t[:-1], axis=1)
    bend = k_bend * np.sum(1 - cos_angles)
    return stretch + bend


def mass_spring_chain_sim(k, n=4, steps=20, dt=0.05):
    x = np.linspace(0, n - 1, n) * 1.1
    v = np.zeros(n)
    for _ in range(steps):
        f = np.zeros(n)
        ext = np.diff(x) - 1.0
        f[:-1] += k * ext
        f[1:] -= k * ext
        v = 0.98 * (v + dt * f)
        x = x + dt * v
    return x[-1] - x[0]


def neo_hookean_triangle(F_flat, mu=1.0, lam=2.0):
    F = F_flat.reshape(2, 2)
    J = np.linalg.det(F)
    Ic = np.trace(F.T @ F)
    return 0.5 * mu * (Ic - 2) - mu * np.log(J) + 0.5 * lam * np.log(J) ** 2


def pendulum_rk4(theta0, g=9.81, L=1.0, dt=0.01, n=50):
    def f(state):
        th, om = state
        return np.array([om, -g / L * np.sin(th)])

    y = np.array([theta0, 0.0])
    for _ in range(n):
        k1 = f(y)
        k2 = f(y + 0.5 * dt * k1)
        k3 = f(y + 0.5 * dt * k2)
        k4 = f(y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y[0]


def projectile_range(v0_angle, drag=0.1, dt=0.01):
    v0, angle = v0_angle
    x, y = 0.0, 0.0
    vx, vy = v0 * math.cos(angle), v0 * math.sin(angle)
    while True:
        speed = math.hypot(vx, vy)
        vx -= drag * speed * vx * dt
        vy -= (9.81 + drag * speed * vy) * dt
        x += vx * dt
        y += vy * dt
        if y < 0:
            break
    return x


def coulomb_energy(charges, pos):
    total = 0.0
    for i, (qi, ri) in enumerate(zip(charges, pos)):
        for qj, rj in zip(charges[i + 1:], pos[i + 1:]):
            total += qi * qj / np.linalg.norm(ri - rj)
    return total


def dihedral_angle(p):
    b0 = -(p[1] - p[0])
    b1 = p[2] - p[1]
    b2 = p[3] - p[2]
    b1 = b1 / np.linalg.norm(b1)
    v = b0 - np.dot(b0, b1) * b1
    w = b2 - np.dot(b2, b1) * b1
    x = np.dot(v, w)
    y = np.dot(np.cross(b1, v), w)
    return np.arctan2(y, x)


def moment_of_inertia_eig(pos, masses):
    com = (masses[:, None] * pos).sum(0) / masses.sum()
    r = pos - com
    I = np.zeros((3, 3))
    for m, ri in zip(masses, r):
        I += m * (np.dot(ri, ri) * np.eye(3) - np.outer(ri, ri))
    return np.linalg.eigvalsh(I)[0]


_g = np.random.default_rng(5)
CLUSTER = np.array([[0.0, 0.0, 0.0], [1.1, 0.1, 0.0], [0.1, 1.2, 0.1], [1.0, 1.0, 0.9]])
CHAIN = np.cumsum(np.array([[0, 0, 0], [1, 0.1, 0], [0.9, 0.3, 0.1], [1.0, -0.2, 0.2]]), axis=0)
EDGES = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [0, 2]])
PTS = _g.standard_normal((5, 3))

PROBES = {
    "lj_double_loop": (lj_double_loop, (CLUSTER,), True),
    "lj_flat_coordinates": (lj_flat_coordinates, (CLUSTER.ravel(),), True),
    "lj_broadcast": (lj_broadcast, (CLUSTER,), True),
    "lj_masked_matrix": (lj_masked_matrix, (CLUSTER,), False),
    "spring_network": (spring_network, (CLUSTER,), True),
    "spring_vectorized": (spring_vectorized, (CLUSTER, EDGES, np.ones(5), np.full(5, 3.0)),
                          False),
    "nbody_leapfrog_fixed": (nbody_leapfrog_fixed, (0.1 * CLUSTER[:3, :2], CLUSTER[:3, :2],
                                        np.array([1.0, 0.5, 0.2])), False),
    # `x += dt * v` after `a = accel(x)`: accel only reads x (check/argument_reads.py)
    "nbody_leapfrog": (nbody_leapfrog, (0.1 * CLUSTER[:3, :2], CLUSTER[:3, :2],
                                        np.array([1.0, 0.5, 0.2])), False),
    "nbody_energy_broadcast": (nbody_energy_broadcast, (CLUSTER, np.array([1.0, 2, 3, 4])),
                               True),
    "rotated_points_error": (rotated_points_error, (0.3, PTS, PTS[::-1]), True),
    "euler_rotation": (euler_rotation, (np.array([0.1, 0.2, 0.3]), np.array([1.0, 0, 0.5])),
                       True),
    "rodrigues": (rodrigues, (np.array([0.3, -0.2, 0.5]), np.array([1.0, 2, 3])), False),
    "quat_rotate": (quat_rotate, (np.array([0.9, 0.1, -0.3, 0.2]), np.array([1.0, 0, 2])),
                    True),
    "quat_to_matrix_loss": (quat_to_matrix_loss, (np.array([0.9, 0.1, -0.3, 0.2]), np.eye(3)),
                            False),
    "ray_sphere_distance": (ray_sphere_distance, (np.array([0.0, 0.2, 5.0]), np.zeros(3),
                                                  np.array([0.0, 0.0, 1.0])), False),
    "rays_sphere_batch": (rays_sphere_batch, (1.5, PTS * 0.2, np.tile([0.0, 0, 1], (5, 1))),
                          False),
    "soft_body_energy": (soft_body_energy, (CHAIN, 1.0), True),
    "mass_spring_chain_sim": (mass_spring_chain_sim, (3.0,), False),
    "neo_hookean_triangle": (neo_hookean_triangle, (np.array([1.1, 0.1, -0.05, 0.9]),), True),
    "pendulum_rk4": (pendulum_rk4, (0.5,), False),
    "projectile_range": (projectile_range, (np.array([10.0, 0.7]),), False),
    "coulomb_energy": (coulomb_energy, (np.array([1.0, -1.0, 0.5, 2.0]), CLUSTER), False),
    "dihedral_angle": (dihedral_angle, (CHAIN,), False),
    "moment_of_inertia_eig": (moment_of_inertia_eig, (CLUSTER, np.array([1.0, 2, 3, 4])),
                              False),
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_probe(name):
    f, args, second = PROBES[name]
    check_probe(f, *args, second=second)
