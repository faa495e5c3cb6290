"""``np.cov`` and ``np.corrcoef``, rules of the numpy_misc family (registered there).

``C = Xc Xc^H / fact`` with ``Xc`` the rows of ``m`` (and ``y``) less their means, so the
cotangent of ``X`` is ``(G + G^H) Xc / fact``; ``corrcoef``'s ``R = C / sqrt(C_ii C_jj)``
adds the diagonal's share first. ``fweights``/``aweights`` have no rule.

>>> import numpy as np
>>> y, pullback = cov_rrule(np.array([[1.0, 2.0, 4.0]]))
>>> round(float(y), 3), pullback(1.0)[0].round(3).tolist()
(2.333, [[-1.333, -0.333, 1.667]])
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedCallError
from ._util import NO_TANGENT, ZERO, bind, densify, finalize, zeros_for


def _rest(args):
    return (NO_TANGENT,) * len(args)


def _positional_cotangents(dm, dyv, args) -> tuple:
    """``m``'s cotangent, then ``y``'s where it was given (first of ``args``) and
    ``NO_TANGENT`` for the other positional arguments."""
    rest = list(_rest(args))
    if args and args[0] is not None:
        rest[0] = dyv
    return (dm,) + tuple(rest)


def _cov_parts(m, y, rowvar, dtype=None):
    X = np.array(m, ndmin=2, dtype=dtype)
    tm = (not rowvar) and X.shape[0] != 1
    if tm:
        X = X.T
    n_m = X.shape[0]
    ty = False
    if y is not None:
        Y = np.array(y, ndmin=2, dtype=dtype)
        ty = (not rowvar) and Y.shape[0] != 1
        if ty:
            Y = Y.T
        X = np.concatenate([X, Y], axis=0)
    return X, n_m, tm, ty


def _cov_backward(G, X, n_m, tm, ty, m, y, fact):
    """Cotangents of m and y for C = Xc Xc^H / fact, given dC = G (V x V)."""
    Xc = X - np.mean(X, axis=1, keepdims=True)
    dX = np.matmul(G + np.conj(G.T), Xc) / fact
    dm = dX[:n_m]
    dm = dm.T if tm else dm
    out_m = finalize(np.reshape(dm, np.shape(m)), m)
    if y is None:
        return out_m, None
    dyv = dX[n_m:]
    dyv = dyv.T if ty else dyv
    return out_m, finalize(np.reshape(dyv, np.shape(y)), y)


def _cov_setup(name, m, args, kwargs, with_ddof):
    names = (
        ("y", "rowvar", "bias", "ddof", "fweights", "aweights") if with_ddof else ("y", "rowvar")
    )
    p = bind(args, kwargs, names, (None, True, False, None, None, None)[: len(names)])
    if p.get("fweights") is not None or p.get("aweights") is not None:
        raise UnsupportedCallError(f"pullback: {name}(fweights=/aweights=) has no rule")
    X, n_m, tm, ty = _cov_parts(m, p["y"], p["rowvar"], kwargs.get("dtype"))
    ddof = p.get("ddof")
    if ddof is None:
        ddof = 0 if p.get("bias", False) else 1
    fact = X.shape[1] - ddof
    return p, X, n_m, tm, ty, fact


def cov_rrule(m, *args, **kwargs):
    out = np.cov(m, *args, **kwargs)
    p, X, n_m, tm, ty, fact = _cov_setup("cov", m, args, kwargs, True)
    V = X.shape[0]

    def cov_pullback(dC):
        if dC is ZERO:
            return zeros_for((m,) + args)
        G = np.reshape(np.asarray(densify(dC)), (V, V))
        dm, dyv = _cov_backward(G, X, n_m, tm, ty, m, p["y"], fact)
        return _positional_cotangents(dm, dyv, args)

    return out, cov_pullback


def corrcoef_rrule(x, *args, **kwargs):
    out = np.corrcoef(x, *args, **kwargs)
    p, X, n_m, tm, ty, fact = _cov_setup("corrcoef", x, args, kwargs, False)
    V = X.shape[0]
    Xc = X - np.mean(X, axis=1, keepdims=True)
    C = np.matmul(Xc, np.conj(Xc.T)) / fact
    d = np.real(np.diag(C))
    s = np.sqrt(np.outer(d, d))
    R = C / s

    def corrcoef_pullback(dR):
        if dR is ZERO or V == 1:
            return zeros_for((x,) + args)
        G = np.reshape(np.asarray(densify(dR)), (V, V))
        # R_ij = C_ij / sqrt(C_ii C_jj)
        GR = np.real(np.conj(G) * R)
        diag_term = (np.sum(GR, axis=1) + np.sum(GR, axis=0)) / (2.0 * d)
        dC = G / s - np.diag(diag_term)
        dm, dyv = _cov_backward(dC, X, n_m, tm, ty, x, p["y"], fact)
        return _positional_cotangents(dm, dyv, args)

    return out, corrcoef_pullback
