"""The forward sweep sums a NumPy array with ``np.add.reduce(x, None)``, what ``np.sum``
runs for one (transform/reverse_calls.py ``inline_sum``): the same values bit for bit, and
``np.sum`` itself for anything else."""

import numpy as np
import pytest
from fd import check_grad

from pullback import grad, hessian, value_and_grad


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def weighted(x, idx):
    counts = np.sum(idx)  # an integer array: no gradient, summed all the same
    return np.sum(np.sin(x) * x) * counts + np.sum(x * x)


def matrix_sum(a):
    return np.sum(a * a) + np.sum(np.tanh(a))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_values_are_the_primals_bits(dtype):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(101).astype(dtype)
    a = rng.standard_normal((7, 5)).astype(dtype)
    idx = np.arange(5, dtype=np.int32)
    for f, args in ((rosen, (x,)), (weighted, (x, idx)), (matrix_sum, (a,))):
        vg = value_and_grad(f)
        for _ in range(3):  # the two sweeps, then the fused sweeps of the hot entry
            value, _ = vg(*args)
            want = f(*args)
            assert (
                type(value) is type(want)
                and np.asarray(value).tobytes() == np.asarray(want).tobytes()
            )


def test_finite_differences():
    x = np.linspace(-1.0, 1.2, 11)
    check_grad(rosen, x)
    check_grad(rosen, x.astype(np.float32))
    check_grad(weighted, x, np.arange(4))
    check_grad(matrix_sum, x.reshape(1, 11) * np.ones((3, 1)))


def test_the_forward_sweep_reduces_directly():
    source = grad(rosen).source_for(np.ones(5))
    assert "_add_reduce(_t12, None) if _t12.__class__ is _ndarray else np.sum(_t12)" in source
    # the differentiable-again gradient keeps the call
    h = hessian(lambda x: np.sum(x * x * x))(np.array([1.0, 2.0]))
    assert h.tolist() == [[6.0, 0.0], [0.0, 12.0]]


def test_an_array_subclass_takes_the_call(tmp_path):
    # a memmap's kind is not a plain array's: no inline form, np.sum is called
    x = np.memmap(tmp_path / "x.dat", dtype=np.float64, mode="w+", shape=(2, 2))
    x[:] = [[1.0, 2.0], [3.0, 4.0]]
    assert "_add_reduce" not in grad(matrix_sum).source_for(x)
    value, g = value_and_grad(matrix_sum)(x)
    assert value == matrix_sum(x)
    np.testing.assert_allclose(g, 2 * np.asarray(x) + 1 - np.tanh(np.asarray(x)) ** 2)
