"""Second-order cases: scipy.sparse (see second_order_table.py). Each case is a program of a
dense vector that reaches the rule (a sparse matrix built from it, or a constant one with
it as operand); test_scipy_sparse_so.py checks reverse over reverse through it against
finite differences of the gradient. ``refused=True``: the rule refuses a differentiated
argument (its second order is that refusal). ``SECOND_ORDER_REFUSED``: rules whose second
derivative is refused clearly (a closure pullback: kron, the stacks, the Krylov solvers,
conj; an np.matrix result, which the second derivative gets as an argument)."""

from __future__ import annotations

import numpy as np
from second_order_table import case

try:
    import scipy.sparse as sp
    import scipy.sparse.linalg as spl
except ImportError:  # pragma: no cover - SciPy is optional
    sp = None

N = 4
K = np.linspace(1.0, 2.0, N)
V = np.linspace(-0.5, 0.7, N)


def method_program(cls_name, method):
    """A program that builds a matrix of class ``cls_name`` from ``k`` and calls
    ``method`` on it (built in the program: a value of scipy.sparse's, whose methods
    dispatch on it)."""
    fmt, flavor = cls_name.split("_")
    array = flavor == "array"

    def program(k):
        if method == "todense":  # a row: its np.matrix is no square matrix
            rows, cols = np.zeros(N, int), np.arange(N)
            if array:
                row = sp.csr_array((k, (rows, cols)), shape=(1, N))
            else:
                row = sp.csr_matrix((k, (rows, cols)), shape=(1, N))
            return np.sum(np.sin(np.asarray(row.todense())))
        if array:
            M = sp.diags_array([k, k[1:]], offsets=[0, 1]).asformat(fmt)
        else:
            M = sp.diags([k, k[1:]], [0, 1]).asformat(fmt)
        if method == "dot":
            return np.sum(np.sin(M.dot(V)))
        if method == "multiply":
            return np.sum(np.sin(M.multiply(V).toarray()))
        if method == "toarray":
            return np.sum(np.sin(M.toarray()))
        if method == "tocsr":
            return np.sum(np.sin(M.tocsr() @ V))
        if method == "tocsc":
            return np.sum(np.sin(M.tocsc() @ V))
        if method == "tocoo":
            return np.sum(np.sin(M.tocoo().toarray()))
        if method == "asformat":
            return np.sum(np.sin(M.asformat("csr") @ V))
        if method == "copy":
            return np.sum(np.sin(M.copy() @ V))
        if method == "transpose":
            return np.sum(np.sin(M.transpose() @ V))
        if method == "conj":
            return np.sum(np.sin(M.conj() @ V))
        if method == "conjugate":
            return np.sum(np.sin(M.conjugate() @ V))
        if method == "sum":
            return np.sum(np.sin(np.asarray(M.sum(axis=0))))
        return np.sum(np.sin(M.diagonal(1)))

    return program


SECOND_ORDER_REFUSED = frozenset(
    {
        "scipy.sparse.kron",
        "scipy.sparse.block_diag",
        "scipy.sparse.vstack",
        "scipy.sparse.hstack",
        "scipy.sparse.linalg.cg",
        "scipy.sparse.linalg.gmres",
        "scipy.sparse.linalg.bicgstab",
        "scipy.sparse.linalg.minres",
        "scipy.sparse.csr_matrix.conj",
        "scipy.sparse.csr_matrix.conjugate",
        "scipy.sparse.csr_matrix.todense",
        "scipy.sparse.csr_matrix.sum",
        "scipy.sparse.coo_matrix.sum",
        "scipy.sparse.dia_matrix.sum",
    }
)

A = None
if sp is not None:
    A = sp.diags([-np.ones(N - 1), 2.5 * np.ones(N), -np.ones(N - 1)], [-1, 0, 1], format="csr")
    from pullback.rules.scipy_sparse import method_functions

    for _fn, _name, _pb in method_functions():
        _cls, _method = _name.split(".")[-2:]
        case(_name, method_program(_cls, _method), K)

    R = np.arange(N)
    PROGRAMS = {
        "scipy.sparse.diags": lambda k: np.sum(np.sin(sp.diags([k[1:], 2 * k], [-1, 0]) @ V)),
        "scipy.sparse.diags_array": lambda k: np.sum(np.sin(sp.diags_array(k) @ V)),
        "scipy.sparse.spdiags": lambda k: np.sum(
            np.sin(sp.spdiags(np.stack([k, k]), [0, 1], N, N) @ V)
        ),
        "scipy.sparse.csr_matrix": lambda d: np.sum(
            np.sin(sp.csr_matrix((d, (R, (R + 1) % N)), shape=(N, N)) @ V)
        ),
        "scipy.sparse.csr_array": lambda d: np.sum(
            np.sin(sp.csr_array((d, R, np.arange(N + 1)), shape=(N, N)) @ V)
        ),
        "scipy.sparse.csc_matrix": lambda d: np.sum(
            np.sin(sp.csc_matrix((d, R, np.arange(N + 1)), shape=(N, N)) @ V)
        ),
        "scipy.sparse.csc_array": lambda d: np.sum(np.sin(sp.csc_array(np.diag(d)) @ V)),
        "scipy.sparse.coo_matrix": lambda d: np.sum(
            np.sin(sp.coo_matrix((d, (R % 2, R % 3)), shape=(2, 3)).toarray())
        ),
        "scipy.sparse.coo_array": lambda d: np.sum(np.sin(sp.coo_array(sp.diags(d)).toarray())),
        "scipy.sparse.kron": lambda k: np.sum(np.sin(sp.kron(sp.diags(k[:2]), A) @ np.ones(2 * N))),
        "scipy.sparse.block_diag": lambda k: np.sum(
            np.sin(sp.block_diag([sp.diags(k), A]) @ np.ones(2 * N))
        ),
        "scipy.sparse.vstack": lambda k: np.sum(np.sin(sp.vstack([sp.diags(k), A]) @ V)),
        "scipy.sparse.hstack": lambda k: np.sum(
            np.sin(sp.hstack([sp.diags(k), A]) @ np.ones(2 * N))
        ),
        "scipy.sparse.linalg.spsolve": lambda b: np.sum(np.sin(spl.spsolve(A.tocsc(), b))),
        "scipy.sparse.linalg.SuperLU.solve": lambda b: np.sum(np.sin(spl.splu(A.tocsc()).solve(b))),
        "scipy.sparse.linalg.expm_multiply": lambda v: np.sum(
            np.sin(spl.expm_multiply(-0.3 * A, v))
        ),
        "scipy.sparse.linalg.cg": lambda b: np.sum(np.sin(spl.cg(A, b, rtol=1e-12)[0])),
        "scipy.sparse.linalg.gmres": lambda b: np.sum(np.sin(spl.gmres(A, b, rtol=1e-12)[0])),
        "scipy.sparse.linalg.bicgstab": lambda b: np.sum(np.sin(spl.bicgstab(A, b, rtol=1e-12)[0])),
        "scipy.sparse.linalg.minres": lambda b: np.sum(np.sin(spl.minres(A, b, rtol=1e-12)[0])),
        # the primitives of the pullback functions, each reached by a rule's second order
        "pullback.rules.scipy_sparse_solve.solve_pair": lambda b: np.sum(
            np.sin(spl.spsolve(A.tocsc(), b))
        ),
        "pullback.sparse_values.gather": lambda k: np.sum(np.sin(sp.diags(k) @ V)),
        "pullback.sparse_values.with_pattern": lambda k: np.sum(np.sin(sp.diags(k) @ V)),
        "pullback.sparse_values.restrict": lambda k: np.sum(np.sin(sp.diags(k).toarray())),
        "pullback.sparse_values.transposed": lambda k: np.sum(np.sin(sp.diags(k).transpose() @ V)),
        "pullback.sparse_values.adjoint": lambda v: np.sum(np.sin(spl.expm_multiply(-0.3 * A, v))),
        "pullback.sparse_values.dense": lambda b: np.sum(np.sin(spl.spsolve(A.tocsc(), b))),
        "pullback.rules.scipy_sparse_common.fitted": lambda r: np.sum(
            np.sin(A.multiply(r).toarray())
        ),
    }
    for _name, _program in PROGRAMS.items():
        case(_name, _program, K)

    def _factors_of_differentiated(name):
        fn = getattr(spl, name)
        return lambda k: np.sum(fn(sp.csc_matrix(sp.diags(k))).solve(np.ones(N)))

    case("scipy.sparse.linalg.splu", _factors_of_differentiated("splu"), K, refused=True)
    case("scipy.sparse.linalg.spilu", _factors_of_differentiated("spilu"), K, refused=True)
    case(
        "scipy.sparse.linalg.factorized",
        lambda k: np.sum(spl.factorized(sp.csc_matrix(sp.diags(k)))(np.ones(N))),
        K,
        refused=True,
    )
