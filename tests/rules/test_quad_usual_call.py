"""quad's gradient for the usual call, ``quad(f, a, b, args=(floats))`` with float limits:
the rule binds it without the general checks (scipy_quad._plain_call), the one-pass path
integrates on one subinterval in Python floats with the nodes kept per interval
(_quad_nodes._one_interval, _interval_nodes), and the elementwise proof checks its free
names with cached ufunc verdicts. Each is checked against central finite differences and
against the exact per-node path (the integrand's vjp at each of quad's own calls)."""

from __future__ import annotations

import math

import numpy as np
import pytest

si = pytest.importorskip("scipy.integrate")

from test_quad_nodes import spy  # noqa: E402 - (node pass sizes, per-node integrals)

import pullback  # noqa: E402
from pullback.rules import _elementwise, _quad_nodes  # noqa: E402

SCALE = 2.0  # a global scalar an integrand reads


def gauss_cos(x, c, k):
    return np.exp(-c * x * x) * np.cos(k * x)


def with_global(x, c, k):
    u = -c * x**2
    return np.exp(u) * np.hypot(k, x) / SCALE


def with_where(x, c, k):
    return np.where(x > 0.5, np.sin(c * x * x), np.sin(c * (x - 0.25))) * k


def with_math(x, c, k):
    return math.exp(-c * x * x) * math.cos(k * x)


def branch_on_x(x, c, k):
    if x < 0.5:
        return np.exp(-c * x) * k
    return np.exp(-c * x) * k * (2.0 - x) / 1.5


def make_closure(scale):
    def integrand(x, c, k):
        return np.exp(-c * x) * np.sin(k * x) * scale

    return integrand


def signed(x, c, k):
    """Sees the sign of a zero: f(-0.0) = -c, f(0.0) = c."""
    return c * np.copysign(1.0, x) + k * x


def plus(x, c, k):
    """``c``'s cotangent is the seed of ones itself (read-only, kept between passes)."""
    return x + c - k


PROVED = [gauss_cos, with_global, with_where, make_closure(1.5), plus]
NOT_PROVED = [with_math, branch_on_x]


def loss_of(f, a, b, keyword=True):
    if keyword:

        def loss(c, k):
            return si.quad(f, a, b, args=(c, k))[0]

    else:

        def loss(c, k):
            return si.quad(f, a, b, (c, k))[0]

    return loss


def central(loss, c, k, h=1e-6):
    return np.array(
        [
            (loss(c + h, k) - loss(c - h, k)) / (2 * h),
            (loss(c, k + h) - loss(c, k - h)) / (2 * h),
        ]
    )


def gradient(loss, c, k):
    value, g = pullback.value_and_grad(loss, wrt=(0, 1))(c, k)
    assert value == loss(c, k)  # the value is quad's own
    return np.array([float(v) for v in g])


def per_node_gradient(monkeypatch, loss, c, k):
    """The gradient by the exact per-node path (the proof refused)."""
    with monkeypatch.context() as m:
        m.setattr(_quad_nodes, "elementwise_in_x", lambda fn, args, **options: False)
        return gradient(loss, c, k)


LIMITS = [(0.0, 3.0), (3.0, 0.0), (-1.0, 2.0), (-0.0, 2.0), (0.25, 0.75)]


@pytest.mark.parametrize("f", PROVED, ids=lambda f: f.__name__)
@pytest.mark.parametrize("limits", LIMITS, ids=str)
@pytest.mark.parametrize("keyword", [True, False], ids=["args=", "positional"])
def test_one_pass_matches_differences_and_the_per_node_path(monkeypatch, f, limits, keyword):
    passes, general = spy(monkeypatch)
    loss = loss_of(f, *limits, keyword=keyword)
    g = gradient(loss, 0.7, 1.3)
    assert passes and not general
    assert np.allclose(g, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)
    assert np.allclose(g, per_node_gradient(monkeypatch, loss, 0.7, 1.3), rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("f", NOT_PROVED, ids=lambda f: f.__name__)
def test_integrands_not_proved_take_the_per_node_path(monkeypatch, f):
    passes, general = spy(monkeypatch)
    loss = loss_of(f, 0.0, 2.0)
    g = gradient(loss, 0.7, 1.3)
    assert general and not passes
    assert np.allclose(g, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)


def test_one_subinterval_is_bisected_where_the_derivative_needs_it(monkeypatch):
    # quad keeps [0, 3] whole for the integrand; the derivative's error estimate on it
    # is too large, so the sum goes on by bisection from that one subinterval
    assert si.quad(gauss_cos, 0.0, 3.0, args=(1.0, 1.0), full_output=1)[2]["last"] == 1
    finished = []
    real = _quad_nodes._finish

    def counted(*a):
        finished.append(a[4].size)  # (lo: one entry per subinterval)
        return real(*a)

    monkeypatch.setattr(_quad_nodes, "_finish", counted)
    passes, general = spy(monkeypatch)
    loss = loss_of(gauss_cos, 0.0, 3.0)
    g = gradient(loss, 1.0, 1.0)
    assert finished == [1] and len(passes) > 1 and not general
    assert np.allclose(g, central(loss, 1.0, 1.0), rtol=1e-6, atol=1e-9)
    assert np.allclose(g, per_node_gradient(monkeypatch, loss, 1.0, 1.0), rtol=1e-7)


def test_float32_parameters():
    def loss(c, k):
        return si.quad(gauss_cos, 0.0, 3.0, args=(c, k))[0]

    g = pullback.grad(loss, wrt=(0, 1))(np.float32(0.7), np.float32(1.3))
    assert all(type(v) is np.float32 for v in g)
    expected = central(loss, 0.7, 1.3)
    assert np.allclose(np.array(g, dtype=np.float64), expected, rtol=1e-5, atol=1e-6)


def test_other_keywords_take_the_general_binding(monkeypatch):
    passes, _ = spy(monkeypatch)

    def loss(c, k):
        return si.quad(gauss_cos, 0.0, 3.0, args=(c, k), epsabs=1e-12, epsrel=1e-12)[0]

    g = gradient(loss, 0.7, 1.3)
    assert passes
    assert np.allclose(g, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)


def test_the_sign_of_a_zero_limit_reaches_the_limit_cotangent():
    back_of = pullback.default_registry().lookup(si.quad).rrule
    cots = {}
    for a in (0.0, -0.0):
        _, back = back_of(signed, a, 1.0, args=(0.7, 1.3))
        cots[math.copysign(1.0, a)] = back((1.0, 0.0))
    # da = -f(a): -0.7 at +0.0, +0.7 at -0.0 (the integral, c + k / 2, is the same)
    assert float(cots[1.0][1]) == -0.7 and float(cots[-1.0][1]) == 0.7
    assert cots[1.0][3] == cots[-1.0][3]
    assert np.allclose([float(v) for v in cots[1.0][3]["args"]], [1.0, 0.5])


def test_the_nodes_of_one_interval_are_the_general_grids():
    for lo, hi in ((0.0, 3.0), (-1.0, 2.5), (1e-300, 1.0)):
        kept = _quad_nodes._interval_nodes(lo, hi, 1.0, 1.0)
        grid = _quad_nodes._grid(np.array([lo]), np.array([hi]), (lo, hi))
        assert np.array_equal(kept, grid) and not kept.flags.writeable


def test_rebound_global_is_read_at_each_call(monkeypatch):
    loss = loss_of(with_global, 0.0, 2.0)
    first = gradient(loss, 0.7, 1.3)
    monkeypatch.setattr(__import__(__name__), "SCALE", 4.0)
    second = gradient(loss, 0.7, 1.3)
    assert np.allclose(second, first / 2, rtol=1e-12)
    assert np.allclose(second, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)
    monkeypatch.setattr(__import__(__name__), "SCALE", np.array([1.0, 2.0]))
    assert not _elementwise.elementwise_in_x(with_global, (0.7, 1.3))


def test_redefined_integrand_is_proved_again(monkeypatch):
    namespace = {}
    passes, general = spy(monkeypatch)

    def loss(c, k):
        return si.quad(namespace["f"], 0.0, 2.0, args=(c, k))[0]

    namespace["f"] = gauss_cos
    g1 = gradient(loss, 0.7, 1.3)
    assert passes and not general
    namespace["f"] = branch_on_x  # redefined: a branch on x, not proved
    passes.clear()
    g2 = gradient(loss, 0.7, 1.3)
    assert general and not passes
    assert np.allclose(g2, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)
    assert not np.allclose(g1, g2)


def test_code_swapped_in_place_is_proved_again(monkeypatch):
    def f(x, c, k):
        return np.exp(-c * x) * k

    loss = loss_of(f, 0.0, 2.0)
    passes, general = spy(monkeypatch)
    gradient(loss, 0.7, 1.3)
    assert passes and not general
    monkeypatch.setattr(f, "__code__", branch_on_x.__code__)
    passes.clear()
    g = gradient(loss, 0.7, 1.3)
    assert general and not passes
    assert np.allclose(g, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)


def test_second_order():
    def dc(c, k):
        return pullback.grad(loss_of(gauss_cos, 0.0, 3.0), wrt=0)(c, k)

    h = 1e-5
    second = pullback.grad(dc, wrt=(0, 1))(0.7, 1.3)
    expected = [
        (dc(0.7 + h, 1.3) - dc(0.7 - h, 1.3)) / (2 * h),
        (dc(0.7, 1.3 + h) - dc(0.7, 1.3 - h)) / (2 * h),
    ]
    assert np.allclose([float(v) for v in second], expected, rtol=1e-5, atol=1e-8)


def test_closure_cotangents_places_one_keyword():
    from pullback.runtime import closure_cotangents
    from pullback.tangents import NO_TANGENT

    da, db, dargs = 1.0, 2.0, (3.0, 4.0)
    assert closure_cotangents((NO_TANGENT, da, db, {"args": dargs}), 3, (("args", 3),)) == (
        NO_TANGENT,
        da,
        db,
        dargs,
    )
    assert closure_cotangents((NO_TANGENT, da, db, {}), 3, (("args", 3),)) == (
        NO_TANGENT,
        da,
        db,
        NO_TANGENT,
    )
    # a keyword whose place is further on, and a list of cotangents: the general layout
    assert closure_cotangents((NO_TANGENT, da, {"args": dargs}), 2, (("args", 3),)) == (
        NO_TANGENT,
        da,
        NO_TANGENT,
        dargs,
    )
    assert closure_cotangents([NO_TANGENT, da, db, {"args": dargs}], 3, (("args", 3),)) == (
        NO_TANGENT,
        da,
        db,
        dargs,
    )


def one_parameter(x, c):
    return np.exp(-c * x) * np.cos(x)


def test_limits_and_parameters_together(monkeypatch):
    passes, general = spy(monkeypatch)

    def loss(a, b, c):
        return si.quad(gauss_cos, a, b, args=(c, 1.3))[0] ** 2

    g = pullback.grad(loss, wrt=(0, 1, 2))(0.2, 2.5, 0.7)
    h = 1e-6
    fd = [
        (loss(0.2 + h, 2.5, 0.7) - loss(0.2 - h, 2.5, 0.7)) / (2 * h),
        (loss(0.2, 2.5 + h, 0.7) - loss(0.2, 2.5 - h, 0.7)) / (2 * h),
        (loss(0.2, 2.5, 0.7 + h) - loss(0.2, 2.5, 0.7 - h)) / (2 * h),
    ]
    assert passes and not general
    assert np.allclose([float(v) for v in g], fd, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize(
    "call",
    [
        lambda c: si.quad(one_parameter, 0.0, 2.0, args=c)[0],  # one value, no tuple
        lambda c: si.quad(one_parameter, 0.0, 2.0, (c,))[0],
        lambda c: si.quad(one_parameter, 1.0, 1.0, args=(c,))[0] + c,  # a == b
        lambda c: si.quad(one_parameter, 0.0, 2.0, args=(c,), limit=3)[0],
        lambda c: si.quad(lambda x: np.exp(-x), 0.0, c)[0],  # no args
    ],
)
def test_other_usual_shapes(call):
    g = pullback.grad(call)(0.7)
    h = 1e-6
    assert float(g) == pytest.approx((call(0.7 + h) - call(0.7 - h)) / (2 * h), rel=1e-6)
