"""scipy.integrate rules on sampled data against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make

si = pytest.importorskip("scipy.integrate")

from pullback import ArgumentError, default_registry  # noqa: E402
from pullback.rules.scipy_integrate import simpson_formula  # noqa: E402
from pullback.testing import check_grads, check_rrule  # noqa: E402

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
FNS = pytest.mark.parametrize(
    "fn", [si.trapezoid, si.simpson, si.cumulative_trapezoid], ids=lambda f: f.__name__
)


def points(n, dtype, seed=0):
    """Increasing, unevenly spaced sample points."""
    return np.cumsum(make((0.3, 1.0), (n,), dtype, seed=seed)).astype(dtype)


@D
@FNS
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_one_dimensional(fn, n, dtype):
    y = make("real", (n,), dtype)
    check_rrule(fn, y)
    check_rrule(fn, y, points(n, dtype, seed=1))
    check_rrule(fn, y, x=points(n, dtype, seed=1))
    check_rrule(fn, y, dx=0.7)
    if fn is not si.simpson:  # simpson takes dx by keyword only
        check_rrule(fn, y, None, 0.7)
        check_rrule(fn, y, None, 0.7, -1)


@D
@FNS
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_axes_and_batches(fn, axis, dtype):
    y = make("real", (4, 5, 3), dtype)
    n = y.shape[axis]
    check_rrule(fn, y, axis=axis)
    check_rrule(fn, y, points(n, dtype, seed=1), axis=axis)
    full = np.cumsum(make((0.3, 1.0), y.shape, dtype, seed=3), axis=axis).astype(dtype)
    check_rrule(fn, y, full, axis=axis)
    check_rrule(fn, y, x=full, axis=axis)


@D
def test_cumulative_trapezoid_initial(dtype):
    y = make("real", (3, 5), dtype)
    check_rrule(si.cumulative_trapezoid, y, initial=0)
    check_rrule(si.cumulative_trapezoid, y, points(5, dtype), 1.0, -1, 0, constants=(4,))
    check_rrule(si.cumulative_trapezoid, y, points(3, dtype), axis=0, initial=0)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8])
def test_simpson_transcription_matches_scipy(n):
    y = make("real", (2, n))
    x = points(n, np.float64, seed=1)
    np.testing.assert_allclose(simpson_formula(y, np.diff(x), 1.0), si.simpson(y, x=x))
    np.testing.assert_allclose(simpson_formula(y, None, 0.3), si.simpson(y, dx=0.3))


def test_refusal():
    with pytest.raises(ArgumentError, match="real samples"):
        default_registry().lookup(si.trapezoid).rrule(np.ones(3) * 1j)


def _areas(y, x):
    c = si.cumulative_trapezoid(y * y, x, initial=0)
    return si.trapezoid(c**3, x) + si.trapezoid(np.sin(x) * y)


def test_second_order():
    y, x = make("real", (5,)), points(5, np.float64)
    for i in (0, 1):
        assert check_grads(_areas, y, x, wrt=i, order=2) == "reverse over reverse"
    check_grads(_areas, y, x, wrt=(0, 1))
