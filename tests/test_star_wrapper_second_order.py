"""Second derivatives through decorators whose wrapper forwards ``*args, **kwargs``.

The gradient of such a wrapper holds the star-call ``star_call(fn, args, kwargs)``; the
check lets it through in a generated gradient called again (a wrapper's picked gradient),
and ``grad`` of a decorated function is differentiated in the wrapper's own parameters
(``args[0]``), not those ``functools.wraps`` shows. Hessians, ``hvp`` and grad-of-grad
against central differences of the gradient (itself checked against differences of the
function).
"""

import functools

import numpy as np
import pytest
from fd import central_jacobian

import pullback

X = np.array([0.3, -0.7, 1.2])
W = np.array([0.5, -1.5, 2.0])


def doubling(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return 2.0 * fn(*args, **kwargs)

    return wrapper


def plain_forward(fn):  # no functools.wraps
    def inner(*a, **k):
        return fn(*a, **k) - 1.0

    return inner


def scaling_input(fn):
    @functools.wraps(fn)
    def wrapper(x, *rest, **kwargs):
        return fn(3.0 * x, *rest, **kwargs)

    return wrapper


@doubling
def with_wraps(x):
    return np.sum(np.sin(x) * x)


@plain_forward
def without_wraps(x):
    return np.sum(np.exp(0.5 * x) * x ** 2)


@scaling_input
def scaled(x, c=0.7):
    return np.sum(np.tanh(c * x) * x)


@doubling
@scaling_input
def stacked(x):
    return np.sum(np.cos(x) * x ** 3)


class Model:
    def __init__(self, w):
        self.w = w

    @doubling
    def energy(self, x):
        return np.sum(self.w * np.sin(x) * x)


CASES = [with_wraps, without_wraps, scaled, stacked, Model(0.4).energy]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_hessian_against_differences_of_the_gradient(f):
    g = pullback.grad(f)
    np.testing.assert_allclose(g(X), central_jacobian(f, X), rtol=1e-6, atol=1e-8)
    want = central_jacobian(g, X, 1e-5)
    got = pullback.hessian(f)(X)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got, got.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(pullback.hvp(f)(X, W), want @ W, rtol=1e-6, atol=1e-7)


def through_the_class(x):
    return Model.energy(Model(0.4), x)


@pytest.mark.parametrize("f", CASES[:-1] + [through_the_class], ids=lambda f: f.__name__)
def test_grad_of_grad_against_differences(f):
    # (grad of a bound method's grad is refused, with this fix: through its class)
    def along(x):
        return np.sum(pullback.grad(f)(x) * W)

    want = central_jacobian(pullback.grad(f), X, 1e-5) @ W
    np.testing.assert_allclose(pullback.grad(along)(X), want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", [with_wraps, scaled], ids=lambda f: f.__name__)
def test_float32_hessian(f):
    x = X.astype(np.float32)
    got = pullback.hessian(f)(x)
    want = central_jacobian(pullback.grad(f), X, 1e-5)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)


def test_a_keyword_argument_through_the_wrapper():
    def f(x, c):
        return scaled(x, c=c)

    def g(x):
        return pullback.grad(f)(x, 0.9)

    want = central_jacobian(g, X, 1e-5)
    np.testing.assert_allclose(pullback.hessian(f)(X, 0.9), want, rtol=1e-6, atol=1e-7)
