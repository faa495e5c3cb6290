"""The 21-point Gauss-Kronrod rule on [-1, 1] (the rule of QUADPACK's qags and qagp, which
``scipy.integrate.quad`` uses on finite intervals), computed once from its definition.

The 10 Gauss-Legendre nodes come from NumPy. The 11 Kronrod nodes are the zeros of the
Stieltjes polynomial E_11, the degree-11 polynomial orthogonal to every polynomial of
degree <= 10 with the weight P_10 (the Legendre polynomial); the 21 weights then make the
rule exact for every polynomial of degree <= 20 (it is in fact exact to degree 31). Both
are linear solves in the Legendre basis, well conditioned at this size; the result agrees
with the tabulated constants to rounding.
"""

from __future__ import annotations

import functools

import numpy as np

GAUSS_POINTS = 10


@functools.lru_cache(maxsize=1)
def gauss_kronrod21():
    """``(nodes, kronrod_weights, gauss_weights)`` on [-1, 1]: 21 sorted nodes, the
    Kronrod weights, and the 10-point Gauss weights on the same nodes (0 at the 11
    Kronrod-only nodes)."""
    # imported here, at the first gradient through quad: numpy.polynomial costs cold start
    from numpy.polynomial import legendre as L

    n = GAUSS_POINTS
    gx, gw = L.leggauss(n)
    # Exact inner products on [-1, 1] by a Gauss rule of ample degree.
    qx, qw = L.leggauss(3 * n + 4)
    p_n = L.legval(qx, [0] * n + [1])
    # E_{n+1} = L_{n+1} + sum_{j<=n} e_j L_j with int P_n E x^k = 0 for k = 0..n.
    basis = np.stack([L.legval(qx, [0] * j + [1]) for j in range(n + 2)])  # (n+2, q)
    powers = np.stack([qx**k for k in range(n + 1)])  # (n+1, q)
    gram = (powers * p_n * qw) @ basis.T  # (n+1, n+2): int x^k P_n L_j
    e = np.linalg.solve(gram[:, : n + 1], -gram[:, n + 1])
    kx = L.legroots(np.concatenate((e, [1.0])))
    nodes = np.sort(np.concatenate((gx, np.real(kx))))
    # Weights exact for L_0 .. L_{2n}: int L_0 = 2, the others 0.
    vander = np.stack([L.legval(nodes, [0] * j + [1]) for j in range(2 * n + 1)])
    moments = np.zeros(2 * n + 1)
    moments[0] = 2.0
    wk = np.linalg.solve(vander, moments)
    wg = np.zeros_like(nodes)
    for x, w in zip(gx, gw, strict=True):
        wg[np.argmin(np.abs(nodes - x))] = w
    # The rule is symmetric: make it so to the last bit (the middle node is 0).
    return (nodes - nodes[::-1]) / 2, (wk + wk[::-1]) / 2, (wg + wg[::-1]) / 2
