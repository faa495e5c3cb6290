"""scipy.sparse: matrices built from differentiated values (scipy_sparse.py's family).

The cotangent of what a builder returns is a sparse matrix on its pattern
(:mod:`pullback.sparse_values`); each rule reads it back at the places its inputs went:

* the classes (``csr_matrix``, ``csr_array``, ``csc_*``, ``coo_*``) from
  ``(data, (rows, cols))`` (duplicates summed: each gets the entry's cotangent), from
  ``(data, indices, indptr)``, from a dense array or from another sparse matrix;
* ``diags``/``diags_array`` (a list of diagonals, or one, numbers broadcast along theirs)
  and ``spdiags`` (entries outside the matrix get 0): where each value went is read by
  building the same matrix from the values' labels ``1, 2, ...``;
* ``kron``, ``block_diag``, ``vstack``, ``hstack`` of sparse or dense operands.

A pattern that depends on a differentiated value (``csr_matrix(x * (x > 0))`` drops the
zeros it finds) keeps the pattern of this call: the zeros' entries get no cotangent, as
``np.where`` gives none to the branch it did not take.

>>> import numpy as np, scipy.sparse as sp
>>> from pullback import grad
>>> grad(lambda k: np.sum(sp.diags(k, 1) @ np.arange(3.0)))(np.ones(2))
array([1., 2.])
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import UnsupportedCallError
from ..registry import transformable
from ..sparse_values import dense, gather, is_sparse, pattern, restrict, with_pattern
from ..tangents import NO_TANGENT, densify
from .scipy_sparse_common import fitted, sparse_rule, with_function

_BUILDERS = ("csr_matrix csr_array csc_matrix csc_array coo_matrix coo_array").split()


def _nested(values) -> bool:
    """Whether ``values`` is a list of diagonals (not one diagonal of numbers)."""
    return isinstance(values, (list, tuple)) and any(
        np.ndim(v) or isinstance(v, (list, tuple)) for v in values
    )


def _labels(values):
    """Labels ``1..n`` shaped like ``values`` (a number, an array, or a list of them), and
    ``n``; the matrix built from them shows where each value went."""
    if _nested(values):
        out, n = [], 0
        for v in values:
            size = int(np.size(v))
            out.append(np.arange(n + 1, n + size + 1, dtype=float).reshape(np.shape(v)))
            n += size
        return out, n
    size = int(np.size(values))
    return np.arange(1, size + 1, dtype=float).reshape(np.shape(values)), size


def _places(M, n):
    """``(rows, cols, label ids, n)`` of a matrix built from labels."""
    c = M.tocoo()
    ids = np.asarray(c.data, dtype=np.intp) - 1
    return np.asarray(c.row, np.intp), np.asarray(c.col, np.intp), ids, n


def diag_places(diagonals, offsets, shape):
    labels, n = _labels(diagonals)
    return _places(sp.diags(labels, offsets, shape=shape), n)


def spdiags_places(data, diags, m, n):
    labels, size = _labels(np.asarray(data))
    return _places(sp.spdiags(labels, diags, m, n), size)


def is_nested(values):
    return _nested(values)


@transformable
def label_sums(g, ids, n):
    """The cotangent of each label's value: the sum of ``g`` over its places."""
    if np.iscomplexobj(g):
        return np.bincount(ids, np.real(g), n) + 1j * np.bincount(ids, np.imag(g), n)
    return np.bincount(ids, g, n)


@transformable
def split_like(flat, values):
    """``flat`` (one cotangent a label) in the structure of ``values``, each fitted."""
    if not is_nested(values):
        return fitted(np.reshape(flat, np.shape(values)), values)
    out = []
    at = 0
    for v in values:
        size = np.size(v)
        out.append(fitted(np.reshape(flat[at : at + size], np.shape(v)), v))
        at = at + size
    if isinstance(values, tuple):
        return tuple(out)
    return out


@transformable
def diags_pullback(dy, diagonals, offsets=0, shape=None, format=None, dtype=None):
    rows, cols, ids, n = diag_places(diagonals, offsets, shape)
    flat = label_sums(gather(densify(dy), rows, cols), ids, n)
    return split_like(flat, diagonals), NO_TANGENT


@transformable
def spdiags_pullback(dy, data, diags, m=None, n=None, format=None):
    rows, cols, ids, size = spdiags_places(data, diags, m, n)
    flat = label_sums(gather(densify(dy), rows, cols), ids, size)
    return fitted(np.reshape(flat, np.shape(data)), data), NO_TANGENT, NO_TANGENT, NO_TANGENT


def form_of(arg1):
    """How a sparse class was called: from a sparse matrix, ``(data, (rows, cols))``,
    ``(data, indices, indptr)``, or a dense array."""
    if is_sparse(arg1):
        return "sparse"
    if isinstance(arg1, tuple) and len(arg1) == 2 and isinstance(arg1[1], (tuple, list)):
        return "coo"
    if isinstance(arg1, tuple) and len(arg1) == 3:
        return "compressed"
    if isinstance(arg1, tuple):
        raise UnsupportedCallError(
            f"pullback: a scipy.sparse matrix built from a tuple of {len(arg1)} items has "
            "no rule.\nFix: build it from (data, (rows, cols)), (data, indices, indptr) "
            "or a dense array."
        )
    return "dense"


def coo_places(arg1):
    rows, cols = arg1[1]
    return np.asarray(rows, np.intp).reshape(-1), np.asarray(cols, np.intp).reshape(-1)


def compressed_places(arg1, compressed):
    """``(rows, cols, stored)`` of ``(data, indices, indptr)`` (CSR or CSC)."""
    data, indices, indptr = arg1
    indptr = np.asarray(indptr, np.intp)
    stored = int(indptr[-1])
    major = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    minor = np.asarray(indices, np.intp)[:stored]
    if compressed == "csr":
        return major, minor, np.size(data) - stored
    return minor, major, np.size(data) - stored


@transformable
def builder_cotangent(dy, arg1, compressed):
    """The cotangent of a sparse class's first argument."""
    form = form_of(arg1)
    if form == "sparse":
        return restrict(densify(dy), arg1)
    if form == "coo":
        rows, cols = coo_places(arg1)
        data = arg1[0]
        d = gather(densify(dy), rows, cols)
        return (fitted(np.reshape(d, np.shape(data)), data), (NO_TANGENT, NO_TANGENT))
    if form == "compressed":
        rows, cols, left = compressed_places(arg1, compressed)
        data = arg1[0]
        d = np.concatenate((gather(densify(dy), rows, cols), np.zeros(left)))
        return (fitted(np.reshape(d, np.shape(data)), data), NO_TANGENT, NO_TANGENT)
    return fitted(dense(dy), arg1)


@transformable
def csr_pullback(dy, arg1, shape=None, dtype=None, copy=False, **kwargs):
    return (builder_cotangent(dy, arg1, "csr"),)


@transformable
def csc_pullback(dy, arg1, shape=None, dtype=None, copy=False, **kwargs):
    return (builder_cotangent(dy, arg1, "csc"),)


# -- assembling blocks ------------------------------------------------------------------
def _entries_of(x):
    """``(rows, cols, values)`` of every stored entry of ``x`` (sparse), every entry of a
    dense one."""
    if is_sparse(x):
        r, c = pattern(x)
        return r, c, gather(x, r, c)
    a = np.atleast_2d(np.asarray(x))
    r, c = np.indices(a.shape)
    return r.reshape(-1), c.reshape(-1), a.reshape(-1)


def _on(x, rows, cols, values):
    """The cotangent ``values`` at ``(rows, cols)`` for the operand ``x``."""
    if is_sparse(x):
        return with_pattern(x, values, rows, cols)
    return fitted(values.reshape(np.shape(x)), x)


def kron_pullback(dy, A, B, format=None):
    G = densify(dy)
    ra, ca, va = _entries_of(A)
    rb, cb, vb = _entries_of(B)
    mb, nb = _shape2(B)
    rows = ra[:, None] * mb + rb[None, :]
    cols = ca[:, None] * nb + cb[None, :]
    g = gather(G, rows.reshape(-1), cols.reshape(-1)).reshape(rows.shape)
    da = g @ np.conj(vb)
    db = np.conj(va) @ g
    return _on(A, ra, ca, da), _on(B, rb, cb, db), NO_TANGENT


def _shape2(x):
    return x.shape if is_sparse(x) else np.atleast_2d(np.asarray(x)).shape


def _block(G, r0, r1, c0, c1, x):
    """The part ``G[r0:r1, c0:c1]`` of a cotangent, for the block ``x``."""
    part = G.tocsr()[r0:r1, c0:c1] if is_sparse(G) else np.asarray(G)[r0:r1, c0:c1]
    if is_sparse(x):
        return restrict(part, x)
    return fitted(dense(part).reshape(np.shape(x)), x)


def block_diag_pullback(dy, mats, format=None, dtype=None):
    G, r, c, out = densify(dy), 0, 0, []
    for x in mats:
        m, n = _shape2(x)
        out.append(_block(G, r, r + m, c, c + n, x))
        r, c = r + m, c + n
    return (type(mats)(out) if isinstance(mats, (list, tuple)) else out,)


def _stack_pullback(axis):
    def stack_pullback(dy, blocks, format=None, dtype=None):
        G, at, out = densify(dy), 0, []
        rows, cols = _shape2(dy) if is_sparse(dy) else np.shape(G)
        for x in blocks:
            m, n = _shape2(x)
            if axis == 0:
                out.append(_block(G, at, at + m, 0, cols, x))
                at += m
            else:
                out.append(_block(G, 0, rows, at, at + n, x))
                at += n
        return (type(blocks)(out) if isinstance(blocks, (list, tuple)) else out,)

    return stack_pullback


def register_build(r):
    entries = [
        (sp.diags, "scipy.sparse.diags", diags_pullback),
        (getattr(sp, "diags_array", None), "scipy.sparse.diags_array", diags_pullback),
        (sp.spdiags, "scipy.sparse.spdiags", spdiags_pullback),
        (sp.kron, "scipy.sparse.kron", kron_pullback),
        (sp.block_diag, "scipy.sparse.block_diag", block_diag_pullback),
        (sp.vstack, "scipy.sparse.vstack", _stack_pullback(0)),
        (sp.hstack, "scipy.sparse.hstack", _stack_pullback(1)),
    ]
    for b in _BUILDERS:
        pb = csc_pullback if b.startswith("csc") else csr_pullback
        entries.append((getattr(sp, b), f"scipy.sparse.{b}", pb))
    # integer bookkeeping of the pullback functions: run as they are, differentiated or not
    r.nondiff(diag_places, spdiags_places, is_nested, form_of, coo_places, compressed_places)
    for fn, name, pullback_fn in entries:
        if fn is not None:
            r.rule(fn, sparse_rule(fn, pullback_fn), name=name)
            with_function(r.reg, fn, pullback_fn)
