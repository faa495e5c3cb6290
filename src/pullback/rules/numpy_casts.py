"""Casts to a NumPy scalar type, ``np.float64(x)``, ``np.float32(x)``, ``np.float16(x)``,
``np.complex128(x)``, ``np.complex64(x)`` (``x`` a number, an array or a list: NumPy casts
arrays elementwise), and ``np.real_if_close``.

A cast is the identity on values up to rounding, so its pullback casts the cotangent back
to the input's dtype: float -> float unchanged, real -> complex gives the real part,
complex -> real (NumPy drops the imaginary part) the cotangent of the real part.
``x.astype(...)`` and ``np.astype`` have the same rule in numpy_shape.
"""

from __future__ import annotations

import numpy as np

from ..registry import transformable
from ._util import NO_TANGENT, ZERO, Registrar, densify, differentiable, finalize
from .family_domains import DOMAINS

FAMILY = "numpy_casts"
# Registered on the first lookup of one of its functions (family_domains.py).
DOMAIN = DOMAINS["numpy_casts"]

CASTS = (np.float64, np.float32, np.float16, np.complex128, np.complex64)


def _cast_rule(T):
    def cast_rrule(*args, **kwargs):
        y = T(*args, **kwargs)

        def cast_pullback(dy):
            cots = tuple(NO_TANGENT for _ in args)
            if not args or not differentiable(args[0]) or isinstance(args[0], str):
                return cots
            if dy is ZERO or np.result_type(y).kind not in "fc":
                return (ZERO,) + cots[1:]
            # NumPy < 2.3 makes a scalar of a one-element array: give dy its shape back.
            g = np.reshape(densify(dy), np.shape(args[0]))
            return (finalize(g, args[0]),) + cots[1:]

        cast_pullback.__name__ = f"{T.__name__}_pullback"
        return y, cast_pullback

    cast_rrule.__name__ = f"{T.__name__}_rrule"
    return cast_rrule


@transformable
def cast_pullback(dy, x):
    """The pullback of ``np.float64(x)`` and the other casts, for second derivatives."""
    g = dy if np.iscomplexobj(x) else np.real(dy)
    # NumPy < 2.3 makes a scalar of a one-element array: give g that array's shape back.
    g = np.reshape(g, np.shape(x))
    return (np.asarray(g, dtype=np.result_type(np.asarray(x))),)


def _real_if_close_rrule(a, *args, **kwargs):
    y = np.real_if_close(a, *args, **kwargs)

    def real_if_close_pullback(dy):
        rest = (NO_TANGENT,) * len(args)
        if dy is ZERO:
            return (ZERO if differentiable(a) else NO_TANGENT,) + rest
        # The real part was returned (or a itself): dy is the cotangent of that part.
        return (finalize(densify(dy), a),) + rest

    return y, real_if_close_pullback


def register(reg):
    r = Registrar(reg, FAMILY)
    for T in CASTS:
        r.rule(T, _cast_rule(T), name=f"numpy.{T.__name__}", notes="cotangent cast back")
        reg.set_pullback_function(T, cast_pullback)
    r.rule(np.real_if_close, _real_if_close_rrule, notes="the real part when it is returned")
    # written with the ndarray methods' pullbacks; given here, where its rule is: the
    # family registers on the first lookup of one of its functions (family_domains.py)
    from .math_pullbacks import real_if_close_pullback

    reg.set_pullback_function(np.real_if_close, real_if_close_pullback)
