"""``grad(g)(...)`` called inside a function being differentiated twice (hessian, hvp,
jvp of grad, check_grads(order=2)): a third derivative of ``g``. The reverse of such a call
found at run time is the vjp of ``g``'s generated gradient function (what grad(grad(g))
differentiates), which is differentiated again. It was refused with "a second derivative
through 'g', found at run time, needs it to be a Python function", so check_grads(order=2)
fell back to finite differences of the gradient, and jvp of grad said "neither Python
source nor a rule"."""

from __future__ import annotations

import numpy as np
import pytest

import pullback
from pullback.testing import check_grads

V = np.array([0.3, 0.7])


def g(v, x):
    return np.sum(np.sin(v * x) * x)


def inline_grad(x):
    return np.sum(pullback.grad(g)(V, x) * x)


def inline_grad_of_the_argument(x):
    return np.sum(pullback.grad(g)(x, x) ** 2)


def inline_grad_of_both(x):
    a, b = pullback.grad(g, wrt=(0, 1))(x, 2.0 * x)
    return np.sum(a * b)


DG = pullback.grad(g, wrt=1)


def global_grad_object(x):
    return np.sum(np.cos(DG(x, V)))


CASES = [inline_grad, inline_grad_of_the_argument, inline_grad_of_both, global_grad_object]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize(
    "x", [np.array([1.2, 0.4]), np.array([1.2, 0.4], np.float32), 0.9], ids=["f64", "f32", "s"]
)
def test_a_grad_object_called_inside_is_differentiated_twice(f, x):
    if np.ndim(x) == 0 and f is global_grad_object:
        x = np.full(2, x)  # (DG's v and x broadcast to V's shape)
    assert check_grads(f, x, order=2) == "reverse over reverse"


def test_forward_over_reverse_and_hessian_agree():
    x = np.array([1.2, 0.4])
    h = pullback.hessian(inline_grad_of_the_argument)(x)
    for k in range(2):
        e = np.eye(2)[k]
        _, column = pullback.jvp(pullback.grad(inline_grad_of_the_argument), (x,), (e,))
        np.testing.assert_allclose(column, h[:, k], rtol=1e-12)
