"""Second derivatives through star-calls and calls found at run time: ``f(*params)``,
``f(**opts)``, ``obj.m(*args)``, ``sorted``/``max``/``min`` with ``key=``, ``zip(*rows)``,
``{**a, **b}``, a dict filled in a loop, ``type(obj).f(obj, x)``, a callable stored on an
object and a helper that takes an object. The gradient written to be differentiated again
computes their reverse with ``star_call_vjp``/``method_vjp``/``function_vjp``, whose rules
give the second derivative (reverse over reverse, never finite differences): checked by
``check_grads(order=2)`` (which says which path ran) and against finite differences of
the gradient, float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest

import pullback
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


def _cubic(a, b, c=1.0):
    return a * b * c + a**3


def star_positional(x):
    params = [x[0], x[1], x[2]]
    return _cubic(*params)


def star_keywords(x):
    opts = {"b": x[1] ** 2, "c": np.sin(x[2])}
    return _cubic(x[0], **opts)


class Model:
    def __init__(self, w):
        self.w = w
        self.act = np.tanh

    def energy(self, x, scale):
        return scale * np.sum(self.w * x**3)

    def activated(self, x):
        return np.sum(self.act(x) * x)


MODEL = Model(np.array([1.0, 2.0, 0.5]))


def star_method(x):
    args = (x, x[0])
    return MODEL.energy(*args)


def keyed_sort(x):
    xs = [x[0], x[1], x[2]]
    ys = sorted(xs, key=lambda v: v * v)
    return ys[0] * ys[2] ** 2 + np.sin(ys[1])


def keyed_max_min(x):
    xs = [x[0], x[1], x[2]]
    return max(xs, key=abs) ** 3 + min(xs, key=abs) ** 2 * x[1]


def transposed_rows(x):
    rows = [(x[0], x[1]), (x[2], x[0] * x[1])]
    cols = list(zip(*rows, strict=True))
    return cols[0][0] * cols[0][1] + cols[1][1] ** 2


def merged_dicts(x):
    a = {"u": x[0] ** 2, "v": x[1]}
    b = {"v": x[2] * x[0], "w": np.exp(x[1])}
    m = {**a, **b}
    return m["u"] * m["v"] + m["w"]


def dict_filled_in_a_loop(x):
    d = {}
    for i in range(3):
        d[i] = x[i] ** 2
    return d[0] * d[1] + d[2] * x[0]


def class_function(x):
    return type(MODEL).energy(MODEL, x, 2.0)


def stored_callable(x):
    return MODEL.activated(x)


def _helper(model, x):
    return np.sum(model.w * np.sin(x) * x)


HELPERS = [_helper]


def helper_taking_an_object(x):
    h = HELPERS[0]
    return h(MODEL, x)


def _varargs(*xs):
    return xs[0] * xs[1] ** 2 * np.sin(xs[1])


def _fix_all_but(fn, args, k):
    head, tail = args[:k], args[k + 1 :]

    def at(v):
        return fn(*head, v, *tail)  # a packed tuple around the differentiated value

    return at


AT_SECOND = _fix_all_but(_varargs, (1.5, 2.0, 0.0), 1)
VARARGS = [_varargs]


def star_around_a_value(x):
    return AT_SECOND(x[0]) + x[1] * AT_SECOND(x[2])


def varargs_found_at_run_time(x):
    f = VARARGS[0]
    return f(x[0], x[1], x[2]) + f(x[2], x[0])


CASES = [
    star_around_a_value,
    varargs_found_at_run_time,
    star_positional,
    star_keywords,
    star_method,
    keyed_sort,
    keyed_max_min,
    transposed_rows,
    merged_dicts,
    dict_filled_in_a_loop,
    class_function,
    stored_callable,
    helper_taking_an_object,
]
X = np.array([0.7, -1.3, 0.4])


@pytest.mark.parametrize("f", CASES)
def test_reverse_over_reverse_matches_finite_differences(f):
    assert check_grads(f, X, order=2) == "reverse over reverse"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", CASES)
def test_hessian_against_finite_differences_of_the_gradient(f, dtype):
    x = X.astype(dtype)
    h = pullback.hessian(f)(x)
    assert h.dtype == dtype
    step = 1e-6 if dtype == np.float64 else 1e-2
    g = pullback.grad(f)
    x64 = X.astype(np.float64)
    fd = np.array([(g(x64 + step * e) - g(x64 - step * e)) / (2 * step) for e in np.eye(3)])
    tol = 1e-6 if dtype == np.float64 else 2e-3
    np.testing.assert_allclose(h, fd, rtol=tol, atol=tol)
    np.testing.assert_allclose(h, h.T, rtol=tol, atol=tol)


def test_hand_derived_hessian_of_a_star_call():
    # a*b*c + a**3: d2/da2 = 6a, d2/dadb = c, d2/dadc = b, d2/dbdc = a
    a, b, c = X
    want = np.array([[6 * a, c, b], [c, 0.0, a], [b, a, 0.0]])
    np.testing.assert_allclose(pullback.hessian(star_positional)(X), want, rtol=1e-12)


def test_grad_of_grad_and_hvp_agree_with_the_hessian():
    h = pullback.hessian(keyed_sort)(X)
    v = np.array([0.3, -1.0, 2.0])
    np.testing.assert_allclose(pullback.hvp(keyed_sort)(X, v), h @ v, rtol=1e-10)
    gg = pullback.grad(lambda x: pullback.grad(keyed_sort)(x)[0])(X)
    np.testing.assert_allclose(gg, h[0], rtol=1e-10)
