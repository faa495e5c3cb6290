"""Closures that capture differentiated values, as written (transform/closure_cells.py):
a closure that escapes as a value is a record of its cells, whose cotangent flows back to
the values it captured. Each class of the brief against central differences (float64 and
float32, scalars and arrays, first and second order); what stays refused, with its
message; random small programs with factories and captured values."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from fd import check_grad
from hypothesis import given, settings
from hypothesis import strategies as st

from pullback import grad, hessian
from pullback.errors import NotDifferentiableError, UnsupportedSyntaxError
from pullback.testing import check_grads


# -- factories: returned closures and lambdas ---------------------------------------------
def make_loss(w):
    def loss(x):
        return np.sum(w * x**2)

    return loss


def returned_def(w):
    return make_loss(w)(np.arange(3.0))


def adder(n):
    return lambda x: x + n


def returned_lambda(p):
    return np.sum(adder(p)(3.0) * p)


def make_model(params):
    a, b = params
    c = np.tanh(a)  # computed by the factory, captured
    return lambda x: c * x + b


def model_of_a_tuple(p):
    return np.sum(make_model((p, p * p))(2.0))


# -- lambdas passed to user functions that keep or return them ----------------------------
def compose(f, g):
    return lambda x: f(g(x))


def passed_lambda(x):
    return np.sum(compose(np.sin, lambda y: y * x)(2.0))


def apply_n(f, x, n):
    for _ in range(n):
        x = f(x)
    return x


def make_rhs(p):
    return lambda y: -p * y + np.sin(y)


def rk4(rhs, y, h):
    k1 = rhs(y)
    k2 = rhs(y + h / 2 * k1)
    k3 = rhs(y + h / 2 * k2)
    k4 = rhs(y + h * k3)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def rhs_from_a_factory(p):
    return np.sum(rk4(make_rhs(p), apply_n(make_rhs(p), p, 2), 0.1))


# -- a user's decorator, partials -----------------------------------------------------------
def timed(fn):
    def wrapper(*args):
        return fn(*args)

    return wrapper


def decorated(p):
    return np.sum(timed(make_loss(p))(np.array([0.5, -1.0])))


def scaled(a, b, scale=2.0):
    return a * b * scale


def partial_called_at_once(p):
    return np.sum(functools.partial(scaled, p)(3.0))


def partial_stored(p):
    fs = [functools.partial(scaled, p, scale=0.5), functools.partial(scaled, 2.0)]
    return np.sum(fs[0](p) + fs[1](b=p))


# -- late binding, nonlocal counters, containers, recursion -------------------------------
def late_binding(x):
    fs = []
    for i in range(3):
        fs.append(lambda: x * i)  # every closure reads the last i (Python's answer)
    return np.sum(sum(g() for g in fs))


def counter_carries_no_gradient(x):
    count = 0

    def g(y):
        nonlocal count
        count += 1
        return y * x

    return np.sum(g(1.0) + g(2.0) * count)


def dict_of_closures(x):
    d = {"a": lambda y: y * x, "b": lambda y: y + x**2}
    return np.sum(d["a"](2.0) + d["b"](1.0))


def defaults_from_differentiated_values(p):
    fs = [lambda x, a=p * i: a * x for i in range(3)]
    return np.sum(sum(fn(2.0) for fn in fs))


def defaults_called_with_keywords(p):
    fs = [lambda t, a=p * i: a * t for i in range(3)]
    h = fs[1]
    return np.sum(h(t=2.0) + fs[2](2.0, a=p * p) + fs[2](t=p))


def recursion_through_a_closure(x):
    def power(n):
        return 1.0 if n == 0 else x * power(n - 1)

    return np.sum(power(3))


def keyword_call_of_a_record(x):
    def make(w):
        def g(t, s=1.0):
            return w * t * s

        return g

    return np.sum(make(x)(t=x) + make(2.0)(x, s=x))


CASES = [
    returned_def,
    returned_lambda,
    model_of_a_tuple,
    passed_lambda,
    rhs_from_a_factory,
    decorated,
    partial_called_at_once,
    partial_stored,
    late_binding,
    counter_carries_no_gradient,
    dict_of_closures,
    defaults_from_differentiated_values,
    defaults_called_with_keywords,
    recursion_through_a_closure,
    keyword_call_of_a_record,
]
SCALAR, ARRAY = 0.7, np.array([0.3, -0.8, 1.1])


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_first_and_second_order_against_differences(f):
    x = ARRAY if f is returned_def else SCALAR
    check_grads(f, x, order=1)
    check_grads(f, x, order=2)


@pytest.mark.parametrize(
    "f",
    [returned_lambda, passed_lambda, model_of_a_tuple, dict_of_closures],
    ids=lambda f: f.__name__,
)
def test_arrays_and_float32(f):
    check_grad(f, ARRAY)
    got = grad(f)(ARRAY.astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, grad(f)(ARRAY), rtol=2e-3, atol=2e-4)


def test_values_are_pythons():
    from pullback import value_and_grad

    for f in CASES:
        x = ARRAY if f is returned_def else SCALAR
        np.testing.assert_allclose(value_and_grad(f)(x)[0], f(x), rtol=1e-12)


def test_full_hessian_of_a_factory_of_arrays():
    h = hessian(returned_def)(ARRAY)
    np.testing.assert_allclose(h, np.zeros((3, 3)), atol=1e-12)  # linear in w
    h = hessian(lambda w: make_loss(w)(w))(ARRAY)
    np.testing.assert_allclose(h, np.diag(6.0 * ARRAY), rtol=1e-12)


# -- what stays refused --------------------------------------------------------------------
def rebound_after_the_closure(x):
    k = x
    g = lambda t: t * k  # noqa: E731
    k = 2.0 * x  # Python's closure reads this k
    return timed(g)(1.0)


def written_by_a_nested_function(x):
    k = x

    def g(t):
        return t * k

    def bump():
        nonlocal k
        k = k * 2.0

    bump()
    return timed(g)(1.0)


def given_to_quad(p):
    from scipy.integrate import quad

    return quad(adder(p), 0.0, 1.0)[0]


def test_a_capture_bound_again_is_refused_with_a_default_as_its_fix():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(rebound_after_the_closure)(SCALAR)
    (d,) = info.value.diagnostics
    assert d.code == "PB404"
    assert d.line == rebound_after_the_closure.__code__.co_firstlineno + 2
    assert "it reads 'k', which is bound again after 'g' is made" in d.message
    assert "call 'g' only by name" in d.fix


def test_a_capture_written_by_a_nested_function_is_refused():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(written_by_a_nested_function)(SCALAR)
    d = info.value.diagnostics[0]
    assert d.code == "PB405"
    assert "which a nested function writes (`nonlocal k`" in d.message


def test_python_reads_the_cell_late_where_refused():
    assert rebound_after_the_closure(SCALAR) == 2.0 * SCALAR
    assert written_by_a_nested_function(SCALAR) == 2.0 * SCALAR


def test_a_record_called_by_a_library_is_refused_when_called():
    with pytest.raises(NotDifferentiableError) as info:
        grad(given_to_quad)(SCALAR)
    message = str(info.value)
    assert "called by 'scipy.integrate" in message
    assert "args=(p,)" in message


# -- random small programs: factories and captured values ----------------------------------
def fixed_program_a(p):
    total = 0.0
    total = total + make_loss(np.sin(p))(p)
    total = total + adder(p * 2)(p) * p
    return total + timed(adder(total))(1.0)


def fixed_program_b(p):
    total = compose(np.cos, adder(p * 3))(p)
    total = total + apply_n(make_rhs(np.sin(p)), p, 1)
    return total


@settings(max_examples=6, deadline=None, derandomize=True)
@given(
    st.lists(st.integers(0, 3), min_size=1, max_size=3),
    st.floats(0.2, 1.5),
    st.booleans(),
)
def test_random_factory_programs(ops, p, nested):
    # the generated program is written in this file (a closure over ops), so that
    # pullback reads its source; its factories are the module's
    def program(p):
        total = 0.0
        for k in range(len(ops)):
            op = ops[k]
            c = p * (k + 1)
            if op == 0:
                total = total + make_loss(c)(p)
            elif op == 1:
                total = total + adder(c)(p) * p
            elif op == 2:
                total = total + compose(np.cos, adder(c))(p)
            else:
                total = total + apply_n(make_rhs(c), p, 1)
            if nested:
                total = total + timed(adder(total))(1.0)
        return total

    check_grads(program, p, order=1)


@pytest.mark.parametrize("f", [fixed_program_a, fixed_program_b], ids=lambda f: f.__name__)
def test_fixed_factory_programs_second_order(f):
    check_grads(f, SCALAR, order=2)
