"""Cotangents of SciPy sparse matrices, and of the dense operands of their products.

A sparse matrix ``S`` built from differentiated values (``sp.diags(k)``, ``csr_matrix((data,
(rows, cols)))``) gets as its cotangent a sparse matrix with ``S``'s own pattern: the
derivative with respect to each stored value, never a dense ``n x n`` array, so that memory
stays ``O(nnz)``. A cotangent may arrive with another pattern (the sum of two cotangents) or
dense (``S.toarray()``'s); :func:`restrict` reads it at ``S``'s stored positions, and the
rules that built ``S`` read their values there (:func:`gather`).

The products here are the inline ``@``'s (:func:`pullback.runtime.matmul_lhs_cotangent`)
when an operand is sparse: ``A @ x`` with a constant ``A`` gives ``x`` the cotangent
``A^H g`` (a sparse product), and a differentiated ``A`` the entries of ``g x^H`` on its
pattern only.

The module never imports SciPy: a value is sparse only if ``scipy.sparse`` was imported
already (whoever made the value imported it).

>>> import numpy as np, scipy.sparse as sp
>>> S = sp.csr_array(np.array([[2.0, 0.0], [1.0, 3.0]]))
>>> restrict(np.ones((2, 2)), S).toarray()
array([[1., 0.],
       [1., 1.]])
"""

from __future__ import annotations

import sys

import numpy as np

from .errors import UnsupportedCallError
from .indexed_cotangent import IndexedCotangent
from .zero import ZERO


def densify(c):
    """An index chain's dense array; anything else as it is (tangents.densify, which this
    foundation module cannot import: tangents calls it)."""
    return c.dense() if type(c) is IndexedCotangent else c


def sparse_module():
    """``scipy.sparse`` if some code imported it, else None."""
    return sys.modules.get("scipy.sparse")


def is_sparse(x) -> bool:
    """Whether ``x`` is a SciPy sparse matrix or array."""
    sp = sparse_module()
    return sp is not None and sp.issparse(x)


def pattern(S):
    """``(rows, cols)`` of the stored entries of ``S`` (duplicates summed, once each)."""
    c = S.tocoo(copy=True)
    c.sum_duplicates()
    return np.asarray(c.row, dtype=np.intp), np.asarray(c.col, dtype=np.intp)


def gather(G, rows, cols):
    """The entries ``G[rows[k], cols[k]]`` of a cotangent ``G`` (sparse of any pattern,
    dense, ``np.matrix``) as a 1-D array."""
    if G is ZERO:
        return np.zeros(len(rows))
    if is_sparse(G):
        if len(rows) == 0:
            return np.zeros(0, dtype=G.dtype)
        return np.asarray(G.tocsr()[rows, cols]).reshape(-1)
    return np.asarray(densify(G))[rows, cols]


def with_pattern(S, values, rows, cols):
    """A sparse array of ``S``'s shape holding ``values`` at ``(rows, cols)``, in CSR.
    Always a ``csr_array``, whatever ``S`` is: the generated code's elementwise
    derivatives (``g * conj(a)`` of ``s * A``) multiply cotangents, and a ``spmatrix``'s
    ``*`` is a matrix product."""
    return sparse_module().csr_array((np.asarray(values), (rows, cols)), shape=S.shape)


def restrict(G, S):
    """The cotangent of the sparse ``S`` from ``G``: ``G``'s entries on ``S``'s pattern."""
    if G is ZERO:
        return ZERO
    rows, cols = pattern(S)
    return with_pattern(S, gather(G, rows, cols), rows, cols)


def _dense(g):
    g = densify(g)
    if is_sparse(g):
        return g  # a sparse product's cotangent stays sparse
    return np.asarray(g)


def _conj(x):
    return x.conj() if np.iscomplexobj(x) else x


def _outer_on_pattern(a, g, b, S):
    """The entries ``(g @ b^H)[i, j]`` (``b`` dense or sparse) on ``S``'s pattern."""
    rows, cols = pattern(S)
    if is_sparse(g) or is_sparse(b):
        return restrict(_as_sparse(g) @ _as_sparse(b).conj().T, S)
    b = np.asarray(b)
    if g.ndim == 1 and b.ndim == 1:  # S @ v: g[i] v[j]
        values = g[rows] * _conj(b)[cols]
    else:  # S @ B: sum over the columns of g[i, :] B[j, :]
        values = np.einsum(
            "kc,kc->k", np.reshape(g, (len(g), -1))[rows], np.reshape(_conj(b), (len(b), -1))[cols]
        )
    return with_pattern(S, values, rows, cols)


def _as_sparse(x):
    if is_sparse(x):
        return sparse_module().csr_array(x)
    return sparse_module().csr_array(np.atleast_2d(np.asarray(x)))


def refuse_operand(x, op):
    """The product ``op`` cannot give a cotangent for an operand of this type."""
    cls = type(x)
    raise UnsupportedCallError(
        f"the operand of {op!r} is a {cls.__module__}.{cls.__qualname__} object, which is "
        "neither an array nor a SciPy sparse matrix, and pullback has no rule for its "
        "product, so no gradient can flow through it.\n"
        f"Fix: convert it first (`np.asarray(obj) {op} x`), call the object's own method "
        "by name (`obj.__matmul__(x)`: a method of your class is differentiated), or "
        "register a rule with `@pullback.rrule` for a function that computes the product."
    )


def sparse_lhs_cotangent(g, a, b):
    """The cotangent of ``a`` in ``a @ b`` where ``a`` or ``b`` is sparse."""
    g = _dense(g)
    if is_sparse(a):
        return _outer_on_pattern(a, g, b, a)
    # dense a, sparse b: g @ b^H, as (conj(b) @ g^T)^T (a sparse-dense product)
    bh = b.conj() if np.iscomplexobj(b) else b
    if getattr(g, "ndim", 2) == 1:
        return np.asarray(bh @ g).reshape(np.shape(a))
    return np.asarray(bh @ np.asarray(g).T).T.reshape(np.shape(a))


def sparse_rhs_cotangent(g, a, b):
    """The cotangent of ``b`` in ``a @ b`` where ``a`` or ``b`` is sparse."""
    g = _dense(g)
    if is_sparse(b):
        # (a^H g) on b's pattern: the transpose of g^T conj(a) restricted to b^T's pattern
        rows, cols = pattern(b)
        if is_sparse(a) or is_sparse(g):
            return restrict(_as_sparse(a).conj().T @ _as_sparse(g), b)
        a_ = _conj(np.asarray(a))
        if a_.ndim == 1:  # v @ S: conj(v[i]) g[j]
            values = a_[rows] * np.asarray(g)[cols]
        else:  # A @ S: sum over the rows of conj(A[:, i]) G[:, j]
            values = np.einsum("ck,ck->k", a_[:, rows], np.asarray(g)[:, cols])
        return with_pattern(b, values, rows, cols)
    ah = a.conj().T if np.iscomplexobj(a) else a.T
    return np.asarray(ah @ g).reshape(np.shape(b))


def _refuse_shape(g, x):
    raise UnsupportedCallError(
        f"a differentiated sparse matrix of shape {x.shape} got a cotangent of shape "
        f"{np.shape(g)} from an elementwise operator: for a scipy.sparse spmatrix `A * x` "
        "(and `x * A`) is a matrix product, which the elementwise derivative of `*` does not "
        "describe, and a sparse matrix does not broadcast.\n"
        "Fix: write the matrix product as `A @ x`, the elementwise one as `A.multiply(x)`."
    )


def _real_like(v, x):
    """``v`` real where ``x`` is, in ``x``'s floating dtype."""
    if not np.iscomplexobj(x) and np.iscomplexobj(v):
        v = v.real
    dtype = getattr(x, "dtype", None)
    if dtype is not None and dtype.kind in "fc" and getattr(v, "dtype", dtype) != dtype:
        v = v.astype(dtype)
    return v


def unbroadcast_sparse(g, x):
    """:func:`pullback.tangents.unbroadcast` where ``g`` or ``x`` is sparse: the cotangent
    of a sparse ``x`` on its pattern; a sparse ``g`` summed down to a dense ``x``'s shape
    (``2.0 * A``'s scalar, ``A.multiply(row)``'s row)."""
    if is_sparse(x):
        if np.ndim(g) == 0 and not is_sparse(g):  # one number for every stored entry
            rows, cols = pattern(x)
            return with_pattern(x, np.full(len(rows), densify(g)), rows, cols)
        if np.shape(g) != x.shape:
            _refuse_shape(g, x)
        out = restrict(g, x)
        return out.astype(x.dtype) if x.dtype.kind == "f" and out.dtype.kind != "c" else out
    shape = np.shape(x)
    if shape == g.shape:
        return _real_like(g.toarray(), x)
    if len(shape) > 2 or any(
        s not in (1, t) for s, t in zip(shape[::-1], g.shape[::-1], strict=False)
    ):
        _refuse_shape_dense(g, x)
    out = g
    full = (1,) * (2 - len(shape)) + tuple(shape)
    for axis in (0, 1):
        if full[axis] == 1 and g.shape[axis] != 1:
            out = out.sum(axis=axis)
            out = out.reshape((1, -1) if axis == 0 else (-1, 1))
    v = np.asarray(out.toarray() if is_sparse(out) else out).reshape(shape)
    if not shape:
        v = v[()]
    return _real_like(v, x)


def _refuse_shape_dense(g, x):
    raise UnsupportedCallError(
        f"the cotangent of a sparse matrix product has shape {g.shape}, which does not "
        f"broadcast to the shape {np.shape(x)} of its dense operand.\n"
        "Fix: give the operand the matrix's shape (or a row or column of it)."
    )


def transposed(x):
    """``x.T`` of a dense or sparse matrix (a rule's pullback's own transpose)."""
    return x.T


def adjoint(x):
    """``x^H`` of a dense or sparse matrix."""
    return x.conj().T if np.iscomplexobj(x) else x.T


def dense(x):
    """``x`` as an ndarray (``x.toarray()`` of a sparse ``x``)."""
    return x.toarray() if is_sparse(x) else np.asarray(densify(x))


def index_cotangent(S, index, G):
    """The cotangent of the sparse ``S`` from the cotangent ``G`` of ``S[index]`` (any index
    SciPy takes): the same index of ``S``'s entries' labels ``1..nnz`` tells which entry
    each place of ``S[index]`` holds."""
    rows, cols = pattern(S)
    labels = type(S)((np.arange(1.0, len(rows) + 1.0), (rows, cols)), shape=S.shape)
    sub = labels[index]
    values = np.zeros(len(rows), dtype=np.result_type(getattr(G, "dtype", float), float))
    if not is_sparse(sub):  # one entry (S[i, j]): 0 where S stores none
        at = int(np.asarray(sub).reshape(()))
        if at:
            values[at - 1] = np.asarray(densify(G)).reshape(())
        return with_pattern(S, values, rows, cols)
    c = sub.tocoo()
    places = tuple(np.asarray(p, np.intp) for p in c.coords)
    ids = np.asarray(c.data, np.intp) - 1
    g = gather(G, *places) if len(places) == 2 else np.asarray(densify(G))[places[0]]
    np.add.at(values, ids, g)
    return with_pattern(S, values, rows, cols)


def refuse_sparse_reduction(name, x):
    """``np.sum(S)`` (or ``np.mean``) of a differentiated sparse matrix: its dense cotangent
    would meet an ``spmatrix``'s ``*`` (a matrix product) in the derivatives that follow;
    the matrix's own method has a rule that keeps the cotangent on its pattern."""
    if is_sparse(x):
        raise UnsupportedCallError(
            f"pullback: np.{name} of a differentiated scipy.sparse matrix has no rule (its "
            "cotangent would be a dense array where the matrix's is sparse).\n"
            f"Fix: call the matrix's own method, `S.{name}()` (or `S.{name}(axis=0)`)."
        )
