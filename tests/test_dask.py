"""Gradients on Dask arrays: the same values as on NumPy arrays, built lazily.

Every test runs the sweeps under a scheduler that counts computations: a gradient that
only builds a graph computes nothing until the test asks for the result.
"""

from __future__ import annotations

import numpy as np
import pytest

import pullback
from pullback import grad, hessian, hvp, jacobian, jvp, value_and_grad, vjp
from pullback.backends import BackendError, backend_of, find_backend

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")


class Counting:
    """A synchronous scheduler that counts how often a graph is computed."""

    def __init__(self):
        self.calls = 0

    def __call__(self, dsk, keys, **kwargs):
        self.calls += 1
        return dask.get(dsk, keys, **kwargs)


@pytest.fixture
def counting():
    scheduler = Counting()
    with dask.config.set(scheduler=scheduler):
        yield scheduler


def _data(dtype):
    rng = np.random.default_rng(0)
    xn = rng.normal(size=(4, 3)).astype(dtype)
    bn = rng.normal(size=3).astype(dtype)
    return xn, bn, da.from_array(xn, chunks=2), da.from_array(bn, chunks=2)


# Functions of a (4, 3) array x and a (3,) array b written with np.* calls and operators.
def elementwise(x, b):
    return np.sum(np.tanh(x) * np.exp(-x) + np.log1p(x * x)) + np.sum(np.sqrt(b * b + 1.0))


def broadcasting(x, b):
    return np.sum((x + b) ** 2) / 3.0


def reductions(x, b):
    return np.sum(np.mean(x, axis=0) * b) + np.max(x * b) + np.std(x) + np.var(b)


def branches(x, b):
    return np.sum(np.where(x > 0, x, 0.1 * x) * b) + np.sum(np.maximum(x, b))


def products(x, b):
    return np.sum((x @ b) ** 2) + np.sum(x.T @ x) + np.dot(np.dot(x, b), x @ b)


def methods(x, b):
    return (x * x).sum() + x.mean() + b.sum()


def indexing(x, b):
    return np.sum(x[1:3, :] * b) + np.sum(x[1] * b[0]) + x[-1, 2]


def assembly(x, b):
    return np.sum(np.concatenate([x, x * 2.0]) ** 2) + np.sum(np.stack([b, b * b]))


def shapes(x, b):
    return np.sum(np.cumsum(x, axis=1) ** 2) + np.sum(np.clip(x, -0.5, 0.5)) + np.sum(np.abs(b))


def logsumexp(x, b):
    return np.log(np.sum(np.exp(x))) + np.sum(b)


def loop(x, b):
    s = 0.0
    for i in range(3):
        s = s + np.sum(x[:, i] * b[i])
    return s


FUNCTIONS = [
    elementwise,
    broadcasting,
    reductions,
    branches,
    products,
    methods,
    indexing,
    assembly,
    shapes,
    logsumexp,
    loop,
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_gradient_is_lazy_and_matches_numpy(f, dtype, counting):
    xn, bn, x, b = _data(dtype)
    gx, gb = grad(f, wrt=(0, 1))(x, b)
    assert counting.calls == 0  # only a graph so far
    assert isinstance(gx, da.Array) and isinstance(gb, da.Array)
    assert gx.chunks == x.chunks and gb.chunks == b.chunks
    assert gx.dtype == dtype and gb.dtype == dtype
    rx, rb = grad(f, wrt=(0, 1))(xn, bn)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(gx.compute(), rx, rtol=tol, atol=tol)
    np.testing.assert_allclose(gb.compute(), rb, rtol=tol, atol=tol)


def test_value_and_grad_returns_a_lazy_0d_value(counting):
    xn, bn, x, b = _data(np.float64)
    value, g = value_and_grad(elementwise)(x, b)
    assert counting.calls == 0
    assert isinstance(value, da.Array) and value.shape == ()
    np.testing.assert_allclose(value.compute(), elementwise(xn, bn))
    np.testing.assert_allclose(g.compute(), grad(elementwise)(xn, bn))


def test_non_differentiated_dask_argument_and_numpy_mix(counting):
    xn, bn, x, b = _data(np.float64)
    g = grad(broadcasting)(xn, b)  # differentiate the NumPy one, the Dask one is data
    assert counting.calls == 0
    assert isinstance(g, da.Array) and g.shape == xn.shape  # it depends on Dask data
    np.testing.assert_allclose(g.compute(), grad(broadcasting)(xn, bn))
    g = grad(broadcasting, wrt=1)(x, bn)  # a NumPy argument next to Dask data
    np.testing.assert_allclose(g, grad(broadcasting, wrt=1)(xn, bn))


def containers(p, d):
    return np.sum(p[0] * p[1]) + np.sum(d["a"] ** 2)


def test_dask_arrays_inside_tuples_and_dicts(counting):
    xn, bn, x, b = _data(np.float64)
    (g0, g1), gd = grad(containers, wrt=(0, 1))((x, x * 2.0), {"a": b})
    assert counting.calls == 0
    assert all(isinstance(g, da.Array) for g in (g0, g1, gd["a"]))
    np.testing.assert_allclose(g0.compute(), 2.0 * xn)
    np.testing.assert_allclose(g1.compute(), xn)
    np.testing.assert_allclose(gd["a"].compute(), 2.0 * bn)


def vector(x):
    return np.tanh(x) * x


def scalar(x):
    return np.sum(np.sin(x) * x)


def test_vjp_jvp_jacobian_hvp(counting):
    xn = np.linspace(-1.0, 1.0, 6)
    x = da.from_array(xn, chunks=3)
    y, back = vjp(vector, x)
    (gx,) = back(da.ones_like(x))
    y_t, dy = jvp(vector, (x,), (da.ones_like(x),))
    jac = jacobian(vector)(x)
    jac_forward = jacobian(vector, mode="forward")(x)
    jac_auto = jacobian(vector, mode="auto")(x)
    hv = hvp(scalar)(x, da.ones_like(x))
    hess = hessian(scalar)(x)
    assert counting.calls == 0
    np.testing.assert_allclose(y.compute(), vector(xn))
    (rx,) = vjp(vector, xn)[1](np.ones(6))
    np.testing.assert_allclose(gx.compute(), rx)
    np.testing.assert_allclose(dy.compute(), jvp(vector, (xn,), (np.ones(6),))[1])
    np.testing.assert_allclose(jac.compute(), jacobian(vector)(xn))
    np.testing.assert_allclose(jac_forward.compute(), jacobian(vector)(xn))
    np.testing.assert_allclose(jac_auto.compute(), jacobian(vector)(xn))
    np.testing.assert_allclose(hv.compute(), hvp(scalar)(xn, np.ones(6)))
    np.testing.assert_allclose(hess.compute(), hessian(scalar)(xn))


def test_second_order_through_grad_of_grad(counting):
    xn = np.linspace(-1.0, 1.0, 6)
    x = da.from_array(xn, chunks=2)
    g2 = grad(lambda x: np.sum(grad(scalar)(x)))(x)
    assert counting.calls == 0
    np.testing.assert_allclose(g2.compute(), grad(lambda x: np.sum(grad(scalar)(x)))(xn))


def control_flow(x):
    if np.sum(x) > 0:
        return np.sum(x * x)
    return np.sum(-x)


def doubling(x):
    while np.sum(x) < 10.0:
        x = x * 2.0
    return np.sum(x * x)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_branch_condition_is_computed_once_as_in_the_primal(counting, sign):
    xn = sign * np.linspace(0.5, 1.0, 4)
    x = da.from_array(xn, chunks=2)
    g = grad(control_flow)(x)
    # The condition is concrete, as in the primal; the reverse sweep reads the value the
    # forward sweep computed. The gradient itself is lazy.
    assert counting.calls == 1
    np.testing.assert_allclose(g.compute(), grad(control_flow)(xn))
    assert counting.calls == 2
    value, back = vjp(control_flow, x)
    assert counting.calls == 3
    np.testing.assert_allclose(back(1.0)[0].compute(), grad(control_flow)(xn))
    assert counting.calls == 4  # the pullback's own computation, not the condition again


def test_a_loop_condition_is_computed_once_per_iteration(counting):
    xn = np.linspace(0.5, 1.0, 4)  # sum 3: doubled twice
    g = grad(doubling)(da.from_array(xn, chunks=2))
    assert counting.calls == 3  # the three tests of the while condition
    np.testing.assert_allclose(g.compute(), grad(doubling)(xn))


def scalar_conversions(x):
    s = float(np.sum(x))  # concrete values the user's lines ask for, as in the primal
    n = int(np.sum(x > 0))
    return np.sum(x * x) * s / n


def test_float_and_int_of_a_dask_value_compute_it_as_the_primal_does(counting):
    xn = np.linspace(0.5, 1.0, 4)
    g = grad(scalar_conversions)(da.from_array(xn, chunks=2))
    assert isinstance(g, da.Array)
    np.testing.assert_allclose(g.compute(), grad(scalar_conversions)(xn))


def uses_sort(x):
    return np.sum(np.sort(x) * np.arange(4.0))  # Dask has no sort: NumPy would compute


@pytest.mark.filterwarnings("ignore:The `numpy.sort` function:FutureWarning")
def test_a_rule_that_would_compute_is_refused_before_computing(counting):
    x = da.from_array(np.array([3.0, 1.0, 2.0, 0.5]), chunks=2)
    with pytest.raises(BackendError, match=r"sort.*cannot run on dask arrays") as info:
        grad(uses_sort)(x)
    assert counting.calls == 0
    assert "Nothing was computed" in str(info.value)
    assert isinstance(info.value, pullback.PullbackError)


def fancy(x):
    return np.sum(x[np.array([0, 0, 2])] * np.array([1.0, 2.0, 3.0]))


def picks(x):
    rows = x[:, np.array([2, 0, 2])]
    return np.sum(rows**2) + np.sum(np.compress([True, False, True], x, axis=1))


def test_integer_array_indices_scatter_lazily_adding_repeats(counting):
    # x[idx] with a repeated position: the cotangents add up (a lazy bincount)
    x = da.from_array(np.arange(4.0), chunks=2)
    g = grad(fancy)(x)
    assert counting.calls == 0 and isinstance(g, da.Array) and g.chunks == x.chunks
    np.testing.assert_array_equal(g.compute(), [3.0, 0.0, 3.0, 0.0])
    xn, _, xd, _ = _data(np.float64)
    counting.calls = 0
    g = grad(picks)(xd)
    assert counting.calls == 0 and g.chunks == xd.chunks
    np.testing.assert_allclose(g.compute(), grad(picks)(xn), rtol=1e-12)


def lazy_index(x, idx):
    return np.sum(x[idx])


def test_an_index_that_is_itself_a_dask_array_is_refused_before_computing(counting):
    x = da.from_array(np.arange(4.0), chunks=2)
    idx = da.from_array(np.array([0, 0, 2]), chunks=2)
    with pytest.raises(pullback.PullbackError, match="scatter-add"):
        grad(lazy_index)(x, idx)
    assert counting.calls == 0


def cumprod_loss(x):
    return np.sum(np.cumprod(x, axis=1) * np.arange(1.0, 4.0))


def test_cumprod_with_zeros_stays_lazy_and_exact(counting):
    # the zero-safe formula runs on Dask: no branch on the data computes it
    xn = np.array([[1.5, 0.0, 2.0], [0.0, 0.0, 3.0], [2.0, -1.0, 0.5], [0.3, 2.0, 0.0]])
    x = da.from_array(xn, chunks=2)
    g = grad(cumprod_loss)(x)
    assert counting.calls == 0
    np.testing.assert_allclose(g.compute(), grad(cumprod_loss)(xn), rtol=1e-12)


def sorts_a_member(p):
    return np.sum(np.sort(p["x"]) * np.arange(4.0))


def partitions_complex(z):
    return np.sum(np.real(np.partition(z, 1)) * np.arange(4.0))


@pytest.mark.filterwarnings("ignore:The `numpy.(sort|partition)` function:FutureWarning")
def test_sort_and_partition_are_refused_before_the_forward_call_computes(counting):
    # np.sort has a pullback function (its second derivative); on Dask, also inside a
    # container or as a complex array, the forward sweep goes through the rule, which the
    # compute guard refuses before NumPy's fallback computes
    x = da.from_array(np.array([3.0, 1.0, 2.0, 0.5]), chunks=2)
    with pytest.raises(BackendError, match=r"_sort_rrule.*cannot run on dask"):
        grad(sorts_a_member)({"x": x})
    z = x * (1.0 + 0.5j)
    with pytest.raises(BackendError, match=r"_partition_rrule.*cannot run on dask"):
        grad(partitions_complex)(z)
    assert counting.calls == 0


def test_errors_for_dask_arguments_and_outputs():
    x = da.from_array(np.arange(4), chunks=2)  # integers: nothing to differentiate
    with pytest.raises(pullback.NotDifferentiableError, match="dask.*int64"):
        grad(scalar)(x)
    xf = da.from_array(np.arange(4.0), chunks=2)
    with pytest.raises(pullback.NonScalarOutputError, match=r"shape \(4,\)"):
        grad(vector)(xf)


def test_backend_detection():
    x = da.zeros(3)
    assert backend_of(x) == "dask" and backend_of(np.zeros(2)) == "numpy"
    assert find_backend((1.0, np.zeros(2))) is None
    assert find_backend((1.0, {"a": [x]})) == "dask"


def test_numpy_results_unchanged_by_the_dask_import():
    xn, bn, _, _ = _data(np.float64)
    g = grad(elementwise)(xn, bn)
    assert type(g) is np.ndarray


@pytest.mark.filterwarnings("ignore:The `numpy.sort` function:FutureWarning")
def test_on_a_local_cluster_the_graph_runs_on_workers():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=40,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        xn, bn, x, b = _data(np.float64)
        gx, gb = grad(reductions, wrt=(0, 1))(x, b)
        futures = client.compute([gx, gb])
        distributed.wait(futures)
        workers = {w for f in futures for w in client.who_has(f).get(f.key, ())}
        rx, rb = client.gather(futures)
        assert workers  # computed on the cluster's workers, not in this process
        np.testing.assert_allclose(rx, grad(reductions)(xn, bn))
        np.testing.assert_allclose(rb, grad(reductions, wrt=1)(xn, bn))
        # A refusal on a cluster is as early: nothing is sent to the workers.
        with pytest.raises(BackendError):
            grad(uses_sort)(da.from_array(np.arange(4.0), chunks=2))


def test_out_of_core_logistic_example_at_a_reduced_size():
    pytest.importorskip("scipy")
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "dask_logistic.py"
    spec = importlib.util.spec_from_file_location("dask_logistic", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    X, y, _ = example.make_data(3000, 3, 1000)
    w = np.array([0.3, -0.2, 0.1])
    value, g = value_and_grad(example.loss)(w, X, y, 0.01)
    assert isinstance(value, da.Array) and isinstance(g, da.Array)  # lazy until computed
    Xn, yn = dask.compute(X, y)
    ref_value, ref_g = value_and_grad(example.loss)(w, Xn, yn, 0.01)
    value, g = dask.compute(value, g)
    np.testing.assert_allclose(value, ref_value, rtol=1e-12)
    np.testing.assert_allclose(g, ref_g, rtol=1e-10)
    out = example.main(["--rows", "3000", "--features", "4", "--chunk", "1000"])
    assert out["result"].success
    assert np.all(np.sign(out["result"].x) == np.sign(out["w_true"]))


# Rules of other families whose NumPy code Dask runs through __array_function__: lazy.
def tensordot_and_ravel(x, b):
    return np.sum(np.tensordot(x, x.T, axes=1) ** 2) + np.sum(np.ravel(x) * np.ravel(x))


def take_and_repeat(x, b):
    picked = np.take(x, [0, 2, 2], axis=0)  # repeated rows: the cotangents add up
    return np.sum(picked * b) + np.sum(np.repeat(x, 2, axis=1) ** 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "f",
    [
        tensordot_and_ravel,
        take_and_repeat,
    ],
)
def test_more_rule_families_run_lazily(counting, f, dtype):
    xn, bn, x, b = _data(dtype)
    gx, gb = grad(f, wrt=(0, 1))(x, b)
    assert counting.calls == 0  # nothing computed: the gradient is a graph
    assert isinstance(gx, da.Array) and gx.chunks == x.chunks and gx.dtype == dtype
    rx, rb = grad(f, wrt=(0, 1))(xn, bn)
    tol = 1e-10 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(gx.compute(), rx, rtol=tol, atol=tol)
    np.testing.assert_allclose(gb.compute(), rb, rtol=tol, atol=tol)


def determinant(x, b):
    return np.linalg.det(x[:3, :] + 3.0 * np.eye(3))


def chol(x, b):
    s = x.T @ x + np.eye(3)
    return np.sum(np.linalg.cholesky(s))


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize(
    "f, step",
    [
        (determinant, "det"),
        (chol, "cholesky"),
    ],
    ids=["det", "cholesky"],
)
def test_a_linalg_rule_dask_cannot_run_lazily_is_refused_by_name(counting, f, step):
    _, _, x, b = _data(np.float64)
    x = x.rechunk(-1)  # Dask's cholesky wants square chunks
    with pytest.raises(BackendError, match=rf"{step}.*cannot run on dask arrays lazily"):
        grad(f)(x, b)
    # Dask has no det: NumPy computes the user's np.linalg.det(x) in the forward sweep, as
    # the primal does; the pullback (which would compute again) is refused before running.
    assert counting.calls == (1 if step == "det" else 0)


def cumulative_product(x, b):
    return np.sum(np.cumprod(x, axis=1) * b)


def test_cumprod_chooses_no_formula_by_the_data_on_dask(counting):
    # cumprod's pullback chooses its formula by whether x has a zero: on Dask that branch
    # would compute (it once did, silently), so the zero-safe formula runs, lazily
    xn, bn, x, b = _data(np.float64)
    g = grad(cumulative_product)(x, b)
    assert counting.calls == 0
    np.testing.assert_allclose(g.compute(), grad(cumulative_product)(xn, bn), rtol=1e-12)


def test_an_indexed_cotangent_of_a_numpy_value_takes_a_dask_values_backend(counting):
    # second order on Dask: the gradient reads a NumPy value by index and the cotangents of
    # those reads are Dask arrays; a NumPy buffer would compute them, so the sum is lazy
    from pullback.indexed_cotangent import IndexedCotangent

    values = [np.arange(3.0), np.array(5.0), np.ones((2, 3))]
    indices = [0, (1, slice(None)), (slice(None), [0, 0, 2])]
    plain = IndexedCotangent((2, 3), np.dtype(float), indices[0], values[0])
    lazy = IndexedCotangent((2, 3), np.dtype(float), indices[0], da.from_array(values[0]))
    for index, value in zip(indices[1:], values[1:], strict=True):
        plain = plain.plus(index, value)
        lazy = lazy.plus(index, da.from_array(value) if value.ndim else value)
    got = lazy.dense()
    assert isinstance(got, da.Array) and counting.calls == 0
    np.testing.assert_array_equal(got.compute(), plain.dense())  # repeated indices accumulate


def test_a_read_with_new_axes_writes_its_cotangent_on_dask(counting):
    # Dask's item assignment ignores None in the index (NumPy's does not)
    from pullback.backends import read_cotangent

    x = da.zeros((2, 3), chunks=(1, 2))
    g = np.arange(6.0).reshape(2, 1, 3)
    got = read_cotangent(x, (slice(None), None), g)
    assert counting.calls == 0
    np.testing.assert_array_equal(got.compute(), g[:, 0, :])
    got = read_cotangent(x, (1, None, slice(0, 2)), np.ones((1, 2)))
    np.testing.assert_array_equal(got.compute(), [[0, 0, 0], [1, 1, 0]])
