"""The usual quad call through QUADPACK's routine itself (scipy_quad._usual_rrule: quad's
value to the bit without its Python layers), the proof's verdicts kept per integrand
(_elementwise._proved with an owner, the functions verified last), the UserVJP found last
(_calculus_util.user_vjp_of) and ArgsPack's one-loop kinds: each against central finite
differences, quad's own results, or the way they replace."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

si = pytest.importorskip("scipy.integrate")

from test_quad_usual_call import central  # noqa: E402 - (central differences in c, k)

import pullback  # noqa: E402
from pullback.rules import _calculus_util, _elementwise, _quad_leibniz, scipy_quad  # noqa: E402
from pullback.rules._calculus_util import ArgsPack  # noqa: E402

EXP = np.exp  # a global function an integrand calls (rebound by a test)


def gauss_cos(x, c, k):
    return np.exp(-c * x * x) * np.cos(k * x)


def global_exp(x, c, k):
    return EXP(-c * x) * k


def python_exp(v):
    """Not a ufunc: an integrand calling it is not proved elementwise."""
    return np.exp(v)


def sharp(x, c, k):
    """quad reaches its subdivision limit (it warns)."""
    return np.sin(c / x) * k


def spread_array(x, p):
    return np.exp(-p[0] * x) * np.cos(p[1] * x)


def value_and_gradient(loss, c, k):
    value, g = pullback.value_and_grad(loss, wrt=(0, 1))(c, k)
    return value, np.array([float(v) for v in g])


def without_direct(monkeypatch):
    """quad's own way (the direct routine unavailable, as with another SciPy)."""
    monkeypatch.setattr(scipy_quad, "_direct_qagse", lambda: None)


def test_the_direct_routine_is_found():
    assert scipy_quad._direct_qagse() is not None


@pytest.mark.parametrize("limits", [(0.0, 3.0), (3.0, 0.0), (-1.0, 2.0), (0.5, -0.25)], ids=str)
@pytest.mark.parametrize("keyword", [True, False], ids=["args=", "positional"])
def test_value_is_quads_and_gradient_matches(monkeypatch, limits, keyword):
    a, b = limits

    def loss(c, k):
        if keyword:
            return si.quad(gauss_cos, a, b, args=(c, k))[0]
        return si.quad(gauss_cos, a, b, (c, k))[0]

    value, g = value_and_gradient(loss, 0.7, 1.3)
    assert value == si.quad(gauss_cos, a, b, args=(0.7, 1.3))[0]  # to the bit, flipped too
    assert np.allclose(g, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)
    without_direct(monkeypatch)
    value2, g2 = value_and_gradient(loss, 0.7, 1.3)
    assert value2 == value and np.allclose(g2, g, rtol=1e-12, atol=1e-15)


def test_abserr_is_quads():
    back_of = pullback.default_registry().lookup(si.quad).rrule
    out, _ = back_of(gauss_cos, 3.0, 0.0, args=(0.7, 1.3))
    assert out == si.quad(gauss_cos, 3.0, 0.0, args=(0.7, 1.3))


def test_array_parameter_takes_the_direct_routine(monkeypatch):
    def loss(c, k):
        p = np.array([c, k])
        return si.quad(spread_array, 0.0, 2.0, args=(p,))[0]

    value, g = value_and_gradient(loss, 0.7, 1.3)
    assert value == loss(0.7, 1.3)
    assert np.allclose(g, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)
    without_direct(monkeypatch)
    assert np.allclose(value_and_gradient(loss, 0.7, 1.3)[1], g, rtol=1e-12, atol=1e-15)


def test_a_warning_of_quad_is_given_once_and_the_value_is_quads():
    def loss(c, k):
        return si.quad(sharp, 1e-4, 1.0, args=(c, k))[0]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        expected = si.quad(sharp, 1e-4, 1.0, args=(0.7, 1.3))[0]
    assert [w.category for w in caught] == [si.IntegrationWarning]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value, g = pullback.value_and_grad(loss, wrt=(0, 1))(0.7, 1.3)
    assert value == expected
    assert si.IntegrationWarning in [w.category for w in caught]
    assert all(np.isfinite(float(v)) for v in g)


def test_an_error_of_the_integrand_reaches_the_caller():
    def failing(x, c, k):
        raise ZeroDivisionError("integrand failed")

    def loss(c, k):
        return si.quad(failing, 0.0, 1.0, args=(c, k))[0]

    with pytest.raises(ZeroDivisionError, match="integrand failed"):
        pullback.grad(loss, wrt=(0, 1))(0.7, 1.3)


def test_a_rebound_global_function_is_checked_again(monkeypatch):
    spied = []
    real = _quad_leibniz.parameter_integral

    def counted(*a):
        spied.append(a)
        return real(*a)

    monkeypatch.setattr(_quad_leibniz, "parameter_integral", counted)

    def loss(c, k):
        return si.quad(global_exp, 0.0, 2.0, args=(c, k))[0]

    _, g1 = value_and_gradient(loss, 0.7, 1.3)
    assert not spied  # proved: one pass
    assert _elementwise.elementwise_in_x(global_exp, (0.7, 1.3))
    monkeypatch.setitem(globals(), "EXP", python_exp)  # not a ufunc: not proved now
    _, g2 = value_and_gradient(loss, 0.7, 1.3)
    assert spied  # the per-node path
    assert np.allclose(g2, g1, rtol=1e-8) and np.allclose(g2, central(loss, 0.7, 1.3), rtol=1e-6)
    assert not _elementwise.elementwise_in_x(global_exp, (0.7, 1.3))
    vjp = _calculus_util.user_vjp_of(global_exp, (1, 2))
    assert not _elementwise.elementwise_in_x(global_exp, (0.7, 1.3), owner=vjp)
    monkeypatch.setitem(globals(), "EXP", np.sin)  # a ufunc again, another one
    assert _elementwise.elementwise_in_x(global_exp, (0.7, 1.3), owner=vjp)
    _, g3 = value_and_gradient(loss, 0.7, 1.3)
    assert np.allclose(g3, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)


def test_the_last_user_vjp_is_the_one_of_its_function():
    def other(x, c, k):
        return np.exp(-k * x) * c

    first = _calculus_util.user_vjp_of(gauss_cos, (1, 2))
    assert _calculus_util.user_vjp_of(gauss_cos, (1, 2)) is first
    second = _calculus_util.user_vjp_of(other, (1, 2))
    assert second is not first and second.fn is other
    assert _calculus_util.user_vjp_of(gauss_cos, (1,)) is not first
    assert _calculus_util.user_vjp_of(gauss_cos, (1, 2)) is first

    def loss(c, k):  # two integrands in turn
        return si.quad(gauss_cos, 0.0, 2.0, args=(c, k))[0] * si.quad(other, 0.0, 1.0, (k, c))[0]

    _, g = value_and_gradient(loss, 0.7, 1.3)
    assert np.allclose(g, central(loss, 0.7, 1.3), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize(
    "args, scalars, size",
    [
        ((0.5, 1.5), True, 2),
        ((np.array(0.5), 1.5), True, 2),
        ((np.array([0.5]), 1.5), False, 2),
        ((np.zeros(0), np.ones(2)), False, 2),
        ((np.ones((2, 3)),), False, 6),
    ],
)
def test_argspack_kinds(args, scalars, size):
    pack = ArgsPack(args)
    assert pack.plain and pack.scalars is scalars and pack.size == size
    assert pack.floats is all(type(a) is float for a in args)
    assert pack.index == tuple(range(len(args)))
    flat = np.arange(size, dtype=float)
    back = pack.cotangent(flat)
    assert np.array_equal(np.concatenate([np.ravel(c) for c in back]), flat)
    assert all(np.shape(c) == np.shape(a) for c, a in zip(back, args, strict=True))


def test_argspack_of_other_values_is_not_plain():
    pack = ArgsPack((0.5, np.float32(1.5), 3))
    assert not pack.plain and not pack.floats and pack.index == (0, 1)
