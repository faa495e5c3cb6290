"""np.r_[...] and np.c_[...] (rules keyed by their bound __getitem__), np.s_ and
np.index_exp (non-differentiable), against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make, make_complex

from pullback.errors import UnsupportedCallError
from pullback.registry import NONDIFF, default_registry
from pullback.tangents import NO_TANGENT
from pullback.testing import check_rrule

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)


def _keys(dtype):
    x, v = make("real", (3,), dtype), make("real", (3,), dtype, seed=1)
    m = make("real", (2, 3), dtype, seed=2)
    return [
        x,  # a single item (the key is not a tuple)
        (x, 2 * v),
        (x, dtype(1.5), 2.0, np.array(0.25, dtype)),  # NumPy and Python scalars, 0-d
        (slice(0, 3), x, -1, np.array([4, 5])),  # a range and int items: no tangent
        (slice(1, 5, 3j), v),  # a complex step: linspace points
        ("0,2", x, v),  # axis 0, at least 2-d
        ("0,2,0", x, v),  # ... with the 1-d items as columns
        ("1,2,0", [1.0, 2.0], v[:2]),  # a list item
        ("-1", m, m),
        ("0", m, x[None]),
        ("r", x, v),  # np.matrix rows
        ("c", x),  # np.matrix column
        (m, m),
        (make("real", (0,), dtype), x),  # an empty item
    ]


@D
@pytest.mark.parametrize("k", range(14))
def test_r_(k, dtype):
    check_rrule(np.r_.__getitem__, _keys(dtype)[k])


@D
def test_c_(dtype):
    x, v = make("real", (3,), dtype), make("real", (3,), dtype, seed=1)
    m = make("real", (3, 2), dtype, seed=2)
    check_rrule(np.c_.__getitem__, (x, v))
    check_rrule(np.c_.__getitem__, (x, m, dtype(0.5) * np.ones(3, dtype)))
    check_rrule(np.c_.__getitem__, (m, m))
    check_rrule(np.c_.__getitem__, x)
    check_rrule(np.c_.__getitem__, ("c", x, v))


def test_complex_items():
    z = make_complex((3,))
    check_rrule(np.r_.__getitem__, (z, make("real", (2,))))


def test_cotangents_of_non_array_items():
    x = make("real", (3,))
    _, back = default_registry().lookup(np.r_.__getitem__).rrule((slice(0, 2), x, 2))
    (cot,) = back(np.arange(6.0))
    assert cot[0] is NO_TANGENT and cot[2] is NO_TANGENT
    np.testing.assert_array_equal(cot[1], [2.0, 3.0, 4.0])


def test_float_ranges_are_refused():
    rule = default_registry().lookup(np.r_.__getitem__)
    with pytest.raises(UnsupportedCallError, match="np.linspace"):
        rule.rrule((slice(0.0, 1.0, 5j), make("real", (3,))))


def test_index_expressions_are_non_differentiable():
    for obj in (np.s_, np.index_exp):
        assert default_registry().lookup(obj.__getitem__).kind == NONDIFF
    # a bound method read again is the same key
    assert default_registry().lookup(np.r_.__getitem__) is not None
