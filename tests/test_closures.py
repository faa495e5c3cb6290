"""Multi-statement nested functions inside a differentiated function: lifted into functions
of their own (pullback/transform/closures.py), with gradients to what they capture,
against finite differences in both precisions, forward mode and second order."""

from __future__ import annotations

import numpy as np
import pytest
from two_argument_checks import W, X, check_both_arguments, check_forward_against_reverse

from pullback import grad
from pullback.errors import NonScalarOutputError, UnsupportedSyntaxError
from pullback.testing import check_grads


def loop_and_branches(x, w):
    def g(t, k=2):
        s = 0.0 * t
        for _ in range(k):
            if np.sum(t) > 0:
                s = s + w * t
            else:
                return s - np.sin(t) * w
        return s

    return np.sum(g(x) + g(x, k=3) + g(-x))


def called_in_a_loop(x, w):
    def step(h):
        z = np.tanh(w * h + 0.1)
        return h + 0.5 * z

    h = x
    for _ in range(3):
        h = step(h)
    return np.sum(h * h)


def calls_another_nested(x, w):
    def inner(t):
        u = t * w
        return np.exp(-u * u)

    def outer(t, scale=1.5):
        v = inner(t) * scale
        return v + inner(v)

    return np.sum(outer(x)) + np.sum(outer(x, 0.5))


def recursive(x, w):
    def power(t, n):
        if n == 0:
            return t * 0.0 + 1.0
        half = power(t, n - 1)
        return half * t * w

    return np.sum(power(x, 3))


def late_binding(x, w):
    # Python reads a captured name when the closure runs: here the second w.
    def g(t):
        a = t * w
        return a * a

    w = w * 2.0 + 1.0
    return np.sum(g(x))


def computed_default(x, w):
    scale = np.sum(w * w)

    def g(t, s=scale):
        r = t * s
        return np.sin(r)

    scale = scale * 100.0  # the default was taken where the def ran
    return np.sum(g(x) + g(x, s=w))


def keyword_only(x, w):
    def g(t, *, power=2):
        y = t
        for _ in range(power - 1):
            y = y * t
        return y * w

    return np.sum(g(x) + g(x, power=3))


def defined_in_branch(x, w):
    if np.sum(x) > -10.0:

        def g(t):
            out = t * w
            return out + 1.0

    else:

        def h(t):
            return t

    return np.sum(g(x) ** 2)


def uses_local_lambda(x, w):
    sq = lambda t: t * t  # noqa: E731

    def g(t):
        y = sq(t) * w
        return y + sq(w)

    return np.sum(g(x)) + np.sum(sq(x))


def with_a_docstring_and_globals(x, w):
    def act(z):
        """A scaled softplus: reads a global and a captured value."""
        out = np.log1p(np.exp(z * SCALE))
        return out * w

    return np.sum(act(x) * act(2.0 * x))


SCALE = 1.3


def scalar_closure(x, w):
    def g(t):
        if t > 0.5:
            return t * w
        return np.sin(t) * w * w

    return g(x) + g(x * x) + g(-x)


ARRAY_CASES = [
    loop_and_branches,
    called_in_a_loop,
    calls_another_nested,
    recursive,
    late_binding,
    computed_default,
    keyword_only,
    defined_in_branch,
    uses_local_lambda,
    with_a_docstring_and_globals,
]


@pytest.mark.parametrize("fn", ARRAY_CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_against_finite_differences(fn, dtype):
    check_both_arguments(fn, dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("x", [0.9, 0.2])
def test_scalars(x, dtype):
    check_grads(scalar_closure, dtype(x), dtype(0.7), wrt=(0, 1))


def test_broadcasting_capture():
    # a scalar captured by a closure applied to arrays: its gradient is summed back
    check_grads(called_in_a_loop, X, 0.6, wrt=(0, 1))
    check_grads(late_binding, X.reshape(3, 1) * W, 0.6, wrt=(0, 1))


@pytest.mark.parametrize(
    "fn",
    [called_in_a_loop, calls_another_nested, recursive, late_binding, computed_default],
    ids=lambda f: f.__name__,
)
def test_second_order(fn):
    check_grads(fn, X, W, wrt=(0, 1), order=2)


def test_second_order_scalar():
    check_grads(scalar_closure, 0.9, 0.7, wrt=(0, 1), order=2)


@pytest.mark.parametrize("fn", ARRAY_CASES, ids=lambda f: f.__name__)
def test_forward_mode(fn):
    check_forward_against_reverse(fn)


def test_hand_derived():
    # late binding: g reads w' = 2w + 1, so d/dx sum((x w')^2) = 2 x w'^2
    gx, gw = grad(late_binding, wrt=(0, 1))(X, W)
    w2 = 2.0 * W + 1.0
    np.testing.assert_allclose(gx, 2.0 * X * w2**2)
    np.testing.assert_allclose(gw, 2.0 * X**2 * w2 * 2.0)
    # recursion: sum((x w)^3)
    gx, gw = grad(recursive, wrt=(0, 1))(X, W)
    np.testing.assert_allclose(gx, 3 * X**2 * W**3)
    np.testing.assert_allclose(gw, 3 * X**3 * W**2)


def test_the_primal_is_unchanged():
    for fn in ARRAY_CASES:
        from pullback import value_and_grad

        value, _ = value_and_grad(fn)(X, W)
        np.testing.assert_allclose(value, fn(X, W), rtol=1e-12, err_msg=fn.__name__)


# -- what stays refused, with the place ------------------------------------------------------
def writes_nonlocal(x):
    total = 0.0

    def add(t):
        nonlocal total
        total = total + t
        return t

    adders = [add]  # stored: its cell would outlive the call (test_nonlocal_writes.py)
    adders[0](x)
    return np.sum(x) + total


def returned_closure_value(x):
    def g(t):
        y = t * x
        return y

    return g


def test_a_stored_nonlocal_writer_is_refused_at_its_line():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(writes_nonlocal)(X)
    text = str(info.value)
    assert "PB405" in text and "nonlocal total" in text
    d = next(d for d in info.value.diagnostics if d.code == "PB405")
    assert d.line == writes_nonlocal.__code__.co_firstlineno + 3
    assert d.source_line.strip() == "def add(t):"


def test_a_closure_returned_by_the_differentiated_function_is_no_scalar():
    # (a callee's returned closure is a record of its cells: test_closures_cells.py)
    with pytest.raises(NonScalarOutputError, match="returned a Closure"):
        grad(returned_closure_value)(X)


def bad_inside_nested(x):
    def g(t):
        y = t * 1.0
        t[0] = 2.0 * y[0]  # writes into the argument: refused (PB101)
        return y

    return np.sum(g(x))


def test_diagnostics_inside_a_nested_function_name_the_user_line():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(bad_inside_nested)(X)
    d = info.value.diagnostics[0]
    assert d.line == bad_inside_nested.__code__.co_firstlineno + 3
    assert d.source_line.strip().startswith("t[0] = 2.0 * y[0]")


# -- closures made by a user factory and called here (transform/closure_records.py) ----------
def make_layer(w, b=0.1):
    c = np.exp(0.5 * w)  # computed by the factory, captured by the closure

    def layer(h, gain=2.0):
        z = c * h + b
        if np.sum(z) > 100.0:
            return z
        return gain * np.tanh(z)

    return layer


def make_power(k):
    def helper(t):
        return t * k

    def power(t, n=2):
        out = t
        for _ in range(n - 1):
            out = out * helper(t)
        return out

    return power


def factory_closure(x, w):
    layer = make_layer(w)
    h = layer(x)
    h = layer(h, gain=0.5)
    return np.sum(h * h)


def factory_in_a_loop(x, w):
    step = make_layer(w * w, b=w)
    h = x
    for _ in range(3):
        h = step(h)
    return np.sum(h)


def factory_with_helpers(x, w):
    p = make_power(w)
    return np.sum(p(x) + p(x, n=3))


FACTORY_CASES = [factory_closure, factory_in_a_loop, factory_with_helpers]


def test_factory_closure_scalars_and_broadcasting():
    check_grads(factory_closure, 0.4, -0.6, wrt=(0, 1))
    check_grads(factory_closure, X, 0.6, wrt=(0, 1))
    # hand-derived: p(x) + p(x, 3) = x^2 w + x^3 w^2
    gx, gw = grad(factory_with_helpers, wrt=(0, 1))(X, W)
    np.testing.assert_allclose(gx, 2 * X * W + 3 * X**2 * W**2)
    np.testing.assert_allclose(gw, X**2 + 2 * X**3 * W)


def factory_closure_passed_on(x, w):
    layer = make_layer(w)
    layers = [layer]
    return np.sum(layers[0](x))


def test_a_factory_closure_that_escapes_is_a_record_of_its_cells():
    # (differentiated in x only, what it captures carries no gradient: it runs,
    # test_escaping_closures.py; in w too, the closure is a record: closure_cells.py)
    for order in (1, 2):
        check_grads(factory_closure_passed_on, X, W, wrt=(0, 1), order=order)


# -- nested functions passed to user functions (transform/closure_arguments.py) -------------
def apply_twice(fn, x, scale=1.0):
    y = fn(x)
    return fn(y * scale)


def integrate(f, a, n):
    total = 0.0 * a
    for i in range(n):
        total = total + f(a * (i + 1.0) / n)
    return total / n


def passed_to_a_user_function(x, w):
    def g(t, k=2.0):
        u = np.sin(t * w)
        return u * k

    return np.sum(apply_twice(g, x) + apply_twice(g, x, 0.5))


def passed_to_a_loop(x, w):
    shift = np.sum(w)

    def density(t):
        if np.sum(t) > 1e3:
            return t
        return np.exp(-(t - shift) ** 2) * w

    return np.sum(integrate(density, x, 4))


ARGUMENT_CASES = [passed_to_a_user_function, passed_to_a_loop]


CROSSING_CASES = FACTORY_CASES + ARGUMENT_CASES


@pytest.mark.parametrize("fn", CROSSING_CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_closures_crossing_calls_against_finite_differences(fn, dtype):
    check_both_arguments(fn, dtype)


@pytest.mark.parametrize("fn", CROSSING_CASES, ids=lambda f: f.__name__)
def test_closures_crossing_calls_forward_and_second_order(fn):
    check_forward_against_reverse(fn)
    check_grads(fn, X, W, wrt=(0, 1), order=2)


def test_passed_closure_scalars():
    check_grads(passed_to_a_user_function, 0.4, -0.6, wrt=(0, 1))
    check_grads(passed_to_a_loop, X, 0.6, wrt=(0, 1))


def keeps_the_function(fn, x):
    kept = [fn]
    return kept[0](x)


def passed_to_a_function_that_stores_it(x):
    def g(t):
        u = t * x  # reads x: a closure object (one that reads nothing is a plain value)
        return u

    return np.sum(keeps_the_function(g, x))


def test_a_closure_passed_to_a_function_that_stores_it_is_a_record():
    for order in (1, 2):
        check_grads(passed_to_a_function_that_stores_it, X, order=order)


def lambda_passed_on(x, w):
    g = lambda t: np.sin(t * w) + t  # noqa: E731
    return np.sum(apply_twice(g, x, 0.5))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_named_lambda_passed_to_a_user_function(dtype):
    check_both_arguments(lambda_passed_on, dtype)
    check_forward_against_reverse(lambda_passed_on)
    check_grads(lambda_passed_on, X, W, wrt=(0, 1), order=2)


def lambda_stored(x):
    g = lambda t: t * x  # noqa: E731 - reads x: a closure object
    kept = {"g": g}  # a dict of closures: records of their cells (closure_cells.py)
    return np.sum(kept["g"](x))


def test_a_lambda_stored_in_a_dict_is_a_record():
    for order in (1, 2):
        check_grads(lambda_stored, X, order=order)


def make_affine(w):
    c = np.exp(0.3 * w)
    return lambda t: t * c + w


def factory_returning_a_lambda(x, w):
    s = make_affine(w)
    return np.sum(s(x) * s(2.0 * x))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_factory_returning_a_lambda(dtype):
    check_both_arguments(factory_returning_a_lambda, dtype)
    check_forward_against_reverse(factory_returning_a_lambda)
    check_grads(factory_returning_a_lambda, X, W, wrt=(0, 1), order=2)


def test_a_returned_lambda_differentiated_itself_is_no_scalar():
    with pytest.raises(NonScalarOutputError, match="returned a Closure"):
        grad(make_affine)(W)
