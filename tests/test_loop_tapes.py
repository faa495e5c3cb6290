"""Loop tapes as flat lists read backwards from a cursor (transform/reverse_flow.py): the
gradients of nested loops, early exits and count-only loops against finite differences,
re-callable pullbacks (Jacobian rows), and second derivatives through the linked-tuple
form that the differentiable-again code keeps."""

from __future__ import annotations

import gc
import math

import numpy as np
import pytest

import pullback
from pullback import grad, hessian, jacobian, vjp
from pullback.testing import check_grads


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


@pytest.mark.parametrize(
    "fn, args",
    [
        (nested, (0.3, 4)),
        (nested, (0.3, 0)),
        (early_exit, (1.5, 20)),
        (early_exit, (0.2, 5)),
        (count_only, (0.7, 5)),
        (returns_inside, (0.4, 6)),
        (returns_inside, (0.4, 2)),
    ],
)
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
