"""Call shapes found at run time that carry a gradient: a named tuple's own methods
(``_replace``, ``_asdict``, ``_make``, ``P(*fields)``, typing.NamedTuple too), closures
made in a loop and kept in a list (lambdas with defaults, ``functools.partial(g, k)``,
a factory's closures), a method found at run time called with a differentiated keyword
(``getattr(m, name)(x, scale=p)``, a method of an object passed in, a bound method held
in a dict) and callable objects and partials whose function has keyword-only parameters.

Each is checked against central differences: the gradient and the Hessian-vector
product (reverse over reverse), forward mode (jvp), float64 and float32, scalar and
array arguments.
"""

from __future__ import annotations

import functools
from collections import namedtuple
from typing import NamedTuple

import numpy as np
import pytest

import pullback
from pullback.testing import check_grads

Params = namedtuple("Params", ["w", "b"])


class Point(NamedTuple):
    x: float
    y: float


def nt_replace(x):
    p = Params(x[0] * x[1], x[2])
    g = 2.0 * p.w
    p = p._replace(w=p.w - 0.1 * g)
    q = Point(x[0], x[2])._replace(y=np.sin(x[1]) * p.b)
    return p.w * p.b**2 + q.x * q.y


def nt_asdict_make(x):
    p = Params._make([x[0] ** 2, x[1]])
    d = p._asdict()
    fields = [d["w"] * x[2], d["b"]]
    q = Params(*fields)
    return np.sum(q.w * np.cos(q.b)) + Point._make((x[1], x[2])).y ** 3


def _cube(k, x):
    return x[k] ** 3 * x[(k + 1) % 3]


def lambdas_with_defaults(x):
    fs = []
    for i in range(3):
        fs.append(lambda i=i: x[i] ** 2 * x[(i + 1) % 3])
    gs = []
    for k in range(3):
        gs.append(lambda t, k=k: t * np.sin(x[k]))
    return sum(f() for f in fs) + sum(g(x[0]) for g in gs)


def partials_in_a_loop(x):
    fs = []
    for k in range(3):
        fs.append(functools.partial(_cube, k))
    total = 0.0
    for f in fs:
        total = total + f(x)
    return total


def _make(k):
    def h(x):
        return np.sin(x[k]) * x[k - 1]

    return h


def factory_closures(x):
    fs = [_make(k) for k in range(3)]
    total = 0.0
    for f in fs:
        total = total + f(x)
    return total


class Layer:
    def __init__(self, w):
        self.w = w

    def apply(self, x, scale=1.0):
        return np.sum(np.tanh(self.w * x) * scale)

    def __call__(self, x, *, scale, shift=0.0):
        return np.sum(self.w * x**2) * scale + shift


LAYER = Layer(np.array([0.5, -1.0, 2.0]))


def _outer(x, layer, name):
    return getattr(layer, name)(x, scale=x[0] ** 2) + layer.apply(x[1], scale=np.exp(x[2]))


def method_found_at_run_time(x, layer=LAYER):
    bound = {"apply": layer.apply}
    return _outer(x, layer, "apply") + bound["apply"](x, scale=x[1] * x[2])


def _shifted(x, *, scale, shift=1.0):
    return np.sum(x**2) * np.cos(scale) + shift * scale


def keyword_only_callables(x):
    fs = [functools.partial(_shifted, shift=2.0)]
    return (
        LAYER(x, scale=x[1] ** 2) + fs[0](x, scale=x[0] * x[2]) + LAYER(x, scale=x[0], shift=x[1])
    )


CASES = [
    nt_replace,
    nt_asdict_make,
    lambdas_with_defaults,
    partials_in_a_loop,
    factory_closures,
    method_found_at_run_time,
    keyword_only_callables,
]
X = np.array([0.7, -1.3, 0.4])
V = np.array([0.3, -1.0, 2.0])


def _fd_gradient(f, x, step=1e-6):
    return np.array([(f(x + step * e) - f(x - step * e)) / (2 * step) for e in np.eye(x.size)])


@pytest.mark.parametrize("f", CASES)
def test_gradient_and_hessian_vector_product_against_differences(f):
    assert check_grads(f, X, order=2) == "reverse over reverse"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", CASES)
def test_gradient_hessian_and_jvp_in_each_dtype(f, dtype):
    x = X.astype(dtype)
    tol = 1e-6 if dtype == np.float64 else 2e-3
    g = pullback.grad(f)(x)
    assert g.dtype == dtype
    np.testing.assert_allclose(g, _fd_gradient(f, X), rtol=tol, atol=tol)
    h = pullback.hessian(f)(x)
    fd = _fd_gradient(pullback.grad(f), X, step=1e-5)
    np.testing.assert_allclose(h, fd, rtol=100 * tol, atol=100 * tol)
    _, t = pullback.jvp(f, (x,), (V.astype(dtype),))
    step = 1e-6
    want = (f(X + step * V) - f(X - step * V)) / (2 * step)
    np.testing.assert_allclose(t, want, rtol=tol, atol=tol)


def _scalar_replace(s):
    p = Point(s, 2.0)
    p = p._replace(y=p.y * s**2)
    return p.x * p.y + p._asdict()["y"]


def _scalar_method(s, layer=LAYER, name="apply"):
    return LAYER(np.ones(3), scale=s**2) + getattr(layer, name)(1.5, scale=np.sin(s))


@pytest.mark.parametrize("f", [_scalar_replace, _scalar_method])
def test_scalar_arguments(f):
    assert check_grads(f, 0.8, order=2) == "reverse over reverse"
    step = 1e-6
    d2 = (pullback.grad(f)(0.8 + step) - pullback.grad(f)(0.8 - step)) / (2 * step)
    np.testing.assert_allclose(pullback.hessian(f)(0.8), d2, rtol=1e-6)
    _, t = pullback.jvp(f, (0.8,), (1.0,))
    np.testing.assert_allclose(t, (f(0.8 + step) - f(0.8 - step)) / (2 * step), rtol=1e-6)


def test_a_keyword_held_in_a_record_of_a_user_class_still_runs_as_written():
    # a user class's own _replace is its method, not a named tuple's (records_named.py)
    class Box:
        def __init__(self, v):
            self.v = v

        def _replace(self, v):
            return Box(v)

    def f(x):
        b = Box(1.0)._replace(v=x[0] ** 2)
        return b.v * x[1]

    np.testing.assert_allclose(pullback.grad(f)(X), _fd_gradient(f, X), rtol=1e-6)
