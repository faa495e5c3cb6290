"""The finiteness test of a diagonal stack's steps, deferred to where the stack leaves its
form (pullback.diagonal_stack.deferred_call), and the product fast path of a diagonal
stack (sweep_cotangents.times_fast). Every Jacobian is compared with the one the test at
each step gives (what pullback gave before the deferral), with the row-by-row result and,
where it is finite, with central differences; float64 and float32. No timing is asserted
(benchmarks/targets.py measures).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_diagonal_stack import rows_of
from test_speed_paths import jacobian_by_fd

from pullback import batched, forward_mode, jacobian, jvp, tangents
from pullback.band_stack import BandStack
from pullback.diagonal_stack import (
    DiagonalStack,
    NonFiniteDiagonal,
    deferral,
    deferred_call,
    identity_stack,
)
from pullback.runtime import times_cotangents
from pullback.sweep_cotangents import times_fast

DTYPES = [np.float64, np.float32]


def x_log_x(x):
    return x * np.log(x)  # log(0) = -inf: row by row 0 * inf is NaN off the diagonal


def reciprocal_sum(x):
    return 1.0 / x + np.sin(x)  # 1 / 0: a quotient that is not finite


def overflowing(x):
    return np.exp(x) * x  # exp(800) overflows: a product of finite values that is not


def masked(x):
    return np.where(x > 0.25, x * np.log(x), 0.0)  # the mask zeroes a non-finite column


def shifted(x):
    return x[1:] * np.log(x[:-1])  # the stack of a slice read: a band stack


def tanh_times_x(x):
    return np.tanh(x) * x


NON_FINITE = [
    (x_log_x, [0.0, 0.5, 2.0, 1.5]),
    (reciprocal_sum, [0.5, 0.0, -1.0, 2.0]),
    (overflowing, [1.0, 800.0, -2.0, 0.5]),
    (masked, [0.0, 0.5, 2.0, 0.1]),
    (shifted, [0.0, 0.5, 2.0, 1.5]),
]


def columns_of(fn, x):
    """The Jacobian one jvp per input element (forward mode's reference)."""
    basis = np.eye(x.size, dtype=x.dtype)
    columns = [jvp(fn, (x,), (basis[k],))[1] for k in range(x.size)]
    return np.stack(columns, axis=-1)


def one_by_one(fn, x, mode):
    return rows_of(fn, x) if mode == "reverse" else columns_of(fn, x)


def checked_at_each_step(fn, x, mode, monkeypatch):
    """The Jacobian with the test at every step (no deferral): what pullback gave before."""
    with monkeypatch.context() as m:
        m.setattr(batched, "_deferred_cotangents", lambda *a: batched._batched_cotangents(*a))
        m.setattr(forward_mode, "deferred_call", lambda f, *args: f(*args))
        return jacobian(fn, mode=mode)(x)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn, values", NON_FINITE)
def test_a_non_finite_step_gives_what_the_test_at_each_step_gave(
    fn, values, dtype, mode, monkeypatch
):
    x = np.array(values, dtype=dtype)
    with np.errstate(all="ignore"):
        got = jacobian(fn, mode=mode)(x)
        before = checked_at_each_step(fn, x, mode, monkeypatch)
        rows = one_by_one(fn, x, mode)
    assert got.dtype == before.dtype == dtype
    assert np.array_equal(got, before, equal_nan=True)
    finite = np.isfinite(rows)
    # a non-finite step shows in the result, but where the mask zeroes its column
    assert finite.all() if fn is masked else not finite.all()
    assert np.array_equal(np.isnan(got), np.isnan(rows))  # NaN where one by one has it
    np.testing.assert_allclose(got[finite], rows[finite], rtol=1e-6, atol=0)
    assert deferral.on is False


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", [tanh_times_x, x_log_x, reciprocal_sum, masked])
def test_finite_jacobians_are_exact_and_match_differences(fn, dtype, mode, monkeypatch):
    x = np.linspace(0.4, 1.7, 6).astype(dtype)
    got = jacobian(fn, mode=mode)(x)
    assert got.dtype == dtype
    assert np.array_equal(got, checked_at_each_step(fn, x, mode, monkeypatch))
    want = one_by_one(fn, x, mode)
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-14)
    tol = 2e-3 if dtype == np.float32 else 1e-7
    fd = jacobian_by_fd(fn, x.astype(np.float64))
    np.testing.assert_allclose(got, fd, rtol=tol, atol=tol)


def test_one_sweep_when_finite_and_a_second_one_with_the_test_when_not(monkeypatch):
    sweeps = []
    run = batched._batched_cotangents

    def counted(back, dys, batch, defer=False):
        sweeps.append(defer)
        return run(back, dys, batch, defer)

    monkeypatch.setattr(batched, "_batched_cotangents", counted)
    jacobian(x_log_x)(np.array([0.5, 1.0, 2.0]))
    assert sweeps == [True]  # deferred, and its one test passed
    sweeps.clear()
    with np.errstate(all="ignore"):
        jacobian(x_log_x)(np.array([0.0, 1.0, 2.0]))
    assert sweeps == [True, False]  # the deferred sweep, then the test at each step


def test_a_stack_leaving_its_form_is_tested_only_while_deferred():
    d = DiagonalStack(np.array([np.inf, 1.0]))
    assert np.array_equal(d.dense(), np.diag([np.inf, 1.0]))  # not deferred: as before
    assert BandStack.from_diagonal(d).data.shape == (1, 2)
    with pytest.raises(NonFiniteDiagonal):
        deferred_call(d.dense)
    with pytest.raises(NonFiniteDiagonal):
        deferred_call(BandStack.from_diagonal, d)
    assert deferral.on is False  # restored after the error
    finite = DiagonalStack(np.array([2.0, 1.0]))
    assert np.array_equal(deferred_call(finite.dense), np.diag([2.0, 1.0]))


def test_a_complex_step_is_tested_at_once_while_deferred():
    # its real part could drop a non-finite imaginary part: never deferred
    d = DiagonalStack(np.array([1.0, 2.0]))
    with np.errstate(all="ignore"):
        out = deferred_call(np.multiply, d, np.array([1 + 1j, np.inf * 1j]))
    assert type(out) is np.ndarray and out.dtype.kind == "c"
    finite = deferred_call(np.multiply, d, np.array([1 + 1j, 2j]))
    assert type(finite) is DiagonalStack


@pytest.mark.parametrize("dtype", DTYPES)
def test_times_fast_of_a_diagonal_stack_is_times_cotangents(dtype):
    n = 4
    a = np.linspace(-1.0, 2.0, n).astype(dtype)
    b = np.linspace(0.5, 1.5, n).astype(dtype)
    g = identity_stack((n,), np.dtype(dtype)) * b
    outer = tangents.batch_axes.axes
    tangents.batch_axes.axes = (n,)
    try:
        got = times_fast(g, a, b)
        want = times_cotangents(g, a, b)
        # another shape, dtype or batch: the generic helper's answer
        other = times_fast(g, a.astype(np.float64 if dtype == np.float32 else np.float32), b)
    finally:
        tangents.batch_axes.axes = outer
    for u, v in zip(got, want, strict=True):
        assert type(u) is type(v) is DiagonalStack
        assert u.diagonal.dtype == v.diagonal.dtype == dtype
        assert np.array_equal(u.diagonal, v.diagonal)
    assert len(other) == 2


def unknown_kinds(x):
    parts = [np.tanh(x), x]  # items of a list: kinds the transformation does not prove
    return parts[0] * parts[1]


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_product_of_unknown_kinds_keeps_the_diagonal_stack(dtype, monkeypatch):
    x = np.linspace(-1.2, 1.4, 5).astype(dtype)
    monkeypatch.setattr(batched, "_stack_rows", None)  # one batched sweep, no rows
    got = jacobian(unknown_kinds)(x)
    monkeypatch.undo()
    assert got.dtype == dtype
    assert np.array_equal(got, rows_of(unknown_kinds, x))
    assert np.array_equal(got, np.diag(np.diag(got)))
    tol = 2e-3 if dtype == np.float32 else 1e-7
    fd = jacobian_by_fd(unknown_kinds, x.astype(np.float64))
    np.testing.assert_allclose(got, fd, rtol=tol, atol=tol)
