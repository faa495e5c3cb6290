"""polyfit, polyder, polyint, roots and numpy.polynomial.polynomial's polyfit and polyval
against finite differences (first order here, second order in so_numpy_polynomials.py)."""

from __future__ import annotations

import numpy as np
import numpy.polynomial.polynomial as npp
import pytest
from fd import check_jvp
from rule_inputs import FLOATS, make, make_complex

from pullback import grad
from pullback.errors import UnsupportedCallError
from pullback.testing import check_rrule, check_rrule_second_order

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)


def _points(dtype, n=7):
    # distinct sample points, one of them 0 (x**0 there)
    x = np.linspace(-1.0, 1.3, n) + make((-0.05, 0.05), (n,), seed=3)
    x[2] = 0.0
    return x.astype(dtype)


def _fit_inputs(dtype):
    """Sample points, values and weights of a fit."""
    return _points(dtype), make("real", (7,), dtype, seed=1), make((0.5, 1.5), (7,), dtype, seed=2)


@D
def test_polyfit(dtype):
    x, y, w = _fit_inputs(dtype)
    check_rrule(np.polyfit, x, y, 2)
    check_rrule(np.polyfit, x, y, 3, None, False, w)
    check_rrule(np.polyfit, x, make("real", (7, 2), dtype, seed=4), 2)
    check_rrule(np.polyfit, x, y, 2, w=w)
    check_rrule(np.polyfit, x, y, 0)
    check_rrule(np.polyfit, x[:3], y[:3], 2)  # interpolation: the residuals are 0


@D
def test_polyfit_second_order(dtype):
    x, y, w = _fit_inputs(dtype)
    check_rrule_second_order(np.polyfit, x, y, 2)
    check_rrule_second_order(np.polyfit, x, y, 2, None, False, w)
    check_rrule_second_order(np.polyfit, x, make("real", (7, 2), dtype, seed=4), 1)


def test_polyfit_in_user_code():
    x = _points(np.float64)
    w = make((0.5, 1.5), (7,), seed=2)

    def f(y, x, w):
        c = np.polyfit(x, y, 2, w=w)
        return np.sum(c * c)

    y = make("real", (7,), seed=1)
    g = grad(f, wrt=(0, 1, 2))(y, x, w)
    step = 1e-6
    for k, a in enumerate((y, x, w)):
        e = np.zeros_like(a)
        e[3] = step
        args = [y, x, w]
        up = list(args)
        down = list(args)
        up[k] = a + e
        down[k] = a - e
        fd = (f(*up) - f(*down)) / (2 * step)
        assert np.isclose(g[k][3], fd, rtol=1e-6, atol=1e-9)


def test_polyfit_refusals():
    x = _points(np.float64)
    y = make("real", (7,), seed=1)
    for kwargs, said in (({"cov": True}, "cov="), ({"full": True}, "full=True")):

        def f(y, kwargs=kwargs):
            return np.sum(np.polyfit(x, y, 2, **kwargs)[0])

        with pytest.raises(UnsupportedCallError, match=said):
            grad(f)(y)
    with pytest.raises(UnsupportedCallError, match="rank"):
        grad(lambda y: np.sum(np.polyfit(np.ones(7), y, 2)))(y)


@D
def test_polyder_polyint(dtype):
    p = make("real", (4,), dtype)
    for m in (0, 1, 2, 4, 6):
        check_rrule(np.polyder, p, m)
    check_rrule(np.polyder, p)
    check_rrule(np.polyint, p)
    check_rrule(np.polyint, p, 2)
    check_rrule(np.polyint, p, 2, [dtype(0.5), dtype(-1.5)])
    check_rrule(np.polyint, p, 3, dtype(0.7))
    check_rrule(np.polyint, p, 1, make("real", (1,), dtype, seed=1))


@D
def test_roots(dtype):
    check_rrule(np.roots, np.array([1.0, -0.5, -2.0, 1.2], dtype))  # three real roots
    check_rrule(np.roots, np.array([1.0, 0.3, 2.0], dtype))  # a complex pair
    check_rrule(np.roots, np.array([2.0, -1.0, 0.5, 0.0], dtype))  # a root at 0
    check_rrule(np.roots, np.array([2.5], dtype))  # no roots


def test_roots_of_complex_coefficients():
    p = make_complex((3,)) + np.array([1.0, 0.0, 0.0])  # no leading zero
    check_rrule(np.roots, p)
    check_rrule_second_order(np.roots, p)


def test_roots_leading_zero_refused():
    with pytest.raises(UnsupportedCallError, match="leading zero"):
        grad(lambda p: np.sum(np.roots(p) ** 2))(np.array([0.0, 1.0, -2.0, 0.5]))


@D
def test_numpy_polynomial(dtype):
    x, y, w = _fit_inputs(dtype)
    c = make("real", (3,), dtype, seed=5)
    check_rrule(npp.polyfit, x, y, 2)
    check_rrule(npp.polyfit, x, y, 2, w=w)
    check_rrule(npp.polyfit, x, make("real", (7, 2), dtype, seed=4), 1)
    check_rrule(npp.polyval, x, c)
    check_rrule(npp.polyval, make("real", (2, 3), dtype, seed=6), c)
    check_rrule(npp.polyval, dtype(0.3), c)
    check_rrule(npp.polyval, x, c[:1])
    with pytest.raises(UnsupportedCallError, match="ndim"):
        grad(lambda c2: np.sum(npp.polyval(0.5, c2)))(make("real", (3, 2)))
    # the two conventions agree: lowest power first against highest power first
    assert np.allclose(npp.polyfit(x, y, 2), np.polyfit(x, y, 2)[::-1], rtol=1e-4)


def test_forward_mode():
    x, y, w = _fit_inputs(np.float64)

    def f(y):
        fitted = np.sum(np.polyfit(x, y, 2) ** 2) + np.sum(npp.polyfit(x, y, 1, w=w))
        p = np.concatenate([np.ones(1), y[:3]])
        return (
            fitted + np.sum(np.abs(np.roots(p)) ** 2) + np.sum(np.polyint(np.polyder(p), 1, y[0]))
        )

    check_jvp(f, (y,), (make("real", (7,), seed=6),))
