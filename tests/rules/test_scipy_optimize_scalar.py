"""scipy.optimize's scalar minimisers (minimize_scalar, fminbound, brent, golden): the
minimiser and the minimum against central finite differences of the SciPy call, inside
the bounds (implicit function theorem) and on an active bound (the minimiser is the
bound), first and second order, and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS

so = pytest.importorskip("scipy.optimize")

import pullback  # noqa: E402
from pullback.errors import UnsupportedCallError  # noqa: E402
from pullback.testing import check_grads, check_rrule  # noqa: E402

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
DY = {"x": 0.8, "fun": -0.6}
TIGHT = {"xatol": 1e-10}


def bowl(x, a, b):
    """Minimum value away from 0: the envelope theorem has something to say."""
    return np.cosh(x - a) + b * x**2


def well(x, a, b):
    """Minimum 0 at x = a + log(b): SciPy's minimiser is accurate to its tolerance there
    (not to sqrt(eps) of the value), so finite differences of it are clean."""
    return (np.exp(x - a) - b) ** 2


@D
def test_unbounded_methods(dtype):
    args = (dtype(0.7), dtype(0.3))
    # the tolerance (position 5) is a setting
    check_rrule(so.minimize_scalar, bowl, None, None, args, "brent", 1e-12, output_cotangent=DY,
                constants=(5,))  # fmt: skip
    check_rrule(so.minimize_scalar, well, None, None, args, "golden", 1e-12, output_cotangent=DY,
                constants=(5,))  # fmt: skip
    check_rrule(so.brent, bowl, args, None, 1e-12, constants=(3,))
    check_rrule(so.golden, well, args, None, 1e-12, constants=(3,))


@D
def test_bounded_inside(dtype):
    # the bounds by keyword: x* does not depend on them, and SciPy's stopping point moves
    # with them at its tolerance, which finite differences would read as a slope
    args = (dtype(0.7), dtype(0.3))
    check_rrule(so.minimize_scalar, well, bounds=(-1.0, 2.0), args=args, method="bounded",
                options=TIGHT, output_cotangent=DY)  # fmt: skip
    check_rrule(so.fminbound, well, x1=-1.0, x2=2.0, args=args, xtol=1e-10)


@D
@pytest.mark.parametrize("bounds", [(-1.0, 0.2), (0.6, 2.0)], ids=["upper", "lower"])
def test_bounded_on_an_active_bound(bounds, dtype):
    # the unconstrained minimiser of bowl (about 0.38) lies beyond the bound: x* = bound,
    # dx*/dbound = 1, dx*/dargs = 0, and the minimum moves with the bound by f_x
    args = (dtype(0.7), dtype(0.3))
    check_rrule(so.minimize_scalar, bowl, None, bounds, args, "bounded", None, TIGHT,
                output_cotangent=DY, constants=(6,))  # fmt: skip
    # the other bound by keyword (see test_bounded_inside)
    lo, hi = bounds
    if lo < 0:
        check_rrule(so.fminbound, bowl, x2=hi, x1=lo, args=args, xtol=1e-10)
        check_rrule(so.fminbound, bowl, lo, hi, args, 1e-10, constants=(1, 4))
    else:
        check_rrule(so.fminbound, bowl, lo, x2=hi, args=args, xtol=1e-10)


def minimum_and_argmin(lo, a):
    sol = so.minimize_scalar(well, bounds=(lo, 2.0), args=(a, 0.3), method="bounded",
                             options=TIGHT)  # fmt: skip
    return 2.0 * sol.x + sol.fun * sol.fun


def argmin_inside(a, b):
    x = so.minimize_scalar(bowl, args=(a, b), tol=1e-12).x
    return x * x + so.fminbound(well, -1.0, 2.0, args=(a, b), xtol=1e-10)


def test_gradients_and_hessians_against_scipy():
    # the lower bound 0.6 active, then inactive (-1.0): the same program, both regimes (an
    # inactive bound's derivative, 0, is not compared: SciPy's stopping point moves with it
    # at its tolerance, which finite differences read as a slope)
    for lo, wrt in ((0.6, (0, 1)), (-1.0, 1)):
        assert check_grads(minimum_and_argmin, lo, 0.7, wrt=wrt) == "reverse"
        assert check_grads(minimum_and_argmin, lo, 0.7, wrt=1, order=2) == "reverse over reverse"
    assert check_grads(argmin_inside, 0.7, 0.3, wrt=(0, 1)) == "reverse"
    assert check_grads(argmin_inside, 0.7, 0.3, wrt=0, order=2) == "reverse over reverse"
    check_grads(argmin_inside, np.float32(0.7), np.float32(0.3), wrt=(0, 1))


def test_closed_form():
    # minimiser of (x - p)^2 + x^4: 2 (x - p) + 4 x^3 = 0, dx/dp = 2 / (2 + 12 x^2)
    def argmin(p):
        return so.minimize_scalar(lambda x, q: (x - q) ** 2 + x**4, args=(p,), tol=1e-12).x

    x = argmin(0.5)
    assert np.isclose(pullback.grad(argmin)(0.5), 2 / (2 + 12 * x**2), rtol=1e-8)

    # on the bound: x* = lo whatever p, the minimum (lo - p)^2 + lo^4 moves by 2 (lo - p)
    def on_bound(lo, p):
        return so.fminbound(lambda x, q: (x - q) ** 2 + x**4, lo, 3.0, args=(p,), xtol=1e-12)

    assert pullback.grad(on_bound, wrt=(0, 1))(0.8, 0.5) == (1.0, 0.0)


def kink(lo):
    return so.minimize_scalar(well, bounds=(lo, 2.0), args=(0.7, 0.3), method="bounded").x


def abs_minimum(a):
    return so.minimize_scalar(lambda x, c: np.abs(x - c), args=(a,)).x


def cut_short(a):
    return so.fminbound(well, -1.0, 2.0, args=(a, 0.3), maxfun=3)


@pytest.mark.filterwarnings("ignore:\\nMaximum number of function evaluations")
def test_refusals():
    here = __file__
    with pytest.raises(UnsupportedCallError) as err:
        pullback.grad(kink)(0.7 + np.log(0.3))  # the bound sits on the minimum
    assert str(err.value) == (
        f"{here}:{kink.__code__.co_firstlineno + 1}: pullback: scipy.optimize.minimize_scalar: "
        f"the minimum lies on the lower bound {float(0.7 + np.log(0.3))!r} within the solver's "
        "tolerance, where the objective's slope is 0: the minimiser has a kink there (it "
        "follows the bound on one side, the stationary point on the other) and no "
        "derivative.\n        return so.minimize_scalar(well, bounds=(lo, 2.0), args=(0.7, "
        '0.3), method="bounded").x\n'
        "Fix: move the bound away from the minimum, or tighten xtol to tell them apart."
    )
    with pytest.raises(UnsupportedCallError, match="second derivative at the minimum is 0"):
        pullback.grad(abs_minimum)(0.3)
    with pytest.raises(UnsupportedCallError, match="fminbound did not converge"):
        pullback.grad(cut_short)(0.7)
    for order in (1, 2):  # and the pullback functions that solve again
        g = cut_short
        for _ in range(order):
            g = pullback.grad(g)
        with pytest.raises(UnsupportedCallError, match="fminbound did not converge"):
            g(0.7)


def test_other_methods_and_outputs_refused():
    reg = pullback.default_registry()

    def mine(fun, args=(), **options):  # a custom method
        return so.OptimizeResult(x=0.0, fun=fun(0.0, *args), success=True)

    with pytest.raises(UnsupportedCallError, match="the methods are 'brent', 'golden'"):
        reg.lookup(so.minimize_scalar).rrule(well, args=(0.7, 0.3), method=mine)
    with pytest.raises(Exception, match="full_output"):
        reg.lookup(so.brent).rrule(well, (0.7, 0.3), full_output=True)


def closure_argmin(p):
    # a lambda reading the function's variables: they reach the solver through args
    return so.minimize_scalar(lambda x: np.cosh(x - p[0]) + p[1] * x**2, tol=1e-12).x


def test_closure_given_to_the_solver():
    assert check_grads(closure_argmin, np.array([0.7, 0.3])) == "reverse"


GRID = np.linspace(0.5, 3.0, 6)


def kinked_value(beta):
    # a minimum on a kink of np.interp (between grid points the objective is smooth)
    w = np.log(GRID)
    c = so.fminbound(lambda c: -np.log(c) - beta * np.interp(2.0 - c, GRID, w), 1e-6, 2.0)
    return np.log(c) + beta * np.interp(2.0 - c, GRID, w)


def smooth_value(beta):
    # the fix the refusal gives: a smooth fit of the same values
    coef = np.polyfit(GRID, np.log(GRID), 3)
    c = so.fminbound(lambda c: -np.log(c) - beta * np.polyval(coef, 2.0 - c), 1e-6, 2.0)
    return np.log(c) + beta * np.polyval(coef, 2.0 - c)


def test_a_minimum_on_a_kink_is_refused_and_the_fix_works():
    # (fminbound stopped within its tolerance of a kink, where the slope is not 0: the
    # implicit function theorem gave -1.11 where differences give -1.57)
    with pytest.raises(UnsupportedCallError) as info:
        pullback.grad(kinked_value)(0.9)
    text = str(info.value)
    assert "not 0 within the solver's tolerance: the objective is not smooth there" in text
    assert "np.polyval(np.polyfit(grid, w, 3), c)" in text
    assert "test_scipy_optimize_scalar.py:" in text
    assert check_grads(smooth_value, 0.9) == "reverse"
