"""``b.sum()`` where ``b``'s class is not known before running (bound twice, in a loop, or
from a conditional expression) and may be a user class with its own ``sum``: the object's
method runs (dispatched when the code runs), and an array still gets ``np.sum``'s rule.
Gradients against central finite differences, float64 and float32."""

import numpy as np
import pytest

from pullback import grad


class Box:
    def __init__(self, v):
        self.v = v

    def sum(self):
        return 3.0 * np.sum(self.v)

    def mean(self):
        return np.sum(self.v * self.v) / 2.0

    def max(self):
        return np.sum(np.sin(self.v))

    def dot(self, w):
        return np.sum(self.v * w) * 2.0

    def reshape(self, shape):
        return Box(np.reshape(self.v, shape) * 1.5)

    def transpose(self):
        return Box(self.v[::-1] * 0.5)


def central(f, x, *rest, eps=1e-6):
    g = np.zeros_like(x, dtype=np.float64)
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = eps
        e = e.reshape(x.shape).astype(x.dtype)
        g.flat[i] = (f(x + e, *rest) - f(x - e, *rest)) / (2 * eps)
    return g


def conditional_sum(x, flag):
    b = Box(x) if flag else Box(2.0 * x)
    return b.sum()


def conditional_mean(x, flag):
    b = Box(x) if flag else Box(x * x)
    return b.mean()


def conditional_max(x, flag):
    b = Box(x) if flag else Box(x + 1.0)
    return b.max()


def conditional_dot(x, flag):
    b = Box(x) if flag else Box(3.0 * x)
    return b.dot(x)


def box_or_array_sum(x, flag):
    # b is a Box or an array: each gets its own sum when the code runs
    b = Box(x) if flag else x * x
    return b.sum()


def box_or_array_max(x, flag):
    b = Box(x) if flag else np.sin(x)
    return b.max()


def loop_rebound(x, flag):
    b = x
    for i in range(2):
        b = Box(b * 1.5) if i == 0 and flag else b
    return b.sum()


def loop_over_boxes(x, flag):
    total = 0.0
    for b in (Box(x), Box(2.0 * x)):
        total = total + b.mean()
    return total


def reshaped(x, flag):
    b = Box(x) if flag else Box(x * 2.0)
    r = b.reshape((2, 2))
    return np.sum(r.v * r.v)


def reshaped_array(x, flag):
    b = Box(x) if flag else x * 2.0
    r = b.reshape((2, 2))
    return np.sum(r.v * r.v) if flag else np.sum(r[0] * r[1])


def transposed(x, flag):
    b = Box(x) if flag else Box(x * 2.0)
    t = b.transpose()
    return np.sum(t.v * x)


CASES = [
    conditional_sum,
    conditional_mean,
    conditional_max,
    conditional_dot,
    box_or_array_sum,
    box_or_array_max,
    loop_rebound,
    loop_over_boxes,
    reshaped,
    reshaped_array,
    transposed,
]


@pytest.mark.parametrize("flag", [True, False])
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_unknown_receiver_runs_its_own_method_float64(fn, flag):
    x = np.array([0.3, -1.2, 0.7, 2.0])
    got = grad(fn)(x, flag)
    np.testing.assert_allclose(got, central(fn, x, flag), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("flag", [True, False])
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_unknown_receiver_runs_its_own_method_float32(fn, flag):
    x = np.array([0.3, -1.2, 0.7, 2.0], dtype=np.float32)
    got = grad(fn)(x, flag)
    assert got.dtype == np.float32
    expected = central(fn, x.astype(np.float64), flag)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_values_match_the_primal():
    x = np.array([0.3, -1.2, 0.7, 2.0])
    # the primal: Box.sum (3 * sum) and ndarray.sum
    assert conditional_sum(x, True) == pytest.approx(3.0 * x.sum())
    assert box_or_array_sum(x, False) == pytest.approx((x * x).sum())


def test_array_receivers_keep_numpy_functions():
    """A name never bound from a class with that method stays np.sum (the generated code
    calls NumPy's function directly)."""
    from pullback.resolve import resolve_call
    from pullback.source import load_source

    def plain(x):
        y = x * 2.0
        y = y + 1.0
        return y.sum()

    fs = load_source(plain)
    call = fs.tree.body[-1].value
    from pullback.resolve import local_names

    assert resolve_call(fs, call, local_names(fs.tree)).kind == "array_method"
    fs2 = load_source(conditional_sum)
    call2 = fs2.tree.body[-1].value
    callee = resolve_call(fs2, call2, local_names(fs2.tree))
    assert callee.kind == "method" and callee.name == "sum"


def test_spread_shape_keeps_the_array_method():
    """``b.reshape(2, 2)`` with b maybe an array: NumPy's reshape with the shape packed
    (a call found at run time would pass the shape spread out to np.reshape)."""

    def spread(x, flag):
        b = Box(x) if flag else x * 2.0
        r = b.reshape(2, 2)
        return np.sum(r[0] * r[1])

    x = np.array([0.3, -1.2, 0.7, 2.0])
    np.testing.assert_allclose(
        grad(spread)(x, False), central(spread, x, False), rtol=1e-6, atol=1e-8
    )


@pytest.mark.parametrize("flag", [True, False])
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_second_order_through_the_generated_gradient(fn, flag):
    """The generated gradient differentiated again: its copies, stack restores and
    constructor functions still lead to the user class (Hessian-vector products against
    finite differences of the gradient)."""
    from pullback.testing import check_grads

    check_grads(fn, np.array([0.3, -1.2, 0.7, 2.0]), flag, order=2)
