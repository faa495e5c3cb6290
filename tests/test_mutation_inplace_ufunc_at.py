"""``np.multiply.at``, ``np.divide.at``, ``np.maximum.at``, ``np.minimum.at`` on arrays the
function created itself (issue 11): unbuffered, so a repeated index applies the ufunc again
to what the previous application left. Values as NumPy computes them; gradients against
finite differences in float64 and float32 (repeated indices, broadcast and scalar values,
n-D, zeros), ties as NumPy computes them, forward mode, second order; the rule with
check_rrule; refusals."""

import numpy as np
import pytest
from inplace_cases import check_value_forward_and_second_order

import pullback
from pullback import default_registry
from pullback.arrays_ufunc_at import array_ufunc_at_copy, at_plan
from pullback.errors import UnsupportedCallError, UnsupportedSyntaxError
from pullback.testing import check_grads, check_rrule

DTYPES = [np.float64, np.float32]
X = np.array([0.7, -1.2, 0.4, 0.9, 1.3, -0.6])
RNG = np.random.default_rng(19)
NAMES = ["multiply", "divide", "maximum", "minimum"]


def multiply_repeated(x):
    a = np.ones(4)
    np.multiply.at(a, [0, 0, 2, 0], x[:4])  # a[0] = x0 x1 x3
    return np.sum(a**2) + a[0] * x[5]


def maximum_of_a_written_array(x):
    a = x * 1.0
    np.maximum.at(a, [1, 1, 3], x[3:] * 2.0)
    return np.sum(a**3)


def divide_then_minimum_2d(x):
    a = np.full((2, 3), 2.0)
    np.divide.at(a, [0, 0], x[:3])  # row 0 divided twice by the same row
    np.minimum.at(a, [1, 1], x[3:])
    return np.sum(a * a)


def multiply_scalar_nd(x):
    a = np.stack([x[:3], x[3:]])
    np.multiply.at(a, ([0, 1, 0], [2, 2, 2]), x[1])  # a[0, 2] twice
    return np.sum(np.sin(a))


def multiply_in_a_loop(x):
    a = np.ones(3)
    for k in range(3):
        np.multiply.at(a, [k, 0], x[k : k + 2])
        a[2] += x[5]
    return np.sum(a**2)


def minimum_after_add_at(x):
    a = np.zeros(3)
    np.add.at(a, [0, 0, 1], x[:3])
    np.minimum.at(a, [0, 2, 0], x[3:])
    return np.sum(a * x[:3])


CASES = [
    multiply_repeated,
    maximum_of_a_written_array,
    divide_then_minimum_2d,
    multiply_scalar_nd,
    multiply_in_a_loop,
    minimum_after_add_at,
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_reverse_mode_matches_finite_differences(f, dtype):
    check_grads(f, X.astype(dtype))


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_value_forward_mode_and_second_order(f):
    assert check_value_forward_and_second_order(f, X) == "reverse over reverse"


def test_multiply_at_is_unbuffered_and_exact_at_zero():
    def f(x):
        a = np.ones(2)
        np.multiply.at(a, [0, 0, 0], x)
        return a[0]

    x = np.array([2.0, 0.0, 3.0])  # a product through a zero: no division anywhere
    np.testing.assert_allclose(pullback.grad(f)(x), [0.0, 6.0, 0.0])
    x = np.array([2.0, 5.0, 3.0])
    np.testing.assert_allclose(pullback.grad(f)(x), [15.0, 6.0, 10.0])


def test_maximum_at_ties_follow_numpys_order():
    # a[0] = max(max(1, v0), v1) with v0 = 1 (a tie: the halves) and v1 = 0.5 (loses)
    def f(a0, v):
        a = np.zeros(2) + a0
        np.maximum.at(a, [0, 0], v)
        return a[0]

    ga, gv = pullback.grad(f, wrt=(0, 1))(1.0, np.array([1.0, 0.5]))
    assert ga == pytest.approx(0.5)
    np.testing.assert_allclose(gv, [0.5, 0.0])


# -- the rule -----------------------------------------------------------------------------------
RULE_CASES = [
    ((5,), [0, 0, 3, 1, 0], (5,)),  # repeated indices, one value each
    ((5,), [0, 0, 3], ()),  # a scalar applied to each selected entry
    ((4, 3), [1, 1], (3,)),  # whole rows, repeated; a row broadcast
    ((4, 3), ([0, 0, 2], [1, 1, 2]), (3,)),  # n-D, a repeated entry
    ((4, 3), 2, ()),  # a plain integer index
    ((4,), np.array([], dtype=int), (0,)),  # nothing selected
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("shape, index, vshape", RULE_CASES)
def test_rule(shape, index, vshape, name, dtype):
    a = (RNG.normal(size=shape) + 2.5).astype(dtype)  # away from ties and zero divisors
    value = (RNG.normal(size=vshape) + 2.0).astype(dtype) if vshape else dtype(1.7)
    check_rrule(array_ufunc_at_copy, a, name, index, value, constants=(1, 2))
    expected = a.copy()
    getattr(np, name).at(expected, index, value)
    before = a.copy()
    np.testing.assert_array_equal(array_ufunc_at_copy(a, name, index, value), expected)
    np.testing.assert_array_equal(a, before)


def test_plan_rounds():
    positions, rounds, shape = at_plan(np.zeros((2, 2)), [1, 0, 1], 1.0)
    np.testing.assert_array_equal(positions, [2, 3, 0, 1, 2, 3])
    assert [r.tolist() for r in rounds] == [[0, 1, 2, 3], [4, 5]] and shape == (3, 2)


def test_other_ufuncs_are_refused():
    with pytest.raises(UnsupportedCallError, match="np.power.at"):
        array_ufunc_at_copy(np.ones(2), "power", [0], 2.0)

    def f(x):
        a = np.ones(3)
        np.power.at(a, [0], x[0])
        return np.sum(a)

    with pytest.raises(UnsupportedSyntaxError, match="numpy.power.at"):
        pullback.grad(f)(X)


def test_refused_on_arguments_and_views():
    def on_argument(x):
        np.multiply.at(x, [0, 0], 2.0)
        return np.sum(x)

    def on_view(x):
        a = x * 1.0
        v = a[1:]
        np.maximum.at(v, [0], 3.0)
        return np.sum(a)

    for f, text in [(on_argument, "write `x = x.copy()`"), (on_view, "cannot prove that 'v'")]:
        with pytest.raises(UnsupportedSyntaxError) as info:
            pullback.grad(f)(X.copy())
        assert "PB104" in str(info.value) and text in str(info.value)


def test_registered_with_its_pullback_function():
    entry = default_registry().lookup(array_ufunc_at_copy)
    assert entry.pullback_fn is not None
