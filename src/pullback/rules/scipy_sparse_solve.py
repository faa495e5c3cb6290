"""scipy.sparse.linalg: sparse solves, differentiated by the implicit function theorem.

``x = spsolve(A, b)`` solves ``A x = b``; with ``lam = A^-H g`` (one adjoint solve for
the cotangent ``g`` of ``x``), ``b`` gets ``lam`` and ``A`` gets ``-lam x^H`` on ``A``'s own
pattern (never a dense matrix): the FEM case, a stiffness matrix assembled from
differentiated moduli. The adjoint solve factors ``A`` once (``splu``) for every column of
``g``.

* ``spsolve(A, b)``: ``b`` a vector, a matrix or sparse; ``A`` constant or built from
  differentiated values.
* ``splu(A).solve(b, trans)`` and ``factorized(A)(b)`` (the SuperLU object's ``solve``):
  the factors are of a constant matrix; ``b`` is differentiated. ``splu``/``spilu``/
  ``factorized`` of a differentiated matrix are refused (their factors carry no gradient:
  ``spsolve`` does).
* ``cg``, ``gmres``, ``bicgstab``, ``minres`` and the other Krylov solvers returning
  ``(x, info)``: the adjoint is solved by the same method with the same tolerances; an
  ``info != 0`` (no convergence) is refused, forward or adjoint, since the implicit
  gradient is that of the exact solution.
* ``expm_multiply(A, v)`` (no ``start``/``stop``): ``v`` gets ``expm_multiply(A^H, g)``; a
  differentiated ``A`` is refused.

>>> import numpy as np, scipy.sparse as sp, scipy.sparse.linalg as spl
>>> from pullback import grad
>>> A = sp.csc_array(np.array([[4.0, 1.0], [1.0, 3.0]]))
>>> g = grad(lambda b: np.sum(spl.spsolve(A, b)))(np.ones(2))
>>> bool(np.allclose(g, np.linalg.solve(A.toarray().T, np.ones(2))))
True
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spl

from ..errors import UnsupportedCallError
from ..registry import transformable
from ..sparse_values import adjoint, dense, is_sparse, pattern, with_pattern
from ..tangents import NO_TANGENT, ZERO, densify
from ._util import Refused, Registrar, dy_parts
from .scipy_sparse_common import carries, fit, fitted, with_function

FAMILY = "scipy_sparse"

REQUIRES = "scipy.sparse.linalg"

_KRYLOV = ("cg", "gmres", "bicgstab", "minres")


def _dense(v):
    v = densify(v)
    return v.toarray() if is_sparse(v) else np.asarray(v)


@transformable
def outer_on(A, lam, x):
    """``-lam x^H`` on ``A``'s pattern (sparse ``A``), or dense (a dense ``A``)."""
    lam = np.reshape(lam, (np.shape(A)[0], -1))
    x = np.reshape(x, (np.shape(A)[1], -1))
    if not is_sparse(A):
        return -(lam @ np.conj(x).T)
    rows, cols = pattern(A)
    return with_pattern(A, -np.einsum("kc,kc->k", lam[rows], np.conj(x)[cols]), rows, cols)


def _factor(A):
    return spl.splu(sp.csc_matrix(A))


def _adjoint_trans(A):
    return "H" if np.iscomplexobj(A) else "T"


def _column_solve(lu, g, trans):
    """``lu.solve`` of a vector or of each column of a matrix (SuperLU takes both)."""
    return lu.solve(np.asarray(g), trans=trans)


def solve_pair(A, b, g):
    """``(A^-1 b, A^-H g)`` with one factorization of ``A``: the solution and the adjoint
    solution of ``spsolve``'s pullback (its rule differentiates both again)."""
    lu = _factor(A)
    x = _column_solve(lu, _dense(b), "N")
    return x, _column_solve(lu, g, _adjoint_trans(A))


def _solve_pair_rrule(A, b, g):
    lu = _factor(A)
    x = _column_solve(lu, _dense(b), "N")
    lam = _column_solve(lu, g, _adjoint_trans(A))

    def solve_pair_pullback(dy):
        cx, cl = dy_parts(dy, 2)
        # x = A^-1 b: b gets mu = A^-H cx, A gets -mu x^H; lam = A^-H g: g gets
        # nu = A^-1 cl, A gets -lam nu^H
        mu = ZERO if cx is ZERO else _column_solve(lu, _dense(cx), _adjoint_trans(A))
        nu = ZERO if cl is ZERO else _column_solve(lu, _dense(cl), "N")
        dA = ZERO
        if mu is not ZERO:
            dA = outer_on(A, mu, x)
        if nu is not ZERO:
            dA = outer_on(A, lam, nu) if dA is ZERO else dA + outer_on(A, lam, nu)
        return (fitted(dA, A) if carries(A) else NO_TANGENT, fitted(mu, b), fitted(nu, g))

    return (x, lam), solve_pair_pullback


def _spsolve_rrule(A, b, permc_spec=None, use_umfpack=True):
    x = spl.spsolve(A, b, permc_spec, use_umfpack)

    def spsolve_pullback(dy):
        if dy is ZERO:
            return tuple(ZERO if carries(a) else NO_TANGENT for a in (A, b)) + (NO_TANGENT,) * 2
        g = np.reshape(_dense(dy), np.shape(_dense(x)))
        lam = np.reshape(_column_solve(_factor(A), g, _adjoint_trans(A)), np.shape(b))
        dA = outer_on(A, lam, _dense(x)) if carries(A) else NO_TANGENT
        return fit(fitted(dA, A), A), fit(fitted(lam, b), b), NO_TANGENT, NO_TANGENT

    return x, spsolve_pullback


@transformable
def spsolve_function_pullback(dy, A, b, permc_spec=None, use_umfpack=True):
    # the differentiable-again form: x and lam from one factorization (solve_pair's rule)
    g = np.reshape(dense(dy), np.shape(b))
    x, lam = solve_pair(A, b, g)
    return fitted(outer_on(A, lam, x), A), fitted(lam, b), NO_TANGENT, NO_TANGENT


def _refuse_factors(name):
    def factors_rrule(A, *args, **kwargs):
        raise UnsupportedCallError(
            f"pullback: scipy.sparse.linalg.{name} of a matrix that depends on a "
            "differentiated value has no rule (its factors carry no gradient).\n"
            "Fix: solve with scipy.sparse.linalg.spsolve(A, b), whose rule differentiates "
            "A and b (factor only constant matrices with splu)."
        )

    return factors_rrule


def adjoint_trans(trans, complex_):
    """The ``trans`` of the adjoint solve of ``lu.solve(b, trans)`` (``None``: conj(A),
    solved as ``conj(lu.solve(conj(g)))``)."""
    if not complex_:
        return "N" if trans in ("T", "H") else "T"
    return {"N": "H", "H": "N"}.get(trans)


def _superlu_solve_rrule(lu, rhs, trans="N"):
    y = lu.solve(rhs, trans)

    def superlu_solve_pullback(dy):
        if dy is ZERO:
            return NO_TANGENT, ZERO, NO_TANGENT
        return superlu_solve_function_pullback(dy, lu, rhs, trans)

    return y, superlu_solve_pullback


@transformable
def superlu_solve_function_pullback(dy, lu, rhs, trans="N"):
    g = dense(dy)
    t = adjoint_trans(trans, np.iscomplexobj(g) or np.iscomplexobj(rhs))
    if t is None:  # A^T's adjoint is conj(A)
        return NO_TANGENT, fitted(np.conj(lu.solve(np.conj(g), "N")), rhs), NO_TANGENT
    return NO_TANGENT, fitted(lu.solve(g, t), rhs), NO_TANGENT


def _adjoint_operator(A):
    if is_sparse(A) or isinstance(A, np.ndarray):
        return A.conj().T
    return spl.aslinearoperator(A).H


def _unconverged(name, info, which):
    raise UnsupportedCallError(
        f"pullback: scipy.sparse.linalg.{name} did not converge in the {which} solve "
        f"(info={info}); the implicit gradient is that of the exact solution, which this "
        "iterate is not.\nFix: raise maxiter, loosen rtol/atol, or give a preconditioner M."
    )


def _krylov_rule(fn, name):
    def krylov_rrule(A, b, x0=None, **kwargs):
        x, info = fn(A, b, x0, **kwargs)
        if info != 0:
            _unconverged(name, info, "forward")

        def krylov_pullback(dy):
            gx = dy_parts(dy, 2)[0]
            if gx is ZERO:
                return tuple(ZERO if carries(a) else NO_TANGENT for a in (A, b, x0))
            options = {k: v for k, v in kwargs.items() if k not in ("callback", "M", "x0")}
            if kwargs.get("M") is not None:
                options["M"] = _adjoint_operator(kwargs["M"])
            lam, info2 = fn(_adjoint_operator(A), _dense(gx), **options)
            if info2 != 0:
                _unconverged(name, info2, "adjoint")
            lam = np.reshape(lam, np.shape(b))
            dA = outer_on(A, lam, x) if carries(A) else NO_TANGENT
            dx0 = ZERO if x0 is not None and carries(x0) else NO_TANGENT
            return fit(dA, A), fit(lam, b), dx0

        return (x, info), krylov_pullback

    return krylov_rrule


_EXPM_A = Refused(
    "scipy.sparse.linalg.expm_multiply(A, v) with respect to A",
    "only v is differentiated (for a small A, scipy.linalg.expm(A.toarray()) @ v differentiates A)",
)


def _expm_multiply_rrule(A, B, start=None, stop=None, num=None, endpoint=None, traceA=None):
    if start is not None or stop is not None or num is not None:
        raise UnsupportedCallError(
            "pullback: scipy.sparse.linalg.expm_multiply with start/stop/num has no rule.\n"
            "Fix: call it once for each time t as expm_multiply(t * A, v)."
        )
    y = spl.expm_multiply(A, B, traceA=traceA)

    def expm_multiply_pullback(dy):
        if dy is ZERO:
            return NO_TANGENT, ZERO
        return expm_multiply_function_pullback(dy, A, B, traceA=traceA)

    return y, expm_multiply_pullback


@transformable
def expm_multiply_function_pullback(
    dy, A, B, start=None, stop=None, num=None, endpoint=None, traceA=None
):
    trace = None if traceA is None else np.conj(traceA)
    dB = spl.expm_multiply(adjoint(A), dense(dy), traceA=trace)
    return expm_a_cotangent(A), fitted(dB, B)


def expm_a_cotangent(A):
    return _EXPM_A.placed() if carries(A) else NO_TANGENT


def register(reg):
    r = Registrar(reg, FAMILY)
    r.rule(spl.spsolve, _spsolve_rrule, name="scipy.sparse.linalg.spsolve")
    with_function(reg, spl.spsolve, spsolve_function_pullback, keep_closure=True)
    r.rule(solve_pair, _solve_pair_rrule, name="pullback.rules.scipy_sparse_solve.solve_pair")
    r.nondiff(adjoint_trans, expm_a_cotangent)
    for name in ("splu", "spilu", "factorized"):
        r.rule(getattr(spl, name), _refuse_factors(name), name=f"scipy.sparse.linalg.{name}")
    solve = type(spl.splu(sp.csc_matrix(np.eye(1)))).solve
    r.rule(solve, _superlu_solve_rrule, name="scipy.sparse.linalg.SuperLU.solve")
    with_function(reg, solve, superlu_solve_function_pullback)
    for name in _KRYLOV:
        fn = getattr(spl, name, None)
        if fn is not None:
            r.rule(fn, _krylov_rule(fn, name), name=f"scipy.sparse.linalg.{name}")
    r.rule(spl.expm_multiply, _expm_multiply_rrule, name="scipy.sparse.linalg.expm_multiply")
    with_function(reg, spl.expm_multiply, expm_multiply_function_pullback)
