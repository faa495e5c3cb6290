"""``np.diff`` with ``prepend``/``append`` and ``np.sum`` with ``initial``: functions linear
in their first argument, made affine by a value they add (found by probe4 in a flux
written ``np.diff(u, prepend=u[0])``).

Forward mode took them for linear and called them on the tangent with the same offset
(``diff(du, prepend=c)``): a silently wrong jvp. Reverse mode refused ``prepend=`` by
keyword (PB502) though the rule differentiates it by position. Both against central
differences, first and second order, float64 and float32.
"""

from __future__ import annotations

import numpy as np
import pytest

import pullback
from pullback.testing import check_grads


def flux_prepended(u):
    return np.sum(np.cumsum(np.diff(u, prepend=u[0]) * 0.3) ** 2)


def both_edges(u):
    return np.sum(np.diff(u, append=u[-1:] * 2.0, prepend=np.sin(u[:2])) ** 3)


def constant_edge(u, c):
    return np.sum(np.diff(u, prepend=c) ** 2)


def positional_edge(u):
    return np.sum(np.diff(u, 1, -1, 0.5) ** 2)


def rows_twice(u):
    return np.sum(np.diff(u.reshape(2, 3), n=2, axis=0, prepend=u[:3].reshape(1, 3) ** 2) ** 2)


def started_sum(u):
    return np.sum(u**2, initial=3.0) ** 2


U = np.linspace(0.0, 1.0, 6) ** 2 + 0.1
V = np.linspace(1.0, -1.0, 6)
CASES = [flux_prepended, both_edges, positional_edge, rows_twice, started_sum]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_reverse_first_and_second_order(f, dtype):
    check_grads(f, U.astype(dtype), order=2 if dtype == np.float64 else 1)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_forward_mode(f):
    h = 1e-6
    want = (f(U + h * V) - f(U - h * V)) / (2 * h)
    y, t = pullback.jvp(f, (U,), (V,))
    assert y == pytest.approx(f(U), rel=1e-12)
    assert t == pytest.approx(want, rel=1e-7)
    assert t == pytest.approx(np.dot(pullback.grad(f)(U), V), rel=1e-10)


def test_a_constant_edge():
    # the offset carries no tangent: diff(du, prepend=0), not diff(du, prepend=c)
    _, t = pullback.jvp(constant_edge, (U, 0.5), (V, pullback.ZERO))
    h = 1e-6
    want = (constant_edge(U + h * V, 0.5) - constant_edge(U - h * V, 0.5)) / (2 * h)
    assert t == pytest.approx(want, rel=1e-7)
    check_grads(constant_edge, U, 0.5, wrt=(0, 1), order=2)
