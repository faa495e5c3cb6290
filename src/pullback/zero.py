"""The symbolic zero cotangent: ``ZERO`` (and ``NO_TANGENT``, the same object), what a
cotangent is when it carries no value. It is never turned into an array unless a rule
asks (:func:`pullback.tangents.materialize`); adding it is free.

>>> ZERO + 2.0, 3.0 * ZERO
(2.0, ZERO)
"""

from __future__ import annotations


class _Zero:
    """The symbolic zero cotangent. Arithmetic with it is what arithmetic with 0 would be."""

    __slots__ = ()
    __array_ufunc__ = None  # make ndarray defer to our reflected operators
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ZERO"

    def __reduce__(self):
        return (_Zero, ())

    def __add__(self, other):
        return other

    __radd__ = __add__

    def __sub__(self, other):
        return -other

    def __rsub__(self, other):
        return other

    def __neg__(self):
        return self

    __pos__ = __neg__

    def __mul__(self, other):
        return self

    __rmul__ = __mul__
    __truediv__ = __mul__
    __matmul__ = __mul__
    __rmatmul__ = __mul__


ZERO = _Zero()
# What a pullback returns for an argument that has no tangent (an int, an axis, a flag).
# It is the same symbolic zero: a cotangent either carries a value or it does not, and
# every consumer (accumulation, pullbacks, generated code) treats the two alike.
NO_TANGENT = ZERO


def is_zero(c) -> bool:
    """True for the symbolic zero and for ``NO_TANGENT``."""
    return c is ZERO or c is NO_TANGENT
