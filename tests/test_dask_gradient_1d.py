"""np.gradient of a 1-D Dask array (issue 14): Dask returns a list of one array where NumPy
returns the array; the gradient stays lazy and equals NumPy's, and a list times a NumPy
array (NumPy's elementwise product) is differentiated as that product."""

from __future__ import annotations

import numpy as np
import pytest

from pullback import grad
from pullback.testing import check_grads

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

FLOATS = (np.float64, np.float32)
W = np.linspace(0.3, 1.1, 8)


from test_dask import Counting  # noqa: E402  (a scheduler that counts computations)


def along_axis(x):
    return np.sum(np.gradient(x, axis=0) * W)


def every_axis(x):
    # on Dask y is a list of one array
    return np.sum(np.gradient(x) * W)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("f", [along_axis, every_axis], ids=lambda f: f.__name__)
def test_gradient_of_1d_dask_is_lazy_and_matches_numpy(f, dtype):
    xn = (np.linspace(0.0, 1.0, 8) ** 2).astype(dtype)
    want = grad(f)(xn)
    scheduler = Counting()
    with dask.config.set(scheduler=scheduler):
        before = scheduler.calls
        f(da.from_array(xn, chunks=4))
        primal = scheduler.calls - before
        before = scheduler.calls
        got = grad(f)(da.from_array(xn, chunks=4))
        assert scheduler.calls - before <= primal
    assert isinstance(got, da.Array)
    np.testing.assert_allclose(got.compute(scheduler="sync"), want, rtol=1e-6)


def list_times_array(x, w):
    return np.sum(np.sin([x[0], x[1] * x[2]] * w))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_list_times_numpy_array_is_numpy_multiply(dtype):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3, 4)).astype(dtype)
    w = rng.normal(size=(2, 4)).astype(dtype)
    assert check_grads(list_times_array, x, w, wrt=(0, 1)) == "reverse"
    assert check_grads(list_times_array, x, w, wrt=(0, 1), order=2) == "reverse over reverse"
