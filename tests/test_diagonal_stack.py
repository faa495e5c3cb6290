"""Jacobians whose basis runs as a scaled identity (issue 13, fourth round): the stack of
basis cotangents is a :class:`pullback.diagonal_stack.DiagonalStack` that elementwise
steps carry as one vector and anything else turns dense. Every Jacobian is compared with
the row-by-row result (exactly: the same floating-point operations) and with finite
differences; no timing is asserted (benchmarks/targets.py measures).
"""

from __future__ import annotations

import numpy as np
import pytest
from stack_counts import count_dense
from test_speed_paths import jacobian_by_fd

from pullback import hessian, jacobian, vjp
from pullback.diagonal_stack import DiagonalStack, identity_stack

DTYPES = [np.float64, np.float32]
W = np.array([0.5, -1.5, 2.0, 0.25])


def tanh_times_x(x):
    return np.tanh(x) * x


def quotient(x):
    return -np.sin(x) / (1.0 + x * x) + x / 2.0


def exp_chain(x):
    return np.exp(-x * x) * 3.0 - np.cos(x) * np.cos(x)


def scaled_columns(x):
    return x * W - np.sin(x) * W  # W broadcasts along the last axis of a (3, 4) x


def coupled(x):
    return x * np.sum(x) + np.cumsum(x)  # not elementwise: the stack turns dense


def reversed_product(x):
    return x[::-1] * x


def rows_of(fn, x):
    """The Jacobian one pullback per output element (the reference)."""
    y, back = vjp(fn, x, wrt=0)
    basis = np.eye(y.size, dtype=y.dtype)
    rows = [back(basis[k].reshape(y.shape)) for k in range(y.size)]
    if not rows:
        return np.zeros(y.shape + x.shape, dtype=x.dtype)
    return np.stack(rows).reshape(y.shape + x.shape)


@pytest.fixture
def dense_count(monkeypatch):
    """How many times a diagonal stack was made dense during the test; a fallback to one
    pullback per row fails the test."""
    return count_dense(monkeypatch, DiagonalStack, lambda stack: 1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "fn, shape",
    [(tanh_times_x, (7,)), (quotient, (5,)), (exp_chain, (2, 3)), (scaled_columns, (3, 4))],
)
def test_elementwise_jacobian_stays_diagonal_and_is_exact(fn, shape, dtype, dense_count):
    x = np.linspace(-1.3, 1.1, int(np.prod(shape))).reshape(shape).astype(dtype)
    got = jacobian(fn)(x)
    want = rows_of(fn, x)
    assert got.shape == shape + shape and got.dtype == dtype
    assert np.array_equal(got, want)  # the same operations as row by row
    assert len(dense_count) == 1  # made dense once, for the result
    tol = 2e-3 if dtype == np.float32 else 1e-7
    fd = jacobian_by_fd(fn, x.astype(np.float64)).reshape(shape + shape)
    np.testing.assert_allclose(got, fd, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", [coupled, reversed_product])
def test_a_map_that_is_not_elementwise_turns_dense_and_stays_exact(fn, dtype):
    x = np.linspace(-1.0, 1.4, 6).astype(dtype)
    got = jacobian(fn)(x)
    want = rows_of(fn, x)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert got.dtype == dtype
    fd = jacobian_by_fd(fn, x.astype(np.float64))
    np.testing.assert_allclose(got, fd, rtol=100 * tol + 1e-6, atol=100 * tol + 1e-6)
    assert not np.allclose(got, np.diag(np.diag(got)))  # really off the diagonal


def test_a_non_finite_factor_works_on_the_dense_stack():
    # log(0) = -inf: row by row, 0 * inf puts NaN off the diagonal; so must the stack.
    def fn(x):
        return x * np.log(x)

    x = np.array([0.0, 0.5, 2.0])
    with np.errstate(all="ignore"):
        got = jacobian(fn)(x)
        want = rows_of(fn, x)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.isnan(got[1, 0])


@pytest.mark.parametrize("n", [1, 0])
def test_degenerate_sizes(n):
    x = np.linspace(0.1, 0.9, n)
    got = jacobian(tanh_times_x)(x)
    assert got.shape == (n, n)
    assert np.array_equal(got, rows_of(tanh_times_x, x).reshape(n, n))


@pytest.mark.parametrize("dtype", DTYPES)
def test_hessian_of_an_elementwise_sum_is_exact(dtype):
    def loss(x):
        return np.sum(np.sin(x) * x)

    x = np.linspace(-1.0, 1.0, 5).astype(dtype)
    got = hessian(loss)(x)
    want = np.diag(2 * np.cos(x.astype(np.float64)) - x * np.sin(x.astype(np.float64)))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert got.dtype == dtype


def test_the_stack_itself():
    d = identity_stack((2, 2), np.float64)
    assert d.shape == (4, 2, 2) and d.ndim == 3 and d.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(d), np.eye(4).reshape(4, 2, 2))
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    for got, want in [
        (d * a, np.eye(4).reshape(4, 2, 2) * a),
        (a * d, a * np.eye(4).reshape(4, 2, 2)),
        (-(d / a) + d * 2.0, -(np.eye(4).reshape(4, 2, 2) / a) + np.eye(4).reshape(4, 2, 2) * 2),
        (np.conj(d) - d, np.zeros((4, 2, 2))),
    ]:
        assert type(got) is DiagonalStack
        np.testing.assert_array_equal(got.dense(), want)
    dense_sum = d + np.ones((4, 2, 2))  # not diagonal: an ordinary array
    assert type(dense_sum) is np.ndarray
    np.testing.assert_array_equal(dense_sum, np.eye(4).reshape(4, 2, 2) + 1)
    with np.errstate(divide="ignore"):
        assert type(a / d) is np.ndarray  # a / 0 off the diagonal: not a diagonal stack
    np.testing.assert_array_equal(d[1], np.eye(4)[1].reshape(2, 2))
    assert d.astype(np.float32).dtype == np.float32 and d.real is d


def test_all_finite_sees_every_non_finite_entry():
    from pullback.diagonal_stack import all_finite

    quiet = np.errstate(all="ignore")  # as in the sweeps, which run under it
    quiet.__enter__()
    for dtype in (np.float64, np.float32, np.complex128):
        v = np.linspace(-1.0, 1.0, 7).astype(dtype)
        assert all_finite(v) and all_finite(v.reshape(7, 1)) and all_finite(v[:0])
        for bad in (np.inf, -np.inf, np.nan):
            w = v.copy()
            w[3] = bad
            assert not all_finite(w)
        w = v.copy()
        w[1], w[5] = np.inf, -np.inf  # opposite infinities: the sum is NaN, still caught
        assert not all_finite(w)
    big = np.full(4, np.finfo(np.float64).max)  # finite, but the sum overflows: refused
    assert not all_finite(big)
    quiet.__exit__(None, None, None)

    def scaled(x):
        return x * big

    # which only costs the structure: the Jacobian is still the row-by-row one
    x = np.linspace(0.5, 1.0, 4)
    got = jacobian(scaled)(x)
    assert np.array_equal(got, np.diag(big)) and np.array_equal(got, rows_of(scaled, x))


def test_operators_keep_the_stack_or_fall_back_to_numpy():
    d = DiagonalStack(np.array([1.0, 2.0, 3.0]))
    eye = np.diag([1.0, 2.0, 3.0])
    with np.errstate(invalid="ignore"):  # 0 * inf off the diagonal
        inf_times = (d * np.inf, eye * np.inf, False)  # NaN off the diagonal, as dense
        t_inf = np.array([1.0, np.inf, 2.0])
        inf_array_times = (t_inf * d, t_inf * eye, False)  # NumPy's operator, array first
        inf_plus = (d + DiagonalStack(t_inf), eye + np.diag(t_inf), True)  # no 0 * inf
    t = np.array([2.0, 0.5, -1.0])
    for got, want, structured in [
        inf_times,
        inf_array_times,
        inf_plus,
        (t * d, t * eye, True),
        (np.multiply(t, d), t * eye, True),
        (t[:, None] * d, t[:, None] * eye, False),  # scales rows of the stack: dense
        (d * np.array([2.0, 0.5, -1.0]), eye * np.array([2.0, 0.5, -1.0]), True),
        (3.0 * d, 3.0 * eye, True),
        (d + d, eye + eye, True),
        (1.0 - d, 1.0 - eye, False),  # not zero off the diagonal
        (d - np.ones((3, 3)), eye - 1.0, False),
        (-d, -eye, True),
    ]:
        assert (type(got) is DiagonalStack) is structured
        assert np.array_equal(np.asarray(got), want, equal_nan=True)
    with pytest.raises(ValueError):  # stacks of other shapes: NumPy refuses the dense sum
        d + DiagonalStack(np.ones(2))
    with pytest.raises(TypeError):
        d * "a"


def _identity(x):
    return x


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_kept_identity_basis_never_reaches_the_caller(dtype):
    # identity_stack keeps one read-only vector of ones per shape: every Jacobian is an
    # array of the caller's own, and writing into one leaves the next call's basis alone.
    x = np.linspace(-0.5, 0.5, 4).astype(dtype)
    for fn in (_identity, tanh_times_x):
        for mode in ("reverse", "forward"):
            first = jacobian(fn, mode=mode)(x)
            assert first.flags.writeable and first.dtype == dtype
            want = first.copy()
            first[...] = 7.0
            np.testing.assert_array_equal(jacobian(fn, mode=mode)(x), want)
    np.testing.assert_array_equal(jacobian(_identity)(x), np.eye(4, dtype=dtype))
    basis = identity_stack((4,), dtype)
    assert not basis.diagonal.flags.writeable


def _old_agrees_decision(weights, got_stack, want, k):
    """The check of batched.agrees as it read before it worked on a diagonal's vector:
    the dense stack combined by ``weights``, the tolerance computed inline."""
    dense = np.asarray(got_stack)
    got = (weights @ dense.reshape(k, -1)).reshape(dense.shape[1:])
    error = float(np.max(np.abs(got - want)))
    top = float(np.max(np.abs(got_stack.diagonal)))
    eps = float(np.finfo(np.result_type(got_stack.dtype, want.dtype, np.float32)).eps)
    tol = 64 * eps * np.sqrt(k)
    if error <= tol * top + 1e-300:
        return True
    return error <= tol * max(float(np.max(np.abs(want))), top) + 1e-300


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_check_of_a_diagonal_result_decides_as_on_the_dense_stack(dtype):
    # agrees combines a diagonal result from its vector: for results off by amounts around
    # the tolerance it accepts and refuses exactly what the dense computation did.
    from pullback.batched import _weights, agrees

    k = 6
    v = np.linspace(-2.0, 3.0, k).astype(dtype)
    weights = _weights(k)
    want = (weights * v.astype(np.float64)).astype(dtype)
    eps = float(np.finfo(np.result_type(dtype, np.float32)).eps)
    decisions = []
    for scale in (0.0, 1.0, 10.0, 100.0, 300.0, 1e3, 1e5):
        wrong = v.copy()
        wrong[2] = wrong[2] + dtype(scale * eps * np.sqrt(k))
        stack = DiagonalStack(wrong)
        got = agrees(lambda combined: [want], [identity_stack((k,), dtype)], [stack])
        assert got == _old_agrees_decision(weights, stack, want, k)
        decisions.append(got)
    assert decisions[0] and not decisions[-1]  # both outcomes were met


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_compact_stack_takes_the_argument_dtype_before_it_turns_dense(dtype):
    from pullback.band_stack import BandStack
    from pullback.batched import materialize_rows

    x = np.zeros(4, dtype=dtype)
    v = np.array([1.0 / 3.0, -2.5e-8, 7.0, np.pi])  # float64 entries float32 rounds
    got = materialize_rows(DiagonalStack(v), x)
    want = DiagonalStack(v).dense().astype(dtype)  # what it gave: dense, then converted
    assert got.dtype == dtype and got.flags.writeable
    assert np.array_equal(got, want)
    band = BandStack(4, -1, np.stack([v, 2 * v, -v]))
    got = materialize_rows(band, x)
    assert got.dtype == dtype and np.array_equal(got, band.dense().astype(dtype))


# User rules whose pullbacks are linear but written for one cotangent: they read the
# stack as an array (a mean, a sum, a reversal), which mistakes the batch axis. Such a step
# leaves a dense stack behind, so the result is checked against one ordinary sweep and the
# rows go one by one: a result that stays diagonal needs no check (batched.exact_by_structure).
def _center(v):
    return v - np.mean(v)


def _spread_sum(v):
    return np.sum(v) * np.ones_like(v)


def _reverse(v):
    return v[::-1].copy()


def _user_registry():
    from pullback import RuleRegistry
    from pullback.registry import default_registry

    reg = default_registry().copy()
    reg.register(_center, lambda v: (_center(v), lambda g: (g - np.mean(g),)))
    reg.register(_spread_sum, lambda v: (_spread_sum(v), lambda g: (np.sum(g) * np.ones_like(v),)))
    reg.register(_reverse, lambda v: (_reverse(v), lambda g: (g[::-1],)))
    assert isinstance(reg, RuleRegistry)
    return reg


def through_center(x):
    return _center(np.tanh(x)) * x


def through_spread_sum(x):
    return _spread_sum(np.sin(x)) + x * x


def through_reverse(x):
    return np.exp(_reverse(x)) * 2.0


@pytest.mark.parametrize("fn", [through_center, through_spread_sum, through_reverse])
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_user_rule_that_misreads_the_batch_axis_gives_the_row_by_row_jacobian(fn, dtype):
    reg = _user_registry()
    x = np.linspace(-0.8, 1.1, 5).astype(dtype)
    got = jacobian(fn, registry=reg)(x)
    y, back = vjp(fn, x, wrt=0, registry=reg)
    want = np.stack([back(e) for e in np.eye(5, dtype=dtype)])
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)
    if dtype == np.float64:
        np.testing.assert_allclose(got, jacobian_by_fd(lambda v: fn(v), x), rtol=1e-6, atol=1e-8)
        assert np.count_nonzero(got - np.diag(np.diag(got))) > 0  # not a diagonal Jacobian
    # forward mode: one stack of tangents through the rule's jvp, against column by column
    from pullback import jvp

    got = jacobian(fn, mode="forward", registry=reg)(x)
    columns = [jvp(fn, (x,), (e,), registry=reg)[1] for e in np.eye(5, dtype=dtype)]
    np.testing.assert_array_equal(got, np.stack(columns, axis=-1))


def test_a_diagonal_result_needs_no_check_and_a_dense_one_is_checked(monkeypatch):
    from pullback import batched

    calls = []
    honest = batched._agrees

    def counting(*args, **kwargs):
        calls.append(1)
        return honest(*args, **kwargs)

    monkeypatch.setattr(batched, "_agrees", counting)
    x = np.linspace(-2.0, 2.0, 7)
    J = jacobian(tanh_times_x)(x)
    assert calls == [] and np.count_nonzero(J - np.diag(np.diag(J))) == 0
    jacobian(through_spread_sum, registry=_user_registry())(x)  # a dense batched result
    assert calls == [1]
