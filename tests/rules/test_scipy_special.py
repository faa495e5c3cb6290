"""scipy.special rules against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make

sc = pytest.importorskip("scipy.special")

from pullback.testing import check_rrule  # noqa: E402

UNARY = [
    (sc.gamma, (0.3, 3.0)),
    (sc.gamma, (-1.8, -1.2)),
    (sc.gammaln, (0.3, 4.0)),
    (sc.rgamma, (0.3, 3.0)),
    (sc.digamma, (0.3, 3.0)),
    (sc.erf, "real"),
    (sc.erfc, "real"),
    (sc.erfcx, "real"),
    (sc.erfinv, "unit"),
    (sc.erfcinv, (0.1, 1.9)),
    (sc.expit, "real"),
    (sc.log_expit, "real"),
    (sc.logit, "open01"),
    (sc.ndtr, "real"),
    (sc.log_ndtr, "real"),
    (sc.ndtri, "open01"),
    (sc.entr, "positive"),
    (sc.i0, "real"),
    (sc.i1, "real"),
    (sc.i0e, "nonzero"),
    (sc.i1e, "nonzero"),
    (sc.j0, "real"),
    (sc.j1, "real"),
    (sc.y0, "positive"),
    (sc.y1, "positive"),
]

BINARY = [
    (sc.beta, "positive", "positive"),
    (sc.betaln, "positive", "positive"),
    (sc.xlogy, "real", "positive"),
    (sc.xlog1py, "real", "positive"),
    (sc.rel_entr, "positive", "positive"),
]


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn,domain", UNARY, ids=lambda v: getattr(v, "__name__", str(v)))
def test_unary(fn, domain, dtype):
    check_rrule(fn, make(domain, (2, 3), dtype))
    check_rrule(fn, float(make(domain, (), seed=1)))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn,da,db", BINARY, ids=lambda v: getattr(v, "__name__", str(v)))
def test_binary(fn, da, db, dtype):
    check_rrule(fn, make(da, (2, 3), dtype), make(db, (3,), dtype, seed=1))


def test_polygamma_and_zero_points():
    check_rrule(sc.polygamma, 2, make("positive", (4,)))
    check_rrule(sc.polygamma, np.array([0, 1, 3]), make("positive", (3,)))
    for fn in (sc.i1, sc.j1):
        check_rrule(fn, np.array([0.0, 0.5]))
    # i1e = exp(-|x|) i1(x) is only once differentiable at 0 (finite differences are off)
    from pullback.registry import default_registry

    _, back = default_registry().lookup(sc.i1e).rrule(np.array([0.0]))
    np.testing.assert_allclose(back(np.ones(1))[0], [0.5])


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_logsumexp_softmax(dtype):
    x = make("real", (3, 4), dtype)
    for axis in (None, 0, 1, -1):
        check_rrule(sc.logsumexp, x, axis)
        check_rrule(sc.logsumexp, x, axis=axis, keepdims=True)
        check_rrule(sc.softmax, x, axis=axis)
        check_rrule(sc.log_softmax, x, axis)
    b = make("positive", (4,), dtype, seed=1)
    check_rrule(sc.logsumexp, x, 1, b)
    check_rrule(sc.logsumexp, x, b=b, axis=1)
    check_rrule(sc.logsumexp, x, 1, b, False, True)
    check_rrule(sc.logsumexp, x, 1, -b, False, True)
