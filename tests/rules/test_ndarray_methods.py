"""Array methods with rules of their own: item, tolist, compress, view and choose."""

import numpy as np
import pytest

from pullback import grad
from pullback.errors import PullbackError
from pullback.testing import check_grads, check_rrule


def test_item():
    x = np.array([[0.5, -1.0], [2.0, 1.5]])
    check_rrule(np.ndarray.item, x, 2)
    check_rrule(np.ndarray.item, x, (1, 0))
    check_rrule(np.ndarray.item, np.array([3.0]))


def test_item_of_a_numpy_scalar():
    check_rrule(np.generic.item, np.float64(1.5))
    check_rrule(np.generic.item, np.float32(-0.75))


def test_tolist():
    check_rrule(np.ndarray.tolist, np.array([[0.5, -1.0], [2.0, 1.5]]))
    check_rrule(np.ndarray.tolist, np.array([0.25, 4.0], dtype=np.float32))


def test_compress_takes_the_array_first():
    # x.compress(c) is np.compress(c, x): the rule's first argument is the array
    x = np.array([[0.5, -1.0, 0.25], [2.0, 1.5, -0.75]])
    check_rrule(np.ndarray.compress, x, [True, False, True], 1)
    check_rrule(np.ndarray.compress, x, [False, True, True])
    check_rrule(np.ndarray.compress, x.astype(np.float32), [True, True], 0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_view_passes_the_cotangent_through(dtype):
    x = np.array([[0.5, -1.0, 0.25], [2.0, 1.5, -0.75]], dtype=dtype)
    check_rrule(np.ndarray.view, x)
    check_rrule(np.ndarray.view, x, np.ndarray)
    # the same dtype named (the check's differences run in float64: float64 only)
    check_rrule(np.ndarray.view, x.astype(np.float64), np.float64)


def test_view_that_reinterprets_the_bytes_is_refused():
    def f(x):
        return np.sum(x.view(np.int64) * 1.0)

    with pytest.raises(PullbackError, match=r"(?s)reinterprets the array.*Fix: .*astype"):
        grad(f)(np.array([1.0, 2.0]))


def _view_then_square(x):
    b = x.view()
    return np.sum(b * b * x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_view_in_a_function(dtype):
    x = np.array([0.5, -1.5, 2.0], dtype=dtype)
    np.testing.assert_allclose(grad(_view_then_square)(x), 3 * x * x, rtol=1e-6)
    check_grads(_view_then_square, x)


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_choose(mode, dtype):
    a = np.array([[0, 1, 2], [2, 0, 1]]) + (3 if mode == "wrap" else 0)
    if mode == "clip":
        a = a * 2 - 1  # -1 and 3 are clipped to the first and the last choice
    x = np.array([[0.5, -1.0, 0.25], [2.0, 1.5, -0.75]], dtype=dtype)
    row = np.array([0.3, -0.2, 1.1], dtype=dtype)
    check_rrule(np.choose, a, [x, 2.0 * x, row], mode=mode)
    check_rrule(np.ndarray.choose, a, (row, x, x * x), mode=mode)


def _chosen(x, w):
    picks = np.array([0, 1, 1, 0])
    return np.sum(np.choose(picks, [x * w, np.sin(x)]) + picks.choose([w, x * x]))


def test_choose_in_a_function_against_hand_gradient():
    x = np.array([0.5, -1.0, 0.25, 2.0])
    w = 1.5
    picks = np.array([0, 1, 1, 0])
    hand = np.where(picks == 0, w, np.cos(x)) + np.where(picks == 1, 2 * x, 0.0)
    np.testing.assert_allclose(grad(_chosen)(x, w), hand, rtol=1e-12)
    check_grads(_chosen, x, w)


def test_choose_with_out_is_refused():
    def f(x):
        out = np.empty(3)
        return np.sum(np.choose(np.array([0, 1, 0]), [x, x], out=out))

    with pytest.raises(PullbackError, match="out="):
        grad(f)(np.array([1.0, 2.0, 3.0]))
