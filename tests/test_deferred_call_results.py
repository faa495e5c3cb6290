"""``loss, cache = f(x); loss += reg * ...``: layer code returns ``out, cache`` and
``loss, grads`` tuples, and adds to the loss it got back. Whether ``+=`` rebinds depends on
what the call returned (a float or NumPy scalar: a rebinding; an array: a change in place
that other holders see), which is known only when it runs. The check defers such
statements (check/aliasing.py, ``_call_result``) and the generated code checks the value
there (containers_mutation.immutable_value): a gradient where Python rebinds, a pullback
error naming the line where it would write into an array. A call known to return a new
object (``x.copy()``) is still decided before running."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_hvp, check_jvp

import pullback
from pullback.check import check
from pullback.errors import UnsupportedCallError

DTYPES = [np.float64, np.float32]


def _data_loss(w, X):
    scores = X @ w
    return np.mean(np.logaddexp(0.0, -scores)), scores


def _penalties(w):
    return {"l2": np.sum(w**2), "l1": np.sum(np.abs(w))}


def loss_then_regularised(w, X):
    loss, scores = _data_loss(w, X)
    loss += 0.1 * np.sum(w * w)
    loss *= 2.0
    return loss + 0.01 * np.sum(scores)


def loss_over_keys(w, X):
    loss, _ = _data_loss(w, X)
    penalties = _penalties(w)
    for key in penalties:
        loss += 0.05 * penalties[key]
    return loss


def direct_result(w, X):
    total = _data_loss(w, X)[0] * 1.0
    loss = _helper_scalar(w)
    loss += total
    return loss**2


def _helper_scalar(w):
    return np.sum(np.sin(w))


def array_result(w, X):
    loss, scores = _data_loss(w, X)
    scores += 1.0  # scores is an array: Python changes it in place
    return loss + np.sum(scores)


X = np.array([[0.5, -1.0, 0.3], [1.5, 0.2, -0.7], [-0.3, 0.8, 1.1], [0.9, -0.4, 0.6]])
W = np.array([0.3, -0.2, 0.5])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", [loss_then_regularised, loss_over_keys, direct_result])
def test_gradients_where_python_rebinds(f, dtype):
    check_grad(f, W.astype(dtype), X.astype(dtype))


@pytest.mark.parametrize("f", [loss_then_regularised, loss_over_keys, direct_result])
def test_forward_and_second_order(f):
    v = np.array([1.0, -0.5, 2.0])
    check_jvp(lambda w: f(w, X), (W,), (v,))
    check_hvp(lambda w: f(w, X), W, v, rtol=1e-5, atol=1e-7)


def test_the_check_lets_them_through():
    assert check(loss_then_regularised) == []
    assert check(loss_over_keys) == []


def test_an_array_from_a_call_is_refused_where_it_would_write():
    with pytest.raises(UnsupportedCallError) as e:
        pullback.grad(array_result)(W, X)
    message = str(e.value)
    assert "test_deferred_call_results.py:" in message
    assert "'scores += ...' ran on a ndarray" in message and "a call's result" in message
    assert "Fix: write `scores = scores + ...`" in message and "PB105" in message


def copied_then_shared(x):
    y = x.copy()  # known new: the check decides before running
    kept = [y]
    y += 1.0
    return np.sum(kept[0] * y)


def test_a_known_new_array_kept_elsewhere_is_still_refused_before_running():
    assert [d.code for d in check(copied_then_shared)] == ["PB105"]
