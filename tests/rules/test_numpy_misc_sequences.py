"""np.ediff1d and np.unwrap against finite differences (first and second order, float64 and
float32; the coverage cases are in so_numpy_sequences.py)."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_jvp
from rule_inputs import FLOATS, make

from pullback import grad
from pullback.testing import check_rrule, check_rrule_second_order

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)

# phases with jumps well away from +-pi (and from +-2.5 for the period 5)
_STEPS = np.array([0.4, 3.9, -4.2, 1.0, 7.0, -2.0, 0.3])


def _phases(dtype):
    p = np.cumsum(_STEPS)
    return p.astype(dtype), np.stack([p, 0.7 * p[::-1]]).astype(dtype)


@D
def test_ediff1d(dtype):
    x = make("real", (2, 3), dtype)
    cases = (
        ((x,), {}),
        ((x, np.array([1.5, 2.0], dtype), dtype(0.5)), {}),
        ((x,), {"to_begin": make("real", (2, 1), dtype, seed=1)}),
        ((x[0, :1],), {"to_end": dtype(0.5)}),
    )
    for args, kwargs in cases:
        check_rrule(np.ediff1d, *args, **kwargs)
        check_rrule_second_order(np.ediff1d, *args, **kwargs)


@D
def test_unwrap(dtype):
    p, p2 = _phases(dtype)
    cases = (
        ((p,), {}),
        ((p2,), {"axis": 1}),
        ((p,), {"period": dtype(5.0)}),
        ((p2.T, 4.0, 0), {"period": dtype(5.0)}),
    )
    for args, kwargs in cases:
        check_rrule(np.unwrap, *args, **kwargs)
        check_rrule_second_order(np.unwrap, *args, **kwargs)


def test_unwrap_period_in_user_code():
    p, _ = _phases(np.float64)

    def f(p, period):
        return np.sum(np.unwrap(p, period=period) ** 2)

    gp, gperiod = grad(f, wrt=(0, 1))(p, 5.0)
    step = 1e-6
    assert np.isclose(gperiod, (f(p, 5.0 + step) - f(p, 5.0 - step)) / (2 * step), rtol=1e-6)
    assert np.allclose(gp, 2 * np.unwrap(p, period=5.0))


def test_ediff1d_ends_by_keyword_in_user_code():
    x = make("real", (5,))

    def f(x):
        d = np.ediff1d(x, to_begin=x[:1] * 2.0, to_end=np.sin(x[-2:]))
        return np.sum(d**3)

    g = grad(f)(x)
    step = 1e-6
    fd = [(f(x + step * e) - f(x - step * e)) / (2 * step) for e in np.eye(5)]
    assert np.allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_forward_mode():
    p, _ = _phases(np.float64)

    def f(p):
        return np.sum(np.unwrap(p, period=5.0) ** 2) + np.sum(np.ediff1d(p, to_begin=p[:1]) ** 2)

    check_jvp(f, (p,), (make("real", (7,), seed=4),))
