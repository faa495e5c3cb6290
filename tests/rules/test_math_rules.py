"""Python math rules against finite differences (Python floats)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sc

from pullback.registry import NONDIFF, SCALAR, default_registry
from pullback.rules.math_rules import digamma
from pullback.testing import check_rrule

UNARY = [
    (math.sin, 0.7),
    (math.cos, -1.3),
    (math.tan, 0.4),
    (math.asin, 0.3),
    (math.acos, -0.6),
    (math.atan, 2.0),
    (math.sinh, 0.9),
    (math.cosh, -0.4),
    (math.tanh, 0.3),
    (math.asinh, -1.5),
    (math.acosh, 1.7),
    (math.atanh, 0.45),
    (math.exp, 0.8),
    (math.expm1, -0.2),
    (math.log, 2.5),
    (math.log1p, 0.3),
    (math.log2, 3.3),
    (math.log10, 0.7),
    (math.sqrt, 1.9),
    (math.fabs, -0.8),
    (math.fabs, 0.8),
    (math.erf, 0.6),
    (math.erfc, -0.4),
    (math.gamma, 2.7),
    (math.gamma, 0.3),
    (math.gamma, -1.5),
    (math.lgamma, 4.2),
    (math.lgamma, -2.5),
    (math.degrees, 1.2),
    (math.radians, 50.0),
]
if hasattr(math, "exp2"):
    UNARY.append((math.exp2, 1.3))
if hasattr(math, "cbrt"):
    UNARY += [(math.cbrt, 2.2), (math.cbrt, -0.5)]

BINARY = [
    (math.atan2, 0.5, -1.2),
    (math.pow, 1.7, 2.3),
    (math.pow, 0.6, -1.5),
    (math.pow, -1.5, 3),
    (math.log, 5.0, 3.0),
    (math.copysign, 1.5, -2.0),
    (math.copysign, -1.5, 2.0),
    (math.fmod, 5.3, 1.7),
    (math.fmod, -5.3, 1.7),
    (math.remainder, 5.3, 1.7),
    (math.remainder, 4.6, -1.7),
    (math.hypot, 3.0, -4.0),
]


@pytest.mark.parametrize("fn,x", UNARY, ids=lambda v: getattr(v, "__name__", str(v)))
def test_unary(fn, x):
    check_rrule(fn, x)


@pytest.mark.parametrize("fn,a,b", BINARY, ids=lambda v: getattr(v, "__name__", str(v)))
def test_binary(fn, a, b):
    check_rrule(fn, a, b)


def test_variadic_and_iterables():
    check_rrule(math.hypot, 1.5, -2.0, 0.5)
    check_rrule(math.hypot, 2.0)
    check_rrule(math.dist, [1.0, 2.0, 3.0], [0.5, -1.0, 2.0])
    check_rrule(math.dist, (1.0, 2.0), (0.5, -1.0))
    check_rrule(math.fsum, [1.0, 2.5, -0.5])
    check_rrule(math.prod, [1.5, -2.0, 0.5])
    check_rrule(math.prod, (1.5, 0.0, 0.5, 2.0))
    check_rrule(math.prod, [1.5, 2.0], start=3.0)
    check_rrule(math.ldexp, 1.3, 3)
    check_rrule(math.modf, 2.75)
    check_rrule(math.frexp, 10.5)
    if hasattr(math, "sumprod"):
        check_rrule(math.sumprod, [1.0, 2.0], [3.0, -1.0])


def test_elementwise_math_rules_are_scalar():
    for fn in (math.sin, math.exp, math.log, math.pow, math.atan2):
        assert default_registry().lookup(fn).kind == SCALAR


def test_non_differentiable():
    for fn in (math.floor, math.ceil, math.trunc, math.isnan, math.factorial, math.isclose):
        assert default_registry().lookup(fn).kind == NONDIFF


@pytest.mark.parametrize("x", [0.1, 0.5, 1.0, 2.5, 7.3, 12.0, 150.0, -0.5, -3.7])
def test_digamma(x):
    assert math.isclose(digamma(x), float(sc.digamma(x)), rel_tol=1e-12, abs_tol=1e-12)


def test_pow_at_zero_base():
    _, back = default_registry().lookup(math.pow).rrule(0.0, 0.5)
    assert back(1.0) == (0.0, 0.0)
    assert np.isfinite(back(1.0)[0])
