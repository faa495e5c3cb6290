"""Rules given a Python list where the first-argument sweep (test_rules_on_lists.py) does
not reach: the pullbacks' zero cotangents of pieces and grids no gradient reached, powers
and polynomials of degree 0, slogdet's sign alone (tests/list_position_cases.py). Each is
differentiated on the list (built in a loop from the array argument) as on the array:
gradient, jvp, hvp and Hessian, float64 and (sampled) float32, and the hvp against central
differences of the gradient."""

import warnings

import numpy as np
import pytest
from list_position_cases import CASES
from sweeps import sweep

import pullback

X = np.array(
    [[1.3, 0.4, -0.2, 0.7], [0.5, 1.1, 0.3, -0.6], [0.2, -0.3, 1.6, 0.1], [0.4, 0.2, -0.5, 1.2]]
)


def _functions(call):
    def on_list(x):
        xs = []
        for row in x:
            r = []
            for v in row:
                r.append(v)
            xs.append(r)
        y = call(xs)
        return np.sum(np.sin(y) + y * y)

    def on_array(x):
        y = call(x)
        return np.sum(np.sin(y) + y * y)

    return on_list, on_array


PARAMS = [pytest.param(c, np.float64, id=f"{c.__name__}-float64") for c in CASES] + [
    pytest.param(c, np.float32, id=f"{c.__name__}-float32") for c in sweep(CASES, quick=4)
]


@pytest.mark.parametrize("call,dtype", PARAMS)
def test_a_list_in_these_positions_as_the_array(call, dtype):
    on_list, on_array = _functions(call)
    x = X.astype(dtype)
    v = np.linspace(-0.7, 0.9, x.size).reshape(x.shape).astype(dtype)
    rtol, atol = (1e-9, 1e-11) if dtype == np.float64 else (1e-5, 1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name, of in (
            ("grad", lambda f: pullback.grad(f)(x)),
            ("jvp", lambda f: pullback.jvp(f, (x,), (v,))[1]),
            ("hvp", lambda f: pullback.hvp(f)(x, v)),
            ("hessian", lambda f: pullback.hessian(f)(x)),
        ):
            got, want = of(on_list), of(on_array)
            assert np.shape(got) == np.shape(want), name
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)
        if dtype == np.float64:
            g = pullback.grad(on_list)
            eps = 1e-6
            fd = (g(x + eps * v) - g(x - eps * v)) / (2 * eps)
            np.testing.assert_allclose(pullback.hvp(on_list)(x, v), fd, rtol=1e-5, atol=1e-6)


def _fmin_on(form):
    """np.fmin (a scalar rule that is not holomorphic: forward mode takes its tangent from
    the rule, rule_tangents.rule_tangent, where the kinds are not known) on a list, a tuple
    or Python ints beside the differentiated numbers."""
    if form == "list":
        return lambda x: np.sum(np.fmin([x[0], x[1], x[2]], [0.4, x[1] * x[2], 1]) ** 2)
    if form == "tuple":
        return lambda x: np.sum(np.fmin((x[0], x[1], x[2]), (x[2], 0.3, 2)) ** 2)
    return lambda x: np.fmin(x[0], 1) ** 2 + np.fmin(1, x[1] * x[2]) ** 3


@pytest.mark.parametrize("form", ["list", "tuple", "int"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_rules_own_tangent_on_lists_tuples_and_ints(form, dtype):
    f = _fmin_on(form)
    x = np.array([0.35, 0.7, 1.2], dtype=dtype)
    v = np.array([0.3, -0.5, 0.8], dtype=dtype)
    _, got = pullback.jvp(f, (x,), (v,))
    x64, v64, h = x.astype(np.float64), v.astype(np.float64), 1e-6
    want = (f(x64 + h * v64) - f(x64 - h * v64)) / (2 * h)
    rtol = 1e-6 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 1e-2)
    np.testing.assert_allclose(got, np.dot(pullback.grad(f)(x64), v64), rtol=rtol)
