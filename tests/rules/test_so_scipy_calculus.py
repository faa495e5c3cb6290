"""Reverse over reverse through the transformable pullbacks of scipy.linalg, scipy.signal
and scipy.integrate (the cases of ``so_scipy_calculus``), and the pullbacks that became
transformable agree with the rules' closures."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make, spd, well_conditioned

sl = pytest.importorskip("scipy.linalg")
pytest.importorskip("scipy.signal")
si = pytest.importorskip("scipy.integrate")

import so_scipy_calculus  # noqa: E402,F401 - fills CASES
from second_order_table import CASES  # noqa: E402

from pullback import default_registry, grad  # noqa: E402
from pullback.testing import check_grads, check_rrule  # noqa: E402

FAMILIES = ("scipy_linalg", "scipy_signal", "scipy_integrate")


def _rule(name):
    for rule in default_registry().rules():
        if rule.name == name:
            return rule
    raise AssertionError(f"no rule named {name}")


def _float_positions(args):
    return tuple(k for k, a in enumerate(args) if isinstance(a, (float, np.ndarray)))


# f(x) = sum(fn(...) ** 3) with x at position p of an n-argument call, one function per
# (n, p): pullback transforms neither starred calls nor calls of partial objects, and one
# function with a branch per form would hold calls the pullback function does not take.
def _w10(fn, a):
    def f(x):
        return np.sum(fn(x) ** 3)

    return f


def _w20(fn, a):
    def f(x):
        return np.sum(fn(x, a[1]) ** 3)

    return f


def _w21(fn, a):
    def f(x):
        return np.sum(fn(a[0], x) ** 3)

    return f


def _w30(fn, a):
    def f(x):
        return np.sum(fn(x, a[1], a[2]) ** 3)

    return f


def _w31(fn, a):
    def f(x):
        return np.sum(fn(a[0], x, a[2]) ** 3)

    return f


def _w32(fn, a):
    def f(x):
        return np.sum(fn(a[0], a[1], x) ** 3)

    return f


def _w40(fn, a):
    def f(x):
        return np.sum(fn(x, a[1], a[2], a[3]) ** 3)

    return f


def _w41(fn, a):
    def f(x):
        return np.sum(fn(a[0], x, a[2], a[3]) ** 3)

    return f


WRAPPERS = {(1, 0): _w10, (2, 0): _w20, (2, 1): _w21, (3, 0): _w30, (3, 1): _w31}
WRAPPERS.update({(3, 2): _w32, (4, 0): _w40, (4, 1): _w41})


def _wrapper(fn, args, p):
    return WRAPPERS[len(args), p](fn, args)


CASE_LIST = [(name, k, c) for name, cases in CASES.items() for k, c in enumerate(cases)]


@pytest.mark.parametrize("name, k, entry", CASE_LIST, ids=[f"{n}-{k}" for n, k, _ in CASE_LIST])
def test_reverse_over_reverse(name, k, entry):
    args, kwargs, wrt = entry
    rule = _rule(name)
    if not rule.family.startswith(FAMILIES):
        return  # another family's case: its own test runs it
    assert not kwargs and len(args) <= 4, "written for up to 4 positional arguments"
    assert rule.pullback_fn is not None, f"{name} has no transformable pullback"
    for p in _float_positions(args) if wrt is None else wrt:
        how = check_grads(_wrapper(rule.fn, args, p), args[p], order=2)
        assert how == "reverse over reverse", (name, p)


def test_every_case_has_a_transformable_rule():
    # (quad, odeint and solve_ivp: families scipy_quad and scipy_ode, whose cases the
    # coverage test runs)
    names = {
        r.name
        for r in default_registry().rules()
        if r.family.startswith(FAMILIES + ("scipy_quad", "scipy_ode"))
    }
    for name in CASES:
        if name.startswith(("scipy.linalg", "scipy.signal", "scipy.integrate")):
            assert name in names


# -- the new transformable pullbacks: against the closures, and through the factor ------------
D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)


@D
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)], ids=str)
def test_pinv_function_agrees_with_its_rule(shape, dtype):
    from pullback.rules.scipy_linalg import pinv_pullback

    a = make("real", shape, dtype, seed=6)
    check_rrule(sl.pinv, a)
    y, back = _rule("scipy.linalg.pinv").rrule(a)
    g = make("real", y.shape, seed=2)
    np.testing.assert_allclose(pinv_pullback(g, a)[0], back(g)[0], rtol=1e-4, atol=1e-5)


def _solve_by_factors(a, b):
    c = sl.cholesky(a, lower=True)
    x = sl.cho_solve((c, True), b)
    lu = sl.lu_factor(a)
    z = sl.lu_solve(lu, x, trans=1)
    return np.sum(z**3) + np.sum(x**3)


def _cho_solve_of(c, b):
    return np.sum(sl.cho_solve((c, False), b) ** 3)


def test_cho_solve_and_lu_solve_second_order():
    a, b = spd(3) + 0.5 * np.eye(3), make("real", (3, 2), seed=1)
    how = check_grads(_solve_by_factors, a, b, wrt=1, order=2)
    assert how == "reverse over reverse"
    check_grads(_solve_by_factors, a, b, wrt=(0, 1))
    # through the factor itself (upper)
    r = np.triu(well_conditioned((3, 3)))
    assert check_grads(_cho_solve_of, r, b, wrt=0, order=2) == "reverse over reverse"
    g = grad(_cho_solve_of)(r, b)
    assert np.all(np.tril(g, -1) == 0)  # the other triangle is never read


def test_pinv_rank_deficient_is_refused_in_the_pullback_function():
    from pullback import ArgumentError

    def f(a):
        return np.sum(sl.pinv(a) ** 2)

    a = np.outer(np.arange(1.0, 4.0), np.ones(3))
    with pytest.raises(ArgumentError, match="rank deficient"):
        grad(f)(a)


@D
@pytest.mark.parametrize("shape, axis", [((5,), -1), ((2, 4), -1), ((4, 3), 0), ((1,), -1)])
def test_simpson_function_agrees_with_its_rule(shape, axis, dtype):
    from pullback.rules.scipy_integrate import simpson_pullback

    y = make("real", shape, dtype, seed=3)
    y_out, back = default_registry().lookup(si.simpson).rrule(y, dx=0.3, axis=axis)
    g = make("real", np.shape(y_out), dtype, seed=4)
    expected = back(g)[0]
    got = simpson_pullback(g, y, dx=0.3, axis=axis)[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def _simpson_cubes(y, x):
    return si.simpson(y**3, dx=0.4) + si.simpson(y * x, x) ** 2


def test_simpson_second_order_and_sample_points():
    y, x = make("real", (5,), seed=1), np.array([0.0, 0.3, 0.5, 1.1, 1.4])
    # with sample points the pullback function hands over to the rule: first derivatives,
    # and a second derivative by differencing the gradient (the closure is not transformed)
    check_grads(_simpson_cubes, y, x, wrt=(0, 1))
    how = check_grads(_simpson_cubes, y, x, wrt=0, order=2)
    assert how == "finite differences of the gradient"
