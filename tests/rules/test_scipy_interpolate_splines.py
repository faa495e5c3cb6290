"""scipy.interpolate.CubicSpline against central finite differences of SciPy: in the
query points and the data for the boundary conditions by name, first and second order
(the mixed terms through the object), an axis, a periodic spline, the object built
outside; the refusals (the knots, a bc_type by values, other piecewise polynomials)."""

from __future__ import annotations

import numpy as np
import pytest

si = pytest.importorskip("scipy.interpolate")

import pullback  # noqa: E402
from pullback.errors import NotDifferentiableError, UnsupportedCallError  # noqa: E402
from pullback.testing import check_grads  # noqa: E402

FLOATS = (np.float64, np.float32)
XS = np.array([0.0, 0.4, 1.1, 1.5, 2.3, 3.0])  # uneven
YS = np.sin(XS) + 0.3 * XS
Q = np.array([[0.17, 0.93], [1.31, 2.71]])  # away from the knots
OUT = np.array([-0.6, 0.7, 2.0, 3.3])  # two outside [0, 3]: extrapolated (or wrapped)


def total(y, q, bc):
    return np.sum(np.sin(si.CubicSpline(XS, y, bc_type=bc)(q)))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("bc", ["not-a-knot", "natural", "clamped"])
def test_first_and_second_order(bc, dtype):
    y, q = YS.astype(dtype), Q.astype(dtype)
    assert check_grads(total, y, q, bc, wrt=(0, 1)) == "reverse"
    assert check_grads(total, y, q, bc, wrt=(0, 1), order=2) == "reverse over reverse"


def test_outside_scalar_axis_and_periodic():
    assert check_grads(total, YS, OUT, "natural", wrt=(0, 1), order=2)
    assert check_grads(total, YS, 1.7, "not-a-knot", wrt=(0, 1), order=2)

    def rows(y, q):  # two rows, the interpolation along axis 1
        return np.sum(np.cos(si.CubicSpline(XS, y, axis=1)(q)))

    assert check_grads(rows, np.stack([YS, YS**2]), Q, wrt=(0, 1), order=2)

    def periodic(y, q):  # y[-1] repeats y[0]
        return np.sum(si.CubicSpline(XS, np.append(y, y[0]), bc_type="periodic")(q) ** 2)

    assert check_grads(periodic, YS[:5], OUT, wrt=(0, 1), order=2)


SPLINE = si.CubicSpline(XS, YS)


def prebuilt(q):
    return np.sum(SPLINE(q) ** 3)


def wavy(y, q):
    return np.sin(si.CubicSpline(XS, y)(q))


def test_built_outside_and_every_form_of_second_derivative():
    assert check_grads(prebuilt, Q, order=2) == "reverse over reverse"
    q, h = 1.7, 1e-5
    gy = pullback.grad(wavy, wrt=0)
    fd = (gy(YS, q + h) - gy(YS, q - h)) / (2 * h)  # d2/dq dy
    gq = pullback.grad(wavy, wrt=1)
    np.testing.assert_allclose(pullback.grad(gq, wrt=0)(YS, q), fd, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(pullback.hessian(wavy, wrt=(0, 1))(YS, q)[0][1], fd, rtol=1e-6)
    v = np.linspace(-1.0, 1.0, 6)
    np.testing.assert_allclose(pullback.jvp(gq, (YS, q), (v, 0.0))[1], fd @ v, rtol=1e-6)


def in_x(x):
    return np.sum(si.CubicSpline(x, YS)(Q))


def by_values(y):
    return np.sum(si.CubicSpline(XS, y, bc_type=((1, 0.5), (2, 0.0)))(Q))


def test_refusals():
    with pytest.raises(NotDifferentiableError) as err:
        pullback.grad(in_x)(XS)
    assert str(err.value).startswith(
        "pullback cannot differentiate scipy.interpolate.CubicSpline with respect to its "
        "points x: the knots' derivative of an interpolating spline is not implemented; the "
        "data y and the query points differentiate.\nFix: keep that parameter constant"
    )
    with pytest.raises(NotDifferentiableError) as err:
        pullback.grad(by_values)(YS)
    assert str(err.value).startswith(
        "pullback cannot differentiate scipy.interpolate.CubicSpline with respect to y under "
        "a bc_type given by derivative values: those values make the coefficients affine in "
        "y, not linear; bc_type 'not-a-knot', 'natural', 'clamped' and 'periodic' "
        "differentiate in y.\nFix: keep that parameter constant"
    )
    rule = pullback.default_registry().lookup(si.CubicSpline.__call__)
    with pytest.raises(UnsupportedCallError, match="PchipInterpolator is not differentiated"):
        rule.rrule(si.PchipInterpolator(XS, YS), 0.5)
