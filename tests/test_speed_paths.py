"""The fast paths of issue 13 give what the general paths give: the per-call fast path of
grad, the few-reads and merged-slice paths of fold_reads, unbroadcast's equal-shape path,
and stacked (batched) pullbacks, Jacobians and Hessians (against row by row and finite
differences). No timing is asserted here; benchmarks/ measures."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pullback
from pullback import grad, hessian, jacobian, value_and_grad, vjp
from pullback.errors import NotDifferentiableError, ShapeMismatchError
from pullback.read_folds import fold_reads
from pullback.registry import RuleRegistry, builtin_registry, use_registry
from pullback.tangents import ZERO, unbroadcast
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


def square(x):
    return x * x


def weighted(x, w, n):
    return np.sum(np.sin(x) * w) * n


def scaled_helper(x):
    return helper(x) * 2.0


def helper(x):
    return x * 3.0


# -- the per-call fast path of grad ---------------------------------------------------------


def test_fast_path_matches_general_path_on_floats_and_arrays():
    g = grad(square)
    assert g(3.0) == 6.0 and type(g(3.0)) is float
    for dtype in DTYPES:
        x = np.linspace(-1.0, 1.0, 5).astype(dtype)
        w = np.arange(5.0).astype(dtype)
        gw = grad(weighted, wrt=(0, 1))
        fast = gw(x, w, 2)  # positional: the fast path
        slow = gw(x, w=w, n=2)  # keywords: the general path
        for a, b in zip(fast, slow, strict=True):
            assert a.dtype == dtype and a.shape == (5,)
            np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(
            fast[0], np.cos(x) * w * 2, rtol=1e-6 if dtype == np.float32 else 1e-14
        )


def test_fast_path_value_and_grad_and_array_kinds():
    vg = value_and_grad(square)
    assert vg(2.0) == (4.0, 4.0)
    # One function, several argument kinds: each kind has its own adjoint.
    g = grad(lambda x: np.sum(x * x))
    np.testing.assert_array_equal(g(np.ones(3)), 2 * np.ones(3))
    np.testing.assert_array_equal(g(np.ones((2, 2))), 2 * np.ones((2, 2)))
    got = g(np.float64(2.0))
    assert got == 4.0 and type(got) is np.float64
    assert grad(square)(np.float64(1.5)) == 3.0


def test_fast_path_refuses_an_integer_to_differentiate():
    with pytest.raises(NotDifferentiableError, match="'x'"):
        grad(square)(3)
    with pytest.raises(NotDifferentiableError):
        grad(square)(np.arange(3))


def test_fast_path_rechecks_the_guard(monkeypatch):
    g = grad(scaled_helper)
    assert g(1.0) == 6.0
    monkeypatch.setitem(globals(), "helper", lambda x: x * 5.0)
    assert g(1.0) == 10.0  # the callee changed: rebuilt, not reused


def test_fast_path_follows_the_active_registry_and_its_version():
    def cube(x):
        return x**3

    def uses_cube(x):
        return cube(x) + 0.0

    g = grad(uses_cube)
    assert g(2.0) == pytest.approx(12.0)
    reg = builtin_registry().copy()

    @reg.rrule(cube)
    def _(x):
        return cube(x), lambda dy: (dy * 100.0,)

    with use_registry(reg):
        assert g(2.0) == 100.0  # the other registry's rule
    assert g(2.0) == pytest.approx(12.0)
    assert isinstance(reg, RuleRegistry)


def test_fast_path_errors_name_the_user_line():
    def bad(x):
        return np.sum(x) + np.ones(2) @ np.ones(3)

    with pytest.raises(Exception) as info:
        grad(bad)(1.0)
    text = str(info.value) + "".join(getattr(info.value, "__notes__", []))
    assert "test_speed_paths.py" in text


# -- fold_reads -------------------------------------------------------------------------------


def _chain(*reads):
    chain = None
    for index, value in reversed(reads):
        chain = (index, value, chain)
    return chain


@pytest.mark.parametrize("dtype", DTYPES)
def test_fold_reads_few_scalars_and_many(dtype):
    x = np.zeros(6, dtype=dtype)
    reads = [(0, 1.0), (-1, 2.0), (0, 0.5), (3, np.float32(4.0))]
    got = fold_reads(ZERO, x, _chain(*reads))
    want = np.zeros(6)
    for i, v in reads:
        want[i] += v
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want.astype(dtype))
    got = fold_reads(np.ones(6, dtype=dtype), x, _chain(*reads))
    np.testing.assert_array_equal(got, (want + 1).astype(dtype))
    many = [(k % 6, float(k)) for k in range(100)]  # past the few-reads path
    want = np.zeros(6)
    for i, v in many:
        want[i] += v
    np.testing.assert_allclose(fold_reads(ZERO, x, _chain(*many)), want, rtol=1e-6)


def test_fold_reads_sums_a_slice_read_twice():
    x = np.zeros(5)
    a, b = np.arange(4.0), np.full(4, 10.0)
    got = fold_reads(ZERO, x, _chain((slice(None, -1), a), (slice(None, -1), b), (1, 1.0)))
    np.testing.assert_array_equal(got, [10.0, 12.0, 12.0, 13.0, 0.0])
    # an index array with repeats still accumulates
    got = fold_reads(ZERO, x, _chain((np.array([0, 0]), np.ones(2)), (slice(0, 2), np.ones(2))))
    np.testing.assert_array_equal(got, [3.0, 1.0, 0.0, 0.0, 0.0])


def _fold_one_by_one(acc, x, reads):
    """What fold_reads must give: each read's cotangent added at its index, in order."""
    out = np.zeros(x.shape, x.dtype if x.dtype.kind in "fc" else np.float64)
    if acc is not ZERO:
        out += acc
    for index, value in reads:
        if isinstance(index, np.ndarray):
            np.add.at(out, index, value)
        else:
            out[index] += value
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64])
def test_fold_reads_view_path_is_the_sum_of_the_reads(dtype):
    rng = np.random.default_rng(4)
    x = np.zeros((4, 5), dtype=dtype)
    cot = np.complex128 if dtype == np.complex128 else (dtype if dtype != np.int64 else float)
    rows = [
        (1, rng.standard_normal(5).astype(cot)),  # a row, by an int
        ((slice(1, None), slice(None, -1)), rng.standard_normal((3, 4)).astype(cot)),
        ((slice(None), 2), rng.standard_normal(4).astype(cot)),
        (1, rng.standard_normal(5).astype(cot)),  # the same row again: summed first
        ((slice(1, None), slice(None, -1)), rng.standard_normal((3, 4)).astype(cot)),
        ((slice(None, None, 2),), rng.standard_normal((2, 5)).astype(cot)),
    ]
    for acc in (ZERO, rng.standard_normal((4, 5)).astype(cot)):
        got = fold_reads(acc, x, _chain(*rows))
        want = _fold_one_by_one(acc, x, rows)
        assert got.dtype == want.dtype and got.shape == x.shape
        np.testing.assert_allclose(got, want, rtol=1e-6)
    # 1-D: slices of a vector, with a zero cotangent and a scalar read among them
    v = np.zeros(6, dtype=np.float64)
    reads = [(slice(1, None), np.arange(5.0)), (slice(None, -1), np.ones(5)), (2, 3.0)]
    got = fold_reads(ZERO, v, _chain(*reads, (slice(None, -1), ZERO)))
    np.testing.assert_array_equal(got, _fold_one_by_one(ZERO, v, reads))
    # integer-array reads (repeats accumulate) and masks take the general path
    reads = [(np.array([0, 0, 3]), np.ones(3)), (slice(0, 2), np.ones(2)), (v > 1, np.ones(0))]
    np.testing.assert_array_equal(fold_reads(ZERO, v, _chain(*reads)), [3, 1, 0, 1, 0, 0])
    many = [(slice(k % 3, k % 3 + 2), np.full(2, float(k))) for k in range(40)]  # past "few"
    np.testing.assert_array_equal(
        fold_reads(ZERO, v, _chain(*many)), _fold_one_by_one(ZERO, v, many)
    )


def test_fold_reads_scalar_path_zeros_and_repeats():
    x = np.zeros(4)
    reads = [(0, -0.0), (1, 2.0), (1, -2.0), (1, 5.0), (-1, 0.0), (-1, 1.5), (3, 1.0)]
    got = fold_reads(ZERO, x, _chain(*reads))
    np.testing.assert_array_equal(got, [0.0, 5.0, 0.0, 2.5])
    assert not np.signbit(got[0])  # 0.0 + -0.0, as the one-by-one sum gives
    assert fold_reads(ZERO, x, _chain((2, np.nan))).tolist()[2] != 0.0


def _fold_general(acc, x, reads):
    """fold_reads with the few-scalar-reads path turned off: the general path's sums."""
    import pullback.read_folds as rf

    saved = rf._few_scalar_reads
    rf._few_scalar_reads = lambda acc, x, chain: None
    try:
        return fold_reads(acc, x, _chain(*reads))
    finally:
        rf._few_scalar_reads = saved


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_fold_reads_few_scalars_bit_for_bit(dtype):
    """The one-walk few-scalar path gives bit for bit the one-by-one sums (repeats summed
    in order, negative positions, zeros, NumPy and Python scalars), and a chain it must
    leave (a ZERO, an array, a NumPy integer index, past 24 reads) gets the general path's result
    with nothing of its partial writes."""
    rng = np.random.default_rng(13)
    x = np.zeros(7, dtype=dtype)
    r = [float(v) for v in rng.standard_normal(8)]
    cases = [
        [(0, r[0]), (1, r[1]), (2, r[2])],
        [(0, r[0]), (-7, r[1]), (6, r[2]), (-1, np.float64(r[3])), (0, np.float32(r[4]))],
        [(2, r[5]), (2, -r[5]), (2, r[6]), (3, 0.0), (3, -0.0), (4, 3)],
        [(k % 7 - 3, r[k % 8] * (k + 1)) for k in range(24)],  # exactly "few"
    ]
    for reads in cases:
        for acc in (ZERO, rng.standard_normal(7).astype(dtype)):
            got = fold_reads(acc, x, _chain(*reads))
            want = _fold_one_by_one(acc, x, reads)
            assert got.dtype == want.dtype == dtype
            assert got.tobytes() == want.tobytes(), (reads, got, want)
    left = [
        [(0, r[0]), (1, r[1]), (2, ZERO)],
        [(0, r[0]), (1, r[1]), (2, np.array(r[2]))],
        [(0, r[0]), (1, r[1]), (np.int64(1), r[2]), (-1, r[3])],
        [(k % 7, r[k % 8]) for k in range(25)],
    ]
    for reads in left:
        got = fold_reads(ZERO, x, _chain(*reads))
        want = _fold_general(ZERO, x, reads)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (reads, got, want)


def three_reads(a):
    return a[0] + a[-1] + a[0] * a[1]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_few_scalar_reads_gradients(dtype):
    """End to end: repeated and negative positions of a vector, rows of a matrix (a[0] is
    a row: the view path), against finite differences; integer arrays are refused."""
    x = np.linspace(-0.5, 0.8, 5).astype(dtype)
    if dtype == np.complex128:
        x = x + 0.25j
    check_grads(three_reads, x)
    check_grads(three_reads, np.linspace(-1.0, 1.0, 12).astype(dtype).reshape(3, 4))
    g = grad(lambda a: three_reads(a).real)(x) if dtype == np.complex128 else grad(three_reads)(x)
    assert g.dtype == dtype
    with pytest.raises(NotDifferentiableError):
        grad(three_reads)(np.arange(5))


def rosen_vec(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def sum3(a):
    return a[0] + a[1] + a[2] * a[0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradients_through_the_fold_paths(dtype):
    x = np.linspace(-0.5, 0.8, 7).astype(dtype)
    check_grads(rosen_vec, x)
    check_grads(sum3, x)
    check_grads(rosen_vec, x, order=2)
    check_grads(sum3, x, order=2)


# -- unbroadcast ------------------------------------------------------------------------------


def test_unbroadcast_equal_shapes():
    x = np.zeros(3, dtype=np.float32)
    g = np.ones(3)
    out = unbroadcast(g, x)
    assert out.dtype == np.float32
    out = unbroadcast(np.array([1 + 2j, 3j, 1.0]), np.zeros(3))
    np.testing.assert_array_equal(out, [1.0, 0.0, 1.0])
    assert unbroadcast(2.5, 1.0) == 2.5
    np.testing.assert_array_equal(unbroadcast(np.ones((2, 3)), np.zeros(3)), [2.0, 2.0, 2.0])


# -- stacked pullbacks, Jacobians and Hessians ------------------------------------------------


def elementwise(x):
    return np.tanh(x) * x + x**2


def two_args(x, w):
    return np.sin(x) * w + x


def reads_slices(x):
    return x[1:] * x[:-1]


def jacobian_by_fd(f, x, eps=1e-6):
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = eps
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", [elementwise, reads_slices])
def test_stacked_pullback_matches_rows_and_fd(fn, dtype):
    x = np.linspace(-1.0, 1.2, 6).astype(dtype)
    y, back = vjp(fn, x, wrt=0)
    dys = np.random.default_rng(1).standard_normal((4,) + y.shape).astype(dtype)
    got = back.stacked(dys)
    rows = np.stack([back(dy) for dy in dys])
    assert got.shape == (4, 6) and got.dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, rows, rtol=tol, atol=tol)
    J = jacobian(fn)(x)
    np.testing.assert_allclose(J, jacobian_by_fd(fn, x.astype(np.float64)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(J, jacobian(fn, mode="forward")(x), rtol=tol, atol=tol)


def test_stacked_pullback_several_arguments_and_scalars():
    x, w = np.linspace(0.1, 0.9, 4), np.linspace(1.0, 2.0, 4)
    y, back = vjp(two_args, x, w)
    dys = np.eye(4)
    gx, gw = back.stacked(dys)
    np.testing.assert_allclose(gx, np.diag(np.cos(x) * w + 1))
    np.testing.assert_allclose(gw, np.diag(np.sin(x)))
    y, back = vjp(lambda s, t: s * t + math.sin(s), 0.5, 2.0)
    gs, gt = back.stacked(np.array([1.0, 2.0]))
    np.testing.assert_allclose(gs, [2.0 + math.cos(0.5), 2 * (2.0 + math.cos(0.5))])
    np.testing.assert_allclose(gt, [0.5, 1.0])


def test_stacked_pullback_empty_and_bad_shapes():
    y, back = vjp(elementwise, np.ones(3), wrt=0)
    assert back.stacked(np.zeros((0, 3))).shape == (0, 3)
    with pytest.raises(ShapeMismatchError, match=r"\(k,\)"):
        back.stacked(np.zeros((2, 4)))


def fancy_reads(x):
    return np.sum(x[np.array([0, 2, 2])] ** 2 * x[1])


def test_jacobian_falls_back_where_a_step_cannot_batch(monkeypatch):
    # Integer-array reads do not follow a batch axis in second order: rows, same result.
    from pullback import batched

    calls = []
    rows = batched._stack_rows
    monkeypatch.setattr(batched, "_stack_rows", lambda *a: calls.append(1) or rows(*a))
    z = np.linspace(0.5, 1.5, 4)
    H = hessian(fancy_reads)(z)
    assert calls
    np.testing.assert_allclose(H, jacobian_by_fd(grad(fancy_reads), z), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(H, H.T, rtol=1e-12, atol=1e-12)
    # The Rosenbrock Hessian batches now (tests/test_batched_hessians.py checks it).
    x = np.linspace(-1.0, 1.5, 8)
    H = hessian(rosen_vec)(x)
    head, tail = x[:-1], x[1:]
    want = np.zeros((8, 8))
    idx = np.arange(7)
    want[idx, idx] += 1200.0 * head**2 - 400.0 * tail + 2.0
    want[idx + 1, idx + 1] += 200.0
    want[idx, idx + 1] = -400.0 * head
    want[idx + 1, idx] = -400.0 * head
    np.testing.assert_allclose(H, want, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(H, jacobian_by_fd(grad(rosen_vec), x), rtol=1e-6, atol=1e-4)


def test_batched_state_is_restored_after_a_failing_batch():
    from pullback import tangents

    hessian(rosen_vec)(np.linspace(0.0, 1.0, 4))
    assert tangents.batch_axes.axes == ()
    assert pullback.grad(square)(2.0) == 4.0


def test_the_batch_axes_are_per_thread():
    import threading

    from pullback import tangents

    x = np.linspace(0.0, 1.0, 3)
    want = grad(rosen_vec)(x)
    got = []
    tangents.batch_axes.axes = (3,)  # as while a batched pullback runs in this thread
    try:
        worker = threading.Thread(target=lambda: got.append(grad(rosen_vec)(x)))
        worker.start()
        worker.join()
    finally:
        tangents.batch_axes.axes = ()
    np.testing.assert_array_equal(got[0], want)


# -- negations folded into scaled products (transform/peephole.py) ---------------------------


def _lines(*texts):
    from pullback.transform.code import Line

    return [Line(t) for t in texts]


def test_fold_negations_only_where_the_moved_name_is_read_once():
    from pullback.transform.peephole import fold_negations

    def folded(*texts):
        block = _lines(*texts)
        fold_negations(block, "d_")
        return [line.text for line in block]

    assert folded("d_b = -d_a", "d_c = d_b * (t * 2.0)", "r = d_c") == [
        "d_c = d_a * (t * -2.0)",
        "r = d_c",
    ]
    # d_a read again: the product stays, the negation stays
    kept = ("d_a = d_t * (t * 2.0)", "d_b = -d_a", "r = d_a + d_b")
    assert folded(*kept) == list(kept)
    # d_b read between the definition and the negation: nothing moves
    kept = ("d_a = d_t * (t * 2.0)", "s = d_b", "d_b = -d_a", "r = d_b")
    assert folded(*kept) == list(kept)
    # d_a rebound between the negation and its use
    kept = ("d_b = -d_a", "d_a = d_t", "d_c = d_b * (t * 2.0)", "r = d_c + d_a")
    assert folded(*kept) == list(kept)
    # not a plain scaled product
    kept = ("d_a = d_t + d_u * (t * 2.0)", "d_b = -d_a", "r = d_b")
    assert folded(*kept) == list(kept)


def negated_squares(x):
    r = 1.0 - x[1:] ** 2  # a negation, then the product of x[1:] ** 2
    return np.sum(r**2) + np.sum((2.0 - x[:-1]) ** 2)  # a product, then its negation


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradients_through_folded_negations(dtype):
    x = np.linspace(-0.7, 0.9, 6).astype(dtype)
    g = grad(negated_squares)
    assert g.source_for(x).count("* -2.0)") == 2  # both negations folded
    check_grads(negated_squares, x)
    check_grads(negated_squares, x, order=2)
    for _ in range(3):  # the sweeps, then the fused sweeps
        assert g(x).dtype == dtype
