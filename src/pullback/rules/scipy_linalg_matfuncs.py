"""scipy.linalg matrix functions: expm, expm_frechet and sqrtm.

* ``expm``: the pullback of ``dy`` is the Fréchet derivative at ``A^T`` in the direction
  ``dy`` (the adjoint of ``E -> L(A, E)`` is ``G -> L(A^T, G)``), read off the block
  triangular identity ``expm([[X, E], [0, X]]) = [[expm(X), L(X, E)], [0, expm(X)]]``.
  Written with ``expm`` itself, so second derivatives run through the same rule.
* ``expm_frechet(A, E)``: both outputs are blocks of ``expm([[A, E], [0, A]])``, so the
  pullback is that of ``expm`` at the 2n x 2n block matrix.
* ``sqrtm``: ``X X = A`` gives ``dX X + X dX = dA``; the pullback solves the Sylvester
  equation ``X^T Z + Z X^T = dy`` (``solve_sylvester``). A real matrix whose square root is
  complex (a negative eigenvalue) is refused.

Real matrices only; stacks wherever SciPy takes them (``expm``).
"""

from __future__ import annotations

import numpy as np

from ..registry import transformable
from . import scipy_linalg as base
from ._util import NO_TANGENT, ZERO, Registrar, densify, dy_parts, finalize, zeros_for
from .linalg_pullbacks import is_zero
from .scipy_linalg import mT, real_only, refuse, register_transformable, square

FAMILY = "scipy_linalg_matfuncs"
REQUIRES = "scipy.linalg"


@transformable
def frechet_adjoint(x, g):
    """``L(x^T, g)``: the cotangent of ``x`` for ``expm(x)`` given ``g``, from the upper
    right block of ``expm([[x^T, g], [0, x^T]])``."""
    xt = mT(x)
    n = np.shape(x)[-1]
    top = np.concatenate([xt, g], axis=-1)
    bottom = np.concatenate([np.zeros_like(top[..., :n]), xt], axis=-1)
    big = base.sl.expm(np.concatenate([top, bottom], axis=-2))
    return big[..., :n, n:]


@transformable
def expm_pullback(dy, A):
    return (frechet_adjoint(A, dy),)


def _expm_check(A):
    real_only("expm", A)
    square("expm", A)


@transformable
def frechet_cotangents(A, E, dexp, dL):
    """``(dA, dE)`` for ``(expm(A), L(A, E))`` = blocks of ``expm([[A, E], [0, A]])``."""
    n = np.shape(A)[-1]
    zero = np.zeros_like(A)
    big = np.concatenate(
        [np.concatenate([A, E], axis=-1), np.concatenate([zero, A], axis=-1)], axis=-2
    )
    top = np.concatenate(
        [zero if is_zero(dexp) else densify(dexp), zero if is_zero(dL) else densify(dL)],
        axis=-1,
    )
    dbig = frechet_adjoint(big, np.concatenate([top, np.zeros_like(top)], axis=-2))
    return dbig[..., :n, :n] + dbig[..., n:, n:], dbig[..., :n, n:]


def _expm_frechet_check(A, E, *args, **kwargs):
    real_only("expm_frechet", A, E)
    square("expm_frechet", A)


# A check: transformed code (a second derivative) calls it as it is.
_expm_frechet_check.__pullback_opaque__ = True


@transformable
def expm_frechet_pullback(dy, A, E, method=None, compute_expm=True, check_finite=True):
    _expm_frechet_check(A, E)
    dexp = ZERO
    dL = dy
    if compute_expm:
        dexp = dy[0]
        dL = dy[1]
    dA, dE = frechet_cotangents(A, E, dexp, dL)
    return dA, dE, NO_TANGENT, NO_TANGENT, NO_TANGENT


def _expm_frechet_rrule(A, E, *args, **kwargs):
    _expm_frechet_check(A, E)
    y = base.sl.expm_frechet(A, E, *args, **kwargs)
    both = isinstance(y, tuple)
    AA = np.asarray(A, dtype=np.result_type(A, E, np.float32))
    EE = np.asarray(E, dtype=AA.dtype)
    rest = (NO_TANGENT,) * len(args)

    def expm_frechet_pullback(dy):
        dexp, dL = dy_parts(dy, 2) if both else (ZERO, dy)
        if dexp is ZERO and dL is ZERO:
            return zeros_for((A, E)) + rest
        dA, dE = frechet_cotangents(AA, EE, dexp, dL)
        return (finalize(dA, A), finalize(dE, E)) + rest

    return y, expm_frechet_pullback


@transformable
def sqrtm_pullback(dy, A):
    # X X = A: dX X + X dX = dA, so dA = Z with X^T Z + Z X^T = dy.
    xt = mT(base.sl.sqrtm(A))
    return (base.sl.solve_sylvester(xt, xt, dy),)


def _sqrtm_check(A):
    real_only("sqrtm", A)
    square("sqrtm", A)
    if np.ndim(A) != 2:
        refuse("sqrtm", "its rule is for one matrix", "call it once per matrix of the stack")
    if np.iscomplexobj(base.sl.sqrtm(A)):
        refuse(
            "sqrtm",
            "the square root of this real matrix is complex (it has a negative eigenvalue), "
            "and the rule is for real square roots",
            "differentiate a matrix whose eigenvalues are positive",
        )


def register(reg):
    try:
        sl = base.load_scipy()
    except ImportError:  # pragma: no cover - scipy is optional
        return
    r = Registrar(reg, FAMILY)
    register_transformable(r, sl.expm, expm_pullback, _expm_check, "real; Fréchet block form")
    register_transformable(r, sl.sqrtm, sqrtm_pullback, _sqrtm_check, "real square roots")
    r.rule(sl.expm_frechet, _expm_frechet_rrule, name="scipy.linalg.expm_frechet", notes="real")
    reg.set_pullback_function(sl.expm_frechet, expm_frechet_pullback)
