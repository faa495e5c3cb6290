"""``np.cov`` and ``np.corrcoef``, rules of the numpy_misc family (registered there).

``C = Xc Xc^H / fact`` with ``Xc`` the rows of ``m`` (and ``y``) less their means, so the
cotangent of ``X`` is ``(G + G^H) Xc / fact``; ``corrcoef``'s ``R = C / sqrt(C_ii C_jj)``
adds the diagonal's share first. With weights ``w = fweights * aweights`` the rows are
centred on their weighted means and ``C = Xc diag(w) Xc^H / fact`` (NumPy's ``fact``:
``sum(w) - ddof * sum(w * aweights) / sum(w)``), so ``X``'s cotangent is
``(G + G^H) Xc diag(w) / fact`` (the weighted centring adds nothing: ``Xc w = 0``), and a
real ``aweights`` gets ``f_k xc_k^T G xc_k / fact - <G, C> dfact/da_k / fact``
(``fweights`` are integers: no cotangent).

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


def _cov_backward(G, X, n_m, tm, ty, m, y, fact, w=None):
    """Cotangents of m and y for C = Xc diag(w) Xc^H / fact, given dC = G (V x V)."""
    Xc = _centred(X, w)
    dX = np.matmul(G + np.conj(G.T), Xc if w is None else Xc * w) / fact
    dm = dX[:n_m]
    dm = dm.T if tm else dm
    out_m = finalize(np.reshape(dm, np.shape(m)), m)
    if y is None:
        return out_m, None
    dyv = dX[n_m:]
    dyv = dyv.T if ty else dyv
    return out_m, finalize(np.reshape(dyv, np.shape(y)), y)


def _centred(X, w):
    """The rows of ``X`` less their (weighted) means."""
    if w is None:
        return X - np.mean(X, axis=1, keepdims=True)
    return X - (np.matmul(X, w) / np.sum(w))[:, None]


def _weights(p):
    """``(w, f, a)``: the product of the weights NumPy uses (None without any), the
    frequency weights and the observation weights as float arrays (ones where not given)."""
    f, a = p.get("fweights"), p.get("aweights")
    if f is None and a is None:
        return None, None, None
    f = np.ones(1) if f is None else np.asarray(f, dtype=float)
    a = np.ones(1) if a is None else np.asarray(a, dtype=float)
    return f * a, f, a


def _aweights_cotangent(G, X, w, f, a, C, fact, ddof):
    """The cotangent of real ``aweights`` (see the module docstring)."""
    if np.iscomplexobj(X) or np.iscomplexobj(G):
        raise UnsupportedCallError(
            "pullback: np.cov(aweights=...) of complex data: the weights' gradient is not "
            "implemented; pass the weights as a constant."
        )
    Xc = _centred(X, w)
    q = np.einsum("ik,ij,jk->k", Xc, G, Xc)
    v1 = np.sum(w)
    f = np.broadcast_to(f, np.shape(w))
    if ddof == 0:
        dfact = f
    else:  # fact = v1 - ddof * sum(f a^2) / v1
        dfact = f - ddof * (2.0 * f * a / v1 - np.sum(w * a) * f / v1**2)
    return (f * q - np.sum(G * np.real(C)) * dfact) / fact


def _cov_setup(name, m, args, kwargs, with_ddof):
    names = (
        ("y", "rowvar", "bias", "ddof", "fweights", "aweights") if with_ddof else ("y", "rowvar")
    )
    defaults = (None, True, False, None, None, None)[: len(names)]
    p = bind(args, kwargs, names, defaults, name=f"np.{name}", known=("dtype",))
    X, n_m, tm, ty = _cov_parts(m, p["y"], p["rowvar"], kwargs.get("dtype"))
    ddof = p.get("ddof")
    if ddof is None:
        ddof = 0 if p.get("bias", False) else 1
    w = _weights(p)[0]
    if w is None:
        fact = X.shape[1] - ddof
    elif ddof == 0:
        fact = np.sum(w)
    elif p.get("aweights") is None:
        fact = np.sum(w) - ddof
    else:
        fact = np.sum(w) - ddof * np.sum(w * _weights(p)[2]) / np.sum(w)
    return p, X, n_m, tm, ty, fact, ddof


def cov_rrule(m, *args, **kwargs):
    out = np.cov(m, *args, **kwargs)
    p, X, n_m, tm, ty, fact, ddof = _cov_setup("cov", m, args, kwargs, True)
    w, f, a = _weights(p)
    V = X.shape[0]
    # aweights by keyword: its cotangent in a dict after the positional ones
    # (rule.extra["keyword_cotangents"]); by position (the 7th): at its place
    keyword = kwargs.get("aweights") is not None
    positional = len(args) >= 6 and args[5] is not None

    def cov_pullback(dC):
        if dC is ZERO:
            cots = zeros_for((m,) + args)
            return cots + ({"aweights": zeros_for((p["aweights"],))[0]},) if keyword else cots
        G = np.reshape(np.asarray(densify(dC)), (V, V))
        dm, dyv = _cov_backward(G, X, n_m, tm, ty, m, p["y"], fact, w)
        cots = _positional_cotangents(dm, dyv, args)
        if not (keyword or positional):
            return cots
        da = finalize(_aweights_cotangent(G, X, w, f, a, out, fact, ddof), p["aweights"])
        if positional:
            return cots[:6] + (da,) + cots[7:]
        return cots + ({"aweights": da},)

    return out, cov_pullback


def corrcoef_rrule(x, *args, **kwargs):
    out = np.corrcoef(x, *args, **kwargs)
    p, X, n_m, tm, ty, fact, _ = _cov_setup("corrcoef", x, args, kwargs, False)
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
