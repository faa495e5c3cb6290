"""Callables passed around as values inside a differentiated function (issue 10, items 2
and 4): multi-line nested functions given to ``map``/``filter``/``functools.reduce`` and
as the ``key=`` of ``sorted``/``max``/``min``; one-line helpers as keys; callable objects
(a layer, a loss with ``__call__``) called by their global name; elementwise rules held in
a variable or stored on an object (``act = np.tanh``, ``self.act_fn``) differentiated
twice. Each checked against finite differences in float64 and float32, in forward mode,
and to second order where pullback differentiates the gradient again."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from fd import check_grad

from pullback import grad, hessian, jvp
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]
REVERSE_OVER_REVERSE = "reverse over reverse"


def _fd_hessian(f, x, eps=1e-5):
    """Central differences of pullback's gradient (float64)."""
    x = np.asarray(x, dtype=np.float64)
    g = grad(f)
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        cols.append((np.ravel(g(x + e)) - np.ravel(g(x - e))) / (2 * eps))
    return np.stack(cols, axis=1)


def _check_everything(f, x, second_order=True):
    """Reverse against finite differences (float64, float32), forward mode against
    reverse, and the reverse-over-reverse Hessian against differences of the gradient."""
    for dtype in DTYPES:
        xd = x.astype(dtype)
        check_grads(f, xd)
        check_grad(f, xd)
    direction = np.linspace(0.3, -0.4, x.size)
    _, tangent = jvp(f, (x,), (direction,))
    assert np.allclose(tangent, np.dot(grad(f)(x), direction), rtol=1e-10, atol=1e-12)
    if second_order:
        assert check_grads(f, x, order=2) == REVERSE_OVER_REVERSE
        assert np.allclose(hessian(f)(x), _fd_hessian(f, x), rtol=1e-5, atol=1e-6)


X = np.array([0.3, -0.7, 1.1])


# -- nested functions given to higher-order builtins --------------------------------------


def key_nested_multiline(x):
    items = [x[0], x[1], x[2]]
    scale = 2.0

    def distance(v):
        a = abs(v - 0.1)
        return a * scale

    return sorted(items, key=distance)[0] * x[1] + max(items, key=distance) ** 2


def key_one_line_helper(x):
    items = [x[0], x[1], x[2]]

    def magnitude(v):
        return abs(v)

    return max(items, key=magnitude) ** 3 + min(items, key=magnitude) * x[0]


def key_capturing_a_differentiated_value(x):
    items = [x[0], x[1], x[2]]
    centre = x[0] * 0.5

    def distance(v):
        d = v - centre
        return d * d

    return np.sin(min(items, key=distance)) * x[2]


def map_nested_multiline(x):
    w = x[0]

    def feature(t):
        u = t * w
        return np.sin(u) + u * u

    return sum(map(feature, [x[1], x[2]]))


def reduce_nested_multiline(x):
    w = x[0]

    def step(acc, v):
        c = acc * v
        return c + w

    return functools.reduce(step, [x[1], x[2], x[0]])


def filter_nested_multiline(x):
    def keep(t):
        big = abs(t) > 0.5
        return big

    return sum(t**2 for t in filter(keep, [x[0], x[1], x[2]]))


@pytest.mark.parametrize(
    "f", [key_nested_multiline, key_one_line_helper, key_capturing_a_differentiated_value]
)
def test_nested_function_as_a_key(f):
    _check_everything(f, X, second_order=False)  # sorted/max with key=: first order only
    # the key only chooses: the gradient is that of the chosen items (checked to second
    # order by differences of the gradient)
    assert check_grads(f, X, order=2)


def test_one_line_key_is_not_left_undefined():
    # Used to raise NameError: the one-line def was inlined away but `key=magnitude` kept it.
    assert np.isclose(grad(key_one_line_helper)(X)[2], 3 * 1.1**2)


@pytest.mark.parametrize("f", [reduce_nested_multiline])
def test_nested_function_given_to_reduce(f):
    _check_everything(f, X)


@pytest.mark.parametrize("f", [map_nested_multiline, filter_nested_multiline])
def test_nested_function_given_to_map_and_filter(f):
    _check_everything(f, X, second_order=False)  # the list they build: first order


# -- callable objects called by name --------------------------------------------------------


class Dense:
    """A layer with its activation stored on the instance and a call counter."""

    def __init__(self, w):
        self.w = w
        self.act_fn = np.tanh
        self.calls = 0

    def __call__(self, z):
        self.calls += 1
        return self.act_fn(self.w * z)


class SquaredLoss:
    def __call__(self, prediction, target):
        return np.mean((prediction - target) ** 2)


LAYER = Dense(np.array([0.5, -1.2, 0.8]))
LOSS = SquaredLoss()
TARGET = np.array([0.1, 0.2, -0.3])


def network_objective(x):
    return LOSS(LAYER(x), TARGET)


def test_global_callable_objects_are_called_as_their_call_method():
    _check_everything(network_objective, X)
    before = LAYER.calls
    grad(network_objective)(X)
    assert LAYER.calls == before + 1  # the counter runs once per gradient


# -- rules held in variables and on objects, twice differentiated ---------------------------


def activation_in_a_variable(x):
    act = np.tanh
    return np.sum(act(x) ** 2 * x)


def math_function_in_a_variable(x):
    f = math.exp
    return f(x[0] * x[1]) + x[2]


class Activated:
    def __init__(self, act_fn):
        self.act_fn = act_fn

    def forward(self, z):
        return np.sum(self.act_fn(z) * z)


SIN_LAYER = Activated(np.sin)


def activation_on_an_object(x):
    return SIN_LAYER.forward(x) + x[0] * x[1]


@pytest.mark.parametrize(
    "f", [activation_in_a_variable, math_function_in_a_variable, activation_on_an_object]
)
def test_elementwise_rule_as_a_value_has_a_second_derivative(f):
    _check_everything(f, X)


# -- *args / **kwargs in nested functions and lambdas ----------------------------------------


def nested_total_of_parts(x):
    def total(*parts):
        s = 0.0
        for p in parts:
            s = s + np.sum(p)
        return s

    return total(x, x**2, np.sin(x))


def nested_star_and_keywords(x):
    w = x[0]

    def term(a, *rest, scale=2.0, **opts):
        out = a * w * scale
        for r in rest:
            out = out + r * r
        if "shift" in opts:
            out = out + opts["shift"]
        return out

    pair = (x[1], x[2])
    return term(x[0], *pair) + term(x[1], x[2], scale=3.0, shift=x[0] ** 2) + term(x[2])


def lambda_with_star_arguments(x):
    c = x[2]
    f = lambda *ts, **kw: ts[0] * kw["k"] + c  # noqa: E731 - written as users write it
    return np.sum(f(x, k=x[1]))


def starred_helper_called_by_a_sibling(x):
    def product(*ts):
        return ts[0] * ts[1]

    def doubled(a):
        return product(a, a + 1.0) * 2.0

    return np.sum(doubled(x))


def starred_helper_with_a_none_default(x):
    def scaled(*ts, s=None):
        if s is None:
            s = x[0]
        return ts[0] * s

    return scaled(x[1]) + scaled(x[2], s=2.0)


@pytest.mark.parametrize(
    "f",
    [
        nested_total_of_parts,
        lambda_with_star_arguments,
        starred_helper_called_by_a_sibling,
        starred_helper_with_a_none_default,
    ],
)
def test_nested_functions_and_lambdas_with_star_arguments(f):
    _check_everything(f, X)


def test_nested_function_with_star_arguments_and_star_calls():
    _check_everything(nested_star_and_keywords, X, second_order=False)  # f(*pair): first order
    x0, x1, x2 = X
    w = x0
    expected = (x0 * w * 2 + x1**2 + x2**2) + (x1 * w * 3 + x2**2 + x0**2) + x2 * w * 2
    assert np.isclose(nested_star_and_keywords(X), expected)


def starred_helper_with_a_computed_default(x):
    def scaled(*ts, s=x[0]):
        return ts[0] * s

    return scaled(x[1])


def test_starred_nested_function_with_a_computed_default_is_refused_with_the_fix():
    from pullback.errors import UnsupportedSyntaxError

    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(starred_helper_with_a_computed_default)(X)
    text = str(info.value)
    line = starred_helper_with_a_computed_default.__code__.co_firstlineno + 1
    where = f"test_callables_as_values.py:{line}:5: "
    assert where + "PB405 nested function definition 'scaled'" in text
    assert "has a default that is not a constant" in text
    assert "give that parameter a constant default (`=None`)" in text
    assert "PB410" not in text  # its *ts is no reason of its own


# -- functions that read no variable of the function, stored and passed as values -----------


def lambdas_in_a_list(x):
    fs = [lambda t: t * t, lambda t: np.sin(t)]
    return np.sum(fs[0](x) + fs[1](x))


def lambdas_and_rules_in_a_dict(x):
    fs = {"double": lambda t: t * 2.0, "sin": np.sin}
    return np.sum(fs["double"](x) * fs["sin"](x))


def basis_expansion(x):
    phis = [lambda t: np.ones_like(t), lambda t: t, lambda t: t**2]
    coef = [0.5, -1.0, 2.0]
    total = 0.0
    for c, phi in zip(coef, phis):  # noqa: B905 - written as users write it
        total = total + c * np.sum(phi(x))
    return total


def activations_by_name(x):
    def relu(z):
        return np.maximum(z, 0.0)

    def softplus(z, beta=2.0):
        return np.log1p(np.exp(beta * z)) / beta

    acts = {"relu": relu, "softplus": softplus}
    return np.sum(acts["softplus"](x)) + np.sum(acts["relu"](x) * x)


def helper_passed_to_a_storing_function(x):
    def g(t):
        return np.tanh(t) * t

    return np.sum(_keep_and_call(g, x))


def _keep_and_call(fn, x):
    kept = [fn]
    return kept[0](x)


def _make_reader(k):
    def f(x):
        fs = [lambda t: t * k]  # k: a closure variable of f, not a local
        return np.sum(fs[0](x) * x)

    return f


@pytest.mark.parametrize(
    "f",
    [
        lambdas_in_a_list,
        lambdas_and_rules_in_a_dict,
        basis_expansion,
        activations_by_name,
        helper_passed_to_a_storing_function,
        _make_reader(3.0),
    ],
)
def test_functions_that_read_no_local_are_values(f):
    _check_everything(f, X)


def test_a_stored_function_value_computes_what_python_computes():
    x = X
    expected = np.sum(np.log1p(np.exp(2.0 * x)) / 2.0) + np.sum(np.maximum(x, 0.0) * x)
    assert np.isclose(activations_by_name(x), expected)
    relu_grad = grad(activations_by_name)(x)
    s = 1.0 / (1.0 + np.exp(-2.0 * x))
    assert np.allclose(relu_grad, s + np.where(x > 0, 2 * x, 0.0))


def stored_lambda_reading_a_local(x):
    w = 2.0 * x
    fs = {"scaled": lambda v: w * v}  # a dict: not converted (stored_closures.py)
    return np.sum(fs["scaled"](x))


def stored_def_reading_a_local(x):
    w = 2.0 * x

    def scaled(v):
        return w * v

    fs = {"scaled": scaled}  # a dict: not converted (stored_closures.py)
    return np.sum(fs["scaled"](x))


def test_stored_closures_that_read_locals_are_differentiated():
    # records of their cells since stop 34 (transform/closure_cells.py); refused before.
    # Both are sum(2 x * x): the gradient is 4 x, the Hessian 4 I.
    from pullback import hessian

    for f in (stored_lambda_reading_a_local, stored_def_reading_a_local):
        np.testing.assert_allclose(grad(f)(X), 4 * X, rtol=1e-12)
        np.testing.assert_allclose(hessian(f)(X), 4 * np.eye(X.size), rtol=1e-12, atol=1e-12)
        x32 = X.astype(np.float32)
        np.testing.assert_allclose(grad(f)(x32), 4 * x32, rtol=1e-6)
