"""scipy.integrate on sampled data: trapezoid, cumulative_trapezoid and simpson, with
respect to the samples ``y``, the sample points ``x`` (where given) and the spacing ``dx``
(where ``x`` is not given and ``dx`` is passed by position), along any ``axis``.

* ``trapezoid`` and ``cumulative_trapezoid`` are sums of ``s_j = d_j (y_j + y_{j+1}) / 2``
  with ``d = diff(x)`` (or ``dx``); the pullbacks are written with NumPy operations pullback
  differentiates (transformable), so second derivatives run through them.
  ``cumulative_trapezoid``'s ``initial`` can only be 0 (SciPy's rule): no tangent.
* ``simpson`` (SciPy >= 1.11: Simpson's rule on an odd number of points, Cartwright's
  correction for the last interval of an even number) is linear in ``y`` with weights that
  depend on the spacings. Its pullback is the reverse mode, by pullback itself, of a
  transcription of that formula into NumPy (checked against SciPy by the tests). Its
  pullback function is transformable too, so second derivatives run through it: the
  weights of ``y`` are the formula applied to the identity, and with sample points ``x``
  the spacings' cotangent is the formula's derivative in the spacings, written out
  (``simpson_spacing_cotangent``).

Real samples only; a 1-D ``x`` runs along ``axis``, otherwise it has ``y``'s shape.
"""

from __future__ import annotations

import numpy as np

from ..registry import ENTRY_POINTS, transformable
from ..tangents import unbroadcast
from ._util import NO_TANGENT, ZERO, Registrar, densify, finalize, zeros_for
from .scipy_linalg import real_only, register_transformable

FAMILY = "scipy_integrate"
REQUIRES = "scipy.integrate"


@transformable
def pad_last(v, before, after):
    """``v`` with ``before`` zeros in front and ``after`` zeros behind, along the last axis."""
    return np.pad(v, ((0, 0),) * (np.ndim(v) - 1) + ((before, after),))


@transformable
def spacing(ym, x, dx, axis):
    """The sample points moved to the last axis (a 1-D ``x`` stays as it is), and the
    spacings ``d`` (``dx`` where there is no ``x``)."""
    if x is None:
        return None, dx
    xm = x
    if np.ndim(x) != 1:
        xm = np.moveaxis(x, axis, -1)
    return xm, np.diff(xm, axis=-1)


@transformable
def trapezoid_cotangents(sbar, ym, x, xm, d, axis):
    """The cotangents of ``(y, x, dx)`` from ``sbar``, the cotangent of the trapezoids
    ``s_j = d_j (y_j + y_{j+1}) / 2`` (everything with the integration axis last)."""
    w = sbar * d * 0.5
    dy = np.moveaxis(pad_last(w, 1, 0) + pad_last(w, 0, 1), -1, axis)
    dd = sbar * (ym[..., :-1] + ym[..., 1:]) * 0.5
    if x is None:
        return dy, NO_TANGENT, np.sum(dd)
    dxm = pad_last(dd, 1, 0) - pad_last(dd, 0, 1)
    if np.ndim(x) == 1:
        return dy, unbroadcast(dxm, x), 0.0
    return dy, np.moveaxis(dxm, -1, axis), 0.0


@transformable
def trapezoid_pullback(dy, y, x=None, dx=1.0, axis=-1):
    ym = np.moveaxis(y, axis, -1)
    xm, d = spacing(ym, x, dx, axis)
    sbar = np.expand_dims(dy, -1) + np.zeros_like(ym[..., 1:])
    return trapezoid_cotangents(sbar, ym, x, xm, d, axis)


@transformable
def cumulative_trapezoid_pullback(dy, y, x=None, dx=1.0, axis=-1, initial=None):
    ym = np.moveaxis(y, axis, -1)
    xm, d = spacing(ym, x, dx, axis)
    g = np.moveaxis(dy, axis, -1)
    if initial is not None:  # the first output is the constant `initial`
        g = g[..., 1:]
    # out_i = sum_{j <= i} s_j: s_j gets the sum of the cotangents from j on.
    sbar = np.flip(np.cumsum(np.flip(g, -1), axis=-1), -1)
    return trapezoid_cotangents(sbar, ym, x, xm, d, axis) + (NO_TANGENT, NO_TANGENT)


def _real(name):
    def check(y, *args, **kwargs):
        x = args[0] if args else kwargs.get("x")
        fix = "integrate the real and imaginary parts separately"
        real_only(f"scipy.integrate.{name}", y, x, what="samples", fix=fix)

    return check


# -- simpson -------------------------------------------------------------------------------
@transformable
def simpson_formula(ym, h, dx):
    """Simpson's rule along the last axis as SciPy computes it, for spacings ``h`` (``None``
    for a uniform ``dx``): linear in ``ym``, written in NumPy so pullback differentiates it."""
    n = np.shape(ym)[-1]
    if n < 2:
        return np.sum(ym * 0.0, axis=-1)
    if n == 2:
        step = dx if h is None else h[..., 0]
        return 0.5 * step * (ym[..., 0] + ym[..., 1])
    m = n if n % 2 == 1 else n - 1  # the points the composite rule covers
    y0, y1, y2 = ym[..., 0 : m - 2 : 2], ym[..., 1 : m - 1 : 2], ym[..., 2:m:2]
    if h is None:
        total = np.sum(y0 + 4.0 * y1 + y2, axis=-1) * (dx / 3.0)
        h0, h1 = dx, dx
    else:
        a, b = h[..., 0 : m - 2 : 2], h[..., 1 : m - 1 : 2]
        s = a + b
        parts = y0 * (2.0 - b / a) + y1 * (s * s / (a * b)) + y2 * (2.0 - a / b)
        total = np.sum(s / 6.0 * parts, axis=-1)
        h0, h1 = h[..., -2], h[..., -1]
    if n % 2 == 1:
        return total
    # Cartwright's correction for the last interval
    alpha = (2.0 * h1 * h1 + 3.0 * h0 * h1) / (6.0 * (h0 + h1))
    beta = (h1 * h1 + 3.0 * h0 * h1) / (6.0 * h0)
    eta = h1 * h1 * h1 / (6.0 * h0 * (h0 + h1))
    return total + alpha * ym[..., -1] + beta * ym[..., -2] - eta * ym[..., -3]


# scipy.integrate, bound by register() (pullback's import must not import SciPy)
si = None


@transformable
def simpson_spacing_cotangent(g, ym, h):
    """The cotangent of the spacings ``h`` from ``g``, the cotangent of
    ``simpson_formula(ym, h, dx)``: its derivative in ``h`` written out (the formula is a
    rational function of the spacings), so a second derivative runs through it."""
    n = np.shape(ym)[-1]
    if n < 2:
        return np.zeros_like(h)
    ge = np.expand_dims(g, -1)
    if n == 2:
        return ge * np.expand_dims(0.5 * (ym[..., 0] + ym[..., 1]), -1)
    m = n if n % 2 == 1 else n - 1
    y0, y1, y2 = ym[..., 0 : m - 2 : 2], ym[..., 1 : m - 1 : 2], ym[..., 2:m:2]
    a, b = h[..., 0 : m - 2 : 2], h[..., 1 : m - 1 : 2]
    s2 = (a + b) * (a + b)
    # s / 6 * parts = (y0 (2a + b - b^2/a) + y1 (a + b)^3 / (ab) + y2 (a + 2b - a^2/b)) / 6
    da = (y0 * (2.0 + (b / a) * (b / a)) + y1 * s2 * (2.0 * a - b) / (a * a * b)) / 6.0
    da = da + y2 * (1.0 - 2.0 * a / b) / 6.0
    db = (y0 * (1.0 - 2.0 * b / a) + y1 * s2 * (2.0 * b - a) / (a * b * b)) / 6.0
    db = db + y2 * (2.0 + (a / b) * (a / b)) / 6.0
    pairs = np.stack([ge * da, ge * db], -1)  # (a, b) of each pair, in order
    dh = np.reshape(pairs, np.shape(pairs)[:-2] + (m - 1,))
    if n % 2 == 1:
        return dh
    # Cartwright's correction: alpha y[-1] + beta y[-2] - eta y[-3] in h0 = h[-2], h1 = h[-1]
    h0, h1 = h[..., -2], h[..., -1]
    q = 6.0 * (h0 + h1) * (h0 + h1)
    d0 = ym[..., -1] * h1 * h1 / q - ym[..., -2] * h1 * h1 / (6.0 * h0 * h0)
    d0 = d0 + ym[..., -3] * h1 * h1 * h1 * (2.0 * h0 + h1) / (h0 * h0 * q)
    d1 = ym[..., -1] * (3.0 * h0 * h0 + 4.0 * h0 * h1 + 2.0 * h1 * h1) / q
    d1 = d1 + ym[..., -2] * (h1 / (3.0 * h0) + 0.5)
    d1 = d1 - ym[..., -3] * h1 * h1 * (3.0 * h0 + 2.0 * h1) / (h0 * q)
    last = np.stack([g * d0, g * d1], -1)
    return pad_last(dh, 0, 1) + pad_last(last, n - 3, 0)


@transformable
def simpson_pullback(dy, y, x=None, dx=1.0, axis=-1):
    n = np.shape(y)[axis]
    if x is None:
        # simpson is linear in y: its weights are the formula applied to the identity.
        weights = simpson_formula(np.eye(n), None, dx)
        return (np.moveaxis(np.expand_dims(dy, -1) * weights, -1, axis),)
    ym = np.moveaxis(y, axis, -1)
    xm, h = spacing(ym, x, dx, axis)
    # the weights of y along the last axis (one row of them per row of an N-D x)
    hw = h
    if np.ndim(h) > 1:
        hw = np.expand_dims(h, -2)
    weights = simpson_formula(np.eye(n), hw, dx)
    dym = np.moveaxis(np.expand_dims(dy, -1) * weights, -1, axis)
    dh = simpson_spacing_cotangent(dy, ym, h)
    dxm = pad_last(dh, 1, 0) - pad_last(dh, 0, 1)
    if np.ndim(x) == 1:
        return dym, unbroadcast(dxm, x)
    return dym, np.moveaxis(dxm, -1, axis)


def _simpson_rrule(y, *args, **kwargs):
    import scipy.integrate as si

    vjp = ENTRY_POINTS.vjp

    _real("simpson")(y, *args, **kwargs)
    out = si.simpson(y, *args, **kwargs)
    x = args[0] if args else kwargs.get("x")
    dx, axis = kwargs.get("dx", 1.0), kwargs.get("axis", -1)
    ym = np.moveaxis(np.asarray(y), axis, -1)
    xm, h = spacing(ym, x, dx, axis)
    if x is None:
        h = None

    def simpson_pullback(dy):
        if dy is ZERO:
            return zeros_for((y,) + args)
        g = np.asarray(densify(dy))
        if h is None:
            _, back = vjp(simpson_formula, ym, None, dx, wrt=0)
            return (finalize(np.moveaxis(back(g), -1, axis), y),) + (NO_TANGENT,) * len(args)
        _, back = vjp(simpson_formula, ym, h, dx, wrt=(0, 1))
        dym, dh = back(g)
        dxm = pad_last(dh, 1, 0) - pad_last(dh, 0, 1)
        dxm = unbroadcast(dxm, xm) if np.ndim(x) == 1 else np.moveaxis(dxm, -1, axis)
        cots = (finalize(np.moveaxis(dym, -1, axis), y), finalize(dxm, x))
        return cots[: 1 + len(args)]

    return out, simpson_pullback


def register(reg):
    global si
    try:
        import scipy.integrate as si
    except ImportError:  # pragma: no cover - scipy is optional
        return
    r = Registrar(reg, FAMILY)
    for fn, pullback_fn in (
        (si.trapezoid, trapezoid_pullback),
        (si.cumulative_trapezoid, cumulative_trapezoid_pullback),
    ):
        register_transformable(r, fn, pullback_fn, _real(fn.__name__), "real samples")
    r.rule(si.simpson, _simpson_rrule, name="scipy.integrate.simpson", notes="real samples")
    reg.set_pullback_function(si.simpson, simpson_pullback)
