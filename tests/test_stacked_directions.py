"""``stacked_jvp`` and ``vjp(...)[1].stacked``: many directions through one sweep (issue 13,
fourth round). Each stack is compared with one ordinary jvp/pullback per direction and with
finite differences; no timing is asserted (benchmarks/ measures).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_speed_paths import jacobian_by_fd

from pullback import errors, forward_mode, jacobian, jvp, vjp
from pullback.forward_mode import stacked_jvp

DTYPES = [np.float64, np.float32]


def elementwise(x):
    return np.tanh(x) * x + np.sin(x) / 2.0


def slices(x):
    return x[1:] * x[:-1] - np.cos(x[:-1])


def two_args(x, w):
    return np.exp(x * w) + x * x * 0.5


def pair(x):
    return np.sin(x), np.sum(x * x)


def tol_for(dtype):
    return 1e-5 if dtype == np.float32 else 1e-12


def rows_of_jvp(fn, primals, stacks):
    k = next(np.shape(s)[0] for s in stacks if s is not None)
    rows = []
    for r in range(k):
        tangents = tuple(None if s is None else s[r] for s in stacks)
        rows.append(jvp(fn, primals, tangents)[1])
    return rows


@pytest.fixture
def no_rows(monkeypatch):
    def refuse(*args):
        raise AssertionError("stacked_jvp fell back to one sweep per direction")

    monkeypatch.setattr(forward_mode, "_jvp_rows", refuse)


@pytest.mark.parametrize("dtype", DTYPES)
def test_elementwise_stack_runs_batched_and_matches_rows_and_fd(dtype, no_rows):
    x = np.linspace(-1.2, 1.3, 6).astype(dtype)
    stack = np.random.default_rng(0).standard_normal((4, 6)).astype(dtype)
    y, dys = stacked_jvp(elementwise, (x,), (stack,))
    assert dys.shape == (4, 6) and dys.dtype == dtype
    np.testing.assert_allclose(y, elementwise(x), rtol=tol_for(dtype))
    want = np.stack(rows_of_jvp(elementwise, (x,), (stack,)))
    np.testing.assert_allclose(dys, want, rtol=tol_for(dtype), atol=tol_for(dtype))
    J = jacobian_by_fd(elementwise, x.astype(np.float64))
    fd_tol = 2e-3 if dtype == np.float32 else 1e-7
    np.testing.assert_allclose(dys, stack @ J.T, rtol=fd_tol, atol=fd_tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_two_arguments_and_a_still_one(dtype):
    x = np.linspace(-0.5, 0.7, 5).astype(dtype)
    w = np.linspace(0.3, 1.1, 5).astype(dtype)
    rng = np.random.default_rng(1)
    sx, sw = (rng.standard_normal((3, 5)).astype(dtype) for _ in range(2))
    for stacks in [(sx, sw), (sx, None), (None, sw)]:
        _, dys = stacked_jvp(two_args, (x, w), stacks)
        want = np.stack(rows_of_jvp(two_args, (x, w), stacks))
        np.testing.assert_allclose(dys, want, rtol=tol_for(dtype), atol=tol_for(dtype))
        assert dys.dtype == dtype


@pytest.mark.parametrize("dtype", DTYPES)
def test_slices_match_rows_and_fd(dtype):
    # however the sweep treats the batch axis, the result is the rows' one
    x = np.linspace(-1.0, 1.0, 5).astype(dtype)
    stack = np.eye(5, dtype=dtype)[:3]
    _, dys = stacked_jvp(slices, (x,), (stack,))
    want = np.stack(rows_of_jvp(slices, (x,), (stack,)))
    np.testing.assert_allclose(dys, want, rtol=tol_for(dtype), atol=tol_for(dtype))
    J = jacobian_by_fd(slices, x.astype(np.float64))
    fd_tol = 2e-3 if dtype == np.float32 else 1e-7
    np.testing.assert_allclose(dys, stack @ J.T, rtol=fd_tol, atol=fd_tol)


def test_tuple_outputs_give_a_tuple_of_stacks():
    x = np.linspace(0.1, 0.9, 4)
    stack = np.eye(4)[:2]
    y, (d_sin, d_sum) = stacked_jvp(pair, (x,), (stack,))
    np.testing.assert_allclose(d_sin, stack * np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(d_sum, stack @ (2 * x), rtol=1e-12)
    assert isinstance(y, tuple) and d_sum.shape == (2,)


def test_scalar_primal_and_degenerate_stacks():
    _, dys = stacked_jvp(lambda t: t * t * 3.0, (2.0,), (np.array([1.0, -2.0]),))
    np.testing.assert_allclose(dys, [12.0, -24.0])
    x = np.linspace(0.0, 1.0, 3)
    y, dys = stacked_jvp(elementwise, (x,), (np.zeros((0, 3)),))
    assert dys.shape == (0, 3)
    np.testing.assert_allclose(y, elementwise(x))
    _, dys = stacked_jvp(elementwise, (x,), (np.ones((1, 3)),))
    np.testing.assert_allclose(dys[0], jvp(elementwise, (x,), (np.ones(3),))[1], rtol=1e-12)


def test_bad_stacks_are_refused_with_a_fix():
    x = np.zeros(3)
    with pytest.raises(errors.ShapeMismatchError, match="Fix"):
        stacked_jvp(elementwise, (x,), (np.ones((2, 4)),))
    with pytest.raises(errors.ShapeMismatchError, match="Fix"):
        stacked_jvp(two_args, (x, x), (np.ones((2, 3)), np.ones((3, 3))))
    with pytest.raises(errors.ShapeMismatchError):
        stacked_jvp(elementwise, (x,), ())
    with pytest.raises(errors.ArgumentError, match="Fix"):
        stacked_jvp(elementwise, (x,), (None,))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", [elementwise, slices])
def test_forward_jacobian_matches_reverse(fn, dtype):
    x = np.linspace(-1.0, 1.0, 6).astype(dtype)
    forward = jacobian(fn, mode="forward")(x)
    reverse = jacobian(fn)(x)
    assert forward.dtype == dtype and forward.shape == reverse.shape
    np.testing.assert_allclose(forward, reverse, rtol=tol_for(dtype), atol=tol_for(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_stacked_pullback_for_users(dtype):
    x = np.linspace(-1.0, 1.0, 5).astype(dtype)
    y, back = vjp(slices, x, wrt=0)
    dys = np.random.default_rng(2).standard_normal((3,) + y.shape).astype(dtype)
    got = back.stacked(dys)
    want = np.stack([back(dy) for dy in dys])
    np.testing.assert_allclose(got, want, rtol=tol_for(dtype), atol=tol_for(dtype))
    J = jacobian_by_fd(slices, x.astype(np.float64))
    fd_tol = 2e-3 if dtype == np.float32 else 1e-7
    np.testing.assert_allclose(got, dys @ J, rtol=fd_tol, atol=fd_tol)


def _spread(a, *rest):
    return a * rest[0] + np.sin(rest[1])


def _calls_spread(x, w):
    return _spread(x, w, x * w)


@pytest.mark.parametrize("dtype", DTYPES)
def test_kept_forward_sweeps_bind_tangents_again_each_call(dtype):
    """A forward Jacobian keeps its generated sweeps between calls, and an inner call's
    sweep is kept in the generated code: tangents that land in ``*rest`` take the
    signature path, every call, and a function whose code changes is built again."""
    x = np.linspace(-1.0, 1.0, 4).astype(dtype)
    w = np.linspace(0.5, 1.5, 4).astype(dtype)
    j = jacobian(_calls_spread, wrt=(0, 1), mode="forward")
    fd_tol = 2e-3 if dtype == np.float32 else 1e-7
    for _ in range(2):
        jx, jw = j(x, w)
        want_x = jacobian_by_fd(lambda v: _calls_spread(v, w.astype(np.float64)), x.astype(float))
        want_w = jacobian_by_fd(lambda v: _calls_spread(x.astype(np.float64), v), w.astype(float))
        np.testing.assert_allclose(jx, want_x, rtol=fd_tol, atol=fd_tol)
        np.testing.assert_allclose(jw, want_w, rtol=fd_tol, atol=fd_tol)
        np.testing.assert_allclose(jx, jacobian(_calls_spread)(x, w), rtol=tol_for(dtype))

    def f(v):
        return np.sin(v) * v

    def g(v):
        return np.exp(v) * 2.0

    jf = jacobian(f, mode="forward")
    np.testing.assert_allclose(jf(x), np.diag(np.cos(x) * x + np.sin(x)), rtol=tol_for(dtype))
    f.__code__ = g.__code__
    np.testing.assert_allclose(jf(x), np.diag(np.exp(x) * 2.0), rtol=tol_for(dtype))


def test_forward_jacobian_reads_a_new_signature():
    """The positions of ``wrt`` are read again when the function's code changes: a
    forward Jacobian then differentiates the argument of that name in the new order."""

    def f(x, w):
        return np.sin(x) * w

    def swapped(w, x):
        return np.sin(x) * w

    x, w = np.linspace(-1.0, 1.0, 3), np.linspace(0.5, 1.5, 3)
    j = jacobian(f, wrt="x", mode="forward")
    np.testing.assert_allclose(j(x, w), np.diag(np.cos(x) * w), rtol=1e-14)
    f.__code__ = swapped.__code__
    np.testing.assert_allclose(j(w, x), np.diag(np.cos(x) * w), rtol=1e-14)
    np.testing.assert_allclose(j(w, x), jacobian(f, wrt="x")(w, x), rtol=1e-14)


@pytest.mark.parametrize("swap", [True, False])
def test_a_batched_attempt_is_quiet_and_gives_back_the_users_warning_state(swap, monkeypatch):
    import warnings

    from pullback import batched

    # swapping the filter list (through Python 3.13), or catch_warnings: the same state
    monkeypatch.setattr(batched, "_SWAP_FILTERS", swap and batched._SWAP_FILTERS)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        filters, errors_before = warnings.filters, np.geterr()
        with batched.Quiet():
            warnings.warn("inside a batched attempt", stacklevel=1)
            assert np.geterr()["divide"] == "ignore"
        with pytest.raises(ZeroDivisionError), batched.Quiet():
            raise ZeroDivisionError  # a failed attempt gives the state back too
        warnings.warn("the user's", stacklevel=1)
        assert warnings.filters is filters and np.geterr() == errors_before
    assert [str(w.message) for w in seen] == ["the user's"]
