"""Third derivatives through calls found at run time and through the cotangents of lists,
dicts and arrays the function fills: a helper held in a variable, a method, a callable
object, ``f(*xs)``, ``sorted(xs, key=...)``, a dict filled in a loop, appends and
comprehensions, ``a[i] = v`` and ``a[i] += v`` into local arrays, ``np.piecewise`` and
``np.vectorize`` over user functions.

Each reverse of such a call in a gradient that is differentiated again has a
transformable pullback that closes on itself (pullback.dynamic_reverse,
pullback.star_runtime, pullback.containers, pullback.arrays_inplace), so
``grad(grad(grad(f)))`` runs reverse over reverse over reverse: checked against central
finite differences of the second derivative, float64 and float32, and a fourth derivative
once against finite differences of the third."""

from __future__ import annotations

import numpy as np
import pytest
from sweeps import sweep

from pullback import grad

# Scalars inside; arrays inside: the cases at the end of this file.
A = 1.3
B = -0.6


def _wave(x):
    return np.sin(x) * x**2


HELPERS = [_wave]


def helper_in_a_variable(t):
    g = HELPERS[0]
    return np.sum(g(t * A) ** 3)


class Model:
    def __init__(self, w):
        self.w = w
        self.act = np.tanh

    def energy(self, x):
        return self.w * np.sin(x) * x**2

    def activated(self, x):
        return np.sum(self.act(x) * x)


class Dense:
    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return np.tanh(self.w * x) * x


MODEL = Model(1.5)
LAYERS = [Dense(0.7)]


def method_call(t):
    return np.sum(MODEL.energy(t * A) ** 2)


def callable_object(t):
    layer = LAYERS[0]
    return np.sum(layer(t * B) ** 2)


def class_function(t):
    return np.sum(type(MODEL).energy(MODEL, t * A))


def stored_callable(t):
    return MODEL.activated(t * A) * t


def _cubic(a, b):
    return a * b + a**3 * b


def star_positional(t):
    xs = [t, t * 2.0]
    return _cubic(*xs)


def star_keywords(t):
    opts = {"b": np.sin(t)}
    return _cubic(t, **opts)


def keyed_sort(t):
    xs = [t, t * t, np.sin(t)]
    ys = sorted(xs, key=lambda v: v)
    return ys[0] * ys[2] ** 2 + ys[1] ** 3


def dict_in_a_loop(t):
    d = {}
    for i in range(3):
        d[i] = t ** (i + 1)
    return d[0] * d[1] + np.sin(d[2])


def appends(t):
    out = []
    for i in range(3):
        out.append(np.sin(t * A * (i + 1)))
    return out[0] * out[1] * out[2]


def comprehension(t):
    ys = [np.sin(t * k) for k in range(1, 4)]
    return ys[0] * ys[1] * ys[2]


def array_writes(t):
    a = np.zeros(3)
    a[0] = t
    a[1] = np.sin(t)
    a[2] = t**2
    return np.sum(a**3)


def array_updates(t):
    a = np.zeros(4)
    a[0] += t
    a[1] += np.sin(t)
    a[1:] += t**2 * B
    return np.sum(a**3)


def piecewise(t):
    x = t * A
    y = np.piecewise(x, [x < 0, x >= 0], [lambda s: s**3, lambda s: np.sin(s) * s])
    return np.sum(y**2)


VECTORIZED = np.vectorize(lambda s: np.sin(s) * s**2)


def vectorized(t):
    return np.sum(VECTORIZED(t * A) ** 2)


CASES = [
    helper_in_a_variable,
    method_call,
    callable_object,
    class_function,
    stored_callable,
    star_positional,
    star_keywords,
    keyed_sort,
    dict_in_a_loop,
    appends,
    comprehension,
    array_writes,
    array_updates,
    piecewise,
    vectorized,
]
T = 0.7


def _nth(f, n):
    for _ in range(n):
        f = grad(f)
    return f


def _fd(f, t, step):
    return (f(t + step) - f(t - step)) / (2 * step)


@pytest.mark.parametrize("f", sweep(CASES, quick=5))
def test_third_derivative_against_finite_differences(f):
    third = _nth(f, 3)(T)
    want = _fd(_nth(f, 2), T, 1e-5)
    np.testing.assert_allclose(third, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("f", sweep(CASES, quick=4))
def test_third_derivative_in_float32(f):
    third = _nth(f, 3)(np.float32(T))
    assert np.asarray(third).dtype == np.float32
    want = _fd(_nth(f, 2), T, 1e-5)
    np.testing.assert_allclose(third, want, rtol=2e-3, atol=2e-3)


def test_hand_derived_third_derivative_of_a_star_call():
    # _cubic(t, 2t) = 2t^2 + 2t^4: its third derivative is 48 t
    np.testing.assert_allclose(_nth(star_positional, 3)(T), 48 * T, rtol=1e-12)


@pytest.mark.parametrize(
    "f",
    # methods: method_vjp_pullback's branch for a receiver that gets a cotangent (a frozen
    # distribution) once stopped the transform of the fourth (its refusing rule, read
    # statically); it reads frozen_parameters, whose rule is there before SciPy is
    # imported (third derivatives through frozen distributions:
    # test_third_order_frozen_distributions.py)
    sweep(
        [helper_in_a_variable, array_writes, star_positional, method_call, stored_callable]
        + [class_function, appends],
        quick=2,
    ),
)
def test_fourth_derivative_against_finite_differences(f):
    fourth = _nth(f, 4)(T)
    want = _fd(_nth(f, 3), T, 1e-4)
    np.testing.assert_allclose(fourth, want, rtol=1e-5, atol=1e-5)


def test_zero_gradient_of_a_list_cotangent_keeps_its_symbolic_zeros():
    # The third derivative of ``appends`` takes list cotangents such as [ZERO, g1, g2] as
    # inputs; the zero gradient of one (add_pullback's vjp, whose result does not depend on
    # it) once had None at the ZERO entry, which the fourth derivative then added to a
    # float (tangents.add). A symbolic zero's zero cotangent is ZERO.
    from pullback.runtime import zero_cotangent
    from pullback.tangents import ZERO, add

    zero = zero_cotangent([ZERO, 0.5, np.array([1.0, 2.0])])
    assert zero[0] is ZERO and zero[1] == 0.0
    np.testing.assert_array_equal(zero[2], np.zeros(2))
    total = add(zero, [1.5, 2.0, np.array([3.0, 4.0])])
    assert total[:2] == [1.5, 2.0]
    np.testing.assert_array_equal(total[2], [3.0, 4.0])


# Arrays inside the helper: in the second derivative's code a cotangent may be ZERO at
# run time (``d_t = ZERO`` after a branch, then ``d_t * g``); the third derivative's
# product rule conjugates that factor, and runtime.conjugate keeps it symbolic (it once
# reached np.conj). The helpers below run that product rule through division, powers,
# a callable object and a method with array weights, and a helper called by name.
X = np.array([0.3, -0.5, 0.8])


def _ratio(x):
    return np.exp(x) / (1.0 + x * x)


def _poly(x):
    return x * np.cos(x) - x**3 / 3.0


ARRAY_HELPERS = [_ratio, _poly]
ARRAY_LAYERS = [Dense(np.array([0.7, -0.2, 1.1]))]
ARRAY_MODEL = Model(np.array([1.5, 0.5, -0.4]))


def _arrays_inside(t):
    g = HELPERS[0]
    return np.sum(g(t * np.array([0.3, -0.5, 0.8])) ** 3)


def ratio_inside(t):
    g = ARRAY_HELPERS[0]
    return np.sum(g(t * X) ** 2)


def powers_inside(t):
    g = ARRAY_HELPERS[1]
    return np.sum(g(t * X) * X)


def layer_with_array_weights(t):
    layer = ARRAY_LAYERS[0]
    return np.sum(layer(t * X) ** 3)


def method_with_array_weights(t):
    return np.sum(ARRAY_MODEL.energy(t * X) ** 2)


def helpers_by_name(t):
    return np.sum(_ratio(t * X) * _poly(t * X))


ARRAY_CASES = [
    _arrays_inside,
    ratio_inside,
    powers_inside,
    layer_with_array_weights,
    method_with_array_weights,
    helpers_by_name,
]


@pytest.mark.parametrize("f", ARRAY_CASES)
def test_third_derivative_with_arrays_inside(f):
    third = _nth(f, 3)(T)
    np.testing.assert_allclose(third, _fd(_nth(f, 2), T, 1e-5), rtol=1e-6)


@pytest.mark.parametrize("f", ARRAY_CASES)
def test_third_derivative_with_arrays_inside_in_float32(f):
    third = _nth(f, 3)(np.float32(T))
    assert np.asarray(third).dtype == np.float32
    np.testing.assert_allclose(third, _fd(_nth(f, 2), T, 1e-5), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("f", sweep([_arrays_inside, ratio_inside, helpers_by_name], quick=1))
def test_fourth_derivative_with_arrays_inside(f):
    fourth = _nth(f, 4)(T)
    np.testing.assert_allclose(fourth, _fd(_nth(f, 3), T, 1e-4), rtol=1e-5, atol=1e-5)
