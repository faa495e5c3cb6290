"""Every kind of callable as the differentiated function: bound methods, callable objects,
static and class methods, functools.partial (positional and keyword)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from fd import check_grad

import pullback
from pullback import grad, hessian, value_and_grad, vjp
from pullback.testing import check_grads


class Rosenbrock:
    def __init__(self, a=1.0, b=100.0):
        self.a = a
        self.b = b

    def fun(self, x):
        return np.sum(self.b * (x[1:] - x[:-1] ** 2) ** 2 + (self.a - x[:-1]) ** 2)

    def __call__(self, x):
        return self.fun(x)

    @staticmethod
    def sphere(x):
        return np.sum(x**2)

    @classmethod
    def cubes(cls, x):
        return np.sum(x**3)


class Scaled(Rosenbrock):
    """__call__ inherited from the base class."""


def weighted(w, x, scale=1.0):
    return scale * np.sum((w * x) ** 2)


X64 = np.array([0.5, 1.2, -0.3, 0.8])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "make",
    [
        lambda: Rosenbrock(2.0).fun,
        lambda: Rosenbrock(0.5, 10.0),
        lambda: Scaled(1.5),
        lambda: Rosenbrock.sphere,
        lambda: Rosenbrock.cubes,
        lambda: functools.partial(weighted, np.linspace(0.5, 2.0, 4)),
        lambda: functools.partial(weighted, x=np.linspace(-1.0, 1.0, 4), scale=2.0),
        lambda: functools.partial(Rosenbrock(3.0).fun),
    ],
    ids=[
        "bound",
        "callable",
        "inherited-call",
        "static",
        "class",
        "partial-pos",
        "partial-kw",
        "partial-of-bound",
    ],
)
def test_every_callable_against_finite_differences(make, dtype):
    f = make()
    x = X64.astype(dtype)
    check_grad(f, x)
    value, g = value_and_grad(f)(x)
    assert value == pytest.approx(f(x), rel=1e-5)
    np.testing.assert_allclose(g, grad(f)(x))
    y, back = vjp(f, x)
    np.testing.assert_allclose(back(1.0)[0], g, rtol=1e-6)


def test_wrt_names_of_a_partial_and_a_method():
    p = functools.partial(weighted, scale=3.0)
    w, x = np.ones(4), X64
    gw, gx = grad(p, wrt=("w", "x"))(w, x)
    np.testing.assert_allclose(gw, 6.0 * w * x**2)
    np.testing.assert_allclose(gx, 6.0 * x * w**2)
    m = Rosenbrock().fun
    np.testing.assert_allclose(grad(m, wrt="x")(X64), grad(m)(X64))


def test_the_bound_object_is_read_at_each_call():
    r = Rosenbrock(1.0)
    g = grad(r.fun)
    first = g(X64)
    r.a = 5.0
    check_grad(r.fun, X64)
    assert not np.allclose(g(X64), first)


def test_second_derivatives_of_a_bound_method():
    r = Rosenbrock()
    H = hessian(r.fun)(X64)
    assert H.shape == (4, 4) and np.allclose(H, H.T)
    assert np.allclose(H, hessian(lambda x: Rosenbrock.fun(r, x))(X64))
    check_grads(r.fun, X64, order=2)


class Counted:
    """An objective as benchmark suites write it: a counter and a shape on self."""

    def __init__(self):
        self.nfev = 0
        self.n = None

    def fun(self, x):
        self.nfev += 1
        self.n = x.shape[0]
        return np.sum(np.cos(x) * x)


class Caching:
    def total(self):
        return np.sum(self.cache)

    def forward(self, x):
        self.cache = x * 2.0  # a differentiated value stored on self, read by a method
        return self.total()


def test_side_effects_without_gradient_run_once_per_call():
    c = Counted()
    check_grad(c.fun, X64)
    before = c.nfev
    grad(c.fun)(X64)
    assert c.nfev == before + 1 and c.n == 4
    H = hessian(lambda x: Counted.fun(c, x))(X64)  # second order runs the store too
    np.testing.assert_allclose(np.diag(H), -2 * np.sin(X64) - X64 * np.cos(X64), rtol=1e-8)


def test_storing_a_differentiated_value_on_an_object_is_refused_before_running():
    c = Caching()
    with pytest.raises(pullback.UnsupportedSyntaxError, match="PB107"):
        grad(c.forward)(X64)
    assert not hasattr(c, "cache")


class _CountedObjective:
    """An objective that counts its evaluations, as optimizers' wrappers do."""

    def __init__(self, scale):
        self.scale = scale
        self.nfev = 0

    def __call__(self, x):
        self.nfev += 1
        return self.scale * np.sum(np.sin(x) * x)


def two_evaluations(x):
    f = _CountedObjective(1.5)
    g = functools.partial(_CountedObjective(0.5).__call__)
    return f(x) + f(2 * x) + g(x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_forward_mode_calls_a_callable_object_inside_the_function(dtype):
    # obj(x) with a Python __call__ found at run time: forward mode runs it as reverse
    # mode does (it was refused as "neither Python source nor a rule")
    x = np.array([0.3, 0.5, 0.9], dtype=dtype)
    v = np.array([1.0, -0.5, 0.25], dtype=dtype)
    _, dy = pullback.jvp(two_evaluations, (x,), (v,))
    # hand-derived: d/dx sum(sin(x) x) = cos(x) x + sin(x)
    x64, v64 = x.astype(np.float64), v.astype(np.float64)

    def d(u):
        return np.cos(u) * u + np.sin(u)

    want = (1.5 * d(x64) + 1.5 * 2 * d(2 * x64) + 0.5 * d(x64)) @ v64
    np.testing.assert_allclose(dy, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    np.testing.assert_allclose(grad(two_evaluations)(x) @ v, dy, rtol=1e-5)
    check_grads(two_evaluations, x)
