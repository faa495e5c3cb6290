"""``out`` passed by position to a NumPy function (``np.sum(x, 0, None, a)``,
``np.clip(x, lo, hi, a)``, ``np.cumsum(x, 1, None, a)``): the write into ``a`` is
differentiated as the ``out=a`` keyword form is. It once went unseen: the rule's pullback
read the array as ``keepdims`` and the array's own cotangent was dropped, a silent zero
gradient. ``out=None`` (either way) writes nothing and is an ordinary call."""

import numpy as np
import pytest
from fd import check_grad, check_hvp, check_jvp

from pullback import grad, hessian
from pullback.check import check


def sum_into_local(x):
    buf = np.zeros(3)
    np.sum(x, 0, None, buf)
    return np.sum(buf**2)


def sum_result_of_out(x):
    buf = np.zeros(3)
    y = np.sum(x, 0, None, buf)
    return np.sum(np.sin(y))


def sum_keepdims_after_out(x):
    buf = np.zeros((1, 3))
    np.sum(x, 0, None, buf, True)  # keepdims by position after out
    return np.sum(np.sin(buf) * buf)


def clip_into_local(x):
    buf = np.zeros((2, 3))
    np.clip(x, -0.5, 0.5, buf)
    return np.sum(buf**2 + buf * x)


def cumsum_into_local(x):
    buf = np.zeros((2, 3))
    np.cumsum(x, 1, None, buf)
    return np.sum(buf**3)


def mean_out_none_by_position(x):
    return np.sum(np.mean(x, 0, None, None) ** 2)


def cumsum_out_none_keyword(x):
    return np.sum(np.cumsum(x, axis=1, out=None) ** 2)


WRITES = [
    sum_into_local,
    sum_result_of_out,
    sum_keepdims_after_out,
    clip_into_local,
    cumsum_into_local,
    mean_out_none_by_position,
    cumsum_out_none_keyword,
]
X = np.array([[0.3, -0.7, 1.1], [0.9, 0.2, -0.4]])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", WRITES, ids=lambda f: f.__name__)
def test_gradient_matches_finite_differences(f, dtype):
    check_grad(f, X.astype(dtype))


@pytest.mark.parametrize("f", WRITES, ids=lambda f: f.__name__)
def test_hessian_matches_finite_differences_of_the_gradient(f):
    v = np.array([[0.5, -1.0, 0.25], [1.5, 0.75, -0.5]])
    check_hvp(f, X, v, rtol=1e-5, atol=1e-7)
    H = hessian(f)(X).reshape(X.size, X.size)
    np.testing.assert_allclose(H @ v.ravel(), check_hvp(f, X, v, rtol=1e-5, atol=1e-7).ravel())


def test_sum_into_local_by_hand():
    # buf = x.sum(0); f = sum(buf ** 2): df/dx[i, j] = 2 buf[j]
    np.testing.assert_allclose(grad(sum_into_local)(X), 2 * np.broadcast_to(X.sum(0), X.shape))


def sum_into_argument(x, buf):
    np.sum(x, 0, None, buf)
    return np.sum(buf**2)


def test_positional_out_into_an_argument_is_refused_with_the_out_array_named():
    problems = check(sum_into_argument)
    assert len(problems) == 1
    p = problems[0]
    assert p.code == "PB104"
    assert p.message == "array mutation: 'buf' writes the result into an existing array"
    assert "`buf = np.sum(x, 0, None)` without `out=`" in p.fix


@pytest.mark.parametrize("f", WRITES, ids=lambda f: f.__name__)
def test_forward_mode_matches_finite_differences(f):
    check_jvp(f, (X,), (np.array([[0.5, -1.0, 0.25], [1.5, 0.75, -0.5]]),))
