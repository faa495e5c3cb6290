"""Products of a cotangent (or a tangent) with a local derivative that may be infinite.

Where a function's derivative is infinite or NaN (``sqrt`` and ``x ** 0.5`` at 0, ``log``
and ``1 / x`` at 0, ``arcsin`` at 1) but the cotangent arriving there is exactly 0 -- the
entry was overwritten by a store (``r[r == 0] = 1.0``), discarded by ``np.where``, a mask
or an index -- that entry does not reach the output, and the derivative of what the
function computes is 0 there. IEEE arithmetic says ``0 * inf = nan``: one such entry
would turn the whole gradient into NaN. The rules whose derivative can be singular (the
``singular`` flag of :meth:`pullback.rules._util.Registrar.scalar`) and the generated code
of ``/`` and ``**`` where the denominator or the exponent may make it singular form their
product with :func:`zero_safe_product` instead of ``*``.

Why it costs nothing on the common path: only those rules and operators call it, and it
checks the product's finiteness once (a sum for an array, a comparison for a number),
fixing entries up only where that fails. Where the cotangent is not 0 the singular point
is really used, and ``inf``/``nan`` stays: that is the derivative there.

>>> import numpy as np
>>> zero_safe_product(0.0, float("inf")), zero_safe_product(2.0, float("inf"))
(0.0, inf)
>>> with np.errstate(invalid="ignore"):  # (NumPy's warning of the 0 * inf it fixes)
...     zero_safe_product(np.array([0.0, 1.0]), np.array([np.inf, 0.5]))
array([0. , 0.5])
"""

from __future__ import annotations

import cmath
import math

import numpy as np

from .zero import ZERO

_REAL_SCALARS = frozenset((np.float64, np.float32, np.float16, np.longdouble))
_COMPLEX_SCALARS = frozenset((complex, np.complex128, np.complex64))
_sum = np.add.reduce  # (the C reduction: ndarray.sum goes through Python code first)


def zero_safe_product(g, d):
    """``g * d`` with 0 wherever ``g`` is exactly 0 and the product is not finite.

    ``g`` is the incoming cotangent (or tangent), ``d`` the local derivative; both
    broadcast as ``*`` does. A symbolic ``ZERO`` gives ``ZERO``; a value of another kind (a
    stack of directions, another library's array) is the plain product."""
    if g is ZERO or d is ZERO:
        return ZERO
    return zero_safe_fixed(g, g * d)


def zero_safe_fixed(g, p):
    """The product ``p`` of the cotangent ``g`` with a derivative, computed by the caller
    (``g / b``, as the sweeps write it), with 0 wherever ``g`` is 0 and ``p`` is not
    finite: :func:`zero_safe_product` without its multiplication."""
    t = type(p)
    if t is float:
        # (p - p is 0.0 exactly when p is finite: no call on the common path)
        return p if p - p == 0.0 or g != 0 else 0.0
    if t is np.ndarray:
        kind = p.dtype.kind
        # one reduction: NaN and inf propagate through a sum (one that overflows only
        # costs the fix-up below, which is right regardless)
        if (kind == "f" and not math.isfinite(_sum(p, None))) or (
            kind == "c" and not cmath.isfinite(_sum(p, None))
        ):
            np.copyto(p, 0, where=np.equal(g, 0) & ~np.isfinite(p))
        return p
    if t in _REAL_SCALARS:
        return p if math.isfinite(p) or g != 0 else t(0)
    if t in _COMPLEX_SCALARS:
        return p if cmath.isfinite(p) or g != 0 else t(0)
    return p


def zero_safe_tangent(args, tangents, kwargs):
    """The tangent of ``zero_safe_product(g, d)`` (a rule's ``extra["tangent"]``): the
    product rule, each term zero-safe in its own way."""
    g, d = args
    dg, dd = tangents
    return _add(zero_safe_product(dg, d), zero_safe_product(g, dd))


def _add(a, b):
    if a is ZERO:
        return b
    if b is ZERO:
        return a
    return a + b
