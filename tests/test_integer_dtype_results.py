"""A call whose ``dtype=`` makes integer or boolean results (``np.sum(x, dtype=np.int64)``,
``np.array(x, dtype=int)``, ``np.linspace(a, b, 5, dtype=int)``) is piecewise constant in
its float inputs: its derivative is zero. The reverse pullbacks once passed the cotangent
on as for a float result (a silent wrong gradient), and forward mode applied the call to
the tangent; now every rule call that passes a ``dtype`` is guarded where it is generated
(transform/integer_dtypes.py): no contributions in the reverse sweep (to second order)
and a zero tangent in forward mode, for every rule that ships with pullback (a user's
rule keeps its own pullback)."""

import numpy as np
import pytest
from fd import check_grad, check_hvp, check_jvp

import pullback
from pullback import grad, hessian, jvp

X = np.array([[0.3, -0.7, 1.1], [0.9, 0.2, -0.4]]) * 3


def sum_int(x):
    return np.sum(x * x, dtype=np.int64) * 1.0 + np.sum(x**2)


def mean_int(x):
    return np.mean(x * x, axis=0, dtype=int).sum() * 1.0 + np.sum(x**2)


def cumsum_int(x):
    return np.cumsum(x, axis=1, dtype=np.int32).sum() * 1.0 + np.sum(x**2)


def sum_int_by_position(x):
    return np.sum(x * x, 0, np.int64).sum() * 1.0 + np.sum(x**2)


def array_int(x):
    return np.sum(np.array(x * 2, dtype=int)) * 1.0 + np.sum(x**2)


def asarray_int16(x):
    return np.sum(np.asarray(x * 2, dtype=np.int16)) * 1.0 + np.sum(x**2)


def nansum_int(x):
    return np.nansum(x * 2, dtype=np.int64) * 1.0 + np.sum(x**2)


def prod_int(x):
    return np.prod(x + 4, dtype=np.int64) * 1.0 + np.sum(x**2)


def array_bool(x):
    return np.sum(np.array(x, dtype=bool)) * 1.0 + np.sum(x**2)


def linspace_int(x):  # (no rule had a guard of its own for these before)
    return np.sum(np.linspace(x[0, 0], x[1, 2], 5, dtype=int)) * 1.0 + np.sum(x**2)


def full_like_int(x):
    return np.sum(np.full_like(x, x[0, 1], dtype=int)) * 1.0 + np.sum(x**2)


def full_int(x):
    return np.sum(np.full(4, x[1, 1], dtype=np.int32)) * 1.0 + np.sum(x**2)


def trace_int(x):
    return np.trace(x @ x.T, dtype=np.int64) * 1.0 + np.sum(x**2)


def var_int(x):
    return np.var(x * 3, dtype=int) * 1.0 + np.std(x * 3, dtype=int) + np.sum(x**2)


def method_sum_int(x):  # the method forms, which resolve to the same rules
    return x.sum(dtype=np.int64) * 1.0 + (x * x).cumsum(dtype=np.int32).sum() + np.sum(x**2)


def astype_int(x):
    return np.sum(x.astype(int)) * 1.0 + np.sum((x * 2).astype(dtype=np.int16)) + np.sum(x**2)


CASES = [
    sum_int,
    mean_int,
    cumsum_int,
    sum_int_by_position,
    array_int,
    asarray_int16,
    nansum_int,
    prod_int,
    array_bool,
    linspace_int,
    full_like_int,
    full_int,
    trace_int,
    var_int,
    method_sum_int,
    astype_int,
]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_gradient_and_hessian_see_only_the_float_terms(f):
    # the integer term is piecewise constant: only sum(x ** 2) has a derivative
    np.testing.assert_allclose(grad(f)(X), 2 * X, rtol=1e-12)
    np.testing.assert_allclose(hessian(f)(X).reshape(6, 6), 2 * np.eye(6), atol=1e-12)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_against_central_differences(f):
    # (X keeps every rounded value away from a step: the differences see the float terms)
    check_grad(f, X)
    check_grad(f, X.astype(np.float32))
    check_jvp(f, (X,), (np.cos(np.arange(6.0)).reshape(2, 3),))
    check_hvp(f, X, np.sin(np.arange(6.0)).reshape(2, 3))


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_forward_mode_gives_the_float_terms_tangent(f):
    v = np.cos(np.arange(6.0)).reshape(2, 3)
    _, t = jvp(f, (X,), (v,))
    assert t == pytest.approx(np.sum(2 * X * v), rel=1e-12)


def sum_of(x, d):
    return np.sum(x * x, dtype=d) + np.sum(x**3)


@pytest.mark.parametrize("d", [np.int64, np.float64, bool, np.int64])
def test_a_dtype_held_in_a_variable_is_judged_at_each_call(d):
    # the same generated code for an integer and a float dtype (the guard runs)
    want = 3 * X**2 + (0 if np.dtype(d).kind in "biu" else 2 * X)
    np.testing.assert_allclose(grad(sum_of)(X, d), want, rtol=1e-12)
    curvature = np.diag(6 * X.ravel() + (0 if np.dtype(d).kind in "biu" else 2))
    np.testing.assert_allclose(hessian(sum_of)(X, d).reshape(6, 6), curvature, atol=1e-12)
    v = np.cos(np.arange(6.0)).reshape(2, 3)
    _, t = jvp(lambda x: sum_of(x, d), (X,), (v,))
    assert t == pytest.approx(np.sum(want * v), rel=1e-12)


def test_dtypes_read_in_a_loop():
    def f(x):
        s = 0.0
        for d in (np.int64, np.float64, np.int32, bool):
            s = s + np.sum(np.cumsum(x * x, axis=1, dtype=d))
        return s

    x = X.astype(np.float64)
    cumulative = np.array([3.0, 2.0, 1.0])  # element j is in 3 - j of a row's partial sums
    np.testing.assert_allclose(grad(f)(x), 2 * x * cumulative, rtol=1e-12)
    check_grad(f, x)


def test_only_calls_that_pass_a_dtype_are_guarded():
    def plain(x):
        return np.sum(x * x, 0).sum() + np.mean(x)

    def given(x):
        return np.sum(x * x, 0, np.int64).sum() + np.mean(x)

    assert "integer_results" not in grad(plain).source
    assert "integer_results" in grad(given).source


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_float_dtype_is_still_differentiated(dtype):
    def f(x):
        return np.sum(np.sin(x), dtype=dtype) + np.mean(x**2, dtype=dtype)

    x = X.astype(np.float64)
    np.testing.assert_allclose(grad(f)(x), np.cos(x) + 2 * x / x.size, rtol=1e-6)
    # forward mode applies the linear call to the tangent, in that dtype
    v = np.cos(np.arange(6.0)).reshape(2, 3)
    _, t = jvp(f, (x,), (v,))
    assert t == pytest.approx(np.sum((np.cos(x) + 2 * x / x.size) * v), rel=1e-6)


def test_a_dtype_read_from_an_argument():
    def f(x, y):
        return np.sum(np.asarray(x * y, dtype=y.dtype) ** 2)

    for y, want in [
        (np.arange(1.0, 7.0).reshape(2, 3), 2 * X * np.arange(1.0, 7.0).reshape(2, 3) ** 2),
        (np.arange(1, 7).reshape(2, 3), np.zeros_like(X)),
    ]:
        np.testing.assert_allclose(grad(f)(X, y), want, rtol=1e-12)
        _, t = jvp(lambda x: f(x, y), (X,), (np.ones_like(X),))
        assert t == pytest.approx(np.sum(want), rel=1e-12)


def test_einsum_with_an_integer_dtype():
    # (its second derivative is refused: einsum's pullback is not transformable yet)
    def f(x):
        return np.einsum("ij,ij->", x, x, dtype=int, casting="unsafe") * 1.0 + np.sum(x**2)

    np.testing.assert_allclose(grad(f)(X), 2 * X, rtol=1e-12)
    _, t = jvp(f, (X,), (np.ones_like(X),))
    assert t == pytest.approx(np.sum(2 * X), rel=1e-12)


def scaled_sum(x, dtype=None):
    """A user's function whose ``dtype`` names the type of its counter, not its result."""
    return np.sum(x) * np.arange(1, 3, dtype=dtype)[-1]


def test_a_users_rule_keeps_its_own_pullback():
    reg = pullback.default_registry().copy()

    @reg.rrule(scaled_sum)
    def _(x, dtype=None):
        def scaled_sum_pullback(dy):
            return (np.full(np.shape(x), 2.0 * dy),)

        return scaled_sum(x, dtype=dtype), scaled_sum_pullback

    def f(x):
        return scaled_sum(x * x, dtype=np.int64)

    np.testing.assert_allclose(grad(f, registry=reg)(X), 4 * X, rtol=1e-12)
