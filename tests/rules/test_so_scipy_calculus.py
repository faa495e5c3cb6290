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

from pullback import default_registry, grad, hessian, hvp, jvp  # noqa: E402
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
    # with sample points too the pullback function is transformable: reverse over reverse
    check_grads(_simpson_cubes, y, x, wrt=(0, 1))
    assert check_grads(_simpson_cubes, y, x, wrt=0, order=2) == "reverse over reverse"
    assert check_grads(_simpson_cubes, y, x, wrt=(0, 1), order=2) == "reverse over reverse"


# -- second order through quad, odeint and solve_ivp (issue 12) ---------------------------------
# Tolerances: quad at epsabs = epsrel = 1e-12 and the ODE solvers at rtol = atol = 1e-10
# (solve_ivp: 1e-9) make the gradients accurate to ~1e-9 relative; check_grads differences the
# gradient with a step of 1e-3, which turns that into ~1e-6 of a second derivative — inside its
# own float64 tolerance. The closed forms below are compared at the solver's accuracy.
RR = "reverse over reverse"
# (keywords spelled out: a star-call (`**options`) is not differentiated twice)


def gaussian(x, s):
    return np.exp(-0.5 * (x / s) ** 2)


def bump(x, c, k):
    return np.exp(-c * x * x) * np.sin(k * x)


def gaussian_mass(s, m):
    return si.quad(gaussian, m - 1.0, 2.0, args=(s,), epsabs=1e-12, epsrel=1e-12)[0] ** 2


def moving_limits(c):
    # both limits and the integrand move with c: the Leibniz rule with its limit terms
    return si.quad(bump, c, c * c + 1.0, args=(c, 1.3), epsabs=1e-12, epsrel=1e-12)[0]


def half_line(s):
    return si.quad(gaussian, -np.inf, 0.4, args=(s,), epsabs=1e-12, epsrel=1e-12)[0] * s


@D
def test_quad_hessians(dtype):
    s, m = dtype(0.8), dtype(0.3)
    assert check_grads(gaussian_mass, s, m, wrt=(0, 1), order=2) == RR
    assert check_grads(moving_limits, dtype(0.7), order=2) == RR
    assert check_grads(half_line, s, order=2) == RR


def test_quad_second_derivative_is_exact():
    # int_{-inf}^{0.4} exp(-x^2 / (2 s^2)) dx = s sqrt(pi / 2) (1 + erf(0.4 / (s sqrt 2)))
    special = pytest.importorskip("scipy.special")

    def closed(s):
        return s * s * np.sqrt(np.pi / 2) * (1 + special.erf(0.4 / (s * np.sqrt(2))))

    s, h = 0.8, 1e-4
    expected = (closed(s + h) - 2 * closed(s) + closed(s - h)) / h**2
    assert np.isclose(hessian(half_line)(s), expected, rtol=1e-6)
    assert np.isclose(grad(grad(half_line))(s), expected, rtol=1e-6)
    assert np.isclose(hvp(half_line)(s, 1.0), expected, rtol=1e-6)
    # forward mode through quad (its pullback function transposed) gives the gradient
    _, tangent = jvp(half_line, (s,), (1.0,))
    assert np.isclose(tangent, grad(half_line)(s), rtol=1e-10)


def decay(y, t, k):
    return -k * y


def harmonic(t, y, w):
    return np.array([y[1], -w * w * y[0]])


def lotka_volterra(t, y, a, b):
    return np.array([a * y[0] - b * y[0] * y[1], b * y[0] * y[1] - y[1]])


T = np.array([0.0, 0.5, 1.2])


def decay_loss(v):
    ys = si.odeint(decay, v[:2], T, args=(v[2],), rtol=1e-10, atol=1e-10)
    return np.sum(ys**2)


def harmonic_loss(y0, w):
    ys = si.odeint(harmonic, y0, T, args=(w,), tfirst=True, rtol=1e-10, atol=1e-10)
    return np.sum(ys[1:, 0] ** 3) + w * ys[-1, 1]


def lotka_volterra_loss(p):
    sol = si.solve_ivp(
        lotka_volterra,
        (0.0, 1.5),
        [1.0, 0.5],
        t_eval=[0.7, 1.5],
        args=(p[0], p[1]),
        rtol=1e-9,
        atol=1e-9,
    )
    return np.sum(sol.y**2)


def test_odeint_decay_hessian_is_exact():
    # y_j(t) = y0_j exp(-k t): L = sum_t |y0|^2 exp(-2 k t)
    v = np.array([1.0, 0.5, 0.7])
    e = np.exp(-2 * v[2] * T)
    r2 = v[0] ** 2 + v[1] ** 2
    expected = np.zeros((3, 3))
    expected[:2, :2] = 2 * np.sum(e) * np.eye(2)
    expected[:2, 2] = expected[2, :2] = -4 * v[:2] * np.sum(T * e)
    expected[2, 2] = r2 * np.sum(4 * T**2 * e)
    np.testing.assert_allclose(hessian(decay_loss)(v), expected, rtol=1e-7, atol=1e-8)
    assert check_grads(decay_loss, v, order=2) == RR


@D
def test_odeint_hessians(dtype):
    y0, w = np.array([1.0, -0.3], dtype), dtype(1.4)
    assert check_grads(harmonic_loss, y0, w, wrt=(0, 1), order=2) == RR


def test_odeint_time_points_second_order():
    def at_times(t):
        ys = si.odeint(harmonic, [1.0, 0.0], t, args=(1.4,), tfirst=True, rtol=1e-10, atol=1e-10)
        return np.sum(ys[:, 0] ** 2)

    assert check_grads(at_times, np.array([0.0, 0.4, 1.1]), order=2) == RR


def test_solve_ivp_lotka_volterra_hessian():
    assert check_grads(lotka_volterra_loss, np.array([1.1, 0.4]), order=2) == RR


def test_solve_ivp_initial_state_and_times_second_order():
    def loss(y0, t1):
        sol = si.solve_ivp(
            harmonic, (0.0, 2.0), y0, t_eval=[0.5, t1], args=(1.3,), rtol=1e-9, atol=1e-9
        )
        return np.sum(sol.y**3)

    assert check_grads(loss, np.array([1.0, 0.2]), 1.2, wrt=(0, 1), order=2) == RR


def test_solve_ivp_second_order_needs_t_eval():
    from pullback import HigherOrderError

    def own_steps(w):
        sol = si.solve_ivp(harmonic, (0.0, 1.0), [1.0, 0.0], args=(w,), rtol=1e-8)
        return sol.y[0, -1]

    check_grads(own_steps, 1.3)  # first order: the solver's own steps are fine
    with pytest.raises(HigherOrderError, match="t_eval"):
        hessian(own_steps)(1.3)
