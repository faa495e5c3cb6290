"""A second derivative recomputes a helper's call later (transform/replay.py). Two ways
that recompute differentiated another function than the call computed, silently, on
main:

* the helper reads a module-level (or captured) object and changes it itself, or the
  caller changes it after the call, read through a method of its class
  (``y = MODEL.predict(x); MODEL.update(x)``): the recompute read the state the call
  left (a Hessian of 47.25 where differences of the primal give 27). Now PB107 at the
  call, and the update runs once, as in the primal;
* the helper makes a random number generator without a seed (``default_rng()``,
  ``RandomState()``, ``random.Random()``, or through a helper or a class's ``__init__``
  it calls): the recompute drew other numbers. Now PB107 at the generator's line (at
  the call of that helper or class); a seeded one keeps working.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from pullback import grad, hessian, hvp
from pullback.errors import NotDifferentiableError, UnsupportedCallError

HERE = __file__


class Model:
    def __init__(self):
        self.w = 1.0
        self.v = np.array([1.0, 2.0])
        self.calls = 0

    def predict(self, x):
        return self.w * x**3

    def update(self, x):
        self.w = self.w + 1.0

    def predict_v(self, x):
        return np.sum(self.v * x**3)

    def step(self):
        self.v += 0.5  # in place

    def count(self):
        self.calls += 1  # a counter of calls: no real number


MODEL = Model()


def predict_then_update(x):
    y = MODEL.predict(x)
    MODEL.update(x)
    return y


def update_then_predict(x):
    MODEL.update(x)
    return MODEL.predict(x)


def predict_then_step(x):
    y = MODEL.predict_v(x)
    MODEL.step()
    return y


def counts_then_predicts(x):
    MODEL.count()
    return MODEL.predict(x)


def by_update(x):
    return predict_then_update(x) * x


def by_update_first(x):
    return np.sin(update_then_predict(x))


def by_step(x):
    return predict_then_step(x) * x


def by_count(x):
    return counts_then_predicts(x) * x


def reads_through_a_method(x):
    return MODEL.predict(x)


def by_update_after(x):
    y = reads_through_a_method(x)
    MODEL.update(x)  # after the call, by the caller: the recompute would read w = 2
    return y * x


def _fresh():
    MODEL.w, MODEL.v, MODEL.calls = 1.0, np.array([1.0, 2.0]), 0


def _line(text):
    with open(HERE, encoding="utf-8") as f:
        for k, line in enumerate(f, 1):
            if text in line:
                return k, line.index(text) + 1, line.strip()
    raise AssertionError(text)


@pytest.mark.parametrize(
    "f, callee, what, call",
    [
        (by_update, "predict_then_update", "MODEL.w", "predict_then_update(x) * x"),
        (by_update_first, "update_then_predict", "MODEL.w", "update_then_predict(x))"),
    ],
    ids=["read then update", "update then read"],
)
def test_a_helper_that_changes_what_it_reads_is_refused(f, callee, what, call):
    line, col, source = _line(call)
    want = (
        f"{HERE}:{line}:{col}: PB107 a second derivative pulls back through this call of "
        f"'{callee}' by running it again, later; but the module-level '{what}', which it "
        "reads, was changed by the call itself (the recompute would read it as the call left "
        "it, and change it again), so the call would be differentiated as it computes now, "
        "not as it computed.\n"
        f"        {source}\n"
        "Fix: pass the values the call reads as arguments, or build a new list, array or "
        "object instead of changing the one the call reads (see docs/limitations.md#PB107)."
    )
    for how in (hessian, lambda g: grad(grad(g))):
        _fresh()
        with pytest.raises(UnsupportedCallError) as info:
            how(f)(np.float64(1.5))
        assert str(info.value) == want
    _fresh()
    with pytest.raises(UnsupportedCallError):
        hvp(f)(np.array([1.5, 0.5]), np.array([1.0, 0.0]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_first_order_is_unchanged_and_runs_the_update_once(dtype):
    _fresh()
    x = dtype(1.5)
    g = grad(by_update)(x)
    np.testing.assert_allclose(g, 4.0 * 1.0 * 1.5**3, rtol=1e-6)  # d(w x^4), w = 1
    assert MODEL.w == 2.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_counter_of_calls_still_differentiates_twice(dtype):
    # the helper changes an int it never multiplies by: d2/dx2 (w x^4) = 12 w x^2
    _fresh()
    x = dtype(1.5)
    h = hessian(by_count)(x)
    g = grad(by_count)
    _fresh()
    fd = (g(1.5 + 1e-5) - g(1.5 - 1e-5)) / 2e-5
    np.testing.assert_allclose(h, 12.0 * 1.5**2, rtol=1e-5)
    np.testing.assert_allclose(h, fd, rtol=1e-4)


# -- random number generators made inside a helper ------------------------------------
def noisy_generator(x):
    rng = np.random.default_rng()
    return x**3 * (1.0 + 0.5 * rng.random())


def noisy_random_state(x):
    rs = np.random.RandomState(None)
    return x**3 * (1.0 + 0.5 * rs.rand())


def noisy_python(x):
    r = random.Random()
    return x**3 * (1.0 + 0.5 * r.random())


def make_generator():
    return np.random.default_rng()


class Simulation:
    def __init__(self):
        self.rng = np.random.default_rng()


class SeededSimulation:
    def __init__(self):
        self.rng = np.random.default_rng(1)


def noisy_by_helper(x):
    rng = make_generator()
    return x**3 * (1.0 + 0.5 * rng.random())


def noisy_by_class(x):
    sim = Simulation()
    return x**3 * (1.0 + 0.5 * sim.rng.random())


def seeded_by_class(x):
    sim = SeededSimulation()
    return x**3 * (1.0 + 0.5 * sim.rng.random())


def seeded(x):
    rng = np.random.default_rng(0)
    return x**3 * (1.0 + 0.5 * rng.random())


def seeded_python(x):
    r = random.Random(7)
    return x**3 * (1.0 + 0.5 * r.random())


@pytest.mark.parametrize(
    "helper, text",
    [
        (noisy_generator, "np.random.default_rng()"),
        (noisy_random_state, "np.random.RandomState(None)"),
        (noisy_python, "r = random.Random()"),
        (noisy_by_helper, "rng = make_generator()"),
        (noisy_by_class, "sim = Simulation()"),
    ],
    ids=["default_rng", "RandomState", "random.Random", "a helper's", "a class's __init__"],
)
def test_an_unseeded_generator_in_a_recompute_is_refused(helper, text):
    def f(x):
        return helper(x) * x

    line, col, source = _line(text)
    col += len(text) - len(text.split(" = ")[-1])  # (the call, after a target)
    want = (
        f"{HERE}:{line}:{col}: PB107 '{helper.__name__}' makes a random number generator "
        "without a seed (here, or in a function or class of yours it calls here), and a "
        "second derivative pulls back through its call by running it again, later: the new "
        "generator would draw other numbers than the call drew, and the derivative would be "
        "that of another function.\n"
        f"        {source}\n"
        "Fix: give the generator a seed (`np.random.default_rng(0)`, a seed passed in), or "
        "make it outside the differentiated function and pass it in (see "
        "docs/limitations.md#PB107)."
    )
    with pytest.raises(UnsupportedCallError) as info:
        hessian(f)(1.5)
    assert str(info.value) == want
    assert np.isfinite(grad(f)(1.5))  # first order: one draw, nothing recomputed


@pytest.mark.parametrize("helper, seed", [(seeded, None), (seeded_python, 7), (seeded_by_class, 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_seeded_generator_keeps_working(helper, seed, dtype):
    def f(x):
        return helper(x) * x

    if seed == 1:
        u = np.random.default_rng(1).random()
    else:
        u = np.random.default_rng(0).random() if seed is None else random.Random(seed).random()
    x = dtype(1.5)
    rtol = 1e-10 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(hessian(f)(x), 12.0 * 1.5**2 * (1.0 + 0.5 * u), rtol=rtol)
    g = grad(f)
    fd = (g(1.5 + 1e-5) - g(1.5 - 1e-5)) / 2e-5
    np.testing.assert_allclose(hessian(f)(1.5), fd, rtol=1e-5)


def test_a_change_after_the_call_read_through_a_method_is_refused():
    # main read MODEL.w through predict's code only: a Hessian of 121.5 for 27
    _fresh()
    with pytest.raises(UnsupportedCallError) as info:
        hessian(by_update_after)(1.5)
    assert "the module-level 'MODEL.w', which it reads, was changed in place after" in str(
        info.value
    )
    _fresh()
    np.testing.assert_allclose(grad(by_update_after)(1.5), 4.0 * 1.5**3)


def test_an_array_changed_in_place_by_a_method_is_refused_at_every_order():
    # (the first order read the changed array too: inplace_fields.py refuses it where the
    # method runs, at any order, before the recompute's own check)
    line, col, _ = _line("MODEL.step()")
    for how in (grad, hessian, lambda g: grad(grad(g))):
        _fresh()
        with pytest.raises(NotDifferentiableError) as info:
            how(by_step)(np.float64(1.5))
        assert str(info.value).startswith(
            f"{HERE}:{line}:{col}: Model.step() changed the array in the field 'v' of its "
            "object in place, after the differentiated code read it"
        )
