"""Non-ASCII identifiers (``β``, ``σ``, ``μ_0``), as QuantEcon lectures and physics code write
their parameters.

The passes that read generated text (which names the reverse sweep saves, copies the
peephole drops, targets, keywords, attribute stores) take an identifier to be any Python
identifier, not only an ASCII one: a Greek parameter used to be missing from the saved
values (``NameError: name 'β' is not defined`` in the reverse sweep). Each function here
names its values in Greek through a different construct (a parameter read after the
forward sweep, a loop carrying it, a copy, a keyword argument, an integer binding, a named
tuple's fields, an object's attribute written and read, a closure), against central
differences in float64 and float32, and to second order.
"""

from collections import namedtuple

import numpy as np
import pytest
from fd import check_grad, check_hvp

Model = namedtuple("Model", ("β", "γ", "w_grid"))


def create_model(β=0.96, γ=1.5):
    return Model(β=β, γ=γ, w_grid=np.linspace(10.0, 60.0, 6))


def reservation(β, c=25.0):
    model = create_model(β=β)
    β, w_grid = model.β, model.w_grid
    v = w_grid / (1 - β)
    for _ in range(30):
        h = c + β * np.mean(v)
        v = np.maximum(w_grid / (1 - β), h)
    return (1 - β) * h


def crra(c, γ=2.0):
    return c ** (1 - γ) / (1 - γ)


def lifetime(x, β=0.9):
    σ = x
    μ_0 = σ  # a copy
    total = 0.0
    n = 3
    for t in range(n):
        total = total + β**t * np.sum(crra(μ_0 + t, γ=1.5))
    return total + np.sum(σ**2)


class Oscillator:
    def __init__(self, ω):
        self.ω = ω

    def energy(self, θ):
        self.θ = θ
        return 0.5 * np.sum(self.θ**2) * self.ω**2 + np.sum(np.cos(self.θ))


def oscillator(θ, ω=1.3):
    osc = Oscillator(ω)
    return osc.energy(θ)


def scaled_closure(α):
    def ψ(z):
        return np.sum(np.tanh(α * z))

    return ψ(np.linspace(-1.0, 1.0, 3)) * np.sum(α)


X = np.array([0.3, 0.8, 1.4])
V = np.array([1.0, -0.5, 0.25])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", [lifetime, oscillator, scaled_closure])
def test_arrays(f, dtype):
    check_grad(f, X.astype(dtype))


@pytest.mark.parametrize("f", [lifetime, oscillator, scaled_closure])
def test_second_order(f):
    check_hvp(f, X, V)


def test_scalar_parameter_read_by_the_reverse_sweep():
    check_grad(reservation, 0.95)
    check_grad(lambda β: reservation(β) ** 2, 0.9)
