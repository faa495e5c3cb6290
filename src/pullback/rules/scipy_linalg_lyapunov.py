"""scipy.linalg Lyapunov and Riccati solvers: ``solve_continuous_lyapunov``,
``solve_discrete_lyapunov``, ``solve_continuous_are`` and ``solve_discrete_are``.

Each pullback solves the adjoint equation, a Lyapunov equation of the same kind
(continuous or discrete) with the transposed (closed-loop) matrix, and is written with the
solvers themselves, so second derivatives run through the same rules:

* ``A X + X A^T = Q``: with ``A^T Z + Z A = dy``, ``dQ = Z`` and
  ``dA = -(Z X^T + Z^T X)``.
* ``A X A^T - X + Q = 0``: with ``A^T Z A - Z + dy = 0``, ``dQ = Z`` and
  ``dA = Z A X^T + Z^T A X``.
* ``A^T X + X A - X B R^-1 B^T X + Q = 0``: with ``K = R^-1 B^T X``, ``Ac = A - B K`` and
  ``Ac Z + Z Ac^T = dy``, ``dQ = -Z``, ``dA = -(X Z^T + X Z)``, ``dB = -dA K^T`` and
  ``dR = -K Z K^T``.
* ``A^T X A - X - A^T X B (R + B^T X B)^-1 B^T X A + Q = 0``: with
  ``K = (R + B^T X B)^-1 B^T X A``, ``Ac = A - B K`` and ``Ac Z Ac^T - Z + dy = 0``,
  ``dQ = Z``, ``dA = X Ac (Z + Z^T)``, ``dB = -dA K^T`` and ``dR = K Z K^T``.

SciPy requires the Riccati equations' ``q`` and ``r`` to be symmetric (it refuses others),
so they move only along symmetric directions: their cotangents are the symmetric parts.
The generalized forms (``e=``, ``s=``) are refused with the substitution that removes
them. Real matrices only (the pullbacks transpose, they do not conjugate).

>>> import numpy as np, scipy.linalg as sl, pullback
>>> def trace_x(a):
...     return np.trace(sl.solve_continuous_lyapunov(a, np.eye(2)))
>>> g = pullback.grad(trace_x)(-np.eye(2))  # diagonal a: trace X = sum 1 / (2 a_ii)
>>> (np.round(g, 6) + 0.0).tolist()  # d/da_ii = -1 / (2 a_ii^2)
[[-0.5, 0.0], [0.0, -0.5]]
"""

from __future__ import annotations

from ..registry import transformable
from . import scipy_linalg as base
from ._util import Registrar
from .scipy_linalg import mT, real_only, refuse, register_transformable, square

FAMILY = "scipy_linalg_lyapunov"
REQUIRES = "scipy.linalg"


@transformable
def sym(g):
    """The symmetric part of ``g``: the cotangent of a matrix SciPy requires symmetric."""
    return 0.5 * (g + mT(g))


@transformable
def solve_continuous_lyapunov_pullback(dy, a, q):
    x = base.sl.solve_continuous_lyapunov(a, q)
    z = base.sl.solve_continuous_lyapunov(mT(a), dy)  # A^T Z + Z A = dy
    return -(z @ mT(x) + mT(z) @ x), z


@transformable
def solve_discrete_lyapunov_pullback(dy, a, q, method=None):
    x = base.sl.solve_discrete_lyapunov(a, q, method)
    z = base.sl.solve_discrete_lyapunov(mT(a), dy, method)  # A^T Z A - Z + dy = 0
    return z @ a @ mT(x) + mT(z) @ a @ x, z


@transformable
def solve_continuous_are_pullback(dy, a, b, q, r, e=None, s=None, balanced=True):
    x = base.sl.solve_continuous_are(a, b, q, r, e, s, balanced)
    k = base.sl.solve(r, mT(b) @ x)
    z = base.sl.solve_continuous_lyapunov(a - b @ k, dy)  # Ac Z + Z Ac^T = dy
    da = -(x @ (z + mT(z)))
    return da, -(da @ mT(k)), -sym(z), -sym(k @ z @ mT(k))


@transformable
def solve_discrete_are_pullback(dy, a, b, q, r, e=None, s=None, balanced=True):
    x = base.sl.solve_discrete_are(a, b, q, r, e, s, balanced)
    xb = x @ b
    k = base.sl.solve(r + mT(b) @ xb, mT(xb) @ a)
    ac = a - b @ k
    z = base.sl.solve_discrete_lyapunov(ac, dy)  # Ac Z Ac^T - Z + dy = 0
    da = x @ ac @ (z + mT(z))
    return da, -(da @ mT(k)), sym(z), sym(k @ z @ mT(k))


def _lyapunov_check(name):
    def check(a, q, *args, **kwargs):
        real_only(name, a, q)
        square(name, a)

    return check


def _are_check(name):
    def check(a, b, q, r, e=None, s=None, balanced=True):
        real_only(name, a, b, q, r)
        square(name, a)
        if e is not None or s is not None:
            refuse(
                name,
                "its generalized form (e= or s=) has no rule",
                "remove s by solving with a - b @ solve(r, s.T) and q - s @ solve(r, s.T), "
                "and e by solving with solve(e, a) and solve(e, b), then X = inv(e).T @ X @ "
                "inv(e)",
            )

    return check


def register(reg):
    try:
        sl = base.load_scipy()
    except ImportError:  # pragma: no cover - scipy is optional
        return
    r = Registrar(reg, FAMILY)
    adjoint = "real; the adjoint Lyapunov equation"
    for fn, pullback_fn, check in (
        (sl.solve_continuous_lyapunov, solve_continuous_lyapunov_pullback, _lyapunov_check),
        (sl.solve_discrete_lyapunov, solve_discrete_lyapunov_pullback, _lyapunov_check),
        (sl.solve_continuous_are, solve_continuous_are_pullback, _are_check),
        (sl.solve_discrete_are, solve_discrete_are_pullback, _are_check),
    ):
        register_transformable(r, fn, pullback_fn, check(fn.__name__), adjoint)
