"""scipy.linalg expm, expm_frechet and sqrtm rules against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make, spd

sl = pytest.importorskip("scipy.linalg")
_SCIPY = tuple(int(p) for p in __import__("scipy").__version__.split(".")[:2])

from pullback import ArgumentError, default_registry  # noqa: E402
from pullback.testing import check_grads, check_rrule  # noqa: E402

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)


def rule_of(fn):
    return default_registry().lookup(fn)


@D
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3), (1, 1)], ids=str)
def test_expm(shape, dtype):
    check_rrule(sl.expm, make("real", shape, dtype) * 0.5)


@D
def test_expm_frechet(dtype):
    a = make("real", (3, 3), dtype) * 0.5
    e = make("real", (3, 3), dtype, seed=1)
    check_rrule(sl.expm_frechet, a, e)
    check_rrule(sl.expm_frechet, a, e, compute_expm=False)


@D
@pytest.mark.parametrize("n", [1, 3])
def test_sqrtm(n, dtype):
    check_rrule(sl.sqrtm, spd(n, dtype))
    # not symmetric, eigenvalues with positive real parts: SciPy < 1.16 returns its real
    # square root as a complex array (its own behaviour), which the rule refuses
    if _SCIPY >= (1, 16):
        check_rrule(sl.sqrtm, (spd(n, dtype) + 0.2 * np.triu(make("real", (n, n), dtype))))


def test_refusals():
    with pytest.raises(ArgumentError, match="negative eigenvalue"):
        rule_of(sl.sqrtm).rrule(np.diag([1.0, -1.0]))
    with pytest.raises(ArgumentError, match="square matrix"):
        rule_of(sl.expm).rrule(np.ones((2, 3)))
    with pytest.raises(ArgumentError, match="real matrices"):
        rule_of(sl.expm).rrule(np.eye(2) * 1j)


def _matfuncs(a):
    return np.sum(sl.expm(a) ** 2) + np.sum(sl.sqrtm(a @ a.T + np.eye(3)) ** 3)


def test_second_order():
    a = make("real", (3, 3), seed=3) * 0.5
    assert check_grads(_matfuncs, a, order=2) == "reverse over reverse"
