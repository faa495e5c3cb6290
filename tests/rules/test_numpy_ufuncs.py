"""Elementwise NumPy rules against finite differences (table-driven)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rule_inputs import FLOATS, make, make_complex, name_of

from pullback.registry import NONDIFF, default_registry
from pullback.tangents import NO_TANGENT
from pullback.testing import arrays, broadcastable_shapes, check_rrule

# fn, domain of the argument, points to stay away from
UNARY = [
    (np.negative, "real", ()),
    (np.positive, "real", ()),
    (np.absolute, "real", (0.0,)),
    (np.fabs, "real", (0.0,)),
    (np.reciprocal, "nonzero", ()),
    (np.exp, "real", ()),
    (np.exp2, "real", ()),
    (np.expm1, "real", ()),
    (np.log, "positive", ()),
    (np.log2, "positive", ()),
    (np.log10, "positive", ()),
    (np.log1p, (-0.8, 2.0), ()),
    (np.sqrt, "positive", ()),
    (np.cbrt, "nonzero", ()),
    (np.square, "real", ()),
    (np.sin, "real", ()),
    (np.cos, "real", ()),
    (np.tan, (-1.2, 1.2), ()),
    (np.arcsin, "unit", ()),
    (np.arccos, "unit", ()),
    (np.arctan, "real", ()),
    (np.sinh, "real", ()),
    (np.cosh, "real", ()),
    (np.tanh, "real", ()),
    (np.arcsinh, "real", ()),
    (np.arccosh, "above1", ()),
    (np.arctanh, "unit", ()),
    (np.sinc, "real", ()),
    (np.deg2rad, "real", ()),
    (np.rad2deg, "real", ()),
    (np.degrees, "real", ()),
    (np.radians, "real", ()),
    (np.real, "real", ()),
    (np.conjugate, "real", ()),
    (np.nan_to_num, "real", ()),
]

# fn, domain of a, domain of b, points a and b stay away from
BINARY = [
    (np.add, "real", "real", None),
    (np.subtract, "real", "real", None),
    (np.multiply, "real", "real", None),
    (np.divide, "real", "nonzero", None),
    (np.power, "positive", "real", None),
    (np.float_power, "positive", "real", None),
    (np.remainder, (0.1, 0.9), (1.1, 2.0), None),
    (np.fmod, (-0.9, 0.9), (1.1, 2.0), None),
    (np.maximum, "real", "real", "distinct"),
    (np.minimum, "real", "real", "distinct"),
    (np.fmax, "real", "real", "distinct"),
    (np.fmin, "real", "real", "distinct"),
    (np.logaddexp, "real", "real", None),
    (np.logaddexp2, "real", "real", None),
    (np.arctan2, "nonzero", "nonzero", None),
    (np.hypot, "nonzero", "nonzero", None),
    (np.copysign, "nonzero", "nonzero", None),
]

SHAPE_PAIRS = [((3, 4), (3, 4)), ((2, 3), (3,)), ((4, 1), (1, 3)), ((), (2,))]


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn,domain,avoid", UNARY, ids=[name_of(c[0]) for c in UNARY])
def test_unary(fn, domain, avoid, dtype):
    check_rrule(fn, make(domain, (3, 4), dtype, avoid=avoid))
    check_rrule(fn, make(domain, (), dtype, seed=1, avoid=avoid))


@pytest.mark.parametrize("fn,domain,avoid", UNARY, ids=[name_of(c[0]) for c in UNARY])
def test_unary_python_float(fn, domain, avoid):
    check_rrule(fn, float(make(domain, (), seed=2, avoid=avoid)))


def _binary_inputs(da, db, special, sa, sb, dtype, seed=0):
    if special == "distinct":
        both = make("distinct", (2,) + np.broadcast_shapes(sa, sb), dtype, seed=seed)
        a = both[0][(0,) * (len(both[0].shape) - len(sa))] if sa != both[0].shape else both[0]
        b = both[1]
        a = np.asarray(both[0]).reshape(both[0].shape)
        return _sum_to(a, sa), _sum_to(b, sb)
    return make(da, sa, dtype, seed=seed), make(db, sb, dtype, seed=seed + 1)


def _sum_to(x, shape):
    """A slice of x with the given shape (keeps values distinct from the other input)."""
    while x.ndim > len(shape):
        x = x[0]
    idx = tuple(slice(0, 1) if n == 1 else slice(None) for n in shape)
    return np.ascontiguousarray(x[idx]) if shape else x[()].copy()


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
@pytest.mark.parametrize("fn,da,db,special", BINARY, ids=[name_of(c[0]) for c in BINARY])
def test_binary(fn, da, db, special, shapes, dtype):
    a, b = _binary_inputs(da, db, special, shapes[0], shapes[1], dtype)
    check_rrule(fn, a, b)


@pytest.mark.parametrize("fn,da,db,special", BINARY, ids=[name_of(c[0]) for c in BINARY])
def test_binary_with_python_scalar(fn, da, db, special):
    a, b = _binary_inputs(da, db, special, (3,), (3,), np.float64, seed=3)
    check_rrule(fn, a, float(b[1]))
    check_rrule(fn, float(a[0]), b)


def test_power_with_integer_exponent_has_no_tangent():
    check_rrule(np.power, make("real", (4,)), 3)
    check_rrule(np.power, make("real", (4,)), np.array([1, 2, 3, 2]))


def test_power_at_zero_base():
    # d/da a**2 at 0 is 0; d/db is not taken where a <= 0.
    check_rrule(np.power, np.array([0.0, 1.5]), 2.0)


def test_maximum_ties_split_equally():
    rule = default_registry().lookup(np.maximum)
    _, back = rule.rrule(np.array([1.0, 2.0]), np.array([1.0, 3.0]))
    da, db = back(np.ones(2))
    np.testing.assert_allclose(da, [0.5, 0.0])
    np.testing.assert_allclose(db, [0.5, 1.0])


def test_abs_at_zero_is_zero():
    _, back = default_registry().lookup(np.abs).rrule(np.array([0.0, -2.0]))
    np.testing.assert_allclose(back(np.ones(2))[0], [0.0, -1.0])


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_clip(dtype):
    x = make("distinct", (3, 4), dtype)
    check_rrule(np.clip, x, -0.5, 0.8)
    check_rrule(np.clip, x, make("real", (4,), dtype, seed=5) - 1.5, None)
    check_rrule(np.clip, x, None, make("real", (3, 1), dtype, seed=6))
    check_rrule(np.clip, x, fkwargs={"min": -0.5, "max": 0.8})


def test_where():
    cond = np.array([[True, False, True], [False, False, True]])
    check_rrule(np.where, cond, make("real", (2, 3)), make("real", (3,), seed=1))
    check_rrule(np.where, cond, 1.5, make("real", (2, 1), seed=1))
    _, back = default_registry().lookup(np.where).rrule(cond)
    assert back(np.ones(3)) == (NO_TANGENT,)


@pytest.mark.parametrize("dtype", (np.complex128, np.complex64), ids=str)
@pytest.mark.parametrize(
    "fn",
    [
        np.exp,
        np.log,
        np.sin,
        np.cos,
        np.tanh,
        np.sqrt,
        np.square,
        np.reciprocal,
        np.negative,
        np.absolute,
        np.real,
        np.imag,
        np.conjugate,
        np.angle,
        np.expm1,
        np.log1p,
    ],
    ids=name_of,
)
def test_complex_unary(fn, dtype):
    check_rrule(fn, make_complex((2, 3), dtype) + (0.2 + 0.1j))


@pytest.mark.parametrize("fn", [np.add, np.subtract, np.multiply, np.divide, np.power], ids=name_of)
def test_complex_binary(fn):
    check_rrule(fn, make_complex((2, 3)) + 1.5, make_complex((3,), seed=1) + 0.5)
    check_rrule(fn, make("positive", (2, 3)), make_complex((3,), seed=1) + 0.5)


def test_angle_and_imag_of_real_input():
    check_rrule(np.angle, make("positive", (3,)))
    check_rrule(np.imag, make("real", (3,)))
    check_rrule(np.angle, make_complex((3,)) + 0.5, True)


@pytest.mark.parametrize("fn", [np.heaviside, np.sign], ids=name_of)
def test_piecewise_constant_are_non_differentiable(fn):
    assert default_registry().lookup(fn).kind == NONDIFF


@given(st.data())
def test_binary_broadcasting_hypothesis(data):
    shapes = data.draw(broadcastable_shapes(2, max_dims=3, max_side=3))
    fn, da, db = data.draw(
        st.sampled_from(
            [
                (np.add, "real", "real"),
                (np.multiply, "real", "real"),
                (np.divide, "real", "nonzero"),
                (np.power, "positive", "real"),
                (np.arctan2, "nonzero", "positive"),
                (np.logaddexp, "real", "real"),
            ]
        )
    )
    dtype = data.draw(st.sampled_from(FLOATS))
    a = data.draw(arrays(dtype, shapes[0], da))
    b = data.draw(arrays(dtype, shapes[1], db))
    check_rrule(fn, a, b)


@given(st.data())
def test_unary_hypothesis(data):
    fn, domain, avoid = data.draw(st.sampled_from(UNARY))
    x = data.draw(arrays(np.float64, (2, 3), domain, avoid=avoid))
    check_rrule(fn, x)
