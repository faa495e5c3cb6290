"""Forward mode (jvp) against finite differences and reverse mode; forward Jacobians."""

import numpy as np
import pytest
import test_control_flow as cf
import test_straight_line as sl

import pullback
from pullback import jacobian, jvp, vjp

RNG = np.random.default_rng(11)


def directional(f, args, tangents, eps=1e-6):
    hi = [a + eps * t if t is not None else a for a, t in zip(args, tangents, strict=True)]
    lo = [a - eps * t if t is not None else a for a, t in zip(args, tangents, strict=True)]
    return (np.asarray(f(*hi)) - np.asarray(f(*lo))) / (2 * eps)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize(
    "fn,make", sl.CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(sl.CASES)]
)
def test_jvp_matches_finite_differences(fn, make, dtype):
    a, b = (x.astype(dtype) for x in make())
    ta, tb = RNG.normal(size=a.shape).astype(dtype), RNG.normal(size=b.shape).astype(dtype)
    y, dy = jvp(fn, (a, b), (ta, tb))
    want = directional(fn, (a.astype(np.float64), b.astype(np.float64)), (ta, tb))
    tol = 2e-3 if dtype == np.float32 else 1e-6
    np.testing.assert_allclose(dy, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(y, fn(a, b), rtol=1e-6)


@pytest.mark.parametrize(
    "fn,args,tangents",
    [
        (cf.branchy, (1.2, 0.7), (1.0, -0.5)),
        (cf.branchy, (-0.9, 0.7), (1.0, 0.5)),
        (cf.while_loop, (0.5,), (1.0,)),
        (cf.break_continue, (np.array([0.5, -1.0, 1.2, 0.3, 2.0]),), (np.ones(5),)),
        (cf.for_else, (np.array([0.5, 1.7, 0.2]),), (np.arange(3.0),)),
        (cf.return_inside_nested_loop, (np.array([1.5, 1.0]),), (np.array([1.0, -1.0]),)),
        (cf.euler, (0.5, 1.0), (1.0, 0.25)),
        (cf.mse_loop, (RNG.normal(size=6), RNG.normal(size=6)), (RNG.normal(size=6), None)),
        (cf.horner, (np.array([1.0, -2.0, 0.5, 3.0]), 0.7, 0), (np.ones(4), 1.0, None)),
        (cf.is_even_sum, (0.4, 5), (1.0, None)),
    ],
)
def test_jvp_through_control_flow_and_recursion(fn, args, tangents):
    y, dy = jvp(fn, args, tangents)
    np.testing.assert_allclose(dy, directional(fn, args, tangents), rtol=1e-6, atol=1e-8)


def test_jvp_agrees_with_vjp():
    w, x = RNG.normal(size=(3, 2)), RNG.normal(size=(5, 3))

    def layer(w, x):
        return np.tanh(x @ w) * 2.0

    v = RNG.normal(size=w.shape)
    u = RNG.normal(size=(5, 2))
    _, dy = jvp(layer, (w, x), (v, None))
    _, back = vjp(layer, w, x, wrt=0)
    assert np.sum(dy * u) == pytest.approx(np.sum(back(u) * v), rel=1e-12)


def test_rules_without_forward_forms_are_derived_exactly():
    a = RNG.normal(size=(3, 3)) + 3 * np.eye(3)
    v = RNG.normal(size=(3, 3))

    def logdet(m):
        return np.log(np.abs(np.linalg.det(m))) + np.sum(np.linalg.inv(m))

    _, dy = jvp(logdet, (a,), (v,))
    assert dy == pytest.approx(directional(logdet, (a,), (v,)), rel=1e-6)


def tuple_out(x):
    return np.sin(x), np.sum(x * x)


def test_tuple_outputs_and_zero_tangents():
    x = RNG.normal(size=3)
    (y1, y2), (d1, d2) = jvp(tuple_out, (x,), (np.ones(3),))
    np.testing.assert_allclose(d1, np.cos(x))
    assert d2 == pytest.approx(2 * np.sum(x))
    _, (z1, z2) = jvp(tuple_out, (x,), (None,))
    np.testing.assert_array_equal(z1, np.zeros(3))


def test_bad_tangents_are_clear_errors():
    with pytest.raises(pullback.ShapeMismatchError) as e:
        jvp(tuple_out, (np.ones(3),), (np.ones(4),))
    assert str(e.value) == (
        "tangents[0] has shape (4,) but its primal has shape (3,); a tangent must have its "
        "primal's shape."
    )
    with pytest.raises(pullback.ShapeMismatchError):
        jvp(tuple_out, (np.ones(3),), ())


def tall(x):
    return np.concatenate([np.sin(x), x**2, np.cumsum(x)])


@pytest.mark.parametrize("mode", ["forward", "auto", "reverse"])
def test_forward_jacobian_equals_reverse(mode):
    x = RNG.normal(size=3)
    J = jacobian(tall, mode=mode)(x)
    want = jacobian(tall)(x)
    assert J.shape == (9, 3)
    np.testing.assert_allclose(J, want, rtol=1e-12)
    Jt = jacobian(tuple_out, mode=mode)(x)
    np.testing.assert_allclose(Jt[0], np.diag(np.cos(x)))
    np.testing.assert_allclose(Jt[1], 2 * x)


def over_dict_keys(x):
    # a loop and a generator over a dict's keys (strings: no tangent), its values read by
    # key (jvp refused this with "a gradient flows back through the items of a dict"
    # before; found by probe4 in an optimizer keeping its moments in dicts)
    d = {"a": x[0], "b": x[1] * x[2]}
    s = 0.0
    for k in d:
        s = s + d[k] ** 2
    return s + sum(np.sin(d[k]) for k in d)


def test_jvp_of_a_loop_over_a_dicts_keys():
    x = np.array([0.3, -0.7, 1.1])
    v = np.array([1.0, 0.5, -2.0])
    y, t = jvp(over_dict_keys, (x,), (v,))
    h = 1e-6
    fd = (over_dict_keys(x + h * v) - over_dict_keys(x - h * v)) / (2 * h)
    assert y == pytest.approx(over_dict_keys(x), rel=1e-12)
    assert t == pytest.approx(fd, rel=1e-7)
    assert t == pytest.approx(np.dot(pullback.grad(over_dict_keys)(x), v), rel=1e-12)
