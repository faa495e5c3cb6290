"""Transformable pullbacks of ``array_api_strict``'s ``linalg`` and ``fft`` extensions
(see ``array_api_pullbacks.py`` for how they are used).

Real matrices; the FFTs take the ``"backward"`` normalization (the default). Imported
only once the user has imported ``array_api_strict``.
"""

from __future__ import annotations

import array_api_strict as xp

from ..registry import transformable
from .array_api_pullbacks import expand, mul, sum_to

# -- linalg -------------------------------------------------------------------------------


@transformable
def inv_pullback(dy, a):
    # d inv(a) = -inv(a) da inv(a)
    ai = xp.conj(xp.matrix_transpose(xp.linalg.inv(a)))
    return (-xp.matmul(xp.matmul(ai, dy), ai),)


@transformable
def det_pullback(dy, a):
    # d det(a) = det(a) tr(inv(a) da)
    scale = xp.expand_dims(xp.expand_dims(mul(dy, xp.conj(xp.linalg.det(a))), axis=-1), axis=-1)
    return (mul(scale, xp.conj(xp.matrix_transpose(xp.linalg.inv(a)))),)


@transformable
def solve_pullback(dy, a, b):
    x = xp.conj(xp.linalg.solve(a, b))
    db = xp.linalg.solve(xp.conj(xp.matrix_transpose(a)), dy)
    if b.ndim == 1:  # a vector right-hand side
        return mul(xp.expand_dims(-db, axis=-1), xp.expand_dims(x, axis=-2)), db
    return sum_to(-xp.matmul(db, xp.matrix_transpose(x)), a), sum_to(db, b)


@transformable
def cholesky_pullback(dy, a, upper=False):
    # L = cholesky(a) reads a's lower triangle. With P = Phi(L^T dL) (lower triangle,
    # diagonal halved), S = L^-T P L^-1 is the gradient for symmetric perturbations; as a
    # function of the lower triangle alone the cotangent is tril(S + S^T) - diag(S).
    low = xp.linalg.cholesky(a)
    dlow = xp.matrix_transpose(dy) if upper else dy
    p = xp.matmul(xp.matrix_transpose(low), dlow)
    half_eye = xp.eye(a.shape[-1], dtype=a.dtype) * 0.5
    p = xp.tril(p) - mul(p, half_eye)
    lt_inv = xp.linalg.inv(xp.matrix_transpose(low))
    s = xp.matmul(xp.matmul(lt_inv, p), xp.matrix_transpose(lt_inv))
    full = s + xp.matrix_transpose(s)
    diagonal = mul(s, 2.0 * half_eye)
    if upper:
        return (xp.triu(full) - diagonal,)
    return (xp.tril(full) - diagonal,)


@transformable
def vector_norm_pullback(dy, x, axis=None, keepdims=False):
    # the 2-norm (a call with ord= goes through the rule, which checks it); the gradient
    # at 0 is taken as 0
    n = xp.linalg.vector_norm(x, axis=axis, keepdims=True)
    safe = xp.where(n == 0, xp.ones_like(n), n)
    return (mul(expand(dy, x, axis), x / safe),)


@transformable
def matrix_norm_pullback(dy, x, keepdims=False):
    # the Frobenius norm (a call with ord= goes through the rule, which checks it)
    n = xp.linalg.matrix_norm(x, keepdims=True)
    safe = xp.where(n == 0, xp.ones_like(n), n)
    return (mul(expand(dy, x, (-2, -1)), x / safe),)


@transformable
def trace_pullback(dy, x, offset=0, dtype=None):
    eye = xp.eye(x.shape[-2], x.shape[-1], k=offset, dtype=x.dtype)
    return (mul(xp.expand_dims(xp.expand_dims(dy, axis=-1), axis=-1), eye),)


@transformable
def vecdot_pullback(dy, a, b, axis=-1):
    g = xp.expand_dims(dy, axis=axis)
    return sum_to(mul(g, b), a), sum_to(mul(g, a), b)


@transformable
def outer_pullback(dy, a, b):
    return xp.matmul(dy, b), xp.matmul(a, dy)


# -- fft ----------------------------------------------------------------------------------
# y = F x with F the DFT (the standard's fft takes complex arrays only): the cotangent of x
# is F^H dy = n * ifft(dy) (conjugate transpose), and for ifft (F^-1 = F^H / n) fft(dy) / n.
# Calls with n= or norm= go through the rules, which take the defaults only.


@transformable
def fft_pullback(dy, x, axis=-1):
    size = float(x.shape[axis])
    return (xp.fft.ifft(dy, axis=axis) * size,)


@transformable
def ifft_pullback(dy, x, axis=-1):
    size = float(x.shape[axis])
    return (xp.fft.fft(dy, axis=axis) / size,)


@transformable
def real_pullback(dy, x):
    return (xp.astype(dy, x.dtype),)


@transformable
def imag_pullback(dy, x):
    return (mul(xp.astype(dy, x.dtype), xp.asarray(1j, dtype=x.dtype)),)
