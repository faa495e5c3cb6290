"""Elementwise NumPy functions (ufuncs and friends), mostly as scalar rules."""

from __future__ import annotations

import numpy as np

from ._util import NO_TANGENT, ZERO, unbroadcast

FAMILY = "numpy_ufuncs"


def _tie_split(a, b):
    """Weight 1 where a wins, 0.5 on ties, 0 where b wins (for maximum/minimum)."""
    return np.where(a > b, 1.0, np.where(a == b, 0.5, 0.0))


def _where_rrule(condition, x, y):
    out = np.where(condition, x, y)

    def where_pullback(dy):
        if dy is ZERO:
            return NO_TANGENT, ZERO, ZERO
        zero = np.zeros_like(dy)
        return (
            NO_TANGENT,
            unbroadcast(np.where(condition, dy, zero), x),
            unbroadcast(np.where(condition, zero, dy), y),
        )

    return out, where_pullback


def register(reg):
    def s(fn, *derivatives):
        reg.scalar_rule(fn, *derivatives, family=FAMILY, trusted=True)

    s(np.negative, lambda y, x: -1.0)
    s(np.positive, lambda y, x: 1.0)
    s(np.exp, lambda y, x: y)
    s(np.log, lambda y, x: 1.0 / x)
    s(np.sin, lambda y, x: np.cos(x))
    s(np.cos, lambda y, x: -np.sin(x))
    s(np.tan, lambda y, x: 1.0 + y * y)
    s(np.tanh, lambda y, x: 1.0 - y * y)
    s(np.sinh, lambda y, x: np.cosh(x))
    s(np.cosh, lambda y, x: np.sinh(x))
    s(np.sqrt, lambda y, x: 0.5 / y)
    s(np.square, lambda y, x: 2.0 * x)
    s(np.abs, lambda y, x: np.sign(x))
    s(np.add, lambda y, a, b: 1.0, lambda y, a, b: 1.0)
    s(np.subtract, lambda y, a, b: 1.0, lambda y, a, b: -1.0)
    s(np.multiply, lambda y, a, b: b, lambda y, a, b: a)
    s(np.divide, lambda y, a, b: 1.0 / b, lambda y, a, b: -y / b)
    s(np.maximum, lambda y, a, b: _tie_split(a, b), lambda y, a, b: _tie_split(b, a))
    s(np.minimum, lambda y, a, b: _tie_split(b, a), lambda y, a, b: _tie_split(a, b))
    reg.register(np.where, _where_rrule, family=FAMILY, trusted=True)
