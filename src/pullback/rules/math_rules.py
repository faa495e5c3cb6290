"""Python's ``math`` module, as scalar rules (inlined by the code generator)."""

from __future__ import annotations

import math

FAMILY = "math"


def register(reg):
    def s(fn, *derivatives):
        reg.scalar_rule(fn, *derivatives, family=FAMILY, trusted=True)

    s(math.sin, lambda y, x: math.cos(x))
    s(math.cos, lambda y, x: -math.sin(x))
    s(math.tan, lambda y, x: 1.0 + y * y)
    s(math.exp, lambda y, x: y)
    s(math.log, lambda y, x: 1.0 / x)
    s(math.sqrt, lambda y, x: 0.5 / y)
    s(math.tanh, lambda y, x: 1.0 - y * y)
    s(math.sinh, lambda y, x: math.cosh(x))
    s(math.cosh, lambda y, x: math.sinh(x))
    s(math.atan, lambda y, x: 1.0 / (1.0 + x * x))
    s(math.fabs, lambda y, x: math.copysign(1.0, x) if x != 0 else 0.0)
    s(
        math.pow,
        lambda y, a, b: b * math.pow(a, b - 1.0) if b != 0 else 0.0,
        lambda y, a, b: y * math.log(a) if a > 0 else 0.0,
    )
    reg.non_differentiable(
        math.floor,
        math.ceil,
        math.trunc,
        math.isnan,
        math.isinf,
        math.isfinite,
        family=FAMILY,
        trusted=True,
    )
