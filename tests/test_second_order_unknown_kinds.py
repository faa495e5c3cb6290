"""Second derivatives through elementwise NumPy functions applied to values whose kind the
transformation cannot know (attributes of objects, results of calls found at run time):
their first-order sweep uses the rule's closure pullback, and a gradient that is
differentiated again calls the rule's vjp written in the differentiable subset instead
(``g * conj(f'(x))``; reverse_calls.scalar_vjp). Model code reads its weights from
``self``, so ``hessian(model.loss)`` depends on this."""

from __future__ import annotations

import numpy as np
import pytest
from fd import numerical_grad

import pullback


class Layer:
    def __init__(self, scale=0.7, offset=0.2):
        self.w = np.array([[0.5, -0.3, 0.8], [0.1, 0.4, -0.6]])
        self.scale = scale
        self.offset = offset

    def loss(self, x):
        h = np.tanh(self.w @ x)
        return np.sum(np.exp(self.scale * h)) + np.sum(np.sin(x * self.offset) * x)

    def complex_loss(self, x):
        z = np.exp(self.phase * x)  # complex: the conjugate of the derivative matters
        return np.sum(np.real(z * np.cos(x)) ** 2)

    def modulus(self, x):
        return np.sum(np.abs(np.exp(self.phase * x)))


X = np.array([0.5, -1.2, 0.8])


def _hessian_by_differences(f):
    g = pullback.grad(f)
    return np.stack([numerical_grad(lambda v: g(v)[k], (X,), 0) for k in range(X.size)])


@pytest.mark.parametrize("method", ["loss", "complex_loss"])
def test_hessian_of_a_method_reading_its_weights(method):
    layer = Layer()
    layer.phase = 0.3 + 0.8j
    f = getattr(layer, method)
    want = _hessian_by_differences(f)
    np.testing.assert_allclose(pullback.hessian(f)(X), want, rtol=1e-6, atol=1e-6)
    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(pullback.hvp(f)(X, v), want @ v, rtol=1e-6, atol=1e-6)


def test_jvp_of_the_gradient_of_a_function_of_an_object():
    def loss(x, layer):
        return np.sum(np.tanh(layer.w @ x) ** 2)

    layer, v = Layer(), np.array([1.0, -2.0, 0.5])
    g = pullback.grad(loss)
    want = np.stack([numerical_grad(lambda u: g(u, layer)[k], (X,), 0) for k in range(3)]) @ v
    _, hv = pullback.jvp(pullback.grad(loss), (X, layer), (v, None))
    np.testing.assert_allclose(hv, want, rtol=1e-6, atol=1e-6)


class RealLayer(Layer):
    def modulus(self, x):
        # np.abs and SciPy's psi are not holomorphic: of a real value of unknown kind, their
        # vjp in the subset calls their derivative function (checked real when it runs)
        import scipy.special as sc

        return np.sum(np.abs(self.scale * x - self.offset) * sc.psi(self.scale + x * x))


def test_a_non_holomorphic_function_of_a_real_value_of_unknown_kind_twice():
    f = RealLayer().modulus
    want = _hessian_by_differences(f)
    np.testing.assert_allclose(pullback.hessian(f)(X), want, rtol=1e-6, atol=1e-6)


def test_abs_of_a_complex_value_of_unknown_kind_twice():
    # (np.abs's factor z / |z| is written for a complex z too: its second derivative is
    # the derivative of that, not of np.sign's constant; it was refused)
    layer = Layer()
    layer.phase = 0.3 + 0.8j
    want = _hessian_by_differences(layer.modulus)
    np.testing.assert_allclose(pullback.hessian(layer.modulus)(X), want, rtol=1e-6, atol=1e-6)
    # |exp(phase x)| = exp(0.3 x): its Hessian is diagonal, 0.09 exp(0.3 x)
    np.testing.assert_allclose(
        pullback.hessian(layer.modulus)(X), np.diag(0.09 * np.exp(0.3 * X)), rtol=1e-12
    )


def test_a_non_holomorphic_function_of_a_complex_value_is_refused_not_wrong():
    import scipy.special as sc

    def digamma_modulus(x, phase):
        return np.sum(np.real(sc.psi(phase * x)))

    layer = Layer()
    layer.phase = 0.3 + 0.8j
    layer.modulus = lambda x: digamma_modulus(x, layer.phase)
    with pytest.raises(pullback.HigherOrderError, match="psi"):
        pullback.hessian(layer.modulus)(X)


# Elementwise functions of two arguments (found by probe_fin: the Hessian of a Monte Carlo
# price with the payoff np.maximum(ST - K, 0.0), ST made from rng.standard_normal(n), was
# refused): a gradient differentiated again calls their vjp in the subset
# (scalar_vjps.elementwise_vjp), each cotangent summed back to its argument's shape.
SHOCKS = np.random.default_rng(3).standard_normal(6)


def _payoff(x):
    rng = np.random.default_rng(0)
    z = rng.standard_normal(3)  # a call's result: its kind is not known
    s = x * np.exp(0.3 * z)
    return np.sum(np.maximum(s - 0.4, 0.0) ** 2 + np.minimum(s, 0.1) * s)


def _two_arguments(x):
    s = x * np.exp(SHOCKS[:3])  # a global's kind is not known either
    return np.sum(np.hypot(s, x) + np.arctan2(s, 2.0) + np.logaddexp(s, x * x))


def _power_and_fmax(x):
    s = x * np.exp(SHOCKS[3:])
    return np.sum(np.power(s + 2.0, x) + np.fmax(s, 0.5 * x) ** 2)


def _both_active_broadcast(x):
    s = np.exp(SHOCKS[:3]).reshape(3, 1) * x  # (3, 3): b broadcast against a
    return np.sum(np.maximum(s, x) ** 2)


@pytest.mark.parametrize("f", [_payoff, _two_arguments, _power_and_fmax, _both_active_broadcast])
def test_hessian_through_two_argument_elementwise_functions_of_unknown_kind(f):
    x = np.array([0.9, -0.35, 0.6])
    g = pullback.grad(f)
    want = np.stack([numerical_grad(lambda v: g(v)[k], (x,), 0) for k in range(3)])
    np.testing.assert_allclose(pullback.hessian(f)(x), want, rtol=1e-6, atol=1e-6)
    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(pullback.hvp(f)(x, v), want @ v, rtol=1e-6, atol=1e-6)
