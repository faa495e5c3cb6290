"""The fast entry of ``jacobian`` and ``hessian`` (JacobianFunction._fast_forward): the
adjoint kept per argument kinds between calls is reused only while everything it baked in
holds, so each call gives the derivative of what the function computes at that call, the
same as the general path (``vjp_resolved``) and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from test_speed_paths import jacobian_by_fd

import pullback
from pullback import grad, hessian, jacobian
from pullback.errors import NotDifferentiableError
from pullback.registry import builtin_registry, use_registry

DTYPES = [np.float64, np.float32]


def _tol(dtype):
    return dict(rtol=2e-3, atol=2e-3) if dtype == np.float32 else dict(rtol=1e-6, atol=1e-7)


def _inner(x):
    return np.sin(x)


def uses_inner(x):
    return _inner(x) * x


def loss_with_inner(x):
    return np.sum(_inner(x) * x[::-1])


def _fd_hessian(x):
    """Central differences of the gradient, in float64 whatever the dtype of ``x``."""
    return jacobian_by_fd(grad(loss_with_inner), x.astype(np.float64))


def _general_path(monkeypatch):
    """Calls of ``vjp_resolved`` made by jacobian (the general path) while the test runs."""
    module = pullback.jacobian.__module__
    import sys

    jac_module = sys.modules[module]
    calls = []
    general = jac_module.vjp_resolved

    def counted(*args, **kwargs):
        calls.append(1)
        return general(*args, **kwargs)

    monkeypatch.setattr(jac_module, "vjp_resolved", counted)
    return calls


@pytest.mark.parametrize("dtype", DTYPES)
def test_fast_entry_follows_a_rebound_global_helper(dtype, monkeypatch):
    calls = _general_path(monkeypatch)
    x = np.linspace(-0.8, 1.1, 5).astype(dtype)
    j = jacobian(uses_inner)
    h = hessian(loss_with_inner)
    for _ in range(2):  # the second call runs from the kept entry
        np.testing.assert_allclose(j(x), np.diag(np.cos(x) * x + np.sin(x)), **_tol(dtype))
        np.testing.assert_allclose(h(x), _fd_hessian(x), **_tol(dtype))
    assert not calls  # plain positional float arrays: every call took the fast entry
    monkeypatch.setitem(globals(), "_inner", np.cos)
    np.testing.assert_allclose(j(x), np.diag(-np.sin(x) * x + np.cos(x)), **_tol(dtype))
    np.testing.assert_allclose(h(x), _fd_hessian(x), **_tol(dtype))
    np.testing.assert_allclose(h(x), h(x).T, rtol=1e-6)


def test_fast_entry_follows_new_code_and_argument_kinds():
    def f(x):
        return x * x

    def g(x):
        return x * x * x

    j = jacobian(f)
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_array_equal(j(x), np.diag(2.0 * x))
    f.__code__ = g.__code__
    np.testing.assert_array_equal(j(x), np.diag(3.0 * x * x))
    # other kinds: a matrix, float32, a float scalar each get their own adjoint
    m = np.arange(4.0).reshape(2, 2)
    np.testing.assert_allclose(j(m), jacobian_by_fd(f, m).reshape(2, 2, 2, 2), rtol=1e-6, atol=1e-8)
    got = j(x.astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.diag(3.0 * x * x), rtol=1e-6)
    assert j(1.5) == pytest.approx(3.0 * 1.5**2)


def test_fast_entry_follows_the_active_registry():
    def cube(x):
        return x**3

    def uses_cube(x):
        return cube(x) + 0.0

    j = jacobian(uses_cube)
    h = hessian(lambda x: np.sum(uses_cube(x)))
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(j(x), np.diag(3.0 * x**2))
    np.testing.assert_allclose(h(x), np.diag(6.0 * x))
    reg = builtin_registry().copy()

    @reg.rrule(cube)
    def _(x):
        return cube(x), lambda dy: (dy * 100.0,)

    with use_registry(reg):
        np.testing.assert_array_equal(j(x), np.diag([100.0, 100.0]))
    np.testing.assert_allclose(j(x), np.diag(3.0 * x**2))
    np.testing.assert_allclose(h(x), np.diag(6.0 * x))


def test_fast_entry_leaves_what_it_does_not_take_to_the_general_path(monkeypatch):
    calls = _general_path(monkeypatch)

    def scaled(x, w):
        return np.tanh(x) * w

    x = np.array([0.2, -0.4])
    with pytest.raises(NotDifferentiableError, match="'x'"):
        jacobian(scaled)(np.array([1, 2]), 2.0)  # an int array to differentiate: refused
    assert len(calls) == 1
    want = np.diag((1 - np.tanh(x) ** 2) * 2.0)
    np.testing.assert_allclose(jacobian(scaled)(x, w=2.0), want)  # a keyword
    assert len(calls) == 2
    np.testing.assert_allclose(jacobian(scaled)(x, 2.0), want)  # positional: fast
    np.testing.assert_allclose(jacobian(scaled, wrt=1)(x, 2.0), np.tanh(x))
    assert len(calls) == 2


@pytest.mark.parametrize("dtype", DTYPES)
def test_forward_mode_keys_follow_kinds_helpers_and_code(dtype, monkeypatch):
    """LazyJVP's cheap key of positional argument kinds: a rebound helper, new code, other
    ranks and dtypes and a non-differentiated int argument each give the derivative of
    what runs at that call (against reverse mode and finite differences)."""

    def scaled(x, n):
        return _inner(x) * x * n

    jf = jacobian(scaled, mode="forward")
    jr = jacobian(scaled)
    x = np.linspace(-0.6, 0.9, 4).astype(dtype)
    for _ in range(2):
        got = jf(x, 3)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, jr(x, 3), rtol=1e-6 if dtype == np.float32 else 1e-13)
    want = jacobian_by_fd(lambda v: scaled(v, 3), x.astype(np.float64))
    np.testing.assert_allclose(jf(x, 3), want, **_tol(dtype))
    monkeypatch.setitem(globals(), "_inner", np.cos)
    want = jacobian_by_fd(lambda v: scaled(v, 2), x.astype(np.float64))
    np.testing.assert_allclose(jf(x, 2), want, **_tol(dtype))
    m = x.reshape(2, 2)
    np.testing.assert_allclose(jf(m, 2), jr(m, 2), rtol=1e-6 if dtype == np.float32 else 1e-13)

    def cube(x, n):
        return x * x * x * n

    scaled.__code__ = cube.__code__
    np.testing.assert_allclose(jf(x, 2), np.diag(6.0 * x.astype(np.float64) ** 2), **_tol(dtype))


def _reads_past_the_end(x):
    y = np.sin(x)
    return y[5] * x


def test_fast_entry_explains_a_failing_forward_sweep_as_vjp_does():
    """The fast entry runs the forward sweep itself (no escape record: no user code runs
    in it): its error names the user's line as vjp's does."""
    x = np.zeros(2)
    notes = []
    calls = (lambda: jacobian(_reads_past_the_end)(x), lambda: pullback.vjp(_reads_past_the_end, x))
    for call in calls:
        with pytest.raises(IndexError) as info:
            call()
        notes.append(getattr(info.value, "__notes__", None))
    assert notes[0] == notes[1]
    assert "return y[5] * x" in notes[0][0]


def test_forward_mode_refuses_a_keyword_argument_and_takes_it_positionally():
    """jacobian(mode='forward') goes to its forward sweep at once only when the argument
    stands positionally; by keyword it is refused with the fix (the general path)."""

    def scaled(x, w):
        return np.tanh(x) * w

    jf = jacobian(scaled, mode="forward")
    x = np.array([0.2, -0.4, 0.7])
    with pytest.raises(pullback.errors.ArgumentError, match="positionally"):
        jf(x=x, w=2.0)
    want = np.diag((1 - np.tanh(x) ** 2) * 2.0)
    np.testing.assert_allclose(jf(x, 2.0), want, rtol=1e-12)
    np.testing.assert_allclose(jf(x, w=2.0), want, rtol=1e-12)
    np.testing.assert_allclose(jf(x, 2.0), jacobian_by_fd(lambda v: scaled(v, 2.0), x), rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_forward_mode_follows_the_active_registry(dtype):
    """The forward sweeps jacobian(mode='forward') keeps are made again for the registry
    active at the call: a rule of another registry applies inside use_registry, and the
    built-in one again after it (against the derivatives of what runs)."""

    def cube(x):
        return x**3

    def uses_cube(x):
        return cube(x) + 0.0

    jf = jacobian(uses_cube, mode="forward")
    x = np.array([1.0, 2.0, -0.5], dtype=dtype)
    want = np.diag(3.0 * x.astype(np.float64) ** 2)
    np.testing.assert_allclose(jf(x), want, **_tol(dtype))
    reg = builtin_registry().copy()
    reg.scalar_rule(cube, lambda y, x: 100.0 + 0.0 * x)
    for _ in range(2):
        with use_registry(reg):
            got = jf(x)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, np.diag([100.0, 100.0, 100.0]), **_tol(dtype))
        np.testing.assert_allclose(jf(x), want, **_tol(dtype))
    fd = jacobian_by_fd(uses_cube, x.astype(np.float64))
    np.testing.assert_allclose(jf(x), fd, **_tol(dtype))
