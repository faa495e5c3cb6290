"""Grids made from differentiated values: ``np.vander``, ``np.logspace`` and ``np.geomspace``.

* ``vander(x, N)``: column ``j`` is a power ``p`` of ``x``; its derivative ``p x**(p-1)``
  is a column of the Vandermonde matrix one size smaller, so the pullback is written with
  ``np.vander`` itself (no ``0 * x**-1`` at ``x = 0``) and differentiates again.
* ``logspace(start, stop, num, endpoint, base)`` is ``base ** t`` on the linear grid ``t``
  from ``start`` to ``stop``: sample ``k`` at fraction ``f_k`` (``k / (num - 1)``, or
  ``k / num`` without the endpoint) moves by ``(1 - f_k)`` with ``start`` and ``f_k`` with
  ``stop``.
* ``geomspace(start, stop, ...)``: ``y_k = start**(1 - f_k) * stop**f_k``, so ``dy_k/dstart
  = (1 - f_k) y_k / start`` and ``dy_k/dstop = f_k y_k / stop`` (for two negative ends too).

Array ends (samples along ``axis``) get the sum over the samples, fitted to their shape.

>>> import numpy as np
>>> from pullback import grad
>>> g = grad(lambda s: np.sum(np.logspace(s, 1.0, 3)))(0.0)
>>> round(float(g), 6), round((1 + 0.5 * 10**0.5) * float(np.log(10)), 6)
(5.943292, 5.943292)
"""

from __future__ import annotations

import numpy as np

from ..registry import transformable
from ..tangents import unbroadcast
from ._util import NO_TANGENT, Registrar
from .family_domains import DOMAINS
from .transformable import rule_from_pullback, set_pullbacks

FAMILY = "numpy_grids"
# Registered on the first lookup of one of its functions (family_domains.py).
DOMAIN = DOMAINS["numpy_grids"]


@transformable
def vander_pullback(dy, x, N=None, increasing=False):
    n = np.shape(x)[0] if N is None else N
    if n <= 1:  # constant columns only
        return np.zeros(np.shape(x)), NO_TANGENT, NO_TANGENT
    lower = np.vander(x, n - 1, True)  # the powers 0 .. n-2
    # the columns of the powers 1 .. n-1, in that order
    g = dy[:, 1:] if increasing else dy[:, n - 2 :: -1]
    return np.sum(g * np.arange(1, n) * lower, axis=1), NO_TANGENT, NO_TANGENT


def sample_fractions(num, endpoint, ndim, axis):
    """Where each of the ``num`` samples sits between the two ends (0 at the start), shaped
    to broadcast along ``axis`` of a result with ``ndim`` dimensions."""
    f = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    shape = [1] * ndim
    shape[axis] = num
    return np.reshape(f, shape)


sample_fractions.__pullback_opaque__ = True  # (constants: no derivative flows through)


@transformable
def logspace_pullback(dy, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    t = np.linspace(start, stop, num, endpoint, axis=axis)
    y = np.power(base, t)
    f = sample_fractions(num, endpoint, np.ndim(y), axis)
    dt = dy * y * np.log(base)
    d_start = unbroadcast(np.sum(dt * (1.0 - f), axis=axis), start)
    d_stop = unbroadcast(np.sum(dt * f, axis=axis), stop)
    d_base = unbroadcast(dy * t * np.power(base, t - 1.0), base)
    return d_start, d_stop, NO_TANGENT, NO_TANGENT, d_base, NO_TANGENT, NO_TANGENT


@transformable
def geomspace_pullback(dy, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    y = np.geomspace(start, stop, num, endpoint, axis=axis)
    f = sample_fractions(num, endpoint, np.ndim(y), axis)
    g = dy * y
    d_start = unbroadcast(np.sum(g * (1.0 - f), axis=axis) / start, start)
    d_stop = unbroadcast(np.sum(g * f, axis=axis) / stop, stop)
    return d_start, d_stop, NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT


def register(reg):
    r = Registrar(reg, FAMILY)
    pairs = (
        (np.vander, vander_pullback),
        (np.logspace, logspace_pullback),
        (np.geomspace, geomspace_pullback),
    )
    r.rule(np.vander, rule_from_pullback(np.vander, vander_pullback))
    logspace = rule_from_pullback(np.logspace, logspace_pullback, keywords=("base",))
    r.rule(np.logspace, logspace, notes="start, stop and base").extra["keyword_cotangents"] = (
        "base",
    )
    r.rule(np.geomspace, rule_from_pullback(np.geomspace, geomspace_pullback), notes="real ends")
    reg.non_differentiable(sample_fractions, family=FAMILY, trusted=True)
    set_pullbacks(reg, pairs)
