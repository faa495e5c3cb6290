"""Module-level helpers for tests/test_numerics_s32.py: a right-hand side called on a row
of the caller's array (read only, or kept in a module list), found through the module; and
the programs that test file shares with the s32 probes (Gauss-Seidel, Householder QR)."""

import numpy as np

KEPT = []


def rhs_reads(y, k):
    return np.array([y[1], -k * y[0] - 0.1 * y[1] ** 3])


def rhs_keeps(y, k):
    KEPT.append(y)
    return np.array([y[1], -k * y[0]])


def gauss_seidel(b, sweeps=4):
    n = len(b)
    u = np.zeros(n)
    for _ in range(sweeps):
        for i in range(n):
            left = u[i - 1] if i > 0 else 0.0
            right = u[i + 1] if i < n - 1 else 0.0
            u[i] = (b[i] + left + right) / 3.0
    return np.dot(u, u)


def householder(M):
    R = M.copy()
    m, n = R.shape
    for k in range(n - 1):
        x = R[k:, k]
        alpha = -np.sign(x[0]) * np.linalg.norm(x)
        v = x - alpha * np.eye(m - k)[0]
        v = v / np.linalg.norm(v)
        R[k:, :] -= 2 * np.outer(v, v @ R[k:, :])
    return np.sum(np.abs(np.diag(R)))
