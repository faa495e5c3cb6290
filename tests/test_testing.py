"""pullback.testing: check_rrule must catch broken rules and accept good ones."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from pullback.registry import RuleRegistry
from pullback.tangents import NO_TANGENT, ZERO, densify
from pullback.testing import (
    arrays,
    broadcastable_shapes,
    check_rrule,
    distinct_arrays,
    random_like,
)


def scale(x, k):
    return x * k


def registry_with(rule, fn=scale):
    reg = RuleRegistry()
    reg.register(fn, rule)
    return reg


def good_scale_rule(x, k):
    def scale_pullback(dy):
        if dy is ZERO:
            return ZERO, NO_TANGENT
        return densify(dy) * k, NO_TANGENT

    return x * k, scale_pullback


X = np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.5]])


def test_accepts_a_correct_rule():
    check_rrule(scale, X, 3, registry=registry_with(good_scale_rule))
    check_rrule(scale, X.astype(np.float32), 3, registry=registry_with(good_scale_rule))
    check_rrule(scale, 1.5, 3, registry=registry_with(good_scale_rule))


def test_no_rule():
    with pytest.raises(AssertionError, match="no rule is registered"):
        check_rrule(scale, X, 2, registry=RuleRegistry())


def test_non_differentiable_entry():
    reg = RuleRegistry()
    reg.non_differentiable(scale)
    with pytest.raises(AssertionError, match="non-differentiable"):
        check_rrule(scale, X, 2, registry=reg)


def test_wrong_value_reports_the_worst_element():
    def rule(x, k):
        def pullback(dy):
            if dy is ZERO:
                return ZERO, NO_TANGENT
            g = densify(dy) * k
            return g + np.where(np.arange(g.size).reshape(g.shape) == 4, 0.5, 0.0), NO_TANGENT

        return x * k, pullback

    with pytest.raises(AssertionError) as info:
        check_rrule(scale, X, 2, registry=registry_with(rule))
    text = str(info.value)
    assert "argument 0" in text and "index (1, 1)" in text
    assert "finite differences" in text and "rule" in text


def test_small_error_in_float64_is_caught():
    def rule(x, k):
        return x * k, lambda dy: (ZERO if dy is ZERO else dy * (k * (1 + 1e-4)), NO_TANGENT)

    with pytest.raises(AssertionError, match="does not match"):
        check_rrule(scale, X, 2, registry=registry_with(rule))


def test_wrong_primal():
    def rule(x, k):
        return x * k + 1e-3, good_scale_rule(x, k)[1]

    with pytest.raises(AssertionError, match="output differs"):
        check_rrule(scale, X, 2, registry=registry_with(rule))


def test_wrong_shape_dtype_and_count():
    def wrong_shape(x, k):
        return x * k, lambda dy: (np.ones(3), NO_TANGENT)

    def wrong_dtype(x, k):
        return x * k, lambda dy: (np.asarray(densify(dy) * k, np.float32), NO_TANGENT)

    def complex_for_real(x, k):
        return x * k, lambda dy: (densify(dy) * k + 0j, NO_TANGENT)

    def too_few(x, k):
        return x * k, lambda dy: (densify(dy) * k,)

    def a_list(x, k):
        return x * k, lambda dy: [densify(dy) * k, NO_TANGENT]

    def missing(x, k):
        return x * k, lambda dy: (NO_TANGENT, NO_TANGENT)

    cases = [
        (wrong_shape, "shape"),
        (wrong_dtype, "dtype"),
        (complex_for_real, "complex"),
        (too_few, "1 cotangents for 2"),
        (a_list, "must return a tuple"),
        # NO_TANGENT is the symbolic zero: a missing cotangent shows as a wrong value
        (missing, "does not match finite differences"),
    ]
    for rule, message in cases:
        with pytest.raises(AssertionError, match=message):
            check_rrule(scale, X, 2, registry=registry_with(rule))


def test_mutating_rules_are_caught():
    def mutates_dy(x, k):
        def pullback(dy):
            if dy is ZERO:
                return ZERO, NO_TANGENT
            dy *= k
            return dy, NO_TANGENT

        return x * k, pullback

    def mutates_list(xs):
        def pullback(dy):
            xs.append(1.0)
            return (ZERO,)

        return sum(xs), pullback

    with pytest.raises((AssertionError, ValueError)):
        check_rrule(scale, X, 2, registry=registry_with(mutates_dy))

    def total(xs):
        return sum(xs)

    with pytest.raises(AssertionError, match="changed its arguments"):
        check_rrule(total, [1.0, 2.0], registry=registry_with(mutates_list, total))


def test_zero_cotangent_must_be_handled():
    def no_zero(x, k):
        return x * k, lambda dy: (np.multiply(dy, k), NO_TANGENT)

    with pytest.raises(Exception):  # noqa: B017 - whatever the rule raises, or our assertion
        check_rrule(scale, X, 2, registry=registry_with(no_zero))

    def nonzero_for_zero(x, k):
        return x * k, lambda dy: (np.ones_like(x) if dy is ZERO else dy * k, NO_TANGENT)

    with pytest.raises(AssertionError, match="nonzero cotangent"):
        check_rrule(scale, X, 2, registry=registry_with(nonzero_for_zero))


def test_tuple_outputs_with_partial_zeros():
    def both(x):
        return np.sin(x), np.cos(x)

    def good(x):
        def pullback(dy):
            ds, dc = (ZERO, ZERO) if dy is ZERO else dy
            g = ZERO
            if ds is not ZERO:
                g = ds * np.cos(x)
            if dc is not ZERO:
                g = g + dc * -np.sin(x)
            return (g,)

        return both(x), pullback

    def ignores_second(x):
        def pullback(dy):
            ds = ZERO if dy is ZERO else dy[0]
            return (ZERO if ds is ZERO else ds * np.cos(x),)

        return both(x), pullback

    check_rrule(both, X, registry=registry_with(good, both))
    with pytest.raises(AssertionError):
        check_rrule(both, X, registry=registry_with(ignores_second, both))


def test_complex_convention():
    def square(z):
        return z * z

    def good(z):
        return z * z, lambda dy: (ZERO if dy is ZERO else dy * np.conj(2 * z),)

    def unconjugated(z):
        return z * z, lambda dy: (ZERO if dy is ZERO else dy * 2 * z,)

    z = np.array([1.0 + 2.0j, -0.5 + 0.3j])
    check_rrule(square, z, registry=registry_with(good, square))
    with pytest.raises(AssertionError):
        check_rrule(square, z, registry=registry_with(unconjugated, square))


def test_scalar_rule_inline_form_is_checked():
    reg = RuleRegistry()
    rule = reg.scalar_rule(np.sin, lambda y, x: np.cos(x))
    check_rrule(np.sin, X, registry=reg)
    rule.derivatives = (lambda y, x: -np.cos(x),)
    with pytest.raises(AssertionError, match="inline derivative"):
        check_rrule(np.sin, X, registry=reg)


def test_fkwargs_for_clashing_names():
    def f(x, rtol=1.0):
        return x * rtol

    def rule(x, rtol=1.0):
        return x * rtol, lambda dy: (ZERO if dy is ZERO else dy * rtol,)

    check_rrule(f, X, registry=registry_with(rule, f), fkwargs={"rtol": 2.0})


def test_random_like_structure():
    rng = np.random.default_rng(0)
    y = (np.zeros((2, 3), np.float32), 1.5, np.arange(3), [np.zeros(2, complex)])
    dy = random_like(y, rng)
    assert dy[0].dtype == np.float32 and not dy[0].flags.writeable
    assert isinstance(dy[1], float)
    assert dy[2] is ZERO
    assert dy[3][0].dtype == complex


@settings(max_examples=5)
@given(arrays(np.float32, (2, 3), "positive"))
def test_arrays_strategy_domain(x):
    assert x.dtype == np.float32 and x.shape == (2, 3)
    assert np.all(x >= 0.2) and np.all(x <= 3.0)


@settings(max_examples=5)
@given(arrays(np.float64, (4,), "real", avoid=(0.0,), margin=0.1))
def test_arrays_strategy_avoid(x):
    assert np.all(np.abs(x) >= 0.1)


@settings(max_examples=5)
@given(distinct_arrays(np.float64, (5,), gap=0.1))
def test_distinct_arrays(x):
    d = np.abs(x[:, None] - x[None, :]) + np.eye(5)
    assert np.all(d >= 0.1 - 1e-12)


@settings(max_examples=5)
@given(broadcastable_shapes(3))
def test_broadcastable_shapes(shapes):
    np.broadcast_shapes(*shapes)


# -- check_grads (through pullback.vjp) -----------------------------------------------------
def model(x, w):
    return np.sum(np.tanh(x @ w) ** 2)


def elementwise(x):
    return np.sin(x) * np.exp(x)


def cube(x):
    return x**3


def uses_cube(x):
    return np.sum(cube(x) * 2.0)


def test_check_grads_order_1():
    from pullback.testing import check_grads

    x = np.random.default_rng(0).standard_normal((3, 4))
    w = np.random.default_rng(1).standard_normal((4, 2))
    assert check_grads(model, x, w, wrt=(0, 1)) == "reverse"
    check_grads(model, x, w, wrt=1)
    check_grads(elementwise, np.linspace(0.0, 1.0, 5))
    check_grads(elementwise, np.linspace(0.0, 1.0, 5).astype(np.float32))


def test_check_grads_order_2():
    from pullback.testing import check_grads

    method = check_grads(elementwise, np.linspace(0.0, 1.0, 5), order=2)
    assert method in ("reverse over reverse", "finite differences of the gradient")
    x = np.random.default_rng(0).standard_normal((3, 4))
    w = np.random.default_rng(1).standard_normal((4, 2))
    check_grads(model, x, w, wrt=(0, 1), order=2)


def test_check_grads_catches_a_wrong_rule():
    from pullback.registry import default_registry
    from pullback.testing import check_grads

    reg = default_registry().copy()

    def wrong_cube_rule(x):
        return cube(x), lambda dy: (ZERO if dy is ZERO else dy * 3.0 * x,)  # should be x**2

    reg.register(cube, wrong_cube_rule)
    with pytest.raises(AssertionError, match="does not match finite differences"):
        check_grads(uses_cube, np.array([0.5, 1.5, -2.0]), registry=reg)
    check_grads(uses_cube, np.array([0.5, 1.5, -2.0]))
