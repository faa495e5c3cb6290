"""``raise`` and ``assert`` run in the forward sweep as written: the exception classes,
modules and globals they name are found there (they were a NameError), and a helper that
always raises is differentiated around its `raise` (it crashed the transform)."""

import numpy as np
import pytest
import raising_functions as rf
from raising_functions import (
    BadInput,
    always_raises,
    assert_in_loop,
    calls_always_raises,
    checked_square,
    singular,
)

from pullback import PullbackError, grad, hessian, jvp, value_and_grad
from pullback.testing import check_grads


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradients_where_nothing_raises(dtype):
    x = np.array([0.5, 1.5, 2.0], dtype=dtype)
    np.testing.assert_allclose(grad(checked_square)(x), 2 * x, rtol=1e-6)
    check_grads(checked_square, x)
    np.testing.assert_allclose(hessian(checked_square)(x), 2 * np.eye(3), atol=1e-6)
    _, t = jvp(checked_square, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(t, np.sum(2 * x), rtol=1e-6)
    assert grad(singular)(2.0) == pytest.approx(-0.25)
    check_grads(assert_in_loop, 0.3)


def test_the_users_exception_is_raised():
    with pytest.raises(BadInput, match="negative entry"):
        grad(checked_square)(np.array([-1.0, 2.0]))
    with pytest.raises(AssertionError, match="over 10.0"):
        value_and_grad(checked_square)(np.array([11.0]))
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        grad(singular)(0.0)


def test_a_rebound_global_is_read_as_it_is_now(monkeypatch):
    g = grad(checked_square)
    x = np.array([3.0])
    g(x)
    monkeypatch.setattr(rf, "LIMIT", 2.0)
    with pytest.raises(AssertionError, match="over 2.0"):
        g(x)


def test_a_helper_that_always_raises():
    assert grad(calls_always_raises)(1.5, False) == pytest.approx(3.0)
    with pytest.raises(BadInput, match="cannot evaluate at 1.5"):
        grad(calls_always_raises)(1.5, True)
    with pytest.raises(BadInput):
        grad(always_raises)(1.5)


def test_an_assert_pytest_rewrote_is_refused_with_the_reason():
    # this test module's asserts are pytest's: its own functions cannot be differentiated
    def positive_square(x):
        assert x > 0
        return x * x

    with pytest.raises(PullbackError, match="(?s)pytest rewrote the assert.*PYTEST_DONT_REWRITE"):
        grad(positive_square)(2.0)
