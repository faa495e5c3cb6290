"""Hessians whose basis stays a band (issue 13, fifth round): slice reads of a vector shift
the identity stack off its diagonal, and :class:`pullback.band_stack.BandStack` carries the
few diagonals through the reverse sweep of the gradient instead of the dense ``n x n``
stack. Every Hessian is compared with the row-by-row result and with finite differences of
the gradient; no timing is asserted (benchmarks/hessian.py and benchmarks/targets.py
measure).
"""

from __future__ import annotations

import numpy as np
import pytest
from stack_counts import count_dense
from test_speed_paths import jacobian_by_fd

from pullback import grad, hessian, vjp
from pullback.band_stack import BandStack, as_band, combine_band
from pullback.diagonal_stack import DiagonalStack

DTYPES = [np.float64, np.float32]


def rosen_vec(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def second_difference(x):
    return np.sum((x[2:] - 2.0 * x[1:-1] + x[:-2]) ** 2 * 0.5)


def coupled_exp(x):
    return np.sum(np.exp(x[1:] * x[:-1]) / (2.0 + x[1:] ** 2))


def row_by_row_hessian(f, x):
    _, back = vjp(grad(f), x, wrt=0)
    basis = np.eye(x.size, dtype=x.dtype)
    rows = [back(basis[k]) for k in range(x.size)]
    return np.stack(rows) if rows else np.zeros((0, 0), dtype=x.dtype)


@pytest.fixture
def band_dense(monkeypatch):
    """How many band stacks were made dense; a fallback to rows fails the test."""
    return count_dense(monkeypatch, BandStack, lambda stack: stack.shape)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [3, 4, 9, 40])
@pytest.mark.parametrize("fn", [rosen_vec, second_difference, coupled_exp])
def test_banded_hessian_stays_a_band_and_is_exact(fn, n, dtype, band_dense):
    x = np.linspace(-0.9, 1.3, n).astype(dtype)
    H = hessian(fn)(x)
    # the sweep ran on bands: only the result (and the check's combination) is dense
    assert band_dense == [(n, n)]
    assert H.shape == (n, n) and H.dtype == dtype
    tol = 3e-4 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(H, row_by_row_hessian(fn, x), rtol=tol, atol=tol)
    fd = jacobian_by_fd(grad(fn), x.astype(np.float64))
    np.testing.assert_allclose(H, fd, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(fd).max()))
    width = 2 if fn is second_difference else 1  # entries off the band are exact zeros
    assert not np.any(np.triu(H, width + 1)) and not np.any(np.tril(H, -width - 1))


@pytest.mark.parametrize("n", [0, 1, 2])
def test_degenerate_sizes_stay_exact(n):
    x = np.linspace(0.2, 0.7, n)
    H = hessian(rosen_vec)(x)
    assert H.shape == (n, n)
    np.testing.assert_allclose(H, row_by_row_hessian(rosen_vec, x).reshape(n, n), atol=1e-12)


def test_a_non_finite_factor_works_on_the_dense_stack():
    def f(x):
        return np.sum(np.sqrt(x[1:]) * x[:-1])

    x = np.array([0.5, 0.0, 2.0, 1.0])  # d/dx sqrt(x) at 0 is inf: NaN off the band by rows
    with np.errstate(all="ignore"):
        H = hessian(f)(x)
        rows = row_by_row_hessian(f, x)
    np.testing.assert_array_equal(H, rows)


def test_a_read_that_is_not_a_slice_turns_dense_and_stays_exact():
    def f(x):
        return np.sum(x[1:] * x[:-1] * x[0]) + np.sum(x[::2] ** 3)

    x = np.linspace(-1.0, 1.0, 7)
    H = hessian(f)(x)
    np.testing.assert_allclose(H, row_by_row_hessian(f, x), atol=1e-12)
    np.testing.assert_allclose(H, jacobian_by_fd(grad(f), x), atol=1e-6)


def _random_band(rng, k, m, offsets):
    bands = {}
    for o in offsets:
        v = rng.standard_normal(m)
        v[[j for j in range(m) if not 0 <= j + o < k]] = 0.0
        bands[o] = v
    return BandStack.from_bands(k, bands, m)


@pytest.mark.parametrize("k, m", [(5, 5), (5, 3), (3, 6), (1, 1)])
def test_band_operations_match_the_dense_stack(k, m):
    rng = np.random.default_rng(0)
    a = _random_band(rng, k, m, (-1, 0, 2))
    b = _random_band(rng, k, m, (0, 1))
    w = rng.standard_normal(m) + 3.0
    da, db = a.dense(), b.dense()
    assert da.shape == (k, m) and a.shape == (k, m) and a.ndim == 2
    for got, want in [
        (a * w, da * w),
        (w * a, w * da),
        (a * 2.0, da * 2.0),
        (a / w, da / w),
        (-a, -da),
        (a + b, da + db),
        (a - b, da - db),
        (b - a, db - da),
    ]:
        assert type(got) is BandStack
        np.testing.assert_array_equal(got.dense(), want)
    assert type(np.multiply(w, a)) is BandStack
    np.testing.assert_array_equal(np.multiply(w, a).dense(), w * da)
    w32 = w.astype(np.float32)  # another dtype: the product's, as NumPy gives it
    np.testing.assert_array_equal((w32 * a).dense(), w32 * da)
    np.testing.assert_array_equal((a * w32).dense(), da * w32)
    with np.errstate(invalid="ignore"):
        w_inf = np.where(np.arange(m) == 0, np.inf, w)
        for got, want in [(w_inf * a, w_inf * da), (a * w_inf, da * w_inf)]:
            assert type(got) is np.ndarray  # 0 * inf off the band: the dense stack's NaN
            np.testing.assert_array_equal(got, want)
    # anything else is the dense result
    np.testing.assert_array_equal(np.sin(a), np.sin(da))
    np.testing.assert_array_equal(a * da, da * da)
    weights = rng.standard_normal(k)
    np.testing.assert_allclose(combine_band(weights, a), weights @ da, atol=1e-12)
    np.testing.assert_array_equal(np.asarray(a, dtype=np.float32), da.astype(np.float32))
    assert a.astype(np.float32).dtype == np.float32 and a.real is a
    assert abs(a.max_abs() - np.abs(da).max()) <= 1e-15


def test_slices_and_scatter_match_the_dense_stack():
    d = DiagonalStack(np.arange(1.0, 7.0))
    band = as_band(d)
    np.testing.assert_array_equal(band.dense(), d.dense())
    for index in [slice(1, None), slice(None, -1), slice(2, 5), slice(-3, None)]:
        read = band.sliced(index)
        np.testing.assert_array_equal(read.dense(), d.dense()[:, index])
        back = read.scattered(index, 6)
        want = np.zeros((6, 6))
        want[:, index] = d.dense()[:, index]
        np.testing.assert_array_equal(back.dense(), want)
    assert band.sliced(slice(None, None, 2)) is None  # a step other than 1
    assert band.sliced(slice(3, 3)) is None  # empty
    assert as_band(DiagonalStack(np.ones((2, 2)))) is None  # not a vector
    # a diagonal stack defers to a band stack in mixed sums
    total = d + band.sliced(slice(1, None)).scattered(slice(1, None), 6)
    assert type(total) is BandStack
    # the read of x[1:] scattered back is the diagonal without its first row
    np.testing.assert_array_equal(total.dense(), np.diag([1.0, 4.0, 6.0, 8.0, 10.0, 12.0]))


def test_a_zero_factor_quotient_is_dense():
    band = as_band(DiagonalStack(np.ones(3)))
    with np.errstate(all="ignore"):
        got = band / np.array([1.0, 0.0, 2.0])
        want = np.eye(3) / np.array([1.0, 0.0, 2.0])
    assert type(got) is np.ndarray
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("k, m", [(6, 6), (4, 7), (7, 4)])
def test_slices_scatters_and_their_sums_of_several_bands_match_the_dense_stack(k, m):
    from pullback.band_stack import scatter_sum

    rng = np.random.default_rng(1)
    a = _random_band(rng, k, m, (-2, 0, 1))
    dense = a.dense()
    reads = []
    for index in [slice(1, None), slice(None, -1), slice(2, 5), slice(-3, None), slice(0, 1)]:
        read = a.sliced(index)
        np.testing.assert_array_equal(read.dense(), dense[:, index])
        reads.append((index, read))
        back = read.scattered(index, m)
        want = np.zeros((k, m))
        want[:, index] = dense[:, index]
        np.testing.assert_array_equal(back.dense(), want)
    total = scatter_sum(reads, m)
    one_by_one = reads[0][1].scattered(reads[0][0], m)
    for index, read in reads[1:]:
        one_by_one = one_by_one + read.scattered(index, m)
    assert type(total) is BandStack and type(one_by_one) is BandStack
    np.testing.assert_array_equal(total.dense(), one_by_one.dense())
    want = np.zeros((k, m))
    for index, _ in reads:
        want[:, index] += dense[:, index]
    np.testing.assert_allclose(total.dense(), want, rtol=1e-15, atol=1e-15)
    assert scatter_sum([(slice(None, None, 2), reads[0][1])], m) is None  # a step of 2


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_combine_band_is_the_weighted_sum_of_rows_for_every_offset(dtype):
    # The check of a batched sweep combines a band's rows by weights (batched.agrees):
    # every offset, bands that reach past the stack on either side, slices of bands.
    rng = np.random.default_rng(3)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for k, m in [(5, 5), (5, 3), (3, 6), (1, 1), (8, 2)]:
        for offsets in [(0,), (-1, 0, 1), (-4,), (2, 3), (-2, 0, 2, 5)]:
            band = _random_band(rng, k, m, offsets).astype(dtype)
            weights = rng.standard_normal(k).astype(dtype)
            got = combine_band(weights, band)
            assert got.dtype == dtype
            np.testing.assert_allclose(got, weights @ band.dense(), rtol=tol, atol=tol)
            for index in [slice(1, None), slice(None, -1)]:
                read = band.sliced(index)
                if read is not None:
                    want = weights @ read.dense()
                    np.testing.assert_allclose(combine_band(weights, read), want, atol=tol)


def test_the_symbolic_zero_answers_for_itself():
    from pullback.zero import ZERO

    d = DiagonalStack(np.arange(1.0, 4.0))
    for s in (d, as_band(d)):
        assert (s + ZERO) is s and (ZERO + s) is s and (s - ZERO) is s
        assert (s * ZERO) is ZERO and (ZERO * s) is ZERO
        np.testing.assert_array_equal(np.asarray(ZERO - s), -d.dense())


def _union_by_zeros(ufunc, a, b):
    """The union of two band stacks as the zero-filled array: every band what the dense
    stacks give (the reference for the shorter ways of band_stack._linear_union)."""
    lo = min(a.lo, b.lo)
    hi = max(a.lo + a.data.shape[0], b.lo + b.data.shape[0])
    data = np.zeros((hi - lo, a.m), dtype=np.result_type(a.data, b.data))
    data[a.lo - lo : a.lo - lo + a.data.shape[0]] = a.data
    rows = data[b.lo - lo : b.lo - lo + b.data.shape[0]]
    ufunc(rows, b.data, out=rows)
    return lo, data


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "wide, narrow", [((-1, 0, 1), (0,)), ((0, 1), (0,)), ((0, 1), (1,)), ((-2, 1), (-1, 0))]
)
def test_sums_of_nested_bands_are_the_zero_filled_union_bit_for_bit(wide, narrow, dtype):
    rng = np.random.default_rng(3)
    k, m = 6, 5
    a = _random_band(rng, k, m, wide)
    b = _random_band(rng, k, m, narrow)
    a.data, b.data = a.data.astype(dtype), b.data.astype(dtype)
    a.data[0, 1], b.data[-1, 2] = -0.0, -0.0  # signed zeros: 0 - v, never -v
    for ufunc, x, y in [(np.add, a, b), (np.add, b, a), (np.subtract, a, b), (np.subtract, b, a)]:
        got = ufunc(x, y)
        lo, want = _union_by_zeros(ufunc, x, y)
        assert type(got) is BandStack and got.lo == lo and got.data.dtype == dtype
        assert got.data.tobytes() == want.tobytes()
        np.testing.assert_array_equal(got.dense(), ufunc(x.dense(), y.dense()))


def test_a_slice_read_of_a_diagonal_stack_is_the_band_as_band_gives():
    from pullback.band_stack import sliced_read

    d = DiagonalStack(np.arange(1.0, 7.0))
    for index in [slice(1, None), slice(None, -1), slice(2, 5), slice(-3, None), slice(0, 1)]:
        got, want = sliced_read(d, index, 6), as_band(d).sliced(index)
        assert (got.k, got.lo) == (want.k, want.lo)
        np.testing.assert_array_equal(got.data, want.data)
        np.testing.assert_array_equal(got.dense(), d.dense()[:, index])
    assert sliced_read(d, slice(3, 3), 6) is None  # empty, as sliced() says
    assert sliced_read(d, slice(None, None, 2), 6) is None  # a step other than 1
    assert sliced_read(d, slice(1, None), 5) is None  # another length
    assert sliced_read(DiagonalStack(np.ones((2, 3))), slice(1, None), 2) is None
    band = as_band(d).sliced(slice(1, None)).scattered(slice(1, None), 6)
    np.testing.assert_array_equal(
        sliced_read(band, slice(2, 5), 6).dense(), band.dense()[:, 2:5]
    )
    assert sliced_read(np.eye(6), slice(1, None), 6) is None  # dense: the caller reads it
