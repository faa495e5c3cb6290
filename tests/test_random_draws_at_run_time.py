"""Random draws found only when the function runs (PB506 at run time): ``np.random.normal``
reached through the ``np.random`` namespace, unseeded, and a generator's bound method held
in a variable (``draw = rng.normal``) gave a silently zero gradient through their
differentiated parameters (their non-differentiable rule ran without the refusal that
``rng.normal`` of a local generator had). Now refused as the check refuses the draws it
sees, at the user's file:line:col, with the fix. At second order (hessian, hvp, jacobian of
grad, grad of a function calling grad) every draw found at run time, an unseeded local
generator's ``rng.normal(x, ...)`` too, is refused with the same message (it was a generic
"a second derivative through 'Generator.normal' ... needs it to be a Python function").
Draws with constant parameters still run, at both orders."""

from __future__ import annotations

import inspect
import os

import numpy as np
import pytest
from fd import check_grad

import pullback
from pullback.testing import check_grads


def unseeded_module_normal(x):
    y = np.random.normal(x, 1.0)
    return np.sum(y * x)


def held_generator_method(x):
    draw = np.random.default_rng(0).uniform
    return np.sum(draw(x, 2.0) * x)


def unseeded_constant_parameters(x):
    noise = np.random.normal(0.0, 1.0, size=np.shape(x))
    return np.sum((x + 0.0 * noise) ** 2)


GOLDEN = (
    "cannot differentiate '{name}' — 1 unsupported construct\n\n"
    "  {file}:{line}:{col}: PB506 a differentiated value reaches the random draw {name}\n"
    "        {text}\n"
    "        {carets}\n"
    "    With a seed fixed in the function, the draw is a function of its parameters (or "
    "picks elements of its argument), but pullback treats random draws as constants: the "
    "gradient through it would be silently zero (see docs/limitations.md#PB506).\n"
    "    Fix: draw standard variates and transform them, e.g. `mu + sigma * "
    "rng.standard_normal(n)` for `rng.normal(mu, sigma, n)`, `low + (high - low) * "
    "rng.random(n)` for `rng.uniform(low, high, n)`."
)

CASES = [
    (unseeded_module_normal, "numpy.random.normal", "np.random.normal(x, 1.0)"),
    (held_generator_method, "numpy.random.Generator.uniform", "draw(x, 2.0)"),
]


def _golden(fn, name, call) -> str:
    lines, first = inspect.getsourcelines(fn)
    k, text = next((k, t) for k, t in enumerate(lines) if call in t)
    col = text.index(call)
    return GOLDEN.format(
        name=name,
        file=os.path.basename(__file__),
        line=first + k,
        col=col + 1,
        text=text.strip(),
        # (from the call to the line's end: the place a run-time site knows)
        carets=" " * (col - (len(text) - len(text.lstrip()))) + "^" * (len(text.rstrip()) - col),
    )


@pytest.mark.parametrize("fn,name,call", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize(
    "x", [np.array([0.5, 1.5]), np.array([0.5, 1.5], np.float32), 0.75], ids=str
)
def test_a_draw_found_at_run_time_is_refused_at_the_users_call(fn, name, call, x):
    with pytest.raises(pullback.UnsupportedSyntaxError) as info:
        pullback.grad(fn)(x)
    message = str(info.value).replace(os.path.dirname(__file__) + os.sep, "")
    assert message == _golden(fn, name, call)


def test_a_draw_with_constant_parameters_found_at_run_time_is_a_constant():
    check_grad(unseeded_constant_parameters, np.array([0.5, 1.5]))


def unseeded_generator_normal(x):
    rng = np.random.default_rng()
    y = rng.normal(x, 1.0)
    return np.sum(y * x)


def _gradient_sum(fn):
    def gradient_sum(x):
        return np.sum(pullback.grad(fn)(x))

    return gradient_sum


SECOND = {
    "hessian": lambda fn, x: pullback.hessian(fn)(x),
    "hvp": lambda fn, x: pullback.hvp(fn)(x, np.ones_like(x)),
    "jacobian of grad": lambda fn, x: pullback.jacobian(pullback.grad(fn))(x),
    "grad of grad inline": lambda fn, x: pullback.grad(_gradient_sum(fn))(x),
}
SECOND_CASES = [
    *[
        (how, unseeded_generator_normal, "numpy.random.Generator.normal", "rng.normal(x, 1.0)")
        for how in SECOND
    ],
    *[("hessian", *case) for case in CASES],
]


@pytest.mark.parametrize(
    "how,fn,name,call", SECOND_CASES, ids=[f"{c[0]}-{c[1].__name__}" for c in SECOND_CASES]
)
def test_a_draw_found_at_run_time_is_refused_at_second_order_as_at_first(how, fn, name, call):
    # (it said "a second derivative through 'Generator.normal', found at run time, needs it
    # to be a Python function", a generic reason with a fix that does not apply)
    x = np.array([0.5, 1.5], np.float32 if how == "hvp" else np.float64)
    with pytest.raises(pullback.UnsupportedSyntaxError) as info:
        SECOND[how](fn, x)
    message = str(info.value).replace(os.path.dirname(__file__) + os.sep, "")
    assert message == _golden(fn, name, call)


def test_a_draw_with_constant_parameters_found_at_run_time_at_second_order():
    check_grads(unseeded_constant_parameters, np.array([0.5, 1.5]), order=2)
