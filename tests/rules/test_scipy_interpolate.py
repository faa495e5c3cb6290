"""scipy.interpolate.interp1d against central finite differences of SciPy: every kind,
with respect to the query points, the data and (linear and piecewise constant kinds)
the points; fills, extrapolation, unsorted points, an interpolation axis; the object built
in the differentiated function or outside; second order; the refusals."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS

si = pytest.importorskip("scipy.interpolate")

import pullback  # noqa: E402
from pullback.errors import NotDifferentiableError  # noqa: E402
from pullback.testing import check_grads  # noqa: E402

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
XS = np.array([0.0, 0.4, 1.1, 1.5, 2.3, 3.0])  # uneven
YS = np.sin(XS) + 0.3 * XS
Q = np.array([[0.17, 0.93], [1.31, 2.71]])  # away from the points and the midpoints
OUT = np.array([-0.6, 0.7, 2.0, 3.4])  # two outside [0, 3]
KINDS = ["linear", "slinear", "nearest", "previous", "next", "zero", "quadratic", "cubic"]
HAS_X = ("linear", "slinear", "nearest", "previous", "next", "zero")


def values(x, y, q, kind, fill):
    return np.sin(si.interp1d(x, y, kind=kind, bounds_error=False, fill_value=fill)(q))


def total(x, y, q, kind, fill):
    # (one number: check_grads(order=2) checks reverse over reverse of a scalar)
    return np.sum(values(x, y, q, kind, fill))


@D
@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_in_y_q_and_x(kind, dtype):
    x, y, q = XS.astype(dtype), YS.astype(dtype), Q.astype(dtype)
    wrt = (0, 1, 2) if kind in HAS_X else (1, 2)
    check_grads(values, x, y, q, kind, np.nan, wrt=wrt)


@pytest.mark.parametrize("kind", ["linear", "nearest", "cubic"])
@pytest.mark.parametrize("fill", [-2.5, "extrapolate"], ids=["constant", "extrapolate"])
def test_fill_and_extrapolation(kind, fill):
    wrt = (0, 1, 2) if kind in HAS_X else (1, 2)
    check_grads(values, XS, YS, OUT, kind, fill, wrt=wrt)


def unsorted_along_axis(x, y, q):
    # points out of order, data along axis 0 with two columns
    return si.interp1d(x, y, axis=0, kind="linear")(q) ** 2


def test_unsorted_points_and_an_axis():
    perm = np.array([3, 0, 5, 1, 4, 2])
    y = np.stack([YS, np.cos(XS)], axis=1)[perm]
    assert check_grads(unsorted_along_axis, XS[perm], y, Q, wrt=(0, 1, 2)) == "reverse"


F_CUBIC = si.interp1d(XS, YS, kind="cubic")
F_LINEAR = si.interp1d(XS, np.stack([YS, YS**2]))  # axis -1: two rows


def prebuilt(q):
    return np.sum(F_CUBIC(q) ** 3) + np.sum(F_LINEAR(q) ** 2)


def built_inside(y, q):
    f = si.interp1d(XS, y, kind="cubic", fill_value="extrapolate")
    g = si.interp1d(XS, y * y, kind="linear")
    return np.sum(f(q) ** 3) + np.sum(g(q) * f(q))


@D
def test_an_object_built_outside(dtype):
    # (check_rrule compares its arguments before and after by value: an interp1d object
    # has no such equality, so the call is checked through a function of q)
    q = Q.astype(dtype)
    assert check_grads(prebuilt, q) == "reverse"
    assert check_grads(prebuilt, q[0, 0]) == "reverse"


SECOND_KINDS = ["linear", "slinear", "nearest", "quadratic", "cubic"]


@D
@pytest.mark.parametrize("kind", SECOND_KINDS)
def test_second_order_every_kind(kind, dtype):
    # reverse over reverse, every differentiated argument at once (the mixed terms in q,
    # y and x), against differences of the gradient and of SciPy's own values
    x, y, q = XS.astype(dtype), YS.astype(dtype), Q.astype(dtype)
    wrt = (0, 1, 2) if kind in HAS_X else (1, 2)
    assert check_grads(total, x, y, q, kind, np.nan, wrt=wrt, order=2) == ("reverse over reverse")


@pytest.mark.parametrize("kind", ["linear", "cubic"])
@pytest.mark.parametrize("fill", [-2.5, "extrapolate"], ids=["constant", "extrapolate"])
def test_second_order_outside_and_at_a_knot(kind, fill):
    # two points outside [0, 3] (a constant fill has no derivative), one at a knot (1.1,
    # where linear's slope jumps: the segment SciPy evaluates, as the gradient takes it)
    q = np.array([-0.6, 0.7, 1.1 + 1e-2, 3.4])
    wrt = (0, 1, 2) if kind in HAS_X else (1, 2)
    assert check_grads(total, XS, YS, q, kind, fill, wrt=wrt, order=2)
    at_knot = pullback.hessian(lambda y: values(XS, y, 1.1, kind, fill))(YS)
    w = np.eye(6)[2]  # the weights at a knot: that point alone
    np.testing.assert_allclose(at_knot, -np.sin(YS[2]) * np.outer(w, w), atol=1e-12)


def test_second_order_of_an_object_built_outside_and_inside():
    for f, args, wrt in (
        (prebuilt, (Q,), 0),
        (built_inside, (YS, Q), 1),
        (built_inside, (YS, Q), 0),
    ):
        assert check_grads(f, *args, wrt=wrt, order=2) == "reverse over reverse"
    assert check_grads(built_inside, YS, Q, wrt=(0, 1), order=2) == "reverse over reverse"


def scalar_values(y, q):
    return total(XS, y, q, "cubic", "extrapolate")


def test_every_form_of_second_derivative():
    # hessian, hvp, grad(grad), jvp(grad) of the mixed block d2/dq dy: the same numbers,
    # and those of central differences of the gradient in y along q
    q = 1.7
    h = 1e-5
    gy = pullback.grad(scalar_values, wrt=0)
    fd = (gy(YS, q + h) - gy(YS, q - h)) / (2 * h)
    mixed = pullback.hessian(scalar_values, wrt=(0, 1))(YS, q)[0][1]
    np.testing.assert_allclose(mixed, fd, rtol=1e-6, atol=1e-9)
    gq = pullback.grad(scalar_values, wrt=1)
    np.testing.assert_allclose(pullback.grad(gq, wrt=0)(YS, q), fd, rtol=1e-6, atol=1e-9)
    v = np.random.default_rng(2).normal(size=6)
    _, tangent = pullback.jvp(gq, (YS, q), (v, 0.0))
    np.testing.assert_allclose(tangent, fd @ v, rtol=1e-6)
    hv = pullback.hvp(lambda yq: scalar_values(yq[:6], yq[6]))(np.append(YS, q), np.append(v, 0))
    np.testing.assert_allclose(hv[6], fd @ v, rtol=1e-6)


@pytest.mark.parametrize("kind", ["linear", "nearest", "cubic"])
def test_forward_mode(kind):
    # jvp through the object made in the function, against central differences
    rng = np.random.default_rng(1)
    moving = (0, 1, 2) if kind in HAS_X else (1, 2)
    args = (XS, YS, Q)
    for i in moving:
        v = [np.zeros_like(a) for a in args]
        v[i] = rng.normal(size=np.shape(args[i]))
        h = 1e-6
        up = [a + h * d for a, d in zip(args, v, strict=True)]
        down = [a - h * d for a, d in zip(args, v, strict=True)]
        fd = (values(*up, kind, np.nan) - values(*down, kind, np.nan)) / (2 * h)
        _, t = pullback.jvp(lambda x, y, q: values(x, y, q, kind, np.nan), args, tuple(v))
        np.testing.assert_allclose(t, fd, rtol=1e-6, atol=1e-8)
    if kind == "cubic":
        with pytest.raises(NotDifferentiableError, match="points x for a spline kind"):
            pullback.jvp(lambda x: values(x, YS, Q, kind, np.nan), (XS,), (np.ones(6),))


def test_closed_form_linear():
    # y(q) = y0 + (y1 - y0) (q - x0) / (x1 - x0): every partial by hand
    def f(x, y, q):
        return si.interp1d(x, y)(q)

    x, y, q = np.array([1.0, 3.0]), np.array([2.0, 6.0]), 1.5
    gx, gy, gq = pullback.grad(f, wrt=(0, 1, 2))(x, y, q)
    t = 0.25
    np.testing.assert_allclose(gy, [1 - t, t], rtol=1e-14)
    np.testing.assert_allclose(gq, 2.0, rtol=1e-14)
    np.testing.assert_allclose(gx, [-2.0 * (1 - t), -2.0 * t], rtol=1e-14)


def spline_in_x(x):
    return np.sum(si.interp1d(x, YS, kind="cubic")(Q))


def spline_in_x_and_y(x, y):
    return np.sum(si.interp1d(x, y, kind="cubic")(Q) ** 2)


KNOTS_REFUSED = (
    "pullback cannot differentiate scipy.interpolate.interp1d with respect to its points x "
    "for a spline kind (quadratic, cubic, an integer order): the knots' derivative of an "
    "interpolating spline is not implemented; kinds linear, slinear, nearest, previous, "
    "next and zero differentiate in x.\nFix: keep that parameter constant"
)


def test_refusals():
    with pytest.raises(NotDifferentiableError) as err:
        pullback.grad(spline_in_x)(XS)
    assert str(err.value).startswith(KNOTS_REFUSED)
    # at second order too: the derivative in x of the gradient in y (the spline's weights
    # move with its knots), by reverse and by forward mode
    gy = pullback.grad(spline_in_x_and_y, wrt=1)
    with pytest.raises(NotDifferentiableError) as err:
        pullback.vjp(gy, XS, YS, wrt=0)[1](np.ones(6))
    assert str(err.value).startswith(KNOTS_REFUSED)
    with pytest.raises(NotDifferentiableError, match="points x for a spline kind"):
        pullback.jvp(gy, (XS, YS), (np.ones(6), np.zeros(6)))
    with pytest.raises(Exception, match="KroghInterpolator is not differentiated"):
        rule = pullback.default_registry().lookup(type(F_CUBIC).__call__)
        rule.rrule(si.KroghInterpolator(XS[:3], YS[:3]), 0.5)
