"""The hot entry of grad (running.hot_entry): after a fast call, the next call with
arguments of the same kinds runs one generated function that re-makes every check of the
fast path (argument kinds, registry and its version, the adjoint's guard, inlined). These
tests call each gradient at least twice, so that the second call goes through the hot
entry, and check it gives what the general path gives and refuses whenever something it
was built from changed. No timing is asserted here; benchmarks/ measures."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_speed_paths import DTYPES, square, weighted

from pullback import grad, value_and_grad
from pullback.errors import AdjointRuntimeError, NotDifferentiableError, SourceUnavailableError
from pullback.registry import RuleRegistry, builtin_registry, use_registry
from pullback.running import _no_entry


def through_act(x):
    return act(x) * 2.0


act = np.tanh


def through_sin(x):
    return np.sum(np.sin(x))


def log_of(x):
    return math.log(x) * x


def _twice(g, *args, **kwargs):
    """``(first, through)``: g(*args) on the general fast path (its second call makes the
    hot entry), then through the hot entry."""
    first = g(*args, **kwargs)
    g(*args, **kwargs)
    assert g._hot is not _no_entry
    return first, g(*args, **kwargs)


def test_hot_entry_is_made_at_the_second_call():
    def f(x):
        return x * 3.0

    g = grad(f)
    assert g(1.0) == 3.0 and g._hot is _no_entry  # a function called once: no entry
    assert g(1.0) == 3.0 and g._hot is not _no_entry
    assert g(2.0) == 3.0 and g(np.float64(2.0)) == 3.0  # another kind: its own entry


def test_hot_entry_gives_the_general_paths_result_on_floats():
    g = grad(square)
    first, second = _twice(g, 3.0)
    assert first == second == 6.0 and type(second) is float
    got = g(np.float64(2.5))  # another kind: the general fast path, then its own entry
    assert got == 5.0 and type(got) is np.float64
    assert g(np.float64(2.5)) == 5.0 and g(3.0) == 6.0
    assert value_and_grad(square)(4.0) == (16.0, 8.0)
    vg = value_and_grad(square)
    assert _twice(vg, 4.0) == ((16.0, 8.0), (16.0, 8.0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_hot_entry_on_arrays_matches_the_keyword_path(dtype):
    x = np.linspace(-1.0, 1.0, 5).astype(dtype)
    w = np.arange(5.0).astype(dtype)
    g = grad(weighted, wrt=(0, 1))
    first, second = _twice(g, x, w, 2)
    slow = g(x, w=w, n=2)  # keywords: the general path
    for a, b, c in zip(first, second, slow, strict=True):
        assert b.dtype == dtype and b.shape == (5,)
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(b, c)
    tol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(second[0], np.cos(x) * w * 2, rtol=tol)
    np.testing.assert_allclose(second[1], np.sin(x) * 2, rtol=tol, atol=tol)


def test_hot_entry_refuses_other_kinds_and_counts():
    g = grad(lambda x: np.sum(x * x))
    _twice(g, np.ones(3))
    # Another rank, dtype or number of arguments: never the entry made for (1, 'f').
    np.testing.assert_array_equal(g(np.ones((2, 2))), 2 * np.ones((2, 2)))
    np.testing.assert_array_equal(g(np.ones(3, np.float32)), 2 * np.ones(3, np.float32))
    assert g(np.ones(3, np.float32)).dtype == np.float32
    with pytest.raises(NotDifferentiableError):
        g(np.arange(3))  # an int array to differentiate: the general path says why
    with pytest.raises(Exception, match="argument"):
        g(np.ones(3), np.ones(3))
    np.testing.assert_array_equal(g(np.ones(3)), 2 * np.ones(3))


def test_hot_entry_rechecks_the_guard_for_a_replaced_callee(monkeypatch):
    g = grad(through_act)
    first, second = _twice(g, 0.5)
    assert first == second == pytest.approx(2.0 * (1.0 - math.tanh(0.5) ** 2), rel=1e-14)
    monkeypatch.setitem(globals(), "act", np.sin)
    # The global names another function: rebuilt with its rule, not reused.
    assert g(0.5) == pytest.approx(2.0 * math.cos(0.5), rel=1e-14)
    assert g(0.5) == pytest.approx(2.0 * math.cos(0.5), rel=1e-14)


def test_hot_entry_rechecks_a_patched_library_function(monkeypatch):
    g = grad(through_sin)
    x = np.array([0.1, 0.2])
    _twice(g, x)
    monkeypatch.setattr(np, "sin", np.cos)
    np.testing.assert_allclose(g(x), -np.sin(x), rtol=1e-14)  # the rule of np.cos now
    np.testing.assert_allclose(g(x), -np.sin(x), rtol=1e-14)


def test_hot_entry_rechecks_a_changed_closure():
    def make(fn):
        def closure(x):
            return fn(x) + 0.0

        return closure

    f = make(np.sin)
    g = grad(f)
    _twice(g, 0.3)
    f.__closure__[0].cell_contents = np.cos
    assert g(0.3) == pytest.approx(-math.sin(0.3), rel=1e-14)
    assert g(0.3) == pytest.approx(-math.sin(0.3), rel=1e-14)


def test_hot_entry_rechecks_a_new_code_object():
    def f(x):
        return x * x

    g = grad(f)
    _twice(g, 2.0)
    f.__code__ = (lambda x: x * x * x).__code__
    # Never the old adjoint: the new code is looked at (and its text refused, since it
    # is not the text of f in this file).
    with pytest.raises(SourceUnavailableError, match="no longer matches"):
        g(2.0)


def _registry_with_cube_rule(fn, slope):
    reg = builtin_registry().copy()

    @reg.rrule(fn)
    def _(x):
        return fn(x), lambda dy: (dy * slope,)

    return reg


def test_hot_entry_follows_the_active_registry_and_its_version():
    def cube(x):
        return x**3

    def uses_cube(x):
        return cube(x) + 0.0

    g = grad(uses_cube)
    # With a rule for cube the call is a rule's (the fast path); without, user code.
    with use_registry(_registry_with_cube_rule(cube, 12.0)):
        assert _twice(g, 2.0) == (12.0, 12.0)
    with use_registry(_registry_with_cube_rule(cube, 100.0)):
        assert g(2.0) == 100.0 and g(2.0) == 100.0  # the other registry's rule
    assert g(2.0) == pytest.approx(12.0) and g(2.0) == pytest.approx(12.0)
    # A given registry: a rule added after the entry was made (a new version) is used.
    mine = _registry_with_cube_rule(cube, 12.0)
    h = grad(uses_cube, registry=mine)
    assert _twice(h, 2.0) == (12.0, 12.0)

    @mine.rrule(cube)
    def _(x):
        return cube(x), lambda dy: (dy * 7.0,)

    assert h(2.0) == 7.0 and h(2.0) == 7.0
    assert isinstance(mine, RuleRegistry)


def test_hot_entry_forward_errors_name_the_user_line():
    g = grad(log_of)
    _twice(g, 2.0)
    with pytest.raises(ValueError) as info:
        g(-1.0)  # same kind, so the hot entry runs the forward sweep that fails
    notes = "".join(getattr(info.value, "__notes__", []))
    assert "test_hot_entry.py" in notes and "math.log(x)" in notes


def test_hot_entry_reverse_errors_name_the_user_line():
    def fragile(x):
        return x * 2.0

    def uses_fragile(x):
        return fragile(x) + 1.0

    reg = builtin_registry().copy()

    @reg.rrule(fragile)
    def _(x):
        def pullback(dy):
            if x < 0:
                raise ValueError("negative input")
            return (dy * 2.0,)

        return fragile(x), pullback

    g = grad(uses_fragile, registry=reg)
    assert _twice(g, 1.0) == (2.0, 2.0)
    with pytest.raises(AdjointRuntimeError, match="negative input") as info:
        g(-1.0)
    assert "test_hot_entry.py" in str(info.value) and "fragile(x)" in str(info.value)


def _loop_and_early_return():
    """New function objects (so adjoints are built afresh, under the test's settings)."""

    def looped(x, n):
        s = 0.0
        k = 0
        while k < n:
            if k % 2:
                s = s + np.sin(x * k)
            else:
                s = s * x
            k += 1
        return s

    def early_return(x, flag):
        if flag > 0:
            return x * x
        y = x * 3.0
        return y * x

    return looped, early_return


@pytest.mark.parametrize("fused", [True, False])
def test_hot_entry_with_loops_and_early_returns(fused, monkeypatch):
    from pullback.transform import codegen

    if not fused:  # sweeps longer than this run unfused (forward, then its pullback)
        monkeypatch.setattr(codegen, "FUSED_MAX_LINES", 0)
    looped, early_return = _loop_and_early_return()
    g = grad(looped)
    for x, n in [(0.7, 5), (1.3, 8), (0.2, 0)]:
        first, second = _twice(g, x, n)
        assert first == second == g(x, n=n)  # keywords: the general path
    np.testing.assert_allclose(grad(looped)(0.7, 5), _fd(lambda x: looped(x, 5), 0.7), rtol=1e-7)
    h = grad(early_return)
    assert _twice(h, 2.0, 1) == (4.0, 4.0)
    assert h(2.0, 0) == 12.0 and h(2.0, 0) == 12.0
    entry = h._fast_entries[(float, int)][0]
    assert (entry.fused_sweeps() is None) is not fused


def _fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_hot_entry_float32_outputs_keep_their_seed():
    def f(x):
        return np.sum(x * x)

    x = np.ones(3, np.float32)
    g = value_and_grad(f)
    (v1, g1), (v2, g2) = _twice(g, x)
    assert type(v2) is np.float32 and g2.dtype == np.float32
    np.testing.assert_array_equal(g1, g2)
    with pytest.raises(Exception, match="scalar"):
        grad(lambda x: x * 2.0)(np.ones(2))  # not a scalar output: the seed says so


def sum_of(x):
    return np.sum(x)


def first_row_sum(x):
    return np.sum(x[0])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("fn", "shape"),
    [
        (sum_of, (70000,)),  # a large vector's cotangent is a read-only broadcast view
        (sum_of, (3, 4)),  # a matrix's too
        (first_row_sum, (3, 4)),
        (through_sin, (5,)),  # a fresh array, returned as it is
    ],
)
def test_hot_entry_array_gradients_are_owned_and_writable(fn, shape, dtype):
    # the hot entry returns an array cotangent itself only when materialize would (same
    # shape and dtype, writable); else materialize copies it
    x = np.linspace(0.1, 0.9, int(np.prod(shape))).reshape(shape).astype(dtype)
    g = grad(fn)
    first, through = _twice(g, x)
    assert through.dtype == x.dtype and through.shape == x.shape
    assert through.flags.writeable and through.flags.owndata
    np.testing.assert_array_equal(through, first)
    through[...] = 7.0  # the next gradient is not changed by writing into this one
    np.testing.assert_array_equal(g(x), first)
