"""scipy.sparse against central differences: a constant sparse matrix with differentiated
dense operands, sparse matrices built from differentiated values (their cotangents on their
pattern), the sparse solvers, and two programs (FEM compliance, graph-Laplacian smoothing).
Second order: test_scipy_sparse_so.py; refusals: test_scipy_sparse_refusals.py."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad

import pullback

sp = pytest.importorskip("scipy.sparse")
spl = pytest.importorskip("scipy.sparse.linalg")

N = 5
A = sp.diags([-np.ones(N - 1), 2.5 * np.ones(N), -np.ones(N - 1)], [-1, 0, 1], format="csr")
A_ARRAY = sp.csr_array(A)
RECT = sp.random(N, 3, density=0.5, random_state=1, format="csr")
R = np.arange(N)
_rng = np.random.default_rng(0)
X = _rng.normal(size=N)
XM = _rng.normal(size=(N, 3))
K = _rng.uniform(1.0, 2.0, N)

D = pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])


def _as(value, dtype):
    return np.asarray(value, dtype) if np.ndim(value) else dtype(value)


CONSTANT = {
    "A @ x": (lambda x: np.sum((A @ x) ** 2), X),
    "csr_array @ x": (lambda x: np.sum((A_ARRAY @ x) ** 2), X),
    "x @ A": (lambda x: np.sum(np.sin(x @ A)), X),
    "A @ X": (lambda m: np.sum((A @ m) ** 2), XM),
    "X.T @ A": (lambda m: np.sum((m.T @ A) ** 2), XM),
    "A.dot(x)": (lambda x: x @ A.dot(x), X),
    "A.T @ x": (lambda x: np.sum(np.sin(A.T @ x)), X),
    "A.transpose() @ x": (lambda x: np.sum(np.sin(A.transpose() @ x)), X),
    "rectangular": (lambda y: np.sum(np.sin(RECT @ y)), X[:3]),
    "A.multiply(dense)": (lambda m: np.sum(A.multiply(m).toarray() ** 2), np.outer(X, X)),
    "A.multiply(row)": (lambda r: np.sum(A.multiply(r).toarray() ** 2), X),
    "spmatrix A * x (a product)": (lambda x: np.sum((A * x) ** 2), X),
    "sparray A * r (elementwise)": (lambda r: np.sum((A_ARRAY * r).toarray() ** 2), X),
}


@D
@pytest.mark.parametrize("name", list(CONSTANT))
def test_constant_matrix_dense_operand(name, dtype):
    f, x = CONSTANT[name]
    check_grad(f, _as(x, dtype))


SOLVERS = {
    "spsolve(A, b)": (lambda b: np.sum(spl.spsolve(A.tocsc(), b) ** 2), X),
    "spsolve(A, B)": (lambda b: np.sum(spl.spsolve(A.tocsc(), b) ** 2), XM),
    "splu(A).solve(b)": (lambda b: np.sum(spl.splu(A.tocsc()).solve(b) ** 2), X),
    "splu(A).solve(b, 'T')": (
        lambda b: np.sum(spl.splu(A.tocsc()).solve(b, trans="T") ** 2),
        X,
    ),
    "factorized(A)(b)": (lambda b: np.sum(spl.factorized(A.tocsc())(b) ** 2), X),
    "cg": (lambda b: np.sum(spl.cg(A, b, rtol=1e-12)[0] ** 2), X),
    "gmres": (lambda b: np.sum(spl.gmres(A, b, rtol=1e-12)[0] ** 2), X),
    "expm_multiply": (lambda v: np.sum(spl.expm_multiply(-0.3 * A, v) ** 2), X),
}


@D
@pytest.mark.parametrize("name", list(SOLVERS))
def test_solvers(name, dtype):
    f, x = SOLVERS[name]
    check_grad(f, _as(x, dtype))


BUILT = {
    "diags(k, 0) @ A": (lambda k: np.sum((sp.diags(k, 0) @ A) @ np.ones(N)), K),
    "three diagonals": (
        lambda k: np.sum(np.sin(sp.diags([k[1:], 2 * k, k[:-1]], [-1, 0, 1]) @ X)),
        K,
    ),
    "a number along a diagonal": (
        lambda s: np.sum(sp.diags([s, 2.0, s], [-1, 0, 1], shape=(N, N)) @ X),
        0.7,
    ),
    "csr (data, (rows, cols))": (
        lambda d: np.sum(np.sin(sp.csr_matrix((d, (R, (R + 1) % N)), shape=(N, N)) @ X)),
        K,
    ),
    "coo with duplicates": (
        lambda d: np.sum(np.sin(sp.coo_matrix((d, (R % 2, R % 3)), shape=(2, 3)).toarray())),
        K,
    ),
    "csr_array (data, indices, indptr)": (
        lambda d: np.sum(np.sin(sp.csr_array((d, R, np.arange(N + 1)), shape=(N, N)) @ X)),
        K,
    ),
    "csc (data, indices, indptr)": (
        lambda d: np.sum(np.sin(X @ sp.csc_matrix((d, R[::-1], np.arange(N + 1))))),
        K,
    ),
    "spdiags": (lambda d: np.sum(np.sin(sp.spdiags(d, [0, 1], N, N) @ X)), XM[:, :2].T.copy()),
    "scalar * A": (lambda s: np.sum(np.sin((s * A) @ X)), 0.6),
    "A + B": (lambda k: np.sum(np.sin((sp.diags(k) + A) @ X)), K),
    "A - B": (lambda k: np.sum(np.sin((A - sp.diags(k)) @ X)), K),
    ".tocsr()": (
        lambda d: np.sum(np.sin(sp.coo_matrix((d, (R, R)), shape=(N, N)).tocsr() @ X)),
        K,
    ),
    ".toarray()": (lambda k: np.sum(sp.diags(k, 1).toarray() ** 2), K[:-1]),
    ".sum(axis=0) as np.matrix": (
        lambda k: np.sum(np.sin(np.asarray(sp.diags([k, k[1:]], [0, 1]).sum(axis=0)))),
        K,
    ),
    ".sum(axis=1) of an array": (
        lambda k: np.sum(np.sin(sp.diags_array([k, k[1:]], offsets=[0, 1]).sum(axis=1))),
        K,
    ),
    ".sum()": (lambda k: np.sin(sp.diags([k, k[1:]], [0, 1]).sum()), K),
    "(s * A).sum() of a global spmatrix": (lambda s: np.sin((s * A).sum()), 0.7),
    ".diagonal(1)": (lambda k: np.sum(np.sin(sp.diags([k, k[1:]], [0, 1]).diagonal(1))), K),
    "kron": (lambda k: np.sum(np.sin(sp.kron(sp.diags(k[:2]), A) @ np.ones(2 * N))), K),
    "block_diag": (
        lambda k: np.sum(np.sin(sp.block_diag([sp.diags(k), A]) @ np.ones(2 * N))),
        K,
    ),
    "vstack": (lambda k: np.sum(np.sin(sp.vstack([sp.diags(k), A]) @ X)), K),
    "hstack": (lambda k: np.sum(np.sin(sp.hstack([sp.diags(k), A]) @ np.ones(2 * N))), K),
    "(K(k)).T @ x": (lambda k: np.sum(np.sin(sp.diags([k[1:]], [1]).T @ X)), K),
    "spsolve(K(k), f)": (
        lambda k: np.sum(spl.spsolve((sp.diags(k) + A).tocsc(), X) ** 2),
        K,
    ),
    "cg(K(k), f)": (lambda k: np.sum(spl.cg(sp.diags(k) + A, X, rtol=1e-12)[0] ** 2), K),
}


@D
@pytest.mark.parametrize("name", list(BUILT))
def test_built_from_differentiated_values(name, dtype):
    f, x = BUILT[name]
    check_grad(f, _as(x, dtype))


def test_degenerate_empty_rows_and_one_by_one():
    # a row with no entry (its cotangent is nothing) and a 1x1 system
    def f(d):
        M = sp.csr_matrix((d, ([0, 0, 2], [0, 1, 2])), shape=(3, 3))
        return np.sum(np.sin(M @ np.arange(1.0, 4.0)))

    check_grad(f, np.array([0.3, -0.2, 0.5]))

    def g(k):
        return np.sum(spl.spsolve(sp.csc_matrix(sp.diags(k, 0)), np.array([2.0])) ** 2)

    check_grad(g, np.array([1.5]))


def test_cotangent_of_a_built_matrix_stays_sparse():
    # n = 50000: a dense n x n cotangent would need 20 GB; the gradient is O(nnz)
    n = 50_000
    f_load = np.ones(n)
    off = -np.ones(n - 1)

    def compliance(k):
        K_ = sp.diags([off, k, off], [-1, 0, 1], format="csc")
        return f_load @ spl.spsolve(K_, f_load)

    k = np.full(n, 4.0)
    g = pullback.grad(compliance)(k)
    assert g.shape == (n,) and np.all(np.isfinite(g))
    # d(f.u)/dk_i = -u_i^2 (K symmetric: lambda = u)
    u = spl.spsolve(sp.diags([off, k, off], [-1, 0, 1], format="csc"), f_load)
    np.testing.assert_allclose(g, -(u**2), rtol=1e-8)


# -- programs -----------------------------------------------------------------------------
def _bar_stiffness(E, n_el, length=1.0):
    """A 1-D bar of n_el elements (modulus E[e] each), fixed at node 0: its stiffness
    assembled from the element matrices, in CSR."""
    h = length / n_el
    rows, cols, vals = [], [], []
    for e in range(n_el):
        ke = E[e] / h
        for a, b, s in ((0, 0, 1.0), (0, 1, -1.0), (1, 0, -1.0), (1, 1, 1.0)):
            rows.append(e + a)
            cols.append(e + b)
            vals.append(s * ke)
    K_full = sp.coo_matrix(
        (np.stack(vals), (np.array(rows), np.array(cols))), shape=(n_el + 1,) * 2
    )
    return K_full.tocsr()[1:, 1:]


def test_fem_compliance():
    n_el = 6
    load = np.linspace(0.5, 1.0, n_el)

    def compliance(E):
        K_ = _bar_stiffness(E, n_el)
        u = spl.spsolve(K_.tocsc(), load)
        return load @ u

    check_grad(compliance, np.linspace(1.0, 2.0, n_el))


def test_fem_compliance_assembled_by_coo_sums():
    # each element's four entries given with their own indices: shared nodes are duplicates
    n_el = 5
    load = np.ones(n_el + 1)
    rows = np.array([[e, e, e + 1, e + 1] for e in range(n_el)]).ravel()
    cols = np.array([[e, e + 1, e, e + 1] for e in range(n_el)]).ravel()
    pattern = np.tile([1.0, -1.0, -1.0, 1.0], n_el)

    def compliance(E):
        data = np.repeat(E, 4) * pattern
        K_ = sp.csr_matrix((data, (rows, cols)), shape=(n_el + 1, n_el + 1)) + sp.eye(n_el + 1)
        return load @ spl.spsolve(K_.tocsc(), load)

    check_grad(compliance, np.linspace(1.0, 2.0, n_el))


def test_graph_laplacian_smoothing():
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 4], [4, 0], [1, 3]])
    W = sp.coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(N, N))
    W = (W + W.T).tocsr()
    L = sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W
    y = np.linspace(-1.0, 1.0, N)

    def loss(x):
        return x @ L @ x + np.sum((x - y) ** 2)

    g = check_grad(loss, X)
    np.testing.assert_allclose(g, 2 * (L @ X) + 2 * (X - y), rtol=1e-10)


def test_graph_laplacian_of_differentiated_weights():
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 4], [4, 0]])

    def loss(w):
        W = sp.coo_matrix((w, (edges[:, 0], edges[:, 1])), shape=(N, N)).tocsr()
        W = W + W.T
        L = sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W
        return X @ (L @ X)

    check_grad(loss, np.linspace(0.5, 1.5, len(edges)))
