"""A differentiated value kept outside the differentiated variables by one function and
read back by another (a layer's ``self.out`` read by the model, a helper's append to a
list the caller then reads, a cache filled by a call whose result is unused) would lose
its gradient: it is refused where it is read, naming both lines. Values kept and never
read back during the evaluation (layer caches, logs) still run as in the primal, and a
value kept by an earlier evaluation is a constant to the next."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from fd import check_grad

from pullback import grad, hessian, value_and_grad
from pullback.errors import UnsupportedCallError, UnsupportedSyntaxError
from pullback.testing import check_grads

HERE = __file__


class Layer:
    def __init__(self):
        self.cache = {}
        self.history = []

    def forward(self, x):
        self.out = x**2
        return np.sum(x)

    def fill_cache(self, x):
        self.cache["y"] = x**3

    def keep_scaled(self, x, *, scale):
        self.kept = scale * 2.0

    def record(self, x):
        self.history.append(np.sin(x))
        return np.sum(x)


LAYER = Layer()
LOG: list = []


def reads_attribute_set_in_callee(x):
    s = LAYER.forward(x)
    return s + np.sum(LAYER.out)


def reads_cache_filled_by_unused_call(x):
    LAYER.fill_cache(x)
    return np.sum(LAYER.cache["y"])


def log_append(x):
    LOG.append(x * 2.0)


def reads_global_log(x):
    log_append(x)
    return np.sum(LOG[-1])


def fill(x, acc):
    acc.append(np.sum(x**2))


def reads_list_filled_by_helper(x):
    acc = []
    fill(x, acc)
    return acc[0]


def reads_a_keyword_kept_by_a_call(x):
    LAYER.keep_scaled(x, scale=x[0] * x[1])  # the kept value comes from a keyword argument
    return np.sum(x) * LAYER.kept


def sums_history(x):
    s = LAYER.record(x)
    return s + np.sum(np.array(LAYER.history))


CASES = [
    (reads_attribute_set_in_callee, "LAYER.out", "self.out = x**2"),
    (reads_cache_filled_by_unused_call, 'LAYER.cache["y"]', 'self.cache["y"] = x**3'),
    (reads_global_log, "LOG[-1]", "LOG.append(x * 2.0)"),
    (sums_history, "LAYER.history", "self.history.append(np.sin(x))"),
    (reads_a_keyword_kept_by_a_call, "LAYER.kept", "self.kept = scale * 2.0"),
]


def _line_of(text: str) -> int:
    with open(HERE, encoding="utf-8") as f:
        return next(k for k, line in enumerate(f, 1) if text in line and "CASES" not in line)


@pytest.mark.parametrize("fn, read, stored", CASES, ids=[c[0].__name__ for c in CASES])
def test_a_value_kept_by_one_function_and_read_by_another_is_refused(fn, read, stored):
    LAYER.history.clear()
    with pytest.raises(UnsupportedCallError) as info:
        grad(fn)(np.array([0.5, -1.5]))
    message = str(info.value)
    read_line = next(
        k for k, line in enumerate(open(HERE, encoding="utf-8"), 1)
        if read in line and "return" in line
    )
    assert message.startswith(f"{HERE}:{read_line}:")
    assert f"{HERE}:{_line_of(stored)}:" in message
    assert "this reads back a value that carries a gradient" in message
    assert "Fix: return the value from the function that computes it" in message


class Model:
    """Layer caches as numpy-ml writes them: kept, never read back during the gradient."""

    def __init__(self):
        self.W = np.array([[0.5, -1.0], [0.25, 2.0]])
        self.cache = {}
        self.calls = []

    def forward(self, X):
        Z = X @ self.W
        self.cache["X"] = X
        self.cache["Z"] = Z
        self.last = Z
        self.calls.append(len(self.calls))
        return np.tanh(Z)

    def loss(self, X):
        logging.getLogger("pullback.tests").debug("loss of %s", X)
        Y = self.forward(X)
        return np.sum(Y**2)


MODEL = Model()


def model_loss(X):
    return MODEL.loss(X)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_caches_that_are_not_read_back_still_run(dtype):
    X = np.array([[0.3, -0.2], [1.1, 0.4]], dtype=dtype)
    check_grad(model_loss, X)
    g = grad(model_loss)(X)
    assert g.dtype == dtype
    np.testing.assert_array_equal(MODEL.cache["X"], X)  # what the primal keeps
    if dtype == np.float64:
        assert check_grads(model_loss, X, order=2) == "reverse over reverse"
        h = hessian(lambda v: model_loss(v.reshape(2, 2)))(X.ravel())
        np.testing.assert_allclose(h, h.T, atol=1e-12)


def reads_what_the_last_call_kept(x):
    # LAYER.out holds the value an earlier evaluation kept: a constant here
    return np.sum(x * LAYER.out)


def test_a_value_kept_by_an_earlier_evaluation_is_a_constant():
    x = np.array([0.5, -1.5])
    value, g = value_and_grad(lambda v: LAYER.forward(v))(x)  # keeps LAYER.out
    kept = LAYER.out.copy()
    np.testing.assert_allclose(grad(reads_what_the_last_call_kept)(x), kept)


def helper_without_effects(x, scale):
    y = np.sum(np.exp(x)) * scale  # noqa: F841 - computed, not kept
    return None


def calls_for_nothing(x):
    helper_without_effects(x, 2.0)
    logging.getLogger("pullback.tests").info("x=%s", x)
    return np.sum(x**2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_calls_whose_result_is_unused_run_once(dtype):
    x = np.array([0.5, -1.5], dtype=dtype)
    np.testing.assert_allclose(grad(calls_for_nothing)(x), 2 * x, rtol=1e-6)


class Problem:
    def _evaluate(self, x, out):
        out["F"] = np.sum(x**2)

    def evaluate(self, x):
        out = {}
        self._evaluate(x, out)
        return out["F"]


def test_an_output_parameter_filled_by_a_method_is_refused_with_a_fix_that_works():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(Problem().evaluate)(np.array([0.5, -1.5]))
    message = str(info.value)
    assert "PB106" in message and "'out' comes from a parameter" in message
    assert "build it here and return it" in message


@pytest.mark.parametrize("fn, read, stored", CASES, ids=[c[0].__name__ for c in CASES])
def test_forward_mode_and_second_order_refuse_the_same_reads(fn, read, stored):
    from pullback import jvp

    x = np.array([0.5, -1.5])
    for run in (
        lambda: jvp(fn, (x,), (np.array([1.0, 0.0]),)),
        lambda: hessian(fn)(x),
    ):
        LAYER.history.clear()
        with pytest.raises(UnsupportedCallError, match="reads back a value that carries"):
            run()


def test_a_helper_filling_the_callers_own_list_is_differentiated():
    # acc is the caller's local list: fill's append is a change of it (issue 11,
    # tests/test_helper_writes.py), no longer a kept value read back
    x = np.array([0.3, -1.2, 2.0])
    assert np.allclose(grad(reads_list_filled_by_helper)(x), 2.0 * x)
    assert check_grads(reads_list_filled_by_helper, x) == "reverse"
