"""Loop tapes as flat lists read backwards from a cursor (transform/reverse_flow.py): the
gradients of nested loops, early exits and count-only loops against finite differences,
re-callable pullbacks (Jacobian rows), and second derivatives through the linked-tuple
form that the differentiable-again code keeps. The fused sweeps of grad's hot entry pop
their tapes instead: the same gradients, and the tape freed as the reverse sweep runs."""

from __future__ import annotations

import gc
import math
import tracemalloc

import numpy as np
import pytest

import pullback
from pullback import grad, hessian, jacobian, value_and_grad, vjp
from pullback.registry import builtin_registry
from pullback.running import _no_entry
from pullback.testing import check_grads

# gc.collect() and gc.get_objects() here scan only this file's objects (see conftest).
pytestmark = pytest.mark.usefixtures("own_heap")


def nested(x, n):
    s = x
    for i in range(n):
        j = 0
        while j < 3:
            s = s * 0.9 + math.sin(x * s) * 0.1
            j = j + 1
        s = s + i * x
    return s


def early_exit(x, n):
    s = x
    i = 0
    while i < n:
        s = s * s * 0.5 + x
        if s > 10.0:
            break
        i = i + 1
    return s


def count_only(x, n):
    s = 0.0
    i = 0
    while i < n:
        s = s + x
        i = i + 1
    return s * x


def array_loop(x, n):
    y = x
    for _ in range(n):
        y = np.tanh(y) * x + 0.5 * y
    return y


def returns_inside(x, n):
    s = x
    for i in range(n):
        s = s * 1.1 + x * x
        if i == 2:
            return s * 2.0
    return s


def simple_for(x, n):
    s = x
    for _ in range(n):
        s = s * 0.9 + math.sin(s) * x
    return s


def _fd(f, x, *rest, h=1e-6):
    return (f(x + h, *rest) - f(x - h, *rest)) / (2 * h)


def two_values(x, n):
    # a snapshot of several values per iteration, a branch and a nested loop
    s = x
    t = 1.0
    for i in range(n):
        if i % 3 == 0:
            t = t * math.cos(s) + x
        for _ in range(2):
            s = s * 0.8 + t * math.sin(s) * 0.1
    return s * t


SCALAR_LOOPS = [
    (nested, (0.3, 4)),
    (nested, (0.3, 0)),
    (early_exit, (1.5, 20)),
    (early_exit, (0.2, 5)),
    (count_only, (0.7, 5)),
    (returns_inside, (0.4, 6)),
    (returns_inside, (0.4, 2)),
    (simple_for, (0.3, 7)),
    (two_values, (0.6, 7)),
]


@pytest.mark.parametrize("fn, args", SCALAR_LOOPS)
def test_scalar_loops_match_finite_differences(fn, args):
    got = grad(fn)(*args)
    assert got == pytest.approx(_fd(fn, *args), rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_array_loop_in_both_precisions(dtype):
    x = np.linspace(-1.0, 1.0, 4).astype(dtype)
    check_grads(array_loop, x, 3)
    check_grads(array_loop, x, 0)


def test_pullback_is_recallable_and_reads_its_tape_unchanged():
    y, back = vjp(nested, 0.3, 4, wrt=0)
    first = back(1.0)
    second = back(1.0)
    assert first == second
    assert back(2.0) == pytest.approx(2.0 * first)


def test_jacobian_rows_reuse_one_tape():
    x = np.array([0.2, -0.4, 0.9])
    rows = jacobian(array_loop)(x, 3)
    h = 1e-6
    cols = [
        (array_loop(x + h * e, 3) - array_loop(x - h * e, 3)) / (2 * h) for e in np.eye(3)
    ]
    np.testing.assert_allclose(rows, np.stack(cols, axis=1), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("fn, args", [(simple_for, (0.3, 5)), (early_exit, (1.5, 20))])
def test_second_derivatives_through_loops(fn, args):
    h = 1e-5
    g = grad(fn)
    want = (g(args[0] + h, *args[1:]) - g(args[0] - h, *args[1:])) / (2 * h)
    assert grad(grad(fn))(*args) == pytest.approx(want, rel=1e-5, abs=1e-7)
    check_grads(fn, *args, order=2)


def test_hessian_of_an_array_loop():
    x = np.array([0.2, -0.4, 0.9])
    H = hessian(lambda v: np.sum(array_loop(v, 3)))(x)
    check_grads(lambda v: np.sum(array_loop(v, 3)), x, order=2)
    np.testing.assert_allclose(H, H.T, rtol=1e-10, atol=1e-12)


def test_tape_is_a_list_not_linked_tuples():
    # One tracked object per tape, whatever the number of iterations: the garbage
    # collector's work does not grow with the loop.
    adj = grad(early_exit).adjoint(0.5, 10)
    gc.collect()
    before = len(gc.get_objects())
    _, back = adj.forward(0.3, 1000)
    grown = len(gc.get_objects()) - before
    assert grown < 50
    assert back(1.0)[0] == pytest.approx(_fd(early_exit, 0.3, 1000), rel=1e-6)


def test_source_shows_list_tape():
    source = pullback.grad(nested).source_for(0.3, 4)
    assert "= []" in source and "= len(_stack" in source



@pytest.mark.parametrize("fn, args", SCALAR_LOOPS)
def test_fused_sweeps_pop_the_tape_and_agree(fn, args):
    # The third call runs grad's hot entry, whose fused sweeps pop the tape: the same
    # gradient as the general path (a keyword call) and as finite differences.
    for make in (grad, value_and_grad):
        g = make(fn)
        first = g(*args)
        g(*args)
        assert g._hot is not _no_entry
        assert g(*args) == first == g(args[0], n=args[1])
    assert grad(fn)(*args) == pytest.approx(_fd(fn, *args), rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fused_array_loop_in_both_precisions(dtype):
    x = np.linspace(-1.0, 1.0, 4).astype(dtype)
    g = grad(lambda v, n: np.sum(array_loop(v, n)))
    want = g(x, n=3)  # the general path
    for _ in range(3):
        got = g(x, 3)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)
    check_grads(lambda v: np.sum(array_loop(v, 3)), x)


def probe(v):
    return v


def probed(x, n):
    s = x
    for _ in range(n):
        s = probe(s * 0.999 + math.sin(s) * 0.001)
    return s


def _memory_during_reverse(run):
    """``(result, start, first, last)``: traced bytes before ``run(registry, marks)``
    calls its last gradient, and at the first and the last step of that gradient's
    reverse sweep, read by the pullback of ``probe`` (a rule there) at each iteration."""
    marks: list = []

    reg = builtin_registry().copy()

    @reg.rrule(probe)
    def _(v):
        def probe_pullback(dv):
            # the first step's and the latest step's (a growing list would count)
            marks[min(len(marks), 1) :] = [tracemalloc.get_traced_memory()[0]]
            return (dv,)

        return v, probe_pullback

    gc.collect()
    tracemalloc.start()
    try:
        result, start = run(reg, marks)
    finally:
        tracemalloc.stop()
    return result, start, marks[0], marks[-1]


def test_fused_sweeps_free_the_tape_as_the_reverse_sweep_runs():
    n = 5_000  # a tape of at least 500 kB: far above what else the sweep allocates
    want = _fd(probed, 0.4, n)

    def hot(reg, marks):
        g = grad(probed, registry=reg)
        g(0.4, 10)
        g(0.4, 10)
        assert g._hot is not _no_entry
        marks.clear()
        start = tracemalloc.get_traced_memory()[0]
        return g(0.4, n), start

    got, start, first, last = _memory_during_reverse(hot)
    assert got == pytest.approx(want, rel=1e-6)
    tape = first - start  # the tape at the first reverse step: one snapshot per iteration
    assert tape > 100 * n  # a float and a pullback closure per iteration
    assert last - start < 0.1 * tape  # popped as the reverse sweep walked it

    def recallable(reg, marks):
        start = tracemalloc.get_traced_memory()[0]
        y, back = vjp(probed, 0.4, n, wrt=0, registry=reg)
        first = back(1.0)
        assert back(1.0) == first
        return first, start

    got, start, first, last = _memory_during_reverse(recallable)
    assert got == pytest.approx(want, rel=1e-6)
    assert last - start > 0.9 * (first - start)  # vjp's pullback keeps its tape
