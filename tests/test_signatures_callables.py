"""Signatures as users write them, continued from test_signatures.py: callables stored on
objects, partials, ``type(obj).method``, decorators whose wrapper takes ``*args, **kwargs``,
and ``**kwargs`` passed on to a user function that takes them as keywords. Each gradient
is checked against finite differences in float64 and float32."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from fd import check_grad
from test_signatures import DTYPES, _arr, _check_jvp, loss

from pullback import grad, vjp
from pullback.testing import check_grads

# -- callables stored on objects, partials, type(obj).method ------------------------------


def scaled_square(x, s):
    return s * x * x


HALF = functools.partial(scaled_square, s=0.5)
TWICE_FIRST = functools.partial(scaled_square, 2.0)  # x bound, s free


class Layer:
    def __init__(self, act_fn):
        self.act_fn = act_fn  # a callable stored on the instance
        self.post = HALF

    def forward(self, z):
        return np.sum(self.act_fn(z)) + np.sum(self.post(z))

    def energy(self, x):
        return np.sum(x**2 * np.cos(x))


LAYER = Layer(np.tanh)


def calls_partials(x, s):
    return np.sum(HALF(x)) + np.sum(TWICE_FIRST(s * x))


def calls_through_the_class(x):
    return type(LAYER).energy(LAYER, x) + Layer.energy(LAYER, 2.0 * x)


def runs_a_layer(x):
    return LAYER.forward(x)


def makes_a_partial(x, s):
    p = functools.partial(scaled_square, s=s)
    return np.sum(p(x))


@pytest.mark.parametrize("dtype", DTYPES)
def test_partials_called_inside(dtype):
    x = _arr([0.5, -1.0, 2.0], dtype)
    check_grad(calls_partials, x, dtype(1.5), wrt=(0, 1))
    check_grads(calls_partials, x, dtype(1.5), wrt=(0, 1))
    _check_jvp(calls_partials, x, 1.5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_type_of_obj_method_and_callables_on_self(dtype):
    x = _arr([0.5, -1.0, 2.0], dtype)
    for f in (calls_through_the_class, runs_a_layer, LAYER.forward):
        check_grad(f, x)
        check_grads(f, x)
    _check_jvp(calls_through_the_class, x)
    _check_jvp(runs_a_layer, x)


def test_a_partial_as_the_differentiated_function():
    total = functools.partial(loss, scale=0.5)
    w, X, y = np.ones(3), np.arange(12.0).reshape(4, 3) / 10, np.zeros(4)
    check_grad(total, w, X, y, wrt=(0, 1))
    check_grads(total, w, X, y, wrt=(0, 1, 2))


def test_a_partial_of_differentiated_values_made_and_called_inside():
    # only called: its calls call scaled_square (transform/local_partials.py); a stored
    # one stays refused (tests/test_local_partials.py)
    x = np.array([0.5, -1.5])
    check_grads(makes_a_partial, x, 2.0, wrt=(0, 1))
    check_grad(makes_a_partial, x, 2.0, wrt=(0, 1))
    assert np.isclose(makes_a_partial(x, 2.0), np.sum(scaled_square(x, s=2.0)))


# -- decorators whose wrapper takes *args, **kwargs -----------------------------------------

CALLS: list = []


def counted(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        CALLS.append(fn.__name__)  # a side effect with no gradient: runs once per call
        return fn(*args, **kwargs)

    return wrapper


@counted
def decorated(x, s=1.0):
    return np.sum(s * np.sin(x) * x)


def calls_decorated(x, s):
    return decorated(x, s) + decorated(2.0 * x, s=s)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_wrapper_with_star_parameters_is_transformed_itself(dtype):
    x = _arr([0.1, -0.7, 1.3], dtype)
    check_grad(decorated, x, dtype(1.5), wrt=(0, 1))
    check_grads(decorated, x, dtype(1.5), wrt=(0, 1))
    check_grad(calls_decorated, x, dtype(1.5), wrt=(0, 1))
    check_grads(calls_decorated, x, dtype(1.5), wrt=(0, 1))
    _check_jvp(calls_decorated, x, 1.5)
    CALLS.clear()
    grad(decorated)(x)
    assert CALLS == ["decorated"]


# -- **kwargs passed on to a user function that takes them as keywords ---------------------


def _kw_inner(x, *, scale=1.0, **extra):
    return scale * np.sum(np.sin(x * extra["rate"])) + extra.get("shift", 0.0) ** 2


def kwargs_passed_on(x, **options):
    return _kw_inner(x, **options)


def kwargs_merged_and_passed_on(x, rate, **options):
    settings = {"rate": rate, **options}
    return _kw_inner(x, **settings)


@pytest.mark.parametrize("dtype", DTYPES)
def test_keyword_gradients_through_kwargs_passed_on(dtype):
    x = _arr([0.3, -1.2, 0.7], dtype)
    kwargs = {"scale": dtype(1.5), "rate": dtype(0.8), "shift": dtype(0.25)}
    check_grad(kwargs_passed_on, x, kwargs=kwargs)
    tol = 2e-3 if dtype == np.float32 else 1e-7
    for key in ("scale", "rate", "shift"):
        h = 1e-6
        up, down = dict(kwargs), dict(kwargs)
        up[key], down[key] = float(kwargs[key]) + h, float(kwargs[key]) - h
        x64 = x.astype(np.float64)
        want = (kwargs_passed_on(x64, **up) - kwargs_passed_on(x64, **down)) / (2 * h)
        got = grad(kwargs_passed_on, wrt=key)(x, **kwargs)
        assert got == pytest.approx(want, rel=tol, abs=tol)
    g = grad(kwargs_passed_on, wrt="rate")(x, **kwargs)
    want = 1.5 * np.sum(x * np.cos(x * 0.8))
    assert g == pytest.approx(want, rel=2e-3 if dtype == np.float32 else 1e-10)
    check_grad(kwargs_merged_and_passed_on, x, dtype(0.8), wrt=1, kwargs={"scale": dtype(2.0)})
    _, back = vjp(kwargs_passed_on, x, wrt="shift", **kwargs)
    assert back(1.0) == pytest.approx(2 * 0.25)
