"""np.ldexp, np.frexp and np.modf: a float taken apart into (or built from) a mantissa and
a power of two, or a fraction and an integer part. The exponent and the integer part are
piecewise constant; the rest moves with x. Checked against finite differences away from
the jumps (integers, powers of two), float64 and float32, to second order and in forward
mode, and by hand."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS

import pullback
from pullback.testing import check_rrule, check_rrule_second_order

X = np.array([0.3, -1.7, 5.2, 12.3])  # no integer, no power of two


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_rules(dtype):
    x = X.astype(dtype)
    check_rrule(np.ldexp, x, np.array([1, -2, 3, 0]))
    check_rrule(np.frexp, x)
    check_rrule(np.modf, x)
    check_rrule(np.modf, x.reshape(2, 2)[:, :1])


def test_second_order():
    check_rrule_second_order(np.ldexp, X, np.array([1, -2, 3, 0]))
    check_rrule_second_order(np.frexp, X)
    check_rrule_second_order(np.modf, X)


def parts(x):
    return np.sum(np.frexp(x)[0] ** 2 + np.modf(x)[0] * x + np.ldexp(x, 2))


def test_by_hand():
    # at 0.3: frexp = (0.6, -1), so mantissa**2 = 4 x**2; modf's fraction is x; 4 x
    g = pullback.grad(parts)(np.array([0.3]))
    np.testing.assert_allclose(g, [8 * 0.3 + 2 * 0.3 + 4.0])
    np.testing.assert_allclose(pullback.hessian(parts)(np.array([0.3])), [[10.0]])


def test_forward_mode():
    t = np.array([1.0, -0.5, 0.25, 2.0])
    _, dy = pullback.jvp(parts, (X,), (t,))
    np.testing.assert_allclose(dy, pullback.grad(parts)(X) @ t, rtol=1e-12)
