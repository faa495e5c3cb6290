"""A singular local derivative (infinite or NaN: sqrt and x ** 0.5 at 0, 1 / x and log at
0, arcsin at 1) where the cotangent is exactly 0 -- the entry overwritten by a store,
discarded by np.where, a masked product, np.clip or an index -- contributes 0, not
0 * inf = NaN (pullback/zero_safe.py): the gradient is the derivative of what the function
computes, which is finite (central differences say so). Where the singular point is really
used, the derivative stays infinite. Rules (the closure pullbacks), the generated code of
/ and ** and of inlined rules, second order, jvp and hvp."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from fd import check_grad, check_hessian_against_differences, check_hvp, check_jvp

import pullback
from pullback import grad
from pullback.zero_safe import zero_safe_product

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

POINTS = np.random.default_rng(0).normal(size=(4, 2))
KEEP = np.array([True, False, True, False])  # the entries a program keeps


def energy(s):
    # the brief's case: the zero diagonal of the distances overwritten after sqrt
    d = POINTS[:, None, :] - POINTS[None, :, :]
    r = np.sqrt(np.sum((s * d) ** 2, axis=-1))
    r[r == 0] = 1.0
    return np.sum(1.0 / r)


def where_after_sqrt(x):
    return np.sum(np.where(KEEP, np.sqrt(x * KEEP), 0.0) * x)


def masked_product_after_power(x):
    y = (x * KEEP) ** 0.5
    return np.sum(KEEP * y * x)


def store_after_reciprocal(x):
    r = 1.0 / (x * KEEP)
    r[~KEEP] = 0.0
    return np.sum(r * x + (x * KEEP + ~KEEP) ** -1)


def where_after_log(x):
    return np.sum(np.where(KEEP, np.log(x * KEEP), 0.0) * x)


def where_after_arcsin_at_one(x):
    z = np.arcsin(np.where(KEEP, 0.5 * np.tanh(x), 1.0))
    return np.sum(np.where(KEEP, z, 0.0) * x)


def index_after_sqrt(x):
    return np.sum(np.sqrt(x * KEEP)[KEEP] * x[KEEP])


def where_after_division(x):
    return np.sum(np.where(KEEP, x / (x * KEEP), 0.0) * x) + np.sum(np.divide(x, x * KEEP)[KEEP])


def clip_after_power(x):
    return np.sum(np.clip(np.power(x * KEEP, 1.5) - 1.0, -0.5, 5.0) * x)


ARRAY_PROGRAMS = [
    where_after_sqrt,
    masked_product_after_power,
    store_after_reciprocal,
    where_after_log,
    where_after_arcsin_at_one,
    index_after_sqrt,
    where_after_division,
]

X = np.array([0.7, 1.3, 2.1, 0.4])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_store_over_a_singular_sqrt_gives_the_finite_gradient(dtype):
    g = check_grad(energy, dtype(1.3))
    assert np.isfinite(g)


def test_a_store_over_a_singular_sqrt_to_second_order():
    s = np.array([1.3])

    def of_vector(v):
        return energy(v[0])

    check_hessian_against_differences(of_vector, s, rtol=1e-5)
    check_jvp(energy, (1.3,), (1.0,))
    check_hvp(of_vector, s, np.array([1.0]), rtol=1e-5)


@pytest.mark.parametrize("f", ARRAY_PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_discarded_singular_entries_give_the_finite_gradient(f, dtype):
    g = check_grad(f, X.astype(dtype))
    assert np.all(np.isfinite(g))


@pytest.mark.parametrize(
    "f",
    [where_after_sqrt, masked_product_after_power, store_after_reciprocal, where_after_log],
    ids=lambda f: f.__name__,
)
def test_discarded_singular_entries_to_second_order(f):
    check_hessian_against_differences(f, X, rtol=1e-5, atol=1e-6)
    check_hvp(f, X, np.array([0.3, -1.0, 0.5, 2.0]), rtol=1e-5)
    check_jvp(f, (X,), (np.array([0.3, -1.0, 0.5, 2.0]),))


def test_a_clip_after_a_singular_power_and_its_second_order():
    # np.power's rule (the closure pullback) and its vjp at second order
    check_grad(clip_after_power, X)
    check_hessian_against_differences(clip_after_power, X, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scalars_in_a_branch_not_taken(dtype):
    def f(s):
        # np.where evaluates both branches: sqrt(0) and 1 / 0 where the other is taken
        # (a NumPy zero: a Python float's 1 / 0 raises in the primal)
        zero = np.subtract(s, s)
        root = np.where(s > 100.0, np.sqrt(zero), s * s)
        inverse = np.where(s > 100.0, 1.0 / zero, 3.0 * s)
        return root + inverse + np.where(s > 100.0, zero**-0.5, s)

    g = check_grad(f, dtype(1.5))
    assert g == pytest.approx(2 * 1.5 + 3.0 + 1.0, rel=1e-5)
    _, t = pullback.jvp(f, (dtype(1.5),), (dtype(1.0),))
    assert t == pytest.approx(g, rel=1e-5)


def test_a_singular_point_that_is_used_keeps_its_infinite_derivative():
    x = np.array([0.0, 1.0, 4.0])
    for f in (lambda v: np.sum(np.sqrt(v)), lambda v: np.sum(v**0.5)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            g = grad(f)(x)
        assert np.isinf(g[0]) and np.allclose(g[1:], [0.5, 0.25])


def test_the_product_itself():
    assert zero_safe_product(0.0, np.inf) == 0.0
    assert np.isnan(zero_safe_product(np.nan, 0.0))  # a NaN cotangent stays
    assert zero_safe_product(np.float32(0.0), np.float32(np.inf)) == 0.0
    assert type(zero_safe_product(np.float32(0.0), np.float32(np.inf))) is np.float32
    with np.errstate(invalid="ignore"):
        got = zero_safe_product(np.array([[0.0], [2.0]]), np.array([np.inf, 1.0]))
    np.testing.assert_array_equal(got, [[0.0, 0.0], [np.inf, 2.0]])
    assert zero_safe_product(0j, complex("inf")) == 0j
