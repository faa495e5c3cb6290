"""quad's first Gauss-Kronrod step done vectorized in the rule's forward (rules/_quad_first.py):
the value is quad's to the bit (compared with ``==``), the gradient agrees with central
differences, and whatever the step cannot show to be quad's own computation — an integrand
with effects, not proved elementwise, with a ``**``, a step QUADPACK would bisect, a
floating-point error, another SciPy — takes QUADPACK as before."""

from __future__ import annotations

import math

import numpy as np
import pytest

si = pytest.importorskip("scipy.integrate")

from test_quad_usual_call import central  # noqa: E402 - (central differences in c, k)

import pullback  # noqa: E402
from pullback.rules import _quad_first, scipy_quad  # noqa: E402
from pullback.rules._kronrod import gauss_kronrod21  # noqa: E402
from pullback.rules._user_vjp import user_vjp_of  # noqa: E402

OFFSET = 0.25  # a global scalar an integrand reads


def gauss_cos(x, c, k):
    return np.exp(-c * x * x) * np.cos(k * x)


def polynomial(x, c, k):
    return c * x * x * x - k * x * x + 0.5 * x + OFFSET


def rational(x, c, k):
    return k / (1.0 + c * x * x)


def with_locals(x, c, k):
    u = np.sin(c * x) + OFFSET
    return np.log1p(u * u) * np.tanh(k * x)


SMOOTH = [gauss_cos, polynomial, rational, with_locals]
LIMITS = [(0.0, 3.0), (2.0, 0.5)]  # (quad keeps each whole; the second reversed)


def loss_of(f, lo, hi, **options):
    def loss(c, k):
        return si.quad(f, lo, hi, args=(c, k), **options)[0]

    return loss


def closure_loss(c, k):
    p = np.array([c, k])
    return si.quad(lambda x: np.exp(-p[0] * x * x) * np.cos(p[1] * x), 0.0, 3.0)[0]


def mixed_loss(c, k):
    p = np.array([c, 2.0 * k])
    return si.quad(lambda x, s: s * np.sin(p[0] * x) + p[1] * x, 0.5, 2.5, args=(c,))[0]


def steps(monkeypatch):
    """What each first step answered (``None``: QUADPACK's way)."""
    return answers_of_step(monkeypatch)


def answers_of_step(monkeypatch):
    answers = []
    real = _quad_first.first_step

    def counted(*a):
        answers.append(real(*a))
        return answers[-1]

    monkeypatch.setattr(scipy_quad, "first_step", counted)
    return answers


def value_and_gradient(loss, c, k):
    value, g = pullback.value_and_grad(loss, wrt=(0, 1))(c, k)
    return value, np.array([float(v) for v in g])


# -- the constants and QUADPACK's arithmetic --------------------------------------------------
def test_tabulated_rule_is_the_derived_one():
    x, wk, wg = gauss_kronrod21()  # (ascending: the positive half reversed is XGK's order)
    assert np.allclose(x[10:][::-1], _quad_first.XGK, rtol=5e-14, atol=0)
    assert np.allclose(wk[10:][::-1], _quad_first.WGK, rtol=5e-14, atol=0)
    assert np.allclose(wg[10:][::-1][1::2], _quad_first.WG, rtol=5e-14, atol=0)
    assert not np.any(wg[10:][::-1][0::2])  # the Kronrod-only nodes have no Gauss weight


@pytest.mark.parametrize("tol", [1.49e-8, 1e-12, 1e-3])
def test_first_step_is_quadpacks(tol):
    """qk21 and qagse's acceptance against quad itself: the same result and estimate to the
    bit wherever quad keeps [a, b] whole, and the same decision everywhere."""
    rng = np.random.default_rng(7)
    fns = [np.exp, np.sin, np.arctan, lambda x: 1.0 / (1.0 + 25.0 * x * x), lambda x: 0.0 * x]
    for n in range(60):
        f = fns[n % len(fns)]
        lo, hi = sorted(rng.uniform(-3.0, 3.0, 2).tolist())
        info = si.quad(f, lo, hi, full_output=1, epsabs=tol, epsrel=tol)
        one = info[2]["last"] == 1 and len(info) == 3
        found = _quad_first.qk21(f(_quad_first.step_nodes(lo, hi)[:21]).tolist(), lo, hi)
        assert _quad_first.first_step_accepts(*found, tol, tol, 50) == one
        if one:
            assert found[:2] == info[:2]


def test_step_nodes_are_kept_per_interval_and_sign_of_zero():
    """The nodes are kept per interval (read-only), the sign of a zero limit in the key:
    ``0.0 == -0.0``, but an integrand reading the limit (``1 / x``) sees the difference."""
    plus = _quad_first.step_nodes(0.0, 2.0, 1.0, 1.0)
    minus = _quad_first.step_nodes(-0.0, 2.0, -1.0, 1.0)
    assert not plus.flags.writeable and plus is _quad_first.step_nodes(0.0, 2.0, 1.0, 1.0)
    assert np.array_equal(plus[:21], minus[:21])
    assert not np.signbit(plus[21]) and np.signbit(minus[21])
    other = _quad_first.step_nodes(0.0, 3.0, 1.0, 1.0)
    assert other[22] == 3.0 and np.all(other[1:21] != plus[1:21])


def test_quad_agrees_with_the_step_on_this_scipy():
    assert _quad_first.agrees_with_quad()
    for f in (np.exp, np.cos, np.tanh, np.sqrt, np.arctan2, np.hypot, np.power, np.where):
        assert _quad_first._same_bits(f)


# -- the rule ---------------------------------------------------------------------------------
@pytest.mark.parametrize("f", SMOOTH, ids=lambda f: f.__name__)
@pytest.mark.parametrize("limits", LIMITS, ids=str)
def test_value_is_quads_and_gradient_differences(monkeypatch, f, limits):
    answers = steps(monkeypatch)
    loss = loss_of(f, *limits)
    value, g = value_and_gradient(loss, 0.7, 1.3)
    assert answers and answers[0] is not None  # the first step answered
    assert value == loss(0.7, 1.3)  # quad's bits
    assert np.allclose(g, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)


def float_closure_loss(c, k):
    return si.quad(lambda x: k * np.exp(-c * x * x) + OFFSET * x, 0.0, 3.0)[0]


@pytest.mark.parametrize(
    "loss", [closure_loss, mixed_loss, float_closure_loss], ids=lambda f: f.__name__
)
def test_closures_and_arrays_read_by_index(monkeypatch, loss):
    answers = steps(monkeypatch)
    value, g = value_and_gradient(loss, 0.7, 1.3)
    assert answers and answers[0] is not None
    assert value == loss(0.7, 1.3)
    assert np.allclose(g, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize(
    "name, tol, taken", [("gauss_cos", 1e-6, True), ("oscillatory", 1e-10, False)]
)
def test_general_call_with_its_own_tolerances(monkeypatch, name, tol, taken):
    """quad(f, 0, 2, args, epsabs=..., epsrel=...): int limits, the call's own tolerances
    (a step that does not meet them is QUADPACK's to bisect)."""
    answers = steps(monkeypatch)
    loss = loss_of(globals()[name], 0, 2, epsabs=tol, epsrel=tol)
    value, g = value_and_gradient(loss, 0.7, 1.3)
    assert answers and (answers[0] is not None) == taken
    assert value == loss(0.7, 1.3)
    assert np.allclose(g, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scalar_types(dtype):
    """NumPy scalars in args (float32 ones upcast as quad computes them) are the general
    way's; the value is quad's either way."""

    def loss(c, k):
        return si.quad(gauss_cos, 0.0, 3.0, args=(dtype(c), dtype(k)))[0]

    c, k = float(dtype(0.7)), float(dtype(1.3))  # (differences of the float64 integral there)
    value, g = value_and_gradient(loss, c, k)
    assert value == loss(c, k)
    assert np.allclose(g, central(loss_of(gauss_cos, 0.0, 3.0), c, k), rtol=1e-6, atol=1e-9)


# -- what takes QUADPACK ----------------------------------------------------------------------
LOG = []


def with_effect(x, c, k):
    LOG.append(x)
    return np.exp(-c * x * x) * k


def with_draw(x, c, k):
    return np.exp(-c * x * x) * k + 0.0 * np.random.default_rng(0).random()


def with_power(x, c, k):
    return np.exp(-c * x**2) * k


def with_branch(x, c, k):
    if x < 0.5:
        return np.exp(-c * x) * k
    return np.exp(-c * x) * k * (2.0 - x) / 1.5


def with_math(x, c, k):
    return math.exp(-c * x * x) * math.cos(k * x)


NARROW = np.float32(1.7)  # a float32 scalar: NARROW * x is a float32 for a Python float x


def with_float32_global(x, c, k):
    return NARROW * x * x + k * np.exp(-c * x)


def oscillatory(x, c, k):
    return np.exp(-c * x * x) * np.cos(40.0 * k * x)


@pytest.mark.parametrize(
    "f",
    [with_effect, with_draw, with_power, with_float32_global, with_branch, with_math, oscillatory],
    ids=lambda f: f.__name__,
)
def test_quadpack_answers_the_rest(monkeypatch, f):
    answers = steps(monkeypatch)
    loss = loss_of(f, 0.0, 2.0)
    LOG.clear()
    value, g = value_and_gradient(loss, 0.7, 1.3)
    forward_calls = len(LOG)
    assert answers and all(a is None for a in answers)
    assert value == loss(0.7, 1.3)
    if f is with_effect:  # the effect ran at each of quad's scalar calls, in the forward
        assert forward_calls >= 21 and all(type(v) is float for v in LOG[:21])
    assert np.allclose(g, central(loss, 0.7, 1.3), rtol=1e-5, atol=1e-8)


def singular_at_centre(x, c, k):
    return np.exp(-c / (x * x)) * k


def test_floating_point_errors_are_quadpacks():
    """At the centre node x = 0.0 quad's scalar call divides a Python float by zero and
    raises; the array pass would give exp(-inf) = 0 and a finite integral. It runs with
    NumPy raising on division by zero, and QUADPACK then raises as quad does."""
    loss = loss_of(singular_at_centre, -1.0, 1.0)
    with pytest.raises(ZeroDivisionError):
        loss(0.7, 1.3)
    with pytest.raises(ZeroDivisionError):
        pullback.value_and_grad(loss, wrt=(0, 1))(0.7, 1.3)


def with_underflow(x, c, k):
    return k * x + np.exp(-c * x)


def test_the_users_error_state_is_kept(monkeypatch):
    """The pass's error state is derived from the user's (kept until that changes): under
    ``np.errstate(under="raise")`` quad's scalar calls raise on exp(-800) and so does the
    gradient; outside it both answer, by the first step."""
    answers = steps(monkeypatch)
    loss = loss_of(with_underflow, 1.0, 2.0)
    grad = pullback.value_and_grad(loss, wrt=(0, 1))
    assert grad(800.0, 1.3)[0] == loss(800.0, 1.3)
    with np.errstate(under="raise"):
        with pytest.raises(FloatingPointError):
            loss(800.0, 1.3)
        with pytest.raises(FloatingPointError):
            grad(800.0, 1.3)
    assert grad(800.0, 1.3)[0] == loss(800.0, 1.3)
    assert [a is not None for a in answers] == [True, False, True]


@pytest.mark.parametrize("guard", ["agrees_with_quad", "_same_bits"])
def test_guards_send_it_to_quadpack(monkeypatch, guard):
    """Another SciPy (whose first step differs) or a ufunc whose array loop differs from its
    scalar calls: the first step declines, and the answer is still quad's."""
    answers = steps(monkeypatch)
    monkeypatch.setattr(_quad_first, guard, lambda *a: False)
    # (a ufunc's same bits are a fact of the NumPy build, kept with the pass once shown:
    # the build changed here, the kept passes go with it)
    user_vjp_of(gauss_cos, (1, 2)).steps.clear()
    loss = loss_of(gauss_cos, 0.0, 3.0)
    value, g = value_and_gradient(loss, 0.7, 1.3)
    assert answers == [None]
    assert value == loss(0.7, 1.3)
    assert np.allclose(g, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)


def test_derivative_bisected_where_its_estimate_fails():
    """The step's value is accepted, but the derivative's own estimate must meet the
    tolerances too: with tolerances tighter than the step's rule can give, it is bisected
    (the node pass's way), and the result is the accurate integral of df/dc."""
    step = _quad_first.first_step(gauss_cos, 0.0, 3.0, (0.7, 1.3), 1.49e-8, 1.49e-8, 50)
    assert step is not None
    tight = {"epsabs": 1e-300, "epsrel": 1e-14, "limit": 50}
    loose = {"epsabs": 1.49e-8, "epsrel": 1.49e-8, "limit": 50}
    exact = si.quad(lambda x: -x * x * np.exp(-0.7 * x * x) * np.cos(1.3 * x), 0.0, 3.0)
    for p in (tight, loose):
        totals, fa, fb = _quad_first.step_totals(step, True, p, False)
        assert math.isclose(totals[0], exact[0], rel_tol=1e-9)
        assert (fa, fb) == (gauss_cos(0.0, 0.7, 1.3), gauss_cos(3.0, 0.7, 1.3))


def test_hessian_through_the_first_step(monkeypatch):
    answers = steps(monkeypatch)
    loss = loss_of(gauss_cos, 0.0, 3.0)
    hessian = np.array(pullback.hessian(loss, wrt=(0, 1))(0.7, 1.3), dtype=float)
    h = 1e-5

    def gradient_at(c, k):
        return value_and_gradient(loss, c, k)[1]

    differences = np.array(
        [
            (gradient_at(0.7 + h, 1.3) - gradient_at(0.7 - h, 1.3)) / (2 * h),
            (gradient_at(0.7, 1.3 + h) - gradient_at(0.7, 1.3 - h)) / (2 * h),
        ]
    )
    assert answers and all(a is not None for a in answers)
    assert np.allclose(hessian, differences, rtol=1e-5, atol=1e-8)
