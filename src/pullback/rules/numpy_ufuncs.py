"""Elementwise NumPy functions (ufuncs and friends), mostly as scalar rules.

Each scalar rule gives the partial derivatives ``d(y, *args)`` of ``y = f(*args)`` for
real arguments; the code generator may inline them. The registered rule also handles
complex arguments (see :meth:`._util.Registrar.scalar`).

Choices at points where a function is not differentiable (the value used there is a
subgradient or a limit; finite differences cannot check these points):

* ``abs``/``fabs`` at 0: 0. ``maximum``/``minimum``/``fmax``/``fmin`` on ties: the
  cotangent is split equally between the two arguments. ``clip`` at a bound: the
  cotangent goes to ``x``. ``copysign`` at 0 passes the sign of the result.
* ``mod``/``remainder``/``fmod`` at a jump: the one-sided derivative (``-floor(a/b)``
  for ``b``).
* ``power(a, b)`` for ``a <= 0``: no cotangent for ``b`` (``a**b`` is real there only for
  integer ``b``); ``sinc`` at 0: 0 (its true derivative).
* ``hypot`` at (0, 0): 0. ``nan_to_num``: the cotangent passes where ``x`` is finite.
* ``heaviside`` and ``sign`` are piecewise constant: registered as non-differentiable
  (their gradient is zero wherever it exists).
"""

from __future__ import annotations

import numpy as np

from ..registry import transformable
from ._util import (
    NO_TANGENT,
    ZERO,
    Registrar,
    bind,
    conj,
    densify,
    dy_parts,
    finalize,
    refuse_out,
    unbroadcast,
    zeros_for,
)

FAMILY = "numpy_ufuncs"

_LN2 = float(np.log(2.0))
_LN10 = float(np.log(10.0))
_DEG = float(np.pi / 180.0)


def _tie_split(a, b):
    """Weight 1 where a wins, 0.5 on ties, 0 where b wins (for maximum/minimum)."""
    return np.where(a > b, 1.0, np.where(a == b, 0.5, 0.0))


def _fmax_weight(a, b):
    """Weight of ``a`` in ``fmax(a, b)``: like maximum, but a NaN never wins."""
    return np.where(np.isnan(b), 1.0, np.where(np.isnan(a), 0.0, _tie_split(a, b)))


def _fmin_weight(a, b):
    return np.where(np.isnan(b), 1.0, np.where(np.isnan(a), 0.0, _tie_split(b, a)))


def _abs_factor(y, x):
    # d|x| = sign(x) dx for real x (0 at x = 0); for complex z the cotangent is
    # dy * z / |z| (NumPy's sign of a complex number is z / |z|, and 0 at 0), written
    # with y = |z| so that a second derivative differentiates z / |z| in z (np.sign's
    # derivative is zero: right for a real x, not for a complex one).
    if np.iscomplexobj(x):
        zero = y == 0
        return np.where(zero, 0.0, x / np.where(zero, 1.0, y))
    return np.sign(x)


def _sinc_derivative(y, x):
    # sinc(x) = sin(pi x) / (pi x): derivative (cos(pi x) - sinc(x)) / x, 0 at x = 0.
    x_safe = np.where(x == 0, 1.0, x)
    return np.where(x == 0, 0.0, (np.cos(np.pi * x) - y) / x_safe)


def _power_da(y, a, b):
    # b * a**(b-1); written without dividing by a so it is right at a = 0 for b >= 1, and
    # with the base 1 where a and b are both 0 (a**0 is 1 for every a: 0 * 0**-1 is NaN).
    return b * np.power(np.where((b == 0) & (a == 0), 1, a), b - 1)


def _power_db(y, a, b):
    # y * log(a) where a > 0; 0 elsewhere (a**b is real for a <= 0 only at integer b).
    if np.iscomplexobj(a):
        return y * np.log(a)
    pos = a > 0
    return np.where(pos, y * np.log(np.where(pos, a, 1.0)), 0.0)


def _hypot_da(y, a, b):
    return np.where(y == 0, 0.0, a / np.where(y == 0, 1.0, y))


def _hypot_db(y, a, b):
    return np.where(y == 0, 0.0, b / np.where(y == 0, 1.0, y))


def _copysign_da(y, a, b):
    # copysign(a, b) = |a| * sign(b): derivative sign(a) * sign(b) (signbits, so +-0 count).
    return np.copysign(1.0, a) * np.copysign(1.0, b)


def _unit(y, a, b):
    # d(a + b)/da, d(a + b)/db and d(a - b)/da. A named function, not a lambda: on Python
    # 3.12 the source of one of two equal lambdas on a line cannot be told apart, and second
    # derivatives transform this source.
    return 1.0


def _minus_unit(y, a, b):
    # d(a - b)/db (named for the reason of _unit)
    return -1.0


def _mod_db(y, a, b):
    # a mod b = a - floor(a / b) * b. (a - y) / b is that integer, exactly up to rounding.
    return -np.round((a - y) / b)


def _where_rrule(*args):
    out = np.where(*args)
    if len(args) != 3:

        def where_index_pullback(dy):
            return (NO_TANGENT,) * len(args)

        return out, where_index_pullback
    condition, x, y = args

    def where_pullback(dy):
        if dy is ZERO:
            return zeros_for(args)
        g = densify(dy)
        zero = np.zeros_like(g)
        return (
            NO_TANGENT,
            finalize(np.where(condition, g, zero), x),
            finalize(np.where(condition, zero, g), y),
        )

    return out, where_pullback


# min=/max= are read below; the rest only choose the output's type (where=, out= have
# no rule).
_CLIP_KNOWN = ("min", "max", "dtype", "casting", "order", "subok")


def _clip_rrule(a, *args, **kwargs):
    y = np.clip(a, *args, **kwargs)
    p = bind(args, kwargs, ("a_min", "a_max"), (None, None), name="np.clip", known=_CLIP_KNOWN)
    lo = p["a_min"] if p["a_min"] is not None else kwargs.get("min")
    hi = p["a_max"] if p["a_max"] is not None else kwargs.get("max")

    def clip_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,) + args)
        g = densify(dy)
        zero = np.zeros_like(g)
        # At a bound the cotangent goes to a (a == bound counts as inside).
        below = np.less(a, lo) if lo is not None else False
        above = np.greater(a, hi) if hi is not None else False
        if hi is not None and lo is not None:
            below = below & ~above  # when lo > hi NumPy returns hi
        inside = ~(below | above)
        da = finalize(np.where(inside, g, zero), a)
        out = [da]
        for k, bound in enumerate(args):
            if bound is None:
                out.append(NO_TANGENT)
                continue
            mask = below if k == 0 else above
            out.append(finalize(np.where(mask, g, zero), bound))
        return tuple(out)

    return y, clip_pullback


def _nan_to_num_rrule(x, *args, **kwargs):
    y = np.nan_to_num(x, *args, **kwargs)

    def nan_to_num_pullback(dy):
        if dy is ZERO:
            return zeros_for((x,) + args)
        g = densify(dy)
        return (finalize(np.where(np.isfinite(x), g, np.zeros_like(g)), x),) + (NO_TANGENT,) * len(
            args
        )

    return y, nan_to_num_pullback


def _real_rrule(x):
    y = np.real(x)

    def real_pullback(dy):
        if dy is ZERO:
            return (ZERO,)
        return (finalize(densify(dy), x),)

    return y, real_pullback


def _imag_rrule(x):
    y = np.imag(x)

    def imag_pullback(dy):
        if dy is ZERO:
            return (ZERO,)
        # Im(z) changes with Im(z): the cotangent is i * dy (and 0 for a real x).
        g = densify(dy)
        if not np.iscomplexobj(x):
            return (finalize(np.zeros_like(g), x),)
        return (finalize(1j * np.real(g), x),)

    return y, imag_pullback


def _conj_rrule(x, **kwargs):
    y = np.conjugate(x, **kwargs)

    def conj_pullback(dy):
        if dy is ZERO:
            return (ZERO,)
        return (finalize(conj(densify(dy)), x),)

    return y, conj_pullback


def _angle_rrule(z, *args, **kwargs):
    y = np.angle(z, *args, **kwargs)
    deg = bind(args, kwargs, ("deg",), (False,), name="np.angle")["deg"]
    rest = (NO_TANGENT,) * len(args)

    def angle_pullback(dy):
        if dy is ZERO:
            return (ZERO,) + rest
        g = np.real(densify(dy))
        if deg:
            g = g * (180.0 / np.pi)
        if not np.iscomplexobj(z):
            # angle of a real number is 0 or pi: piecewise constant.
            return (finalize(np.zeros_like(g), z),) + rest
        # angle = atan2(Im z, Re z): d angle = (Re z dIm - Im z dRe) / |z|^2,
        # so the cotangent is dy * i z / |z|^2 (0 at z = 0).
        r2 = np.real(z) ** 2 + np.imag(z) ** 2
        safe = np.where(r2 == 0, 1.0, r2)
        return (finalize(np.where(r2 == 0, 0.0, 1j * z / safe) * g, z),) + rest

    return y, angle_pullback


def _modf_rrule(x, *args, **kwargs):
    y = np.modf(x, *args, **kwargs)
    refuse_out("modf", bind(args, kwargs, (), (), name="np.modf", known=("out",)))

    def modf_pullback(dy):
        d_frac = dy_parts(dy, 2)[0]
        if d_frac is ZERO:
            return (ZERO,)
        return (finalize(unbroadcast(densify(d_frac), x), x),)

    return y, modf_pullback


def _frexp_rrule(x, *args, **kwargs):
    y = np.frexp(x, *args, **kwargs)
    refuse_out("frexp", bind(args, kwargs, (), (), name="np.frexp", known=("out",)))

    def frexp_pullback(dy):
        d_mantissa = dy_parts(dy, 2)[0]
        if d_mantissa is ZERO:
            return (ZERO,)
        return (finalize(densify(d_mantissa) * np.ldexp(1.0, -y[1]), x),)

    return y, frexp_pullback


def register(reg):
    # Derivative helpers are written in the differentiable subset: second derivatives
    # transform them like user code.
    for helper in (
        _tie_split,
        _fmax_weight,
        _fmin_weight,
        _abs_factor,
        _sinc_derivative,
        _power_da,
        _power_db,
        _hypot_da,
        _hypot_db,
        _copysign_da,
        _mod_db,
        _unit,
        _minus_unit,
    ):
        transformable(helper)
    r = Registrar(reg, FAMILY)
    s = r.scalar

    s(np.negative, lambda y, x: -1.0)
    s(np.positive, lambda y, x: 1.0)
    s(np.absolute, _abs_factor, holomorphic=False, notes="abs(0) -> cotangent 0")
    # (its factor, y = |z| given, is right for a complex z at every order)
    reg.lookup(np.absolute).extra["complex_factor"] = True
    s(np.fabs, lambda y, x: np.sign(x), notes="fabs(0) -> cotangent 0")
    s(np.reciprocal, lambda y, x: -(y * y), singular=True)
    s(np.exp, lambda y, x: y)
    s(np.exp2, lambda y, x: y * _LN2)
    s(np.expm1, lambda y, x: y + 1.0)
    s(np.log, lambda y, x: 1.0 / x, singular=True)
    s(np.log2, lambda y, x: 1.0 / (x * _LN2), singular=True)
    s(np.log10, lambda y, x: 1.0 / (x * _LN10), singular=True)
    s(np.log1p, lambda y, x: 1.0 / (1.0 + x), singular=True)
    s(np.sqrt, lambda y, x: 0.5 / y, singular=True)
    s(np.cbrt, lambda y, x: 1.0 / (3.0 * y * y), singular=True)
    s(np.square, lambda y, x: 2.0 * x)
    s(np.sin, lambda y, x: np.cos(x))
    s(np.cos, lambda y, x: -np.sin(x))
    s(np.tan, lambda y, x: 1.0 + y * y)
    s(np.arcsin, lambda y, x: 1.0 / np.sqrt(1.0 - x * x), singular=True)
    s(np.arccos, lambda y, x: -1.0 / np.sqrt(1.0 - x * x), singular=True)
    s(np.arctan, lambda y, x: 1.0 / (1.0 + x * x))
    s(np.sinh, lambda y, x: np.cosh(x))
    s(np.cosh, lambda y, x: np.sinh(x))
    s(np.tanh, lambda y, x: 1.0 - y * y)
    s(np.arcsinh, lambda y, x: 1.0 / np.sqrt(x * x + 1.0))
    s(np.arccosh, lambda y, x: 1.0 / np.sqrt(x * x - 1.0), singular=True)
    s(np.arctanh, lambda y, x: 1.0 / (1.0 - x * x), singular=True)
    s(np.sinc, _sinc_derivative, notes="sinc'(0) = 0")
    s(np.deg2rad, lambda y, x: _DEG)
    s(np.radians, lambda y, x: _DEG)
    s(np.rad2deg, lambda y, x: 1.0 / _DEG)
    s(np.degrees, lambda y, x: 1.0 / _DEG)

    s(np.add, _unit, _unit)
    s(np.subtract, _unit, _minus_unit)
    s(np.multiply, lambda y, a, b: b, lambda y, a, b: a)
    s(np.divide, lambda y, a, b: 1.0 / b, lambda y, a, b: -y / b, singular=True)
    s(
        np.power,
        _power_da,
        _power_db,
        singular=True,
        notes="no cotangent for the exponent where base <= 0",
    )
    s(np.float_power, _power_da, _power_db, singular=True, notes="as power")
    s(
        np.remainder,
        lambda y, a, b: 1.0,
        _mod_db,
        holomorphic=False,
        notes="one-sided at the jumps",
    )
    s(
        np.fmod,
        lambda y, a, b: 1.0,
        _mod_db,
        holomorphic=False,
        notes="one-sided at the jumps",
    )
    s(
        np.maximum,
        lambda y, a, b: _tie_split(a, b),
        lambda y, a, b: _tie_split(b, a),
        holomorphic=False,
        notes="ties split the cotangent equally",
    )
    s(
        np.minimum,
        lambda y, a, b: _tie_split(b, a),
        lambda y, a, b: _tie_split(a, b),
        holomorphic=False,
        notes="ties split the cotangent equally",
    )
    s(
        np.fmax,
        lambda y, a, b: _fmax_weight(a, b),
        lambda y, a, b: _fmax_weight(b, a),
        holomorphic=False,
        notes="ties split equally; a NaN argument gets nothing",
    )
    s(
        np.fmin,
        lambda y, a, b: _fmin_weight(a, b),
        lambda y, a, b: _fmin_weight(b, a),
        holomorphic=False,
        notes="ties split equally; a NaN argument gets nothing",
    )
    s(np.logaddexp, lambda y, a, b: np.exp(a - y), lambda y, a, b: np.exp(b - y))
    s(np.logaddexp2, lambda y, a, b: np.exp2(a - y), lambda y, a, b: np.exp2(b - y))
    s(
        np.arctan2,
        lambda y, a, b: b / (a * a + b * b),
        lambda y, a, b: -a / (a * a + b * b),
        singular=True,
    )
    s(np.hypot, _hypot_da, _hypot_db, notes="hypot(0, 0) -> cotangent 0")
    s(np.copysign, _copysign_da, None, notes="no cotangent for the sign source")

    r.rule(np.where, _where_rrule)
    clip = r.rule(np.clip, _clip_rrule, notes="at a bound the cotangent goes to x")
    # np.clip(x, a_min=lo) is np.clip(x, lo) (keyword_positions.py); its keyword-only
    # min= and max= (NumPy 2.1) are those bounds, which a refusal's fix names (PB502)
    clip.extra["positional_names"] = ("a", "a_min", "a_max")
    clip.extra["keyword_aliases"] = {"min": "a_min", "max": "a_max"}
    r.rule(np.nan_to_num, _nan_to_num_rrule)
    r.rule(np.real, _real_rrule)
    r.rule(np.imag, _imag_rrule)
    r.rule(np.conjugate, _conj_rrule)
    r.rule(np.angle, _angle_rrule)
    r.rule(np.modf, _modf_rrule, notes="the integer part has zero derivative")
    r.rule(np.frexp, _frexp_rrule, notes="the exponent is piecewise constant")
    s(np.ldexp, lambda y, x, i: np.ldexp(1.0, i), None, notes="no cotangent for the exponent")
    # Their pullbacks as transformable functions (second derivatives).
    from .numpy_shape_pullbacks import register_ufuncs

    register_ufuncs(reg)
    r.nondiff(np.heaviside, notes="piecewise constant: zero gradient")
