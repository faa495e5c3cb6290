"""scipy.sparse: the methods of sparse matrices and arrays that compute with their values.

A sparse matrix carries a gradient either as a constant with differentiated dense operands
(``A @ x``, ``A.dot(x)``, ``A.multiply(w)``) or because it was built from differentiated
values (``sp.diags(k)``, ``csr_matrix((data, (rows, cols)))``: scipy_sparse_build.py). Its
cotangent is a sparse matrix with its own pattern (:mod:`pullback.sparse_values`): the
derivative of each stored value, ``O(nnz)`` memory, never a dense ``n x n`` array.

The rules here are keyed by the methods' functions (``_spbase.dot``, ``_csr_base.tocsr``),
which is what a method call resolves to, on a global matrix as on one the function built:

* ``dot``: ``a @ b``'s cotangents (dense, or on a sparse operand's pattern);
* ``multiply``: the elementwise product (with broadcasting of a dense row, column or number);
* ``toarray``, ``todense`` (an ``np.matrix``, as SciPy returns it), ``tocsr``, ``tocsc``,
  ``tocoo``, ``asformat``, ``copy``, ``transpose``, ``conj``: the values moved, read back
  on the pattern;
* ``sum`` (``axis`` None, 0, 1, -1, -2) and ``diagonal`` (offset ``k``).

``A @ x`` itself is the inline ``@`` of the generated code, whose cotangents
(``runtime.matmul_lhs_cotangent``) hand a sparse operand to ``sparse_values``; ``A * x``
follows SciPy's meaning (a matrix product for ``spmatrix``, elementwise for ``sparray``).

>>> import numpy as np, scipy.sparse as sp
>>> from pullback import grad
>>> A = sp.csr_array(np.array([[2.0, 1.0], [0.0, 3.0]]))
>>> grad(lambda x: np.sum(A.dot(x)))(np.ones(2))
array([2., 4.])
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import UnsupportedCallError
from ..registry import transformable
from ..runtime import matmul_lhs_cotangent, matmul_rhs_cotangent
from ..sparse_values import (
    gather,
    is_sparse,
    pattern,
    restrict,
    transposed,
    with_pattern,
)
from ..tangents import NO_TANGENT, densify
from ._util import Registrar
from .scipy_sparse_build import register_build
from .scipy_sparse_common import carries, fit, fitted, sparse_rule, with_function  # noqa: F401
from .scipy_sparse_values import register_values

FAMILY = "scipy_sparse"
REQUIRES = "scipy.sparse"

# the classes whose methods are looked up (each method's function is registered once):
# those a differentiated value reaches through the rules (diags gives dia, the classes
# and conversions csr, csc and coo; lil, dok and bsr have no rule and are refused)
CLASSES = tuple(
    getattr(sp, f"{fmt}_{kind}")
    for fmt in ("csr", "csc", "coo", "dia")
    for kind in ("matrix", "array")
    if hasattr(sp, f"{fmt}_{kind}")
)


def refuse_scalar_dot(other):
    if np.ndim(other) == 0 and not is_sparse(other):
        raise UnsupportedCallError(
            "pullback: A.dot(number) of a sparse matrix has no rule.\n"
            "Fix: write the product with the number as `number * A`."
        )


# -- products -------------------------------------------------------------------------
@transformable
def dot_pullback(dy, A, other):
    refuse_scalar_dot(other)
    return matmul_lhs_cotangent(dy, A, other), matmul_rhs_cotangent(dy, A, other)


@transformable
def entries(x, rows, cols):
    """``x``'s entries at ``(rows, cols)``: sparse, or dense broadcast to the matrix."""
    if is_sparse(x):
        return gather(x, rows, cols)
    m = np.reshape(x, (1,) * (2 - np.ndim(x)) + np.shape(x))
    return m[rows % np.shape(m)[0], cols % np.shape(m)[1]]


@transformable
def multiply_pullback(dy, A, other):
    """``A.multiply(other)``: ``dA = dy * conj(other)`` on A's pattern, ``d other =
    conj(A) * dy`` (summed over the axes a dense ``other`` was broadcast along)."""
    rows, cols = pattern(A)
    g = gather(densify(dy), rows, cols)
    dA = with_pattern(A, g * np.conj(entries(other, rows, cols)), rows, cols)
    d_other = with_pattern(A, g * np.conj(gather(A, rows, cols)), rows, cols)
    return dA, fitted(d_other, other)


# -- the values moved -----------------------------------------------------------------
@transformable
def same_values_pullback(dy, A, *args, **kwargs):
    """The methods that keep every value where it is (``tocsr``, ``toarray``, ``copy``)."""
    return (restrict(densify(dy), A),) + (NO_TANGENT,) * len(args)


@transformable
def transpose_pullback(dy, A, axes=None, copy=False):
    return restrict(transposed(densify(dy)), A), NO_TANGENT, NO_TANGENT


def conj_pullback(dy, A, copy=True):
    return restrict(densify(dy).conj(), A), NO_TANGENT


# -- reductions -----------------------------------------------------------------------
@transformable
def sum_pullback(dy, A, axis=None, dtype=None, out=None):
    rows, cols = pattern(A)
    g = np.asarray(densify(dy))
    if axis is None:
        values = np.broadcast_to(np.reshape(g, ()), np.shape(rows))
    elif axis == 0 or axis == -2:
        values = np.reshape(g, (-1,))[cols]
    else:
        values = np.reshape(g, (-1,))[rows]
    return with_pattern(A, values, rows, cols), NO_TANGENT, NO_TANGENT, NO_TANGENT


@transformable
def diagonal_pullback(dy, A, k=0):
    rows, cols = pattern(A)
    g = np.reshape(np.asarray(densify(dy)), (-1,))
    on = (cols - rows) == k
    if np.size(g) == 0:  # a diagonal outside the matrix
        return with_pattern(A, np.zeros(np.shape(rows)), rows, cols), NO_TANGENT
    values = np.where(on, g[np.where(on, np.minimum(rows, cols), 0)], 0.0)
    return with_pattern(A, values, rows, cols), NO_TANGENT


def _todense_rrule(fn):
    base = sparse_rule(fn, same_values_pullback)

    def todense_rrule(A, *args, **kwargs):
        if min(A.shape) > 1:
            raise UnsupportedCallError(
                "pullback: A.todense() of a differentiated sparse matrix returns a "
                "numpy.matrix, whose `*` and `**` are matrix products and powers, which "
                "pullback's rules (those of arrays) do not follow.\n"
                "Fix: use A.toarray(), the same values as an ndarray."
            )
        return base(A, *args, **kwargs)

    return todense_rrule


# method name -> its pullback (those marked transformable are differentiated again)
METHODS = {
    "dot": dot_pullback,
    "multiply": multiply_pullback,
    "toarray": same_values_pullback,
    "todense": same_values_pullback,
    "tocsr": same_values_pullback,
    "tocsc": same_values_pullback,
    "tocoo": same_values_pullback,
    "asformat": same_values_pullback,
    "copy": same_values_pullback,
    "transpose": transpose_pullback,
    "conj": conj_pullback,
    "conjugate": conj_pullback,
    "sum": sum_pullback,
    "diagonal": diagonal_pullback,
}


def method_functions():
    """``[(function, 'class.method', pullback)]``: each distinct method function once."""
    seen, out = set(), []
    for cls in CLASSES:
        for name, pullback_fn in METHODS.items():
            fn = getattr(cls, name, None)
            if fn is None or id(fn) in seen:
                continue
            seen.add(id(fn))
            out.append((fn, f"scipy.sparse.{cls.__name__}.{name}", pullback_fn))
    return out


def register(reg):
    r = Registrar(reg, FAMILY)
    register_values(r)
    r.nondiff(refuse_scalar_dot)  # (a check in a pullback function)
    for fn, name, pullback_fn in method_functions():
        if name.endswith(".todense"):
            r.rule(fn, _todense_rrule(fn), name=name)
        else:
            r.rule(fn, sparse_rule(fn, pullback_fn), name=name)
        with_function(reg, fn, pullback_fn)
    r.nondiff(
        sp.eye,
        sp.identity,
        sp.issparse,
        names=["scipy.sparse.eye", "scipy.sparse.identity", "scipy.sparse.issparse"],
    )
    register_build(r)
