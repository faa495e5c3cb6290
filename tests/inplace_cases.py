"""The checks every function of the in-place call tests goes through (issue 11), shared
by tests/test_mutation_inplace_masks.py, test_mutation_inplace_ufunc_at.py and
test_mutation_fresh_arrays.py."""

import numpy as np
import pytest

import pullback
from pullback import jvp
from pullback.testing import check_grads


def check_value_forward_and_second_order(f, x0, *, seed=3, second_order=True):
    """The value is what the primal computes and the argument is left as it was; forward
    mode matches central differences along a random direction; reverse over reverse
    matches finite differences of the gradient (returns check_grads' method)."""
    x = x0.copy()
    value, _ = pullback.value_and_grad(f)(x)
    np.testing.assert_array_equal(x, x0)
    assert value == pytest.approx(f(x0.copy()), rel=1e-12)
    v = np.random.default_rng(seed).standard_normal(x0.shape)
    y, dy = jvp(f, (x0.copy(),), (v,))
    h = 1e-6
    assert y == pytest.approx(f(x0.copy()))
    assert dy == pytest.approx((f(x0 + h * v) - f(x0 - h * v)) / (2 * h), rel=1e-6, abs=1e-8)
    return check_grads(f, x0, order=2) if second_order else None
