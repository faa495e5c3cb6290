"""Linear-algebra functions defined by others: ``np.linalg.cond`` and ``np.linalg.tensorinv``.

* ``cond(x)`` (and ``p=2``/``-2``) is a ratio of the extreme singular values ``s_max /
  s_min``; ``d s_i = u_i^T dx v_i``, so the cotangent is ``dy (u_1 v_1^T / s_min - s_max
  / s_min**2 u_n v_n^T)`` (the reverse for ``p=-2``). Distinct extreme singular values are
  assumed, as for any derivative of a singular value.
* ``cond(x, p)`` for the other norms is ``norm(x, p) * norm(inv(x), p)``: the product rule
  through the matrix norm's cotangent (``'fro'``, ``'nuc'``, ``1``, ``-1``, ``inf``,
  ``-inf``) and ``d inv(x) = -inv(x) dx inv(x)``.
* ``tensorinv(a, ind)`` is the inverse of ``a`` seen as a square matrix, reshaped.

The pullbacks are transformable: second derivatives run through them.

>>> import numpy as np
>>> from pullback import grad
>>> x = np.array([[2.0, 0.0], [0.0, 0.5]])
>>> grad(lambda x: np.linalg.cond(x))(x).tolist()  # cond = x00 / x11 here
[[2.0, 0.0], [0.0, -8.0]]
"""

from __future__ import annotations

import math

import numpy as np

from ..registry import transformable
from ._util import NO_TANGENT, Registrar
from .family_domains import DOMAINS
from .transformable import inv_pullback, rule_from_pullback, set_pullbacks

FAMILY = "linalg_derived"
# Registered on the first lookup of one of its functions (family_domains.py).
DOMAIN = DOMAINS["linalg_derived"]


@transformable
def singular_outer(u, vh, k):
    """``u[:, k] vh[k, :]`` (the derivative of singular value ``k``) for each matrix of a
    stack."""
    return u[..., :, k, None] * vh[..., k, None, :]


@transformable
def matrix_norm_cotangent(g, m, p):
    """The cotangent of ``m`` from the cotangent ``g`` (one per matrix of the stack) of
    ``np.linalg.norm(m, p)`` for a matrix norm ``p``."""
    g = np.reshape(g, np.shape(g) + (1, 1))
    if p == "fro":
        return g * m / np.linalg.norm(m, "fro", (-2, -1), True)
    if p == "nuc":
        u, s, vh = np.linalg.svd(m, full_matrices=False)
        return g * (u @ vh)
    if p in (1, -1):  # the largest (smallest) column sum of |m|
        sums = np.sum(np.abs(m), axis=-2, keepdims=True)
        pick = np.argmax(sums, axis=-1) if p == 1 else np.argmin(sums, axis=-1)
        chosen = np.arange(np.shape(m)[-1]) == pick[..., None]
        return g * np.sign(m) * chosen
    # inf, -inf: the largest (smallest) row sum of |m|
    sums = np.sum(np.abs(m), axis=-1, keepdims=True)
    pick = np.argmax(sums, axis=-2) if p == math.inf else np.argmin(sums, axis=-2)
    chosen = np.arange(np.shape(m)[-2])[:, None] == pick[..., None, :]
    return g * np.sign(m) * chosen


@transformable
def cond_pullback(dy, x, p=None):
    if p is None or p == 2 or p == -2:
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        big, small = s[..., 0:1, None], s[..., -1:, None]
        g = np.reshape(dy, np.shape(dy) + (1, 1))
        if p == -2:  # s_min / s_max
            d = singular_outer(u, vh, -1) / big - small / big**2 * singular_outer(u, vh, 0)
        else:
            d = singular_outer(u, vh, 0) / small - big / small**2 * singular_outer(u, vh, -1)
        return g * d, NO_TANGENT
    xi = np.linalg.inv(x)
    a = np.linalg.norm(x, p, (-2, -1))
    b = np.linalg.norm(xi, p, (-2, -1))
    d_x = matrix_norm_cotangent(dy * b, x, p)
    d_xi = matrix_norm_cotangent(dy * a, xi, p)
    return d_x + inv_pullback(d_xi, x)[0], NO_TANGENT


@transformable
def tensorinv_pullback(dy, a, ind=2):
    shape = np.shape(a)
    n = math.prod(shape[:ind])
    square = np.reshape(a, (n, -1))
    return np.reshape(inv_pullback(np.reshape(dy, (-1, n)), square)[0], shape), NO_TANGENT


def register(reg):
    r = Registrar(reg, FAMILY)
    pairs = ((np.linalg.cond, cond_pullback), (np.linalg.tensorinv, tensorinv_pullback))
    r.rule(np.linalg.cond, rule_from_pullback(np.linalg.cond, cond_pullback), notes="real")
    r.rule(np.linalg.tensorinv, rule_from_pullback(np.linalg.tensorinv, tensorinv_pullback))
    set_pullbacks(reg, pairs)
