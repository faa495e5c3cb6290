"""Hessians and Jacobians whose second-order sweeps run batched (issue 13, second round):
the runtime helpers' second-order rules (``fold_reads``, ``getitem_cotangent``,
``unbroadcast``) follow the leading batch axis, so ``hessian`` pushes every basis direction
through one reverse sweep. Each result is checked against the row-by-row result and
against finite differences of the gradient; no timing is asserted (benchmarks/ measures).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_speed_paths import jacobian_by_fd

from pullback import batched, grad, hessian, tangents, vjp
from pullback.tangents import broadcast_cotangent, read_cotangent
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


def rosen_vec(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def stencil(x):
    # slices read twice, a broadcast scalar and a reduction
    return np.sum(x[2:] * x[:-2] - np.sin(x[1:-1]) * 0.5 + x[0] * x[1:-1])


def matrix_rows(a):
    return np.sum(np.tanh(a[0] * a[1:])) + np.sum(a[:, 1] ** 2)


def fd_jacobian(f, x):
    return jacobian_by_fd(f, x).reshape(x.shape + x.shape)


def row_by_row_hessian(f, x):
    _, back = vjp(grad(f), x, wrt=0)
    n = x.size
    rows = [back(np.eye(n, dtype=x.dtype)[k].reshape(x.shape)) for k in range(n)]
    return np.stack(rows).reshape(x.shape + x.shape)


@pytest.fixture
def no_fallback(monkeypatch):
    """Fail if a stacked pullback falls back to one pullback per row."""

    def refuse(back, dys):
        raise AssertionError("the stacked pullback fell back to rows")

    monkeypatch.setattr(batched, "_stack_rows", refuse)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "fn, shape",
    [(rosen_vec, (7,)), (stencil, (6,)), (matrix_rows, (3, 2))],
)
def test_hessian_runs_batched_and_matches_rows_and_fd(fn, shape, dtype, no_fallback):
    x = np.linspace(-0.9, 1.3, int(np.prod(shape))).reshape(shape).astype(dtype)
    H = hessian(fn)(x)
    assert H.shape == shape + shape and H.dtype == dtype
    tol = 2e-4 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(H, row_by_row_hessian(fn, x), rtol=tol, atol=tol)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(H, fd_jacobian(grad(fn), x64), rtol=1e-4, atol=1e-4)


def sum_times(x):
    # a sum read by a product: the sum's pullback and its store of a scalar follow the stack
    return np.sum(x) ** 2 + np.sum(np.sum(x * x) * np.tanh(x))


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_sum_read_again_runs_batched(dtype, no_fallback):
    x = np.linspace(-0.9, 1.3, 6).astype(dtype)
    H = hessian(sum_times)(x)
    assert H.dtype == dtype
    tol = 2e-4 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(H, row_by_row_hessian(sum_times, x), rtol=tol, atol=tol)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(H, fd_jacobian(grad(sum_times), x64), rtol=1e-4, atol=1e-4)


def test_hessian_of_one_element_and_scalar_reads():
    x = np.array([0.7])
    np.testing.assert_allclose(hessian(stencil_small)(x), row_by_row_hessian(stencil_small, x))
    x = np.linspace(0.2, 0.9, 4)
    np.testing.assert_allclose(
        hessian(stencil_small)(x), fd_jacobian(grad(stencil_small), x), rtol=1e-6, atol=1e-6
    )


def stencil_small(x):
    return np.sum(x * x[0] * x[-1])


def test_third_order_still_runs_through_the_reads():
    check_grads(lambda x: np.sum(x[1:] ** 2 * x[:-1]), np.linspace(0.3, 1.1, 5), order=2)
    check_grads(rosen_vec, np.linspace(-0.5, 0.8, 4), order=2)
    # third derivatives: the gradient's second-order sweep goes through the helpers again
    check_grads(grad(stencil), np.linspace(-0.5, 0.8, 5), order=2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_read_cotangent_batched_and_not(dtype):
    g = np.arange(12.0, dtype=dtype).reshape(3, 4)
    x = np.zeros(4, dtype=dtype)
    np.testing.assert_array_equal(read_cotangent(g[0], x, slice(1, 3), x[:2]), g[0, 1:3])
    # a broadcast read is summed to the read's shape
    assert read_cotangent(g[0], x, slice(1, 3), np.float64(0.0)) == g[0, 1:3].sum()
    outer = tangents.batch_axes.axes
    tangents.batch_axes.axes = (3,)
    try:
        got = read_cotangent(g, x, slice(1, 3), x[:2])
        np.testing.assert_array_equal(got, g[:, 1:3])
        np.testing.assert_array_equal(read_cotangent(g, x, 2, 0.0), g[:, 2])
        with pytest.raises(TypeError):
            read_cotangent(g, x, np.array([0, 1]), x[:2])  # advanced: row by row instead
        with pytest.raises(ValueError):
            read_cotangent(g[0], np.zeros((3, 4)), 0, x)  # lost its batch axis
    finally:
        tangents.batch_axes.axes = outer
    assert read_cotangent((1.0, 2.0), [0.0, 0.0], 1, 0.0) == 2.0


def test_broadcast_cotangent_batched_and_not():
    assert broadcast_cotangent(np.ones(3), (2, 3)).shape == (2, 3)
    outer = tangents.batch_axes.axes
    tangents.batch_axes.axes = (5,)
    try:
        d = np.arange(5.0)  # one scalar cotangent per direction
        out = broadcast_cotangent(d, (2, 3))
        assert out.shape == (5, 2, 3)
        np.testing.assert_array_equal(out[:, 1, 2], d)
        out = broadcast_cotangent(np.ones((5, 3)), (2, 3))
        assert out.shape == (5, 2, 3)
        with pytest.raises(ValueError):
            broadcast_cotangent(np.ones(3), (2, 3))
    finally:
        tangents.batch_axes.axes = outer


def scaled(x, w=2.0):
    return np.sin(x) * w


def test_jacobian_binds_arguments_as_vjp_does():
    from pullback import jacobian
    from pullback.errors import ArgumentError

    x = np.linspace(0.1, 0.9, 3)
    want = np.diag(np.cos(x) * 2.0)
    np.testing.assert_allclose(jacobian(scaled)(x), want)  # a default: bound
    np.testing.assert_allclose(jacobian(scaled)(x, 2.0), want)  # every parameter given
    np.testing.assert_allclose(jacobian(scaled)(x, w=2.0), want)  # a keyword
    np.testing.assert_allclose(jacobian(scaled, wrt=1)(x, 2.0), np.sin(x))
    with pytest.raises(ArgumentError, match="cannot call"):
        jacobian(scaled)(x, 2.0, 3.0)


def _tanh_times(x):
    return np.tanh(x) * x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("damage", ["entry", "nan", "row"])
def test_a_wrong_batched_result_fails_the_check_and_rows_give_the_result(
    dtype, damage, monkeypatch
):
    """The check against one ordinary sweep is what makes a batched result trustworthy:
    a band, diagonal or dense stack with one wrong entry, a NaN or a lost row is refused,
    and the rows one by one give the result."""
    from pullback.band_stack import BandStack
    from pullback.diagonal_stack import DiagonalStack

    def spoil(c):
        if type(c) is BandStack:
            data = c.data.copy()
            data[c.data.shape[0] // 2, 2] = np.nan if damage == "nan" else data[0, 2] + 1.0
            if damage == "row":
                data[:, 3] = 0.0
            return BandStack(c.k, c.lo, data)
        if type(c) is DiagonalStack:
            # A diagonal result is exact by its structure (batched.exact_by_structure): a
            # step that mistakes the batch axis leaves a dense stack behind, which is checked.
            c = c.dense()
        c = np.array(c)
        c.flat[5] = np.nan if damage == "nan" else c.flat[5] + 1.0
        if damage == "row":
            c[3] = 0.0
        return c

    honest = batched._batched_cotangents
    kinds = []

    def spoiled(back, dys, batch, *defer):
        cots = honest(back, dys, batch, *defer)
        kinds.extend(type(c).__name__ for c in cots or ())
        return None if cots is None else [spoil(c) for c in cots]

    monkeypatch.setattr(batched, "_batched_cotangents", spoiled)
    x = np.linspace(-0.7, 0.9, 6).astype(dtype)
    for f, how in [(rosen_vec, hessian), (matrix_rows, hessian), (_tanh_times, None)]:
        if how is None:
            from pullback import jacobian

            got = jacobian(f)(x)
            y, back = vjp(f, x, wrt=0)
            want = np.stack([back(e) for e in np.eye(6, dtype=dtype)])
        else:
            xs = x.reshape(3, 2) if f is matrix_rows else x
            got = how(f)(xs)
            want = row_by_row_hessian(f, xs)
        np.testing.assert_array_equal(got, want)
    assert {"BandStack", "DiagonalStack", "ndarray"} <= set(kinds)  # each kind was spoiled
