"""Python's ``math`` module. Elementwise functions are scalar rules whose derivatives the
code generator may inline into scalar loops: they are plain ``math`` expressions on
Python floats.

Choices where a function is not differentiable: ``fabs(0)`` -> 0; ``pow(0, b)`` with
``b < 1`` -> 0 for the base; ``pow(a, b)`` with ``a <= 0`` -> no cotangent for the
exponent; ``fmod``/``remainder`` at a jump: one-sided; ``max``-like functions do not exist
here. ``floor``/``ceil``/``trunc`` and the integer functions are non-differentiable.
"""

from __future__ import annotations

import math

import numpy as np

from ..registry import transformable
from ._util import ZERO, Registrar, dy_parts, finalize, zeros_for

FAMILY = "math"
# Every rule is for a function of math: the family registers on the first lookup of one
# (registry.add_family), so a gradient that calls none never imports this module.
DOMAIN = "math"
# Every rule is for a function in math: registered on the first lookup of one.
DOMAIN = "math"

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_DEG = math.pi / 180.0


@transformable  # gamma' and lgamma' use it: second derivatives run through its series
def digamma(x: float) -> float:
    """The digamma function psi(x) = d/dx log|Gamma(x)| (``math`` has none)."""
    x = float(x)
    if x <= 0.0 and x == math.floor(x):
        return math.nan
    if x < 0.5:  # reflection: psi(1 - x) - psi(x) = pi / tan(pi x)
        return digamma(1.0 - x) - math.pi / math.tan(math.pi * x)
    acc = 0.0
    while x < 10.0:
        acc -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f * (1 / 132)))))
    return acc + math.log(x) - 0.5 / x - series


def _pow_base(y, a, b):
    if a != 0.0:
        return b * math.pow(a, b - 1.0)
    return 0.0 if b != 1.0 else 1.0  # d/da a**b at a = 0: 1 for b = 1, else 0 (chosen)


def _pow_exponent(y, a, b):
    return y * math.log(a) if a > 0.0 else 0.0


def _log_x(y, x, base=None):
    # (a default, not *base: derivative functions are transformed again, and the
    # differentiable subset has no star-parameters)
    return 1.0 / x if base is None else 1.0 / (x * math.log(base))


def _log_base(y, x, base):
    return -y / (base * math.log(base))


def _fmod_b(y, a, b):
    return -round((a - y) / b)


def _hypot_rrule(*coordinates):
    y = math.hypot(*coordinates)

    def hypot_pullback(dy):
        if dy is ZERO or y == 0.0:
            return zeros_for(coordinates)
        return tuple(finalize(dy * c / y, c) for c in coordinates)

    return y, hypot_pullback


def _dist_rrule(p, q):
    y = math.dist(p, q)

    def dist_pullback(dy):
        if dy is ZERO or y == 0.0:
            return zeros_for((p, q))
        dp = [dy * (a - b) / y for a, b in zip(p, q, strict=True)]
        dq = [-v for v in dp]
        return (
            finalize(type(p)(dp) if type(p) in (list, tuple) else np.asarray(dp), p),
            finalize(type(q)(dq) if type(q) in (list, tuple) else np.asarray(dq), q),
        )

    return y, dist_pullback


def _fsum_rrule(iterable):
    items = list(iterable)
    y = math.fsum(items)

    def fsum_pullback(dy):
        if dy is ZERO:
            return zeros_for((iterable,))
        return (finalize(np.full(len(items), dy), iterable),)

    return y, fsum_pullback


def _prod_rrule(iterable, **kwargs):
    items = list(iterable)
    y = math.prod(items, **kwargs)
    start = kwargs.get("start", 1)

    def prod_pullback(dy):
        if dy is ZERO:
            return zeros_for((iterable,))
        # The product of the others, exact where an item is 0: prefix * suffix.
        n = len(items)
        prefix = [start] * (n + 1)
        for k in range(n):
            prefix[k + 1] = prefix[k] * items[k]
        suffix = [1] * (n + 1)
        for k in range(n - 1, -1, -1):
            suffix[k] = suffix[k + 1] * items[k]
        grads = [dy * prefix[k] * suffix[k + 1] for k in range(n)]
        return (finalize(tuple(grads) if type(iterable) is tuple else grads, iterable),)

    return y, prod_pullback


def _modf_rrule(x):
    y = math.modf(x)

    def modf_pullback(dy):
        d_frac, _ = dy_parts(dy, 2)
        return (ZERO if d_frac is ZERO else finalize(d_frac, x),)

    return y, modf_pullback


def _frexp_rrule(x):
    y = math.frexp(x)

    def frexp_pullback(dy):
        d_mantissa, _ = dy_parts(dy, 2)
        if d_mantissa is ZERO:
            return (ZERO,)
        return (finalize(d_mantissa * math.ldexp(1.0, -y[1]), x),)

    return y, frexp_pullback


def _sumprod_rrule(p, q):
    y = math.sumprod(p, q)

    def sumprod_pullback(dy):
        if dy is ZERO:
            return zeros_for((p, q))
        dp = [dy * b for b in q]
        dq = [dy * a for a in p]
        return (
            finalize(type(p)(dp) if type(p) in (list, tuple) else dp, p),
            finalize(type(q)(dq) if type(q) in (list, tuple) else dq, q),
        )

    return y, sumprod_pullback


def register(reg):
    r = Registrar(reg, FAMILY)

    def s(fn, *derivatives, notes=""):
        r.scalar(fn, *derivatives, holomorphic=False, notes=notes)

    s(math.sin, lambda y, x: math.cos(x))
    s(math.cos, lambda y, x: -math.sin(x))
    s(math.tan, lambda y, x: 1.0 + y * y)
    s(math.asin, lambda y, x: 1.0 / math.sqrt(1.0 - x * x))
    s(math.acos, lambda y, x: -1.0 / math.sqrt(1.0 - x * x))
    s(math.atan, lambda y, x: 1.0 / (1.0 + x * x))
    s(math.atan2, lambda y, a, b: b / (a * a + b * b), lambda y, a, b: -a / (a * a + b * b))
    s(math.sinh, lambda y, x: math.cosh(x))
    s(math.cosh, lambda y, x: math.sinh(x))
    s(math.tanh, lambda y, x: 1.0 - y * y)
    s(math.asinh, lambda y, x: 1.0 / math.sqrt(x * x + 1.0))
    s(math.acosh, lambda y, x: 1.0 / math.sqrt(x * x - 1.0))
    s(math.atanh, lambda y, x: 1.0 / (1.0 - x * x))
    s(math.exp, lambda y, x: y)
    if hasattr(math, "exp2"):
        s(math.exp2, lambda y, x: y * _LN2)
    s(math.expm1, lambda y, x: y + 1.0)
    s(math.log, _log_x, _log_base)
    s(math.log1p, lambda y, x: 1.0 / (1.0 + x))
    s(math.log2, lambda y, x: 1.0 / (x * _LN2))
    s(math.log10, lambda y, x: 1.0 / (x * _LN10))
    s(math.sqrt, lambda y, x: 0.5 / y)
    if hasattr(math, "cbrt"):
        s(math.cbrt, lambda y, x: 1.0 / (3.0 * y * y))
    s(math.pow, _pow_base, _pow_exponent, notes="pow(0, b<1): 0 for the base")
    s(math.fabs, lambda y, x: math.copysign(1.0, x) if x != 0.0 else 0.0, notes="fabs'(0) = 0")
    s(math.erf, lambda y, x: _TWO_OVER_SQRT_PI * math.exp(-x * x))
    s(math.erfc, lambda y, x: -_TWO_OVER_SQRT_PI * math.exp(-x * x))
    s(math.gamma, lambda y, x: y * digamma(x))
    s(math.lgamma, lambda y, x: digamma(x))
    s(
        math.copysign,
        lambda y, a, b: math.copysign(1.0, a) * math.copysign(1.0, b),
        None,
        notes="no cotangent for the sign source",
    )
    s(math.degrees, lambda y, x: 1.0 / _DEG)
    s(math.radians, lambda y, x: _DEG)
    s(math.fmod, lambda y, a, b: 1.0, _fmod_b, notes="one-sided at the jumps")
    s(math.remainder, lambda y, a, b: 1.0, _fmod_b, notes="one-sided at the jumps")
    s(math.ldexp, lambda y, x, i: math.ldexp(1.0, i))

    r.rule(math.hypot, _hypot_rrule, notes="hypot(0, ...) -> 0")
    r.rule(math.dist, _dist_rrule, notes="dist(p, p) -> 0")
    r.rule(math.fsum, _fsum_rrule)
    r.rule(math.prod, _prod_rrule)
    r.rule(math.modf, _modf_rrule)
    r.rule(math.frexp, _frexp_rrule)
    if hasattr(math, "sumprod"):
        r.rule(math.sumprod, _sumprod_rrule)
    # Their pullbacks as transformable functions (second derivatives).
    from .math_pullbacks import register_pullbacks

    register_pullbacks(reg)

    nondiff = [
        getattr(math, name)
        for name in (
            "floor ceil trunc isnan isinf isfinite isclose factorial comb perm gcd lcm isqrt "
            "nextafter ulp"
        ).split()
        if hasattr(math, name)
    ]
    r.nondiff(*nondiff, notes="integer valued or piecewise constant")
