"""``global``/``nonlocal`` names written with values that carry no gradient (a call
counter, a log) run once per call, exactly as in the primal, in every mode; a write of a
differentiated value is refused before anything runs (PB401). Against finite
differences, float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad

import pullback
from pullback import grad, hessian, jvp, value_and_grad
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]

CALLS = 0
LOG: list = []
LAST = 0.0


def counted(x):
    global CALLS
    CALLS += 1
    return np.sum(np.sin(x) * x)


def scaled_by_calls(x):
    global CALLS, LOG
    CALLS = CALLS + 1
    LOG = LOG + [CALLS]
    return np.sum(x**2) * CALLS


def counted_helper(x):
    return 2.0 * counted(x) + np.sum(x)


def counter_closure():
    n = 0
    evaluations = []

    def objective(x):
        nonlocal n
        n += 1
        evaluations.append(n)
        return np.sum(np.exp(0.5 * x)) * n

    return objective, lambda: n, evaluations


@pytest.fixture(autouse=True)
def _reset():
    global CALLS, LOG
    CALLS, LOG = 0, []


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_global_counter_counts_once_per_gradient(dtype):
    x = np.array([0.3, -1.2, 0.7], dtype=dtype)
    g = grad(counted)(x)
    assert CALLS == 1
    np.testing.assert_allclose(g, np.sin(x) + x * np.cos(x), rtol=1e-5)
    assert g.dtype == dtype
    value, _ = value_and_grad(counted)(x)
    assert CALLS == 2
    _, dy = jvp(counted, (x,), (np.ones_like(x),))
    assert CALLS == 3
    check_grad(counted, x)  # finite differences call it too: the count is theirs
    assert CALLS > 3


def test_the_counter_is_read_as_it_is_at_each_call():
    # the value read is the global's at the call, never one baked into the gradient
    x = np.array([0.5, 2.0])
    assert np.allclose(grad(scaled_by_calls)(x), 2 * x * 1)
    assert np.allclose(grad(scaled_by_calls)(x), 2 * x * 2)
    global CALLS
    CALLS = 10
    assert np.allclose(grad(scaled_by_calls)(x), 2 * x * 11)
    assert LOG == [1, 2, 11]
    assert np.allclose(hessian(scaled_by_calls)(x), 2 * 12 * np.eye(2))
    assert CALLS == 12


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_counter_in_a_called_helper(dtype):
    x = np.array([0.3, -1.2, 0.7], dtype=dtype)
    g = grad(counted_helper)(x)
    assert CALLS == 1
    np.testing.assert_allclose(g, 2 * (np.sin(x) + x * np.cos(x)) + 1, rtol=1e-5)
    assert check_grads(counted_helper, x.astype(np.float64), order=2) == "reverse over reverse"


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_nonlocal_counter_of_a_closure(dtype):
    objective, count, evaluations = counter_closure()
    x = np.array([0.3, -1.2, 0.7], dtype=dtype)
    g = grad(objective)(x)
    assert count() == 1 and evaluations == [1]
    np.testing.assert_allclose(g, 0.5 * np.exp(0.5 * x), rtol=1e-5)
    g = grad(objective)(x)
    assert count() == 2
    np.testing.assert_allclose(g, 2 * 0.5 * np.exp(0.5 * x), rtol=1e-5)
    h = hessian(objective)(x.astype(np.float64))
    assert count() == 3
    np.testing.assert_allclose(h, np.diag(3 * 0.25 * np.exp(0.5 * x)), rtol=1e-5)


def remembers(x):
    global LAST
    LAST = np.sum(x**2)
    return LAST * 2.0


def unpacks(x):
    global CALLS
    CALLS, other = CALLS + 1, 0
    return np.sum(x) + other


@pytest.mark.parametrize(
    "fn, why",
    [
        (remembers, "'LAST' may be given a value computed from a differentiated argument"),
        (unpacks, "'CALLS' is bound other than by `CALLS = ...` or `CALLS += ...`"),
    ],
)
def test_a_write_that_could_carry_a_gradient_is_refused_before_running(fn, why):
    with pytest.raises(pullback.UnsupportedSyntaxError) as info:
        grad(fn)(np.array([1.0, 2.0]))
    message = str(info.value)
    line = fn.__code__.co_firstlineno + 1
    assert f"test_free_writes.py:{line}:5: PB401 'global " in message
    assert why in message
    assert "a name that only counts or logs values that carry no gradient may be written" in message
    assert CALLS == 0 and LAST == 0.0  # nothing ran
