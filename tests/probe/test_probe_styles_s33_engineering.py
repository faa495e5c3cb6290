"""Probe s33: engineering scripts as written: finite-element assembly and robot kinematics.

Bar, truss, beam and heat-conduction elements assembled into a global ``K`` by
``K[np.ix_(dofs, dofs)] += ke`` and by double loops ``K[dofs[a], dofs[b]] += ke[a, b]``,
supports imposed by zeroing rows and columns (or by ``np.delete`` and by free-dof index
arrays), displacements by ``np.linalg.solve`` and the compliance ``f @ u`` as a function of
the element densities of a SIMP interpolation ``Emin + x**p * (E0 - Emin)``, with a Q4
element stiffness integrated by Gauss points over shape-function derivatives;
Denavit-Hartenberg transforms written element by element into ``np.eye(4)`` and chained by
``@``, planar Jacobians filled entry by entry for Jacobian-transpose and damped
least-squares IK steps, quaternion products written with indices, rotation matrices from
quaternions, and differential-drive odometry appended to lists. Each against central
differences (probe_harness.py), float64 and float32, and at second order where cheap.
"""

# ruff: noqa: B007, B008, B905, E741, N806 - written the way public code is written

import numpy as np
from probe_harness import probe_tests
from sweeps import long_run

# -- finite elements ------------------------------------------------------------------------


def bar_compliance(E, L=1.0, A=0.1):
    nel = len(E)
    ndof = nel + 1
    K = np.zeros((ndof, ndof))
    le = L / nel
    for e in range(nel):
        ke = E[e] * A / le * np.array([[1.0, -1.0], [-1.0, 1.0]])
        dofs = [e, e + 1]
        K[np.ix_(dofs, dofs)] += ke
    f = np.zeros(ndof)
    f[-1] = 1.0
    # clamp the left end: zero the row and column, one on the diagonal
    K[0, :] = 0.0
    K[:, 0] = 0.0
    K[0, 0] = 1.0
    u = np.linalg.solve(K, f)
    return f @ u


def simp_bar_double_loop(x, penal=3.0, E0=1.0, Emin=1e-3):
    nel = x.shape[0]
    K = np.zeros((nel + 1, nel + 1))
    ke = np.array([[1.0, -1.0], [-1.0, 1.0]]) * nel
    for el in range(nel):
        Ee = Emin + x[el] ** penal * (E0 - Emin)
        edof = np.array([el, el + 1])
        for a in range(2):
            for b in range(2):
                K[edof[a], edof[b]] += Ee * ke[a, b]
    F = np.zeros(nel + 1)
    F[nel // 2] = 0.5
    F[-1] = 1.0
    free = np.arange(1, nel + 1)
    U = np.zeros(nel + 1)
    U[free] = np.linalg.solve(K[np.ix_(free, free)], F[free])
    return F @ U


def q4_stiffness(nu=0.3):
    """Plane-stress Q4 element stiffness for E = 1 by 2x2 Gauss points."""
    D = 1.0 / (1 - nu**2) * np.array([[1, nu, 0], [nu, 1, 0], [0, 0, (1 - nu) / 2]])
    gp = [-1 / np.sqrt(3), 1 / np.sqrt(3)]
    xi_n = [-1, 1, 1, -1]
    eta_n = [-1, -1, 1, 1]
    ke = np.zeros((8, 8))
    for xi in gp:
        for eta in gp:
            dN = np.zeros((2, 4))
            for i in range(4):
                dN[0, i] = 0.25 * xi_n[i] * (1 + eta * eta_n[i])
                dN[1, i] = 0.25 * eta_n[i] * (1 + xi * xi_n[i])
            J = dN @ np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
            dNx = np.linalg.solve(J, dN)
            B = np.zeros((3, 8))
            for i in range(4):
                B[0, 2 * i] = dNx[0, i]
                B[1, 2 * i + 1] = dNx[1, i]
                B[2, 2 * i] = dNx[1, i]
                B[2, 2 * i + 1] = dNx[0, i]
            ke += B.T @ D @ B * np.linalg.det(J)
    return ke


KE_Q4 = q4_stiffness()


def simp_q4_compliance(x, nelx=3, nely=1, penal=3.0, Emin=1e-3, E0=1.0):
    ndof = 2 * (nelx + 1) * (nely + 1)
    K = np.zeros((ndof, ndof))
    for ely in range(nely):
        for elx in range(nelx):
            n1 = (nely + 1) * elx + ely
            n2 = (nely + 1) * (elx + 1) + ely
            edof = np.array(
                [
                    2 * n1 + 2,
                    2 * n1 + 3,
                    2 * n2 + 2,
                    2 * n2 + 3,
                    2 * n2,
                    2 * n2 + 1,
                    2 * n1,
                    2 * n1 + 1,
                ]
            )
            E = Emin + x[ely + elx * nely] ** penal * (E0 - Emin)
            K[np.ix_(edof, edof)] += E * KE_Q4
    f = np.zeros(ndof)
    f[-1] = -1.0
    fixed = np.array([0, 1, 2, 3])
    free = np.setdiff1d(np.arange(ndof), fixed)
    u = np.zeros(ndof)
    u[free] = np.linalg.solve(K[free, :][:, free], f[free])
    c = f @ u
    return c


NODES = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [0.5, 0.8], [1.5, 0.8]])
BARS = [(0, 1), (1, 2), (0, 3), (1, 3), (1, 4), (2, 4), (3, 4)]


def truss_compliance(areas, E=200.0):
    nn = len(NODES)
    K = np.zeros((2 * nn, 2 * nn))
    for k, (i, j) in enumerate(BARS):
        dx, dy = NODES[j] - NODES[i]
        L = np.sqrt(dx**2 + dy**2)
        c, s = dx / L, dy / L
        T = np.array([c, s, -c, -s])
        ke = E * areas[k] / L * np.outer(T, T)
        dofs = [2 * i, 2 * i + 1, 2 * j, 2 * j + 1]
        for a in range(4):
            for b in range(4):
                K[dofs[a], dofs[b]] = K[dofs[a], dofs[b]] + ke[a, b]
    F = np.zeros(2 * nn)
    F[2 * 1 + 1] = -1.0
    F[2 * 4] = 0.3
    fixed = [0, 1, 5]
    Kr = np.delete(np.delete(K, fixed, axis=0), fixed, axis=1)
    Fr = np.delete(F, fixed)
    ur = np.linalg.solve(Kr, Fr)
    return Fr @ ur


def beam_deflection(EI, L=2.0, q=1.0):
    ne = len(EI)
    h = L / ne
    K = np.zeros((2 * ne + 2, 2 * ne + 2))
    F = np.zeros(2 * ne + 2)
    for e in range(ne):
        k = (
            EI[e]
            / h**3
            * np.array(
                [
                    [12, 6 * h, -12, 6 * h],
                    [6 * h, 4 * h**2, -6 * h, 2 * h**2],
                    [-12, -6 * h, 12, -6 * h],
                    [6 * h, 2 * h**2, -6 * h, 4 * h**2],
                ]
            )
        )
        idx = np.arange(2 * e, 2 * e + 4)
        K[np.ix_(idx, idx)] += k
        F[idx] += q * h / 12 * np.array([6, h, 6, -h])
    # cantilever: clamp w and theta at x = 0
    for d in (0, 1):
        K[d, :] = 0
        K[:, d] = 0
        K[d, d] = 1
        F[d] = 0
    w = np.linalg.solve(K, F)
    return w[-2]


def heat_fem_1d(k, T_left=1.0, T_right=0.0, source=2.0):
    ne = k.size
    h = 1.0 / ne
    K = np.zeros((ne + 1, ne + 1))
    f = np.zeros(ne + 1)
    for e in range(ne):
        nodes = [e, e + 1]
        K[np.ix_(nodes, nodes)] += k[e] / h * np.array([[1, -1], [-1, 1]])
        f[nodes] += source * h / 2
    # Dirichlet rows: the equation becomes T = value
    K[0, :] = 0.0
    K[0, 0] = 1.0
    f[0] = T_left
    K[-1, :] = 0.0
    K[-1, -1] = 1.0
    f[-1] = T_right
    T = np.linalg.solve(K, f)
    return np.trapz(T, dx=h) if hasattr(np, "trapz") else np.sum((T[1:] + T[:-1]) / 2) * h


def spring_chain_stiffness(ks):
    n = len(ks)
    K = np.zeros((n, n))
    for i in range(n):
        K[i, i] += ks[i]
        if i + 1 < n:
            K[i, i] += ks[i + 1]
            K[i, i + 1] -= ks[i + 1]
            K[i + 1, i] -= ks[i + 1]
    load = np.linspace(0.5, 1.0, n)
    u = np.linalg.solve(K, load)
    energy = 0.5 * u @ K @ u
    return energy


# -- robotics -------------------------------------------------------------------------------

DH_TABLE = [(0.0, 0.3, np.pi / 2), (0.4, 0.0, 0.0), (0.35, 0.0, 0.0)]  # (a, d, alpha)


def dh(theta, a, d, alpha):
    T = np.eye(4)
    T[0, 0] = np.cos(theta)
    T[0, 1] = -np.sin(theta) * np.cos(alpha)
    T[0, 2] = np.sin(theta) * np.sin(alpha)
    T[0, 3] = a * np.cos(theta)
    T[1, 0] = np.sin(theta)
    T[1, 1] = np.cos(theta) * np.cos(alpha)
    T[1, 2] = -np.cos(theta) * np.sin(alpha)
    T[1, 3] = a * np.sin(theta)
    T[2, 1] = np.sin(alpha)
    T[2, 2] = np.cos(alpha)
    T[2, 3] = d
    return T


def fk_reach(q, target=np.array([0.3, 0.2, 0.5])):
    T = np.eye(4)
    for i in range(len(q)):
        a, d, alpha = DH_TABLE[i]
        T = T @ dh(q[i], a, d, alpha)
    p = T[:3, 3]
    return np.sum((p - target) ** 2)


def fk_frames_list(q):
    frames = [np.eye(4)]
    for (a, d, alpha), th in zip(DH_TABLE, q):
        frames.append(frames[-1] @ dh(th, a, d, alpha))
    origins = np.array([F[:3, 3] for F in frames])
    return np.sum(np.diff(origins, axis=0) ** 2) + origins[-1, 2]


def planar_jacobian(q, l1=1.0, l2=0.7):
    J = np.zeros((2, 2))
    J[0, 0] = -l1 * np.sin(q[0]) - l2 * np.sin(q[0] + q[1])
    J[0, 1] = -l2 * np.sin(q[0] + q[1])
    J[1, 0] = l1 * np.cos(q[0]) + l2 * np.cos(q[0] + q[1])
    J[1, 1] = l2 * np.cos(q[0] + q[1])
    return J


def planar_fk(q, l1=1.0, l2=0.7):
    x = l1 * np.cos(q[0]) + l2 * np.cos(q[0] + q[1])
    y = l1 * np.sin(q[0]) + l2 * np.sin(q[0] + q[1])
    return np.array([x, y])


def ik_transpose_steps(q0, goal=np.array([0.9, 0.8]), alpha=0.2, iters=5):
    q = q0.copy()
    for it in range(iters):
        err = goal - planar_fk(q)
        J = planar_jacobian(q)
        q += alpha * J.T @ err
    e = goal - planar_fk(q)
    return e @ e


def ik_damped_ls(q0, goal=np.array([0.5, 1.1]), lam=0.1):
    q = np.array(q0, dtype=float)
    for _ in range(3):
        e = goal - planar_fk(q)
        J = planar_jacobian(q)
        dq = J.T @ np.linalg.solve(J @ J.T + lam**2 * np.eye(2), e)
        q = q + dq
    return np.linalg.norm(goal - planar_fk(q)) ** 2 + 0.01 * np.sum(q**2)


def quat_mult(q1, q2):
    w1, x1, y1, z1 = q1
    w2, x2, y2, z2 = q2
    w = w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2
    x = w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2
    y = w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2
    z = w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2
    return np.array([w, x, y, z])


def quat_integrate(omega, dt=0.1, steps=5):
    q = np.array([1.0, 0.0, 0.0, 0.0])
    for _ in range(steps):
        dq = 0.5 * quat_mult(q, np.array([0.0, omega[0], omega[1], omega[2]]))
        q = q + dt * dq
        q /= np.linalg.norm(q)
    return q[0] * q[1] + q[2] - q[3] ** 2


def quat_to_rot(q):
    q = q / np.linalg.norm(q)
    w, x, y, z = q[0], q[1], q[2], q[3]
    R = np.zeros((3, 3))
    R[0, 0] = 1 - 2 * (y * y + z * z)
    R[0, 1] = 2 * (x * y - z * w)
    R[0, 2] = 2 * (x * z + y * w)
    R[1, 0] = 2 * (x * y + z * w)
    R[1, 1] = 1 - 2 * (x * x + z * z)
    R[1, 2] = 2 * (y * z - x * w)
    R[2, 0] = 2 * (x * z - y * w)
    R[2, 1] = 2 * (y * z + x * w)
    R[2, 2] = 1 - 2 * (x * x + y * y)
    return R


def attitude_error(q, v=np.array([1.0, 0.0, 0.0]), target=np.array([0.0, 1.0, 0.0])):
    R = quat_to_rot(q)
    return np.sum((R @ v - target) ** 2) + np.trace(R.T @ R) * 0.0


def odometry(wheel, dt=0.1, base=0.5):
    x, y, th = 0.0, 0.0, 0.0
    xs, ys = [], []
    for k in range(len(wheel) // 2):
        vl, vr = wheel[2 * k], wheel[2 * k + 1]
        v = (vl + vr) / 2
        w = (vr - vl) / base
        x += v * np.cos(th) * dt
        y += v * np.sin(th) * dt
        th += w * dt
        xs.append(x)
        ys.append(y)
    path = np.array([xs, ys]).T
    return np.sum((path[-1] - np.array([0.3, 0.1])) ** 2) + 0.1 * np.sum(path[:, 1])


_r = np.random.default_rng(33)

PROBES = {
    "bar_compliance": (bar_compliance, (np.array([1.0, 2.0, 1.5, 0.7]),), True),
    "simp_bar_double_loop": (simp_bar_double_loop, (np.array([0.5, 0.8, 0.3, 0.9]),), True),
    "simp_q4_compliance": (simp_q4_compliance, (np.array([0.6, 0.9, 0.4]),), True),
    "truss_compliance": (truss_compliance, (np.linspace(1.0, 2.2, 7),), False),
    "beam_deflection": (beam_deflection, (np.array([1.0, 1.3, 0.8]),), True),
    "heat_fem_1d": (heat_fem_1d, (np.array([1.0, 0.5, 2.0, 1.2]),), True),
    "spring_chain_stiffness": (spring_chain_stiffness, (np.array([3.0, 2.0, 4.0, 1.5]),), True),
    "fk_reach": (fk_reach, (np.array([0.3, -0.4, 0.8]),), True),
    "fk_frames_list": (fk_frames_list, (np.array([0.3, -0.4, 0.8]),), True),
    "ik_transpose_steps": (ik_transpose_steps, (np.array([0.4, 0.9]),), True),
    "ik_damped_ls": (ik_damped_ls, (np.array([0.4, 0.9]),), True),
    "quat_integrate": (quat_integrate, (np.array([0.3, -0.5, 0.8]),), True),
    "attitude_error": (attitude_error, (np.array([0.9, 0.1, -0.3, 0.2]),), True),
    "odometry": (odometry, (np.array([1.0, 1.2, 0.8, 1.1, 1.3, 0.9]),), True),
}

# Second order (jvp, hvp, Hessian) on a few cheap representatives in the quick run, on
# every probe that has it under `pytest --long` (tests/sweeps.py): the test budget.
SECOND = (
    set(PROBES) if long_run() else {"bar_compliance", "simp_q4_compliance", "ik_transpose_steps"}
)
test_probe, test_float32 = probe_tests(
    {k: (f, args, second and k in SECOND) for k, (f, args, second) in PROBES.items()}
)
