"""Lambdas and one-line nested functions inside a differentiated function, called there
or through map/filter: inlined, with gradients to what they capture."""

from __future__ import annotations

import numpy as np
import pytest

from pullback import grad, jvp
from pullback.errors import UnsupportedSyntaxError
from pullback.testing import check_grads

try:
    from scipy.integrate import quad
except ImportError:  # scipy is optional: its tests skip
    quad = None

X = np.array([0.3, -0.7, 1.1])


def bound_lambda(x):
    sq = lambda t: t * t  # noqa: E731
    return np.sum(sq(x) + sq(2.0 * x))


def capturing(x, w):
    scale = lambda t: w * t + np.sin(w)  # noqa: E731
    return np.sum(scale(x) * scale(1.0))


def late_binding(x):
    # a closure reads what it captures when it is called, as Python does
    k = 1.0
    f = lambda t: k * t  # noqa: E731
    k = 3.0
    return np.sum(f(x))


def one_line_def(x, w):
    def act(z, b):
        """Shifted softplus."""
        return np.log1p(np.exp(z * w + b))

    return np.sum(act(x, 0.5)) + np.sum(act(x * x, -1.0))


def mapped(x):
    return sum(map(lambda t: t * t * w_global, x))


def mapped_two(x):
    return sum(map(lambda a, b: a * b, x, x[::-1]))


def filtered(x):
    return sum(filter(lambda t: t > 0, x)) * 2.0


def called_in_place(x):
    return np.sum((lambda t: np.tanh(t) * t)(x))


def mapped_user_function(x):
    return np.sum(np.stack(list(map(helper, x))))


def helper(t):
    return np.exp(t) * t


w_global = 1.5
CASES = [
    bound_lambda,
    late_binding,
    mapped,
    mapped_two,
    filtered,
    called_in_place,
    mapped_user_function,
]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_against_finite_differences(fn, dtype):
    check_grads(fn, X.astype(dtype))


@pytest.mark.parametrize("fn", [capturing, one_line_def], ids=lambda f: f.__name__)
def test_captured_values_get_their_gradient(fn):
    check_grads(fn, X, np.array([0.8, -0.3, 0.5]), wrt=(0, 1))


def test_hand_derived_and_late_binding():
    np.testing.assert_allclose(grad(late_binding)(X), np.full(3, 3.0))
    np.testing.assert_allclose(grad(bound_lambda)(X), 2 * X + 8 * X)


def test_forward_mode():
    v = np.array([1.0, 0.5, -2.0])
    _, t = jvp(mapped_two, (X,), (v,))
    np.testing.assert_allclose(t, grad(mapped_two)(X) @ v)


def escaping(x):
    f = lambda t: t * x  # noqa: E731 - reads x: a closure object that escapes
    fs = [f]
    first = fs[0]  # read as a value: not only called (stored_closures.py)
    return first(x)


def test_a_lambda_that_escapes_is_a_record_of_its_cells():
    # (closure_cells.py: x is bound once, before the lambda is made)
    for order in (1, 2):
        check_grads(escaping, X, order=order)


# -- lambdas passed to a call other than map/filter/reduce/key= ---------------------------


def along_axis(x):
    return np.sum(np.apply_along_axis(lambda r: r**2 + np.sin(r), 0, x))


def vectorized(x):
    f = np.vectorize(lambda t: t**3 - 2.0 * t)
    return np.sum(f(x))


def integrated(a):
    return quad(lambda t, a: np.sin(a * t) * t, 0.0, 1.0, args=(a,))[0]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", [along_axis, vectorized])
def test_a_lambda_passed_to_a_library_function_that_calls_it(f, dtype):
    x = X.astype(dtype)
    assert check_grads(f, x) == "reverse"
    want = {along_axis: 2 * X + np.cos(X), vectorized: 3 * X**2 - 2.0}[f]
    np.testing.assert_allclose(grad(f)(x), want, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_a_lambda_given_its_parameters_through_args_of_quad():
    if quad is None:
        pytest.skip("needs scipy")
    a = 0.7
    # d/da of the integral of sin(a t) t over [0, 1] is the integral of cos(a t) t^2
    t = np.linspace(0.0, 1.0, 20001)
    want = np.trapezoid(np.cos(a * t) * t**2, t)
    assert grad(integrated)(a) == pytest.approx(want, rel=1e-7)
    assert check_grads(integrated, a) == "reverse"


def captured_in_quad(a):
    return quad(lambda t: np.sin(a * t), 0.0, 1.0)[0]


def test_a_lambda_reading_a_variable_given_to_quad_takes_it_through_args():
    # closure conversion (transform/solver_closures.py): the same as `integrated` above
    if quad is None:
        pytest.skip("needs scipy")
    a = 0.7
    t = np.linspace(0.0, 1.0, 20001)
    want = np.trapezoid(np.cos(a * t) * t, t)  # d/da of the integral of sin(a t)
    assert grad(captured_in_quad)(a) == pytest.approx(want, rel=1e-7)
    assert check_grads(captured_in_quad, a, order=2) == "reverse over reverse"


def captured_in_vectorize(a):
    return np.sum(np.vectorize(lambda r: np.sin(a * r))(X))


def test_a_lambda_reading_a_variable_given_to_vectorize_takes_it_as_excluded_argument():
    # closure conversion (transform/vectorize_closures.py): d/da of sum(sin(a X))
    assert grad(captured_in_vectorize)(0.7) == pytest.approx(np.sum(np.cos(0.7 * X) * X))


def captured_in_vectorize_with_signature(a):
    return np.sum(np.vectorize(lambda r: np.sin(a * r), signature="()->()")(X))


def test_a_passed_lambda_reading_a_variable_says_how_to_pass_it():
    # a np.vectorize with a signature is not converted (its calls' arguments are not
    # the function's scalars): the lambda cannot take `a` there
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(captured_in_vectorize_with_signature)(0.7)
    message = str(info.value)
    assert "PB404 lambda passed to a call reads 'a' of the differentiated function" in message
    assert "quad(lambda t, a: ..., lo, hi, args=(a,))" in message


def default_computed_when_made(x):
    return np.sum(np.apply_along_axis(lambda r, k=np.pi: r * k, 0, x))


def test_a_passed_lambda_with_a_computed_default_is_refused_before_running():
    # it captures nothing, but its default is computed where it is made: not a function
    # value like a module-level one (an internal NotImplementedError reached the user)
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(default_computed_when_made)(X)
    message = str(info.value)
    assert "PB404 lambda passed to a call takes a default that is not a constant" in message
    assert "give it constant defaults" in message


# A lambda written in the call of a user function (a composite Simpson rule, found by
# probe3): `simpson(lambda x: cos(w * x), a, b, n)` is the named lambda passed on, lifted
# like a nested def; passed to library code (quad) it stays refused with the `args=` fix.
def simpson(fn, a, b, n):
    step = (b - a) / n
    total = fn(a) + fn(b)
    for k in range(1, n):
        total = total + (4 if k % 2 else 2) * fn(a + k * step)
    return total * step / 3


def integral_of_a_captured_weight(w):
    return simpson(lambda x: np.cos(w[0] * x) * w[1], 0.0, 1.5, 20)


def test_a_lambda_reading_a_variable_passed_to_a_user_function():
    check_grads(integral_of_a_captured_weight, np.array([1.3, 0.7]), order=2)
    check_grads(integral_of_a_captured_weight, np.array([1.3, 0.7], dtype=np.float32))


def test_a_lambda_reading_a_variable_passed_to_a_solver_is_differentiated():
    from scipy.integrate import quad

    def f(w):
        return quad(lambda t: np.exp(-w * t), 0.0, 1.0)[0]

    w = 1.3  # d/dw of the integral of exp(-w t) over [0, 1]
    want = -(1 - np.exp(-w) * (1 + w)) / w**2
    assert grad(f)(w) == pytest.approx(want, rel=1e-10)


# A lambda passed to library code that reads only variables that carry no gradient (a
# rate not differentiated, a count): a nested def passed on, as the def written out is
# (found by probe4: `solve_ivp(lambda t, y: -k * y + ..., ...)` with only y0 differentiated
# was refused).
def arc_length(upper, a):
    return quad(lambda t: np.sqrt(1.0 + a * t * t), 0.0, upper)[0]


def arc_length_def(upper, a):
    def speed(t):
        return np.sqrt(1.0 + a * t * t)

    return quad(speed, 0.0, upper)[0]


def relaxed_state(y0, k):
    from scipy.integrate import solve_ivp

    sol = solve_ivp(lambda t, y: -k * y + np.sin(t), (0.0, 1.5), y0, rtol=1e-10, atol=1e-12)
    return np.sum(sol.y[:, -1] ** 2)


def summed_rows(x, n):
    m = float(n)
    return np.sum(np.apply_along_axis(lambda r: np.sum(r**2) * m, 1, x))


def vectorized_by_keyword(x, n):
    m = float(n)
    return np.sum(np.vectorize(pyfunc=lambda t: np.sin(t) * m)(x))


def test_a_passed_lambda_reading_only_inactive_variables_is_differentiated():
    if quad is None:
        pytest.skip("needs scipy")
    check_grads(arc_length, 1.4, 0.5, wrt=0)
    assert grad(arc_length)(1.4, 0.5) == pytest.approx(grad(arc_length_def)(1.4, 0.5))
    check_grads(relaxed_state, np.array([1.0, -0.5]), 0.7, wrt=0)
    check_grads(summed_rows, np.arange(6.0).reshape(2, 3) / 5.0, 3, wrt=0, order=2)
    check_grads(vectorized_by_keyword, X, 3, wrt=0, order=2)
    # differentiated with respect to what it reads too: quad takes it through args
    # (transform/solver_closures.py)
    check_grads(arc_length, 1.4, 0.5, wrt=(0, 1))


TABLE = {  # lambdas of several parameters inside a display spanning lines
    "first": (lambda a, b: np.sum(np.sin(a) * b), 1.0),
    "second": (lambda b, a: np.sum(a * b ** 2), 2.0), "third": (lambda u, v=2.0: np.sum(u * v), 0),
}
PAIRS = [(lambda p, q: np.sum(p * np.exp(q)), lambda q, p: np.sum(q ** 3 - p)),
         (lambda p, q: np.sum(np.cos(p) + q), 0)]


@pytest.mark.parametrize("fn", [TABLE["first"][0], TABLE["second"][0], TABLE["third"][0],
                                PAIRS[0][0], PAIRS[0][1], PAIRS[1][0]])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_lambda_of_several_parameters_on_a_line_of_a_display(fn, dtype):
    # the commas between the parameters are no end of the lambda's text
    check_grads(fn, X.astype(dtype), np.array([0.8, -0.3, 0.5], dtype=dtype), wrt=(0, 1))
