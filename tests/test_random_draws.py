"""Random draws that move with their parameters are refused where a differentiated value
reaches them (PB506). With a seed fixed in the function (``rng = np.random.default_rng(0)``)
the draw is a function of its parameters, so the zero gradient of a non-differentiable
draw was silently wrong (found by probe_fin: ``rng.normal(mu, sigma, size=n)`` in a Monte
Carlo estimate). The fix the message names works; draws of integers, standard variates and
draws with constant parameters are unchanged."""

import numpy as np
import pytest
from fd import check_grad

import pullback

THETA = np.array([0.3, -0.2])


def generator_normal(theta):
    rng = np.random.default_rng(0)
    x = rng.normal(theta[0], np.exp(theta[1]), size=50)
    return np.mean(x**2)


def random_state_uniform(theta):
    rs = np.random.RandomState(1)
    return np.sum(rs.uniform(theta[0], 2.0, 10))


def module_lognormal(theta):
    np.random.seed(2)
    return np.sum(np.random.lognormal(theta[0], 0.5, 10))


def bootstrap_choice(theta):
    rng = np.random.default_rng(3)
    return np.mean(rng.choice(theta, size=10) ** 2)


def draw_held_in_a_variable(theta):
    np.random.seed(4)
    draw = np.random.gamma
    return np.sum(draw(theta[0] + 1.0, 1.0, 5))


REFUSED = [
    (generator_normal, "numpy.random.Generator.normal", "rng.standard_normal(n)"),
    (random_state_uniform, "numpy.random.RandomState.uniform", "rng.random(n)"),
    (module_lognormal, "numpy.random.lognormal", "rng.standard_normal(n)"),
    (bootstrap_choice, "numpy.random.Generator.choice", "x[rng.integers(0, len(x), size=n)]"),
    (draw_held_in_a_variable, "numpy.random.gamma", "rng.standard_normal(n)"),
]


@pytest.mark.parametrize("f,name,fix", REFUSED, ids=[r[0].__name__ for r in REFUSED])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_differentiated_parameter_of_a_random_draw_is_refused(f, name, fix, mode):
    with pytest.raises(pullback.UnsupportedSyntaxError, match="PB506") as info:
        if mode == "grad":
            pullback.grad(f)(THETA)
        else:
            pullback.jvp(f, (THETA,), (np.ones(2),))
    message = str(info.value)
    assert f"a differentiated value reaches the random draw {name}" in message
    assert fix in message


def generator_normal_fixed(theta):
    # generator_normal as the fix says: the same draws, standard variates transformed
    rng = np.random.default_rng(0)
    x = theta[0] + np.exp(theta[1]) * rng.standard_normal(50)
    return np.mean(x**2)


def constant_parameters(theta):
    rng = np.random.default_rng(5)
    noise = rng.normal(0.0, 0.1, size=2)
    counts = rng.poisson(3.0, size=2)
    return np.sum((theta + noise) ** 2 * counts)


def test_the_fix_gives_the_same_value_and_is_differentiated():
    assert generator_normal_fixed(THETA) == generator_normal(THETA)
    check_grad(generator_normal_fixed, THETA)


def test_draws_with_constant_parameters_are_constants():
    check_grad(constant_parameters, THETA)
