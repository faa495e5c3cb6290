"""A method with a rule, called on an object whose class pullback learns only at run time
(an argument, an attribute): its gradient written for a second derivative takes the
method's cotangents from the rule's pullback function, which gives one per positional
argument with the receiver's first. Before, a receiver slot was added in front of it too,
so the argument read its neighbour's cotangent and the Hessian lost the method's terms
(6 for 24, silently)."""

from __future__ import annotations

import numpy as np
import pytest
from fd import numerical_grad

import pullback
from pullback.tangents import NO_TANGENT


class Cubic:
    def __init__(self, a):
        self.a = a

    def value(self, x):
        return self.a * x**3


def _registry():
    reg = pullback.default_registry().copy()

    @reg.rrule(Cubic.value)
    def _(obj, x):
        return obj.a * x**3, lambda dy: (NO_TANGENT, 3.0 * obj.a * x**2 * dy)

    def value_pullback(dy, obj, x):
        return NO_TANGENT, 3.0 * obj.a * x**2 * dy

    reg.set_pullback_function(Cubic.value, value_pullback)
    return reg


def through_argument(x, model):
    return np.sum(model.value(x) * x)


class Holder:
    def __init__(self):
        self.model = Cubic(2.0)

    def loss(self, x):
        return np.sum(self.model.value(x) ** 2) * 0.1


X = np.array([0.5, -1.2, 0.8])


def _hessian_by_differences(f, *rest):
    g = pullback.grad(f)
    return np.stack([numerical_grad(lambda v: g(v, *rest)[k], (X,), 0) for k in range(X.size)])


@pytest.mark.parametrize(
    "f, rest", [(through_argument, (Cubic(2.0),)), (Holder().loss, ())], ids=["argument", "self"]
)
def test_hessian_through_a_method_rule(f, rest):
    with pullback.use_registry(_registry()):
        want = _hessian_by_differences(f, *rest)
        np.testing.assert_allclose(pullback.hessian(f)(X, *rest), want, rtol=1e-6, atol=1e-7)
        v = np.array([1.0, -2.0, 0.5])
        np.testing.assert_allclose(pullback.hvp(f)(X, *rest, v), want @ v, rtol=1e-6, atol=1e-7)


def test_the_closed_form():
    with pullback.use_registry(_registry()):
        h = pullback.hessian(through_argument)(X, Cubic(2.0))
    np.testing.assert_allclose(h, np.diag(12 * 2.0 * X**2), rtol=1e-12, atol=1e-12)


class Plain:
    def __init__(self):
        self.w = 1.5

    def loss(self, x):
        return np.sum(np.sin(self.w * x) * x)


def test_hvp_of_a_bound_method():
    # hvp(model.loss) took the adjoint of the gradient directly, which refuses bound
    # arguments; it goes through vjp of the gradient, as hessian does
    model, v = Plain(), np.array([1.0, -2.0, 0.5])
    want = pullback.hessian(model.loss)(X) @ v
    np.testing.assert_allclose(pullback.hvp(model.loss)(X, v), want, rtol=1e-12)
    np.testing.assert_allclose(_hessian_by_differences(model.loss) @ v, want, rtol=1e-6)
